//! The run directory every run leaves: `runs/<run-id>/lock.json` with every
//! resolved input and the key and result digest of every stage, beside its
//! own copies of the run's records (hard links to cache blobs where the
//! file system allows). Assembled under `runs/.tmp-*` and renamed into
//! place, so a killed run leaves no half-written run directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{Context, Result};

use crate::context::Cx;
use crate::engine::{AllResults, Registry, Results};
use crate::fsutil;
use crate::plan::recorded::{config_files, relative_plan};
use crate::plan::{Instance, Plan};
use crate::records::campaign::CampaignRecord;
use crate::records::lock::{
    compact_utc, free_name, HostLock, InstanceLock, Lock, Seeds, StageLock, LOCK_FILE,
    LOCK_VERSION, RECORDED_ENV,
};

/// How the pipeline records a run (`pipeline::run_with`).
#[derive(Debug, Default)]
pub struct Recording {
    /// Where run directories go; default `<output_dir>/runs`.
    pub runs_dir: Option<PathBuf>,
    /// Run id of the run this one reproduces.
    pub reproduces: Option<String>,
    /// The run computed every stage in a fresh cache (nothing reused);
    /// its plan's output and cache paths are scratch paths, recorded as
    /// the canonical ones instead.
    pub fresh_cache: bool,
    /// The run directory, once written.
    pub written: OnceLock<PathBuf>,
    /// The runs of the further datasets, once made.
    pub children: OnceLock<Vec<crate::records::lock::ChildRunRecord>>,
    /// Which recorded run of each further dataset this one reproduces.
    pub children_reproduce: BTreeMap<crate::records::campaign::ChildDataset, String>,
}

/// Writes the run directory of a finished run (called by the pipeline
/// after `campaign.json`); returns its path.
pub(crate) fn record_run(
    cx: &Cx,
    registry: &Registry,
    all: &AllResults,
    rec: &Recording,
) -> Result<PathBuf> {
    let plan = cx.plan;
    let campaign: CampaignRecord =
        fsutil::read_json(&plan.output_dir.join(crate::records::layout::CAMPAIGN))?;
    let instances = plan
        .instances
        .iter()
        .map(|inst| instance_lock(cx, registry, inst, all.of(&inst.key())))
        .collect::<Result<Vec<_>>>()?;
    let runs_dir = rec
        .runs_dir
        .clone()
        .unwrap_or_else(|| plan.output_dir.join(crate::records::layout::RUNS));
    let mut shown = plan.clone();
    if rec.fresh_cache {
        // Scratch paths mean nothing to a reader: record where the run belongs.
        shown.output_dir = runs_dir.parent().unwrap_or(&runs_dir).to_path_buf();
        shown.site_dir = shown.output_dir.with_file_name("site");
        shown.cache_dir = plan.project_root.join("output").join(".cache");
    }
    let mut lock = Lock {
        lock_version: LOCK_VERSION,
        run_id: String::new(),
        reproduces: rec.reproduces.clone(),
        pqbench_version: env!("CARGO_PKG_VERSION").to_string(),
        stage_logic_version: crate::STAGE_LOGIC_VERSION.to_string(),
        campaign: plan.campaign.clone(),
        system: plan.system.clone(),
        start_utc: campaign.start_utc.clone(),
        end_utc: campaign.end_utc.clone(),
        fresh_cache: rec.fresh_cache,
        plan: relative_plan(&shown)?,
        config_files: config_files(plan),
        compiler: cx.compiler.clone(),
        support_version: cx.support_version(),
        seeds: Seeds::fixed(),
        host: HostLock {
            fingerprint: campaign.host_fingerprint.clone(),
            cpus: campaign.cpus.clone(),
            checks: campaign.host_checks.clone(),
            environment: campaign.environment_start.clone(),
            counter: campaign.counter.clone(),
            counter_hz: campaign.counter_hz,
        },
        environment: RECORDED_ENV
            .iter()
            .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
            .collect(),
        instances,
        files: BTreeMap::new(),
        shards: Vec::new(),
        children: rec.children.get().cloned().unwrap_or_default(),
    };
    let dest = file_run(plan, registry, &cx.cache, &mut lock, &runs_dir)?;
    cx.progress.note(&format!(
        "run {} recorded in {}",
        lock.run_id,
        plan.display_path(&dest)
    ));
    let _ = rec.written.set(dest.clone());
    Ok(dest)
}

/// Files `lock` with its own copies of the dataset's result files under
/// `runs_dir/<run-id>/` (assembled under `.tmp-*`, then renamed).
pub(crate) fn file_run(
    plan: &Plan,
    registry: &Registry,
    cache: &crate::cache::Cache,
    lock: &mut Lock,
    runs_dir: &Path,
) -> Result<PathBuf> {
    std::fs::create_dir_all(runs_dir)
        .with_context(|| format!("creating {}", runs_dir.display()))?;
    let staging = tempfile::Builder::new()
        .prefix(".tmp-")
        .tempdir_in(runs_dir)?;
    let mut present = Present::default();
    for rel in result_files(plan, registry) {
        let from = plan.output_dir.join(&rel);
        if present.is_file(&from) {
            let sha = place(cache, &from, &staging.path().join(&rel))?;
            lock.files.insert(rel, sha);
        }
    }
    lock.run_id.clear();
    let digest = fsutil::sha256_hex(&serde_json::to_vec(&lock)?);
    lock.run_id = format!("{}-{}", compact_utc(&lock.start_utc), &digest[..8]);
    fsutil::write_json(&staging.path().join(LOCK_FILE), &lock)?;
    let dest = free_name(runs_dir, &lock.run_id);
    let staged = staging.keep();
    std::fs::rename(&staged, &dest)
        .with_context(|| format!("moving the run directory to {}", dest.display()))?;
    Ok(dest)
}

/// The instance's lock entry: what every stage says of it, and the flags
/// of the profile whose library later stages used.
fn instance_lock(
    cx: &Cx,
    registry: &Registry,
    inst: &Instance,
    r: &Results,
) -> Result<InstanceLock> {
    // Every stage that produced a result, as the engine found or stored it.
    let stages = r
        .keys()
        .iter()
        .map(|(name, k)| {
            (
                name.to_string(),
                StageLock {
                    key: k.key.clone(),
                    result_sha256: Some(k.result_sha256.clone()),
                    lent_by: k.lent_by.clone(),
                },
            )
        })
        .collect();
    let mut entry = InstanceLock {
        instance: inst.key(),
        algorithm: inst.algorithm.clone(),
        label: inst.label.clone(),
        implementation: inst.implementation.clone(),
        inputs: BTreeMap::new(),
        profile: None,
        cflags: Vec::new(),
        ldflags: Vec::new(),
        library_sha256: None,
        kat_status: None,
        kat_log_sha256: None,
        kat_output_sha256: None,
        counter: None,
        median_cycles: BTreeMap::new(),
        stages,
    };
    registry.lock_entry(cx, inst, r, &mut entry)?;
    let flags = entry.profile.as_ref().and_then(|p| cx.profile_for(inst, p));
    if let Some(f) = flags {
        entry.cflags = f.cflags;
        entry.ldflags = f.ldflags;
    }
    Ok(entry)
}

/// The run-level records and, per instance of the plan, every record file
/// a stage may publish for it and its KAT log (never stale files of
/// removed instances).
fn result_files(plan: &Plan, registry: &Registry) -> Vec<String> {
    let mut files: Vec<String> = crate::records::layout::TOP_FILES.map(String::from).to_vec();
    for inst in &plan.instances {
        files.extend(registry.record_files(inst));
        files.push(crate::records::layout::kat_log(
            &inst.algorithm,
            &inst.label,
        ));
    }
    files
}

/// The regular files of each directory asked about, listed once: a run
/// of many instances asks about a dozen files each (every stage's), most
/// in the same few directories, so one listing replaces a `stat` per file.
/// An entry that is a link is not a file here.
#[derive(Default)]
struct Present {
    dirs: std::collections::HashMap<PathBuf, std::collections::HashSet<std::ffi::OsString>>,
}

impl Present {
    fn is_file(&mut self, p: &Path) -> bool {
        let (Some(dir), Some(name)) = (p.parent(), p.file_name()) else {
            return false;
        };
        self.dirs
            .entry(dir.to_path_buf())
            .or_insert_with(|| {
                std::fs::read_dir(dir)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                    .map(|e| e.file_name())
                    .collect()
            })
            .contains(name)
    }
}

/// Stores `from` as a blob and links it to `to` (copying when the file
/// system cannot link); returns its sha256.
fn place(cache: &crate::cache::Cache, from: &Path, to: &Path) -> Result<String> {
    let sha = cache.put_blob_file(from)?;
    if let Some(dir) = to.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let blob = cache.blob_path(&sha);
    if std::fs::hard_link(&blob, to).is_err() {
        fsutil::copy_atomic(from, to)?;
    }
    Ok(sha)
}
