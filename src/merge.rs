//! `pqbench merge <campaign> <dir>`: adds a dataset produced elsewhere —
//! another machine's `output/<campaign>/<system>/` or a published
//! `data/<system>/` — as that system of the campaign. The dataset is
//! checked first (schema, KAT log digests, statistics recomputed, and that
//! it comes from a host its registered system accepts); merging the same
//! dataset again changes nothing, and a different dataset for a system that
//! already has one is refused with the differing files named.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Serialize;

use crate::check::{check_system_dataset, CheckReport};
use crate::engine::Registry;
use crate::error::{ConfigError, Error};
use crate::fsutil::{self, foreign};
use crate::plan::{system, Plan, SystemSpec};
use crate::records::campaign::CampaignRecord;

#[derive(Debug, Clone, Serialize)]
pub struct MergeReport {
    pub system: String,
    /// `merged` or `already merged`.
    pub action: String,
    pub files: usize,
    /// The dataset directory, relative to the project root.
    pub destination: String,
    pub checked: CheckReport,
    /// The site's index after rendering, relative to the project root.
    pub site_index: Option<String>,
}

impl std::fmt::Display for MergeReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "system {}: {} ({} files in {}; {}{} KAT logs recomputed)",
            self.system,
            self.action,
            self.files,
            self.destination,
            self.checked
                .checked
                .iter()
                .map(|c| format!("{} {}, ", c.files, c.noun))
                .collect::<String>(),
            self.checked.kat_logs
        )?;
        if let Some(i) = &self.site_index {
            writeln!(f, "pages: {i}")?;
        }
        Ok(())
    }
}

/// Files of a dataset that merge: everything but run history and engine
/// state, relative to the dataset directory. The dataset comes from
/// elsewhere: a link in it, or a tree beyond `foreign::DATASET`, is an
/// error naming it.
fn dataset_files(dir: &Path) -> anyhow::Result<BTreeMap<String, PathBuf>> {
    foreign::regular_files(dir, foreign::DATASET, &|n| {
        n == "runs" || n.starts_with('.')
    })
}

/// The sha256 of a dataset file, read without following a link.
fn digest(path: &Path) -> Option<String> {
    foreign::read_regular(path, foreign::DATASET.file_bytes)
        .ok()
        .map(|b| fsutil::sha256_hex(&b))
}

fn refuse(message: String, help: &str) -> Error {
    ConfigError::new(message).help(help.to_string()).into()
}

pub fn merge(registry: &Registry, plan: &Plan, dir: &Path) -> Result<MergeReport, Error> {
    let _lock = crate::pipeline::locks::ProjectLock::acquire(plan, "merge")?;
    // Walked before anything is read from it: no link in it is followed.
    let incoming = dataset_files(dir).map_err(Error::input)?;
    let campaign_file = dir.join(crate::records::layout::CAMPAIGN);
    let record: CampaignRecord = fsutil::read_json(&campaign_file)
        .with_context(|| {
            format!(
                "{} is not a dataset (no readable campaign.json)",
                dir.display()
            )
        })
        .map_err(Error::input)?;
    if record.campaign != plan.campaign {
        return Err(refuse(
            format!(
                "{} is a dataset of campaign `{}`, not `{}`",
                dir.display(),
                record.campaign,
                plan.campaign
            ),
            "merge it into its own campaign",
        ));
    }
    let id = record.system.clone();
    if !plan.systems.contains(&id) {
        return Err(refuse(
            format!(
                "campaign {} has no system `{id}` (it has {})",
                plan.campaign,
                plan.systems.join(", ")
            ),
            "add the system to the campaign's `systems` and register it in campaigns/systems.toml",
        ));
    }
    let spec = registered(plan, &id)?;
    check_provenance(&spec, &record)?;
    let mut checked = CheckReport::default();
    check_system_dataset(dir, &id, registry, &mut checked).map_err(Error::input)?;
    if !checked.passed() {
        return Err(refuse(
            format!(
                "the dataset of system {id} does not check:\n  {}",
                checked.problems.join("\n  ")
            ),
            "merge a dataset exactly as pqbench wrote it",
        ));
    }
    let dest = plan
        .site_dir
        .parent()
        .context("the site directory has no parent")?
        .join(&id);
    let action = if dest.join(crate::records::layout::CAMPAIGN).is_file() {
        let present = dataset_files(&dest)?;
        let mut differ: Vec<&str> = Vec::new();
        for (rel, from) in &incoming {
            let same = present
                .get(rel)
                .is_some_and(|to| fsutil::sha256_file(to).ok() == digest(from));
            if !same {
                differ.push(rel);
            }
        }
        differ.extend(
            present
                .keys()
                .filter(|k| !incoming.contains_key(*k))
                .map(String::as_str),
        );
        if !differ.is_empty() {
            return Err(refuse(
                format!(
                    "system {id} already has a different dataset in {}; differing files: {}",
                    plan.display_path(&dest),
                    differ
                        .iter()
                        .take(8)
                        .copied()
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                "remove that dataset first if the new one should replace it",
            ));
        }
        "already merged"
    } else {
        install(plan, &incoming, &dest)?;
        "merged"
    };
    let rendered = crate::render::render_campaign(plan, registry)?;
    let index = rendered.site.join("index.html");
    Ok(MergeReport {
        system: id,
        action: action.into(),
        files: incoming.len(),
        destination: plan.display_path(&dest),
        checked,
        site_index: index.is_file().then(|| plan.display_path(&index)),
    })
}

/// Copies the dataset into a staging folder beside `dest` and renames it
/// into place, so a merge stopped at any moment leaves either no dataset
/// for the system or the whole one (a staging folder left by a killed
/// merge starts with `.`, which no dataset listing reads, and is cleared by
/// the next merge).
fn install(plan: &Plan, incoming: &BTreeMap<String, PathBuf>, dest: &Path) -> Result<(), Error> {
    let parent = dest
        .parent()
        .context("the dataset directory has no parent")?;
    let name = dest
        .file_name()
        .context("the dataset directory has no name")?
        .to_string_lossy();
    // Refused before anything is copied: a folder holding something but
    // no dataset is what an interrupted run left, not ours to replace.
    match std::fs::remove_dir(dest) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(_) => {
            return Err(refuse(
                format!(
                    "{} exists but holds no complete dataset (no campaign.json)",
                    plan.display_path(dest)
                ),
                "it is what an interrupted run of that system left: finish that run, or remove the folder, then merge again",
            ))
        }
    }
    let staging = parent.join(format!(".merge-{name}"));
    if staging.exists() {
        std::fs::remove_dir_all(&staging)
            .with_context(|| format!("clearing {}", staging.display()))?;
    }
    for (rel, from) in incoming {
        foreign::copy_regular(from, &staging.join(rel), foreign::DATASET.file_bytes)?;
    }
    fsutil::sync_dir(&staging)?;
    std::fs::rename(&staging, dest)
        .with_context(|| format!("moving the merged dataset to {}", dest.display()))?;
    fsutil::sync_dir(parent)?;
    Ok(())
}

/// The registration of `id` in this project.
fn registered(plan: &Plan, id: &str) -> Result<SystemSpec, Error> {
    let mut problems = crate::plan::Problems::default();
    let found = system::registry(&plan.project_root, &mut problems)
        .into_iter()
        .map(|(s, _)| s)
        .find(|s| s.id == id);
    if !problems.is_empty() {
        return Err(Error::ConfigMany(problems.into_vec()));
    }
    found.ok_or_else(|| {
        refuse(
            format!("system `{id}` is not registered in {}", system::REGISTRY),
            "register the system the dataset was produced on before merging it",
        )
    })
}

/// The dataset must come from a host its registration accepts: the same
/// kind of runner and architecture, the registered CPU model and, when the
/// registry pins them, one of its fingerprints.
fn check_provenance(spec: &SystemSpec, record: &CampaignRecord) -> Result<(), Error> {
    let id = &spec.id;
    let help = "merge only datasets produced on the machine the system registers";
    let theirs = record.system_spec.as_ref();
    if theirs.map(SystemSpec::emulated) != Some(spec.emulated()) {
        return Err(refuse(
            format!(
                "the dataset's system {id} ran {}, but it is registered {}",
                if theirs.is_some_and(SystemSpec::emulated) {
                    "under an emulator"
                } else {
                    "natively"
                },
                if spec.emulated() {
                    "as emulated"
                } else {
                    "as native"
                }
            ),
            help,
        ));
    }
    let target_arch = record.compiler.target.split('-').next().unwrap_or("");
    if spec.arch != "any" && target_arch != spec.arch {
        return Err(refuse(
            format!(
                "the dataset was built for {target_arch}, system {id} is registered as {}",
                spec.arch
            ),
            help,
        ));
    }
    if !spec.emulated() {
        if let Some(why) = spec.host_mismatch(target_arch, &record.environment_start.cpu_model) {
            return Err(refuse(why, help));
        }
    }
    if !spec.fingerprints.is_empty() && !spec.fingerprints.contains(&record.host_fingerprint) {
        return Err(refuse(
            format!(
                "the dataset comes from host {}, which system {id} does not register (it accepts {})",
                record.host_fingerprint,
                spec.fingerprints.join(", ")
            ),
            help,
        ));
    }
    Ok(())
}
