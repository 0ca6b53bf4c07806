//! A dataset: one run directory `<campaign>/<system>/`, or its published
//! copy, loaded into memory with the further datasets its run made within
//! it (a `[matrix]`'s combinations, or any other dimension's); and the walks over dataset folders that every reader of
//! them shares.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::fsutil::paths::sorted_entries;
use crate::fsutil::read_json;
use crate::records::analysis::{ProfileRecord, SizesJson, SurveyJson};
use crate::records::campaign::{AlgorithmInfo, CampaignRecord};
use crate::records::folder::{Contents, Folder, FolderRecord, RecordFolder};
use crate::records::operation::OperationRecord;
use crate::records::scan::{ScanRecord, ScanStatus};
use crate::records::{BuildJson, BuildRecord};

/// The further datasets a campaign record names, those present (one that
/// could not run has none).
fn load_children(
    dir: &Path,
    href: &str,
    campaign: &CampaignRecord,
    folders: &[&dyn RecordFolder],
) -> Result<Vec<Dataset>> {
    let mut out = Vec::new();
    let children = campaign
        .children()
        .with_context(|| format!("{}", dir.display()))?;
    for c in children {
        let sub = dir.join(&c.dir);
        if sub.join(crate::records::layout::CAMPAIGN).is_file() {
            out.push(Dataset::load(&sub, format!("{href}/{}", c.dir), folders)?);
        }
    }
    Ok(out)
}

/// One system's evidence as the pages need it.
#[derive(Debug, Clone)]
pub struct Dataset {
    pub dir: PathBuf,
    /// The dataset directory relative to the site root, `/`-separated
    /// (`../x86_1` in a campaign's output, `../data/x86_1` when published).
    pub href: String,
    pub campaign: CampaignRecord,
    pub build: BuildJson,
    pub sizes: Option<SizesJson>,
    pub survey: Option<SurveyJson>,
    /// The record folders the loader was given (the registry's), by
    /// folder name: read through [`Dataset::folder`].
    folders: BTreeMap<&'static str, Contents>,
    /// The further datasets that were run, in the order the campaign
    /// record names them (`<dimension>/<name>/`).
    pub children: Vec<Dataset>,
}

impl Dataset {
    /// Loads the dataset at `dir` with the record folders `folders` (the
    /// registry's: each stage names and reads its own).
    pub fn load(dir: &Path, href: String, folders: &[&dyn RecordFolder]) -> Result<Dataset> {
        if dir.join(crate::records::layout::WRITING).exists() {
            bail!(
                "{} is incomplete: the run writing it stopped before it finished ({} is still there); run the campaign again to complete it",
                dir.display(),
                crate::records::layout::WRITING
            );
        }
        let campaign: CampaignRecord = read_json(&dir.join(crate::records::layout::CAMPAIGN))?;
        let build: BuildJson = read_json(&dir.join(crate::records::layout::BUILD))?;
        for name in [&campaign.system, &campaign.campaign] {
            crate::records::layout::safe_component(name).with_context(|| {
                format!("{}", dir.join(crate::records::layout::CAMPAIGN).display())
            })?;
        }
        for a in &campaign.algorithms {
            crate::records::layout::safe_component(&a.id).with_context(|| {
                format!(
                    "{}: algorithm id",
                    dir.join(crate::records::layout::CAMPAIGN).display()
                )
            })?;
        }
        let optional = |name: &str| dir.join(name).is_file().then(|| dir.join(name));
        let sizes = optional(crate::records::layout::SIZES)
            .map(|p| read_json(&p))
            .transpose()?;
        let survey = optional(crate::records::layout::SURVEY)
            .map(|p| read_json(&p))
            .transpose()?;
        let folders_loaded = folders
            .iter()
            .map(|f| Ok((f.dir(), f.load(dir)?)))
            .collect::<Result<_>>()?;
        let children = load_children(dir, &href, &campaign, folders)?;
        Ok(Dataset {
            dir: dir.to_path_buf(),
            href,
            children,
            campaign,
            build,
            sizes,
            survey,
            folders: folders_loaded,
        })
    }

    /// This dataset and its further datasets, this one first: what a
    /// reader that walks a run's evidence walks.
    pub(crate) fn all(&self) -> impl Iterator<Item = &Dataset> {
        std::iter::once(self).chain(&self.children)
    }

    /// The further dataset `name` of `dimension`, when it was run.
    pub(crate) fn child(&self, dimension: &str, name: &str) -> Option<&Dataset> {
        self.children.iter().find(|d| {
            d.campaign
                .child
                .as_ref()
                .is_some_and(|c| c.dimension == dimension && c.name == name)
        })
    }

    pub(crate) fn system(&self) -> &str {
        &self.campaign.system
    }

    pub(crate) fn build_record(&self, algorithm: &str, label: &str) -> Option<&BuildRecord> {
        self.build
            .instances
            .iter()
            .find(|b| b.algorithm == algorithm && b.label == label)
    }

    /// The records of `T`'s folder, empty when the folder was not loaded
    /// or holds none.
    pub fn folder<T: FolderRecord>(&self) -> Folder<'_, T> {
        Folder::of(self.folders.get(T::DIR))
    }

    /// The timing record of one operation.
    pub(crate) fn record(
        &self,
        algorithm: &str,
        label: &str,
        op: &str,
    ) -> Option<&OperationRecord> {
        self.folder::<OperationRecord>().get(algorithm, label, op)
    }

    pub fn profile(&self, algorithm: &str, label: &str, op: &str) -> Option<&ProfileRecord> {
        self.folder::<ProfileRecord>().get(algorithm, label, op)
    }

    /// Whether the static scan found in the instance what the campaign
    /// does not allow: its figures are flagged and compared with none.
    pub(crate) fn suspicious(&self, algorithm: &str, label: &str) -> bool {
        self.folder::<ScanRecord>()
            .get(algorithm, label, "")
            .is_some_and(|r| r.status == ScanStatus::Suspicious)
    }

    pub fn algorithm(&self, id: &str) -> Option<&AlgorithmInfo> {
        self.campaign.algorithms.iter().find(|a| a.id == id)
    }
}

/// The subdirectories of `dir` that hold a `campaign.json`, sorted.
pub(crate) fn dataset_dirs_in(dir: &Path) -> Result<Vec<PathBuf>> {
    Ok(sorted_entries(dir)?
        .into_iter()
        .filter(|p| p.join(crate::records::layout::CAMPAIGN).is_file())
        .collect())
}
