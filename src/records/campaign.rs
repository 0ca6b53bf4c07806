//! `campaign.json`: the run as a whole — system, start and end, the
//! environment at both ends, host checks, counter and planning settings.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::host::{Environment, HostCheck};
use super::settings::{Limits, TimingSettings};
use super::toolchain::Compiler;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CampaignRecord {
    pub campaign: String,
    pub description: String,
    pub system: String,
    pub system_title: Option<String>,
    pub pqbench_version: String,
    /// This invocation of `pqbench run`.
    pub start_utc: String,
    pub end_utc: String,
    /// When the measurements on the pages were taken: a run that reuses
    /// stored measurements keeps their original times here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_from_utc: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_to_utc: Option<String>,
    pub environment_start: Environment,
    pub environment_end: Environment,
    pub compiler: Compiler,
    pub build_tool: String,
    pub flag_profiles: Vec<String>,
    pub cpus: Vec<usize>,
    pub host_checks: Vec<HostCheck>,
    pub host_require_fixed: bool,
    pub host_fingerprint: String,
    /// Counter named by the driver (e.g. `tsc`) and its measured rate.
    pub counter: Option<String>,
    pub counter_hz: Option<f64>,
    /// What one draw of pqbench's AES-256 CTR_DRBG (NIST-API randomness)
    /// costs on the measuring CPU, measured before the first measurement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drbg: Option<super::measure::DrbgCost>,
    /// The system's registration (architecture, runner, accepted hosts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_spec: Option<super::system::SystemSpec>,
    /// Host fingerprints of every shard of a run split across machines of
    /// the system (each shard measures on its own node and CPU).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accepted_fingerprints: Vec<String>,
    /// Every system of the campaign, in the order the pages list them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub systems: Vec<String>,
    /// The isolation layers submission processes ran under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<super::host::LayerReport>,
    /// The campaign whose measurements this one takes when it holds one
    /// with the same inputs (`reuse-measurements-from`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reuse_measurements_from: Option<String>,
    /// Instances (`<id>/<label>`) the campaign defers: measured last, or on
    /// a CPU of their own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deferred: Vec<String>,
    /// Instances whose figures on the pages are not this run's
    /// measurements yet (deferred ones while the others are published, or
    /// those `--deferred-only` left as stored): marked preliminary.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preliminary: Vec<String>,
    /// `[matrix]`: every compiler × flag-profile combination, the primary
    /// (this dataset) first; the others' datasets are among `children`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub matrix: Vec<super::settings::Combination>,
    /// The further datasets the run made within this one, in the order
    /// they ran: each is `<dimension>/<name>/` beside these records.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<ChildDataset>,
    /// The further dataset this one is, when it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child: Option<ChildDataset>,
    /// The system libraries the instances link (`libraries = [...]`), as
    /// the compiler found them: absent when none is linked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub system_libraries: Vec<SystemLibrary>,
    pub timing: TimingSettings,
    pub limits: Limits,
    pub kat_timeout_seconds: f64,
    pub profile_wraps: Vec<super::settings::Wrap>,
    pub stages: Vec<String>,
    pub algorithms: Vec<AlgorithmInfo>,
}

/// A further dataset a campaign's run makes within its own dataset: one
/// value of a dimension the campaign varies beyond its headline figures
/// (a `[matrix]` combination of compiler and flag profile, say). The
/// dimension is registered with the pipeline; records, loading, checks,
/// publication, comparison and reproduction know it only by these names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ChildDataset {
    /// The dimension, and the folder its datasets lie in (`matrix`).
    pub dimension: String,
    /// Its name along that dimension (`<compiler>.<profile>`).
    pub name: String,
}

impl std::fmt::Display for ChildDataset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.dimension, self.name)
    }
}

/// A further dataset within a campaign's dataset, under its own folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Child {
    pub child: ChildDataset,
    /// Its folder, relative to the dataset that names it, `/`-separated.
    pub dir: String,
}

impl CampaignRecord {
    /// The datasets this one names within itself, in order (a further
    /// dataset names none). Every reader that walks a campaign's datasets
    /// (loading, publishing, comparing, reproducing) asks this, so a name
    /// that could leave the dataset is refused here, once.
    pub(crate) fn children(&self) -> Result<Vec<Child>> {
        if self.child.is_some() {
            return Ok(Vec::new());
        }
        self.children
            .iter()
            .map(|c| {
                let dir = super::layout::child_dir(&c.dimension, &c.name)
                    .with_context(|| format!("{}: children", super::layout::CAMPAIGN))?;
                Ok(Child {
                    child: c.clone(),
                    dir,
                })
            })
            .collect()
    }

    /// The name this dataset itself answers to among the campaign's
    /// matrix combinations: the primary's, or the combination it holds.
    pub(crate) fn own_name(&self) -> Option<&str> {
        match &self.child {
            Some(c) => Some(c.name.as_str()),
            None => self
                .matrix
                .iter()
                .find(|c| c.primary)
                .map(|c| c.name.as_str()),
        }
    }
}

/// A system library the instances link, where the compiler found it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SystemLibrary {
    /// As named in `libraries` (`crypto` for `-lcrypto`).
    pub name: String,
    /// The file linked, through its links (`/usr/lib/…/libcrypto.so.3`).
    pub file: String,
    /// The version in the file's name (`3`), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    pub sha256: String,
    /// The algorithms that link it.
    pub algorithms: Vec<String>,
}

/// What the pages need to know about an algorithm, without machine paths.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlgorithmInfo {
    pub id: String,
    pub name: String,
    pub kind: super::kinds::Kind,
    pub api: super::kinds::ApiFamily,
    pub description: String,
    pub links: std::collections::BTreeMap<String, String>,
    /// The TOML file, relative to the project root.
    pub toml: String,
    /// The KAT manifest, relative to the project root.
    pub kat_manifest: String,
    pub known_issues: Vec<KnownIssueInfo>,
    pub survey_note: Option<String>,
    pub implementations: Vec<String>,
    pub labels: Vec<String>,
    /// The algorithm's own helper wraps (beyond the campaign's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profile_wraps: Vec<super::settings::Wrap>,
    /// The helper classes its profile shows, in column order, with their
    /// titles; absent from records made before classes were recorded,
    /// whose pages show the ICCS hash and DRNG columns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_classes: Option<Vec<super::settings::ClassDef>>,
}

impl AlgorithmInfo {
    /// The classes of the profile columns (see `profile_classes`).
    pub(crate) fn helper_classes(&self) -> Vec<super::settings::ClassDef> {
        use super::settings::{ClassDef, HelperClass, ICCS_HASH_TITLE};
        self.profile_classes.clone().unwrap_or_else(|| {
            vec![
                ClassDef {
                    name: HelperClass::hash(),
                    title: ICCS_HASH_TITLE.into(),
                },
                ClassDef {
                    name: HelperClass::drng(),
                    title: "DRNG".into(),
                },
            ]
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KnownIssueInfo {
    /// Regular expression over labels.
    pub labels: String,
    /// `measure` or `exclude`.
    pub action: String,
    pub cause: String,
}

impl CampaignRecord {
    /// Whether the dataset comes from an emulated system (no timings).
    pub(crate) fn emulated(&self) -> bool {
        self.system_spec.as_ref().is_some_and(|s| s.emulated())
    }

    /// The span the pages report as the campaign: the measurements' own
    /// times when known, else this run's.
    pub(crate) fn span(&self) -> (&str, &str) {
        (
            self.measured_from_utc.as_deref().unwrap_or(&self.start_utc),
            self.measured_to_utc.as_deref().unwrap_or(&self.end_utc),
        )
    }
}
