//! Lock files: every run leaves `output/<campaign>/<system>/runs/<run-id>/`
//! holding `lock.json` (every resolved input of the run) and its own copies
//! of the run's results, so the run can be reproduced and compared long
//! after `output/<campaign>/<system>/` has been overwritten by later runs.
//!
//! The copies are hard links to content-addressed blobs in the cache where
//! the file system allows (identical results of many runs cost one copy),
//! and plain copies otherwise; either way a run directory stands alone and
//! survives a deleted cache. It is assembled under `runs/.tmp-*` and renamed
//! into place, so a killed run leaves no half-written run directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::campaign::ChildDataset;
use super::host::{Environment, HostCheck};
use super::toolchain::Compiler;
use crate::fsutil;

pub(crate) const LOCK_VERSION: u32 = 2;
/// The oldest lock version this pqbench reads: version 1 differs only in
/// naming its further runs `matrix` (read through serde aliases).
const OLDEST_LOCK_VERSION: u32 = 1;
pub(crate) const LOCK_FILE: &str = super::layout::LOCK;
/// Environment variables that change what a run builds or loads.
pub(crate) const RECORDED_ENV: [&str; 3] = ["CC", "LD_PRELOAD", "LD_LIBRARY_PATH"];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lock {
    pub lock_version: u32,
    /// `YYYYMMDDTHHMMSSZ-<8 hex>`: campaign start (UTC) and the first
    /// digits of the sha256 of this lock with an empty `run_id`; sorts by time.
    pub run_id: String,
    pub reproduces: Option<String>,
    pub pqbench_version: String,
    /// Part of every stage key (`STAGE_LOGIC_VERSION`).
    pub stage_logic_version: String,
    pub campaign: String,
    pub system: String,
    pub start_utc: String,
    pub end_utc: String,
    pub fresh_cache: bool,
    /// The resolved plan (campaign and algorithm configuration, planning
    /// settings) with project paths made relative to the project root.
    pub plan: Value,
    /// sha256 of the campaign TOML, the algorithm TOMLs and KAT manifests.
    pub config_files: BTreeMap<String, Option<String>>,
    pub compiler: Compiler,
    /// `support::version()`: sha256 of the embedded C support code.
    pub support_version: String,
    pub seeds: Seeds,
    pub host: HostLock,
    /// Values of `CC`, `LD_PRELOAD`, `LD_LIBRARY_PATH` when set.
    pub environment: BTreeMap<String, String>,
    pub instances: Vec<InstanceLock>,
    /// When the run was split into shards that ran elsewhere (SSH, Slurm):
    /// which instances each ran, where, on which host.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<ShardLock>,
    /// The runs of the further datasets this run made just before its
    /// own (a `[matrix]`'s combinations, or any other dimension's): each
    /// has its own lock under `<dimension>/<name>/runs/`. Version 1 locks
    /// called it `matrix`, with matrix combinations only.
    #[serde(default, skip_serializing_if = "Vec::is_empty", alias = "matrix")]
    pub children: Vec<ChildRunRecord>,
    /// Every result file copied into the run directory, with its sha256.
    pub files: BTreeMap<String, String>,
}

/// One further dataset's run, as the campaign's lock names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChildRunRecord {
    /// Its dimension; version 1 locks name matrix combinations only.
    #[serde(default = "matrix_dimension")]
    pub dimension: String,
    #[serde(alias = "combination")]
    pub name: String,
    pub run_id: String,
}

fn matrix_dimension() -> String {
    super::layout::MATRIX.to_string()
}

impl ChildRunRecord {
    pub(crate) fn new(child: &ChildDataset, run_id: String) -> ChildRunRecord {
        ChildRunRecord {
            dimension: child.dimension.clone(),
            name: child.name.clone(),
            run_id,
        }
    }

    pub(crate) fn child(&self) -> ChildDataset {
        ChildDataset {
            dimension: self.dimension.clone(),
            name: self.name.clone(),
        }
    }
}

/// A further dataset's run that a campaign's run names, where it lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChildRun {
    pub child: ChildDataset,
    pub dir: PathBuf,
}

impl Lock {
    /// The runs of the further datasets this run named, found from its
    /// own directory: see [`child_runs`].
    pub(crate) fn child_runs(&self, run_dir: &Path) -> Result<Vec<ChildRun>> {
        child_runs(&self.children, run_dir)
    }
}

/// Where the further datasets' runs `runs` of the run at `run_dir`
/// (`<dataset>/runs/<id>/`) lie: each at
/// `<dataset>/<its dimension>/<its name>/runs/<its id>/`. Names that could
/// leave the dataset are refused.
pub(crate) fn child_runs(runs: &[ChildRunRecord], run_dir: &Path) -> Result<Vec<ChildRun>> {
    if runs.is_empty() {
        return Ok(Vec::new());
    }
    let dataset = run_dir.parent().and_then(Path::parent).with_context(|| {
        format!(
            "{}: the run directory has no dataset above it",
            run_dir.display()
        )
    })?;
    let mut out = Vec::new();
    for r in runs {
        super::layout::safe_component(&r.run_id)?;
        out.push(ChildRun {
            child: r.child(),
            dir: dataset
                .join(super::layout::child_dir(&r.dimension, &r.name)?)
                .join(super::layout::RUNS)
                .join(&r.run_id),
        });
    }
    Ok(out)
}

/// The fixed seeds of the run. They are constants of the support code (so
/// covered by `support_version`); spelled out here so a reader of a lock
/// knows them without reading C.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Seeds {
    pub kat_ngcc: String,
    pub kat_nist: String,
    pub driver: String,
    pub bootstrap: String,
}

impl Seeds {
    pub(crate) fn fixed() -> Seeds {
        Seeds {
            kat_ngcc: "seed DRNG nonce \"seed\" x16 (64 bytes); message DRNG nonce \"msg\" x21 + \"m\"; each record's 64-byte seed re-initialises drng_algorithm".into(),
            kat_nist: "AES-256 CTR_DRBG, entropy bytes 0x00..0x2f, no personalisation".into(),
            driver: "library DRNG seeded once with bytes 0x00..0x2f; message msg[i] = (131*i + 64) mod 256, 64 bytes".into(),
            bootstrap: format!("SplitMix64 seed {:#018x}", crate::stats::BOOTSTRAP_SEED),
        }
    }
}

/// The measuring host as the run saw it at its start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostLock {
    pub fingerprint: String,
    pub cpus: Vec<usize>,
    pub checks: Vec<HostCheck>,
    pub environment: Environment,
    pub counter: Option<String>,
    pub counter_hz: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InstanceLock {
    pub instance: String,
    pub algorithm: String,
    pub label: String,
    pub implementation: String,
    /// The build manifest: sha256 of every source and header, defines,
    /// flag profiles, compiler identity, support version, target.
    pub inputs: BTreeMap<String, Value>,
    /// The flag profile whose library later stages used, and its flags.
    pub profile: Option<String>,
    pub cflags: Vec<String>,
    pub ldflags: Vec<String>,
    pub library_sha256: Option<String>,
    pub kat_status: Option<String>,
    pub kat_log_sha256: Option<String>,
    /// sha256 of the generated KAT file (only when it was generated).
    pub kat_output_sha256: Option<String>,
    /// Counter and median cycles per timed operation: repeated runs of an
    /// unchanged library on one host measure its run-to-run dispersion
    /// (`compare::threshold`) from locks alone.
    pub counter: Option<String>,
    pub median_cycles: BTreeMap<String, f64>,
    /// Per stage: the cache key of its inputs and the sha256 of the
    /// stored result (canonical JSON), when the stage produced one.
    pub stages: BTreeMap<String, StageLock>,
}

/// One shard of a run that ran elsewhere.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardLock {
    pub index: usize,
    pub instances: Vec<String>,
    /// Where it ran: `user@host:/work` for SSH, the Slurm job and task.
    pub ran_on: String,
    pub host_fingerprint: String,
    /// The run id of the shard's own run on that side.
    pub run_id: String,
    /// Expected seconds when it was planned.
    pub cost_seconds: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageLock {
    pub key: String,
    pub result_sha256: Option<String>,
    /// The campaign (`<campaign>/<system>`) whose result this run took
    /// (`reuse-measurements-from`); absent for the run's own results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lent_by: Option<String>,
}

/// `runs/<id>`, or `<id>-2`, ... when two runs share a second and a digest.
pub(crate) fn free_name(runs: &Path, id: &str) -> PathBuf {
    let mut dest = runs.join(id);
    let mut n = 2;
    while dest.exists() {
        dest = runs.join(format!("{id}-{n}"));
        n += 1;
    }
    dest
}

/// `2025-09-25T10:02:21` → `20250925T100221Z`.
pub(crate) fn compact_utc(utc: &str) -> String {
    let digits: String = utc.chars().filter(|c| *c != '-' && *c != ':').collect();
    format!("{digits}Z")
}

pub fn load(run_dir: &Path) -> Result<Lock> {
    let lock: Lock = fsutil::read_json(&run_dir.join(LOCK_FILE))?;
    if !(OLDEST_LOCK_VERSION..=LOCK_VERSION).contains(&lock.lock_version) {
        bail!(
            "{} has lock version {}, this pqbench reads versions {OLDEST_LOCK_VERSION} to {LOCK_VERSION}",
            run_dir.join(LOCK_FILE).display(),
            lock.lock_version
        );
    }
    Ok(lock)
}

/// Finds a run: a path to a run directory, its `lock.json`, or any dataset
/// directory holding `campaign.json` (tried as given, then under the
/// project root); else a run id, or a unique prefix of one, under
/// `<root>/output/*/*/runs/`.
pub(crate) fn find_run(root: &Path, arg: &str) -> Result<PathBuf> {
    for base in [PathBuf::new(), root.to_path_buf()] {
        let p = base.join(arg);
        if p.is_file() && p.file_name().is_some_and(|n| n == LOCK_FILE) {
            return Ok(p.parent().unwrap_or(Path::new(".")).to_path_buf());
        }
        if p.join(LOCK_FILE).is_file() || p.join(super::layout::CAMPAIGN).is_file() {
            return Ok(p);
        }
    }
    let mut found = Vec::new();
    for runs in glob::glob(&format!("{}/output/*/*/runs", root.display()))?.flatten() {
        for e in std::fs::read_dir(&runs).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.starts_with('.') && name.starts_with(arg) && e.path().join(LOCK_FILE).is_file()
            {
                found.push((name == arg, e.path()));
            }
        }
    }
    if let Some((_, exact)) = found.iter().find(|(exact, _)| *exact) {
        return Ok(exact.clone());
    }
    match found.len() {
        1 => Ok(found.remove(0).1),
        0 => bail!(
            "no run `{arg}`: give a run id (see output/<campaign>/<system>/runs/), a run directory or its lock.json"
        ),
        n => bail!(
            "`{arg}` matches {n} runs ({}); give more of the run id",
            found
                .iter()
                .map(|(_, p)| p.file_name().unwrap_or_default().to_string_lossy())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_sort_by_time() {
        assert_eq!(compact_utc("2025-09-25T10:02:21"), "20250925T100221Z");
        assert!(compact_utc("2025-09-25T10:02:21") < compact_utc("2025-10-01T00:00:00"));
    }

    fn run(name: &str, run_id: &str) -> ChildRunRecord {
        ChildRunRecord {
            dimension: "matrix".into(),
            name: name.into(),
            run_id: run_id.into(),
        }
    }

    #[test]
    fn a_combinations_run_lies_in_its_own_folder_of_the_same_dataset() {
        let here = Path::new("out/c/x86/runs/20250925T100221Z");
        let found = child_runs(&[run("clang.O3", "20250925T100100Z")], here).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].child.name, "clang.O3");
        assert_eq!(
            found[0].dir,
            Path::new("out/c/x86/matrix/clang.O3/runs/20250925T100100Z")
        );
        assert!(child_runs(&[], Path::new("r")).unwrap().is_empty());
    }

    #[test]
    fn a_lock_naming_a_run_outside_its_dataset_is_refused() {
        let here = Path::new("out/c/x86/runs/r1");
        for (c, id) in [("../../x", "r"), ("gcc.O2", "../../../etc"), ("a/b", "r")] {
            assert!(child_runs(&[run(c, id)], here).is_err(), "{c} {id}");
        }
    }
}
