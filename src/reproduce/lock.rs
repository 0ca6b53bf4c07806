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
use std::sync::OnceLock;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engine::{Cx, Stage};
use crate::fsutil;
use crate::host::{Environment, HostCheck};
use crate::plan::{Instance, Plan};
use crate::records::campaign::CampaignRecord;
use crate::stages::{self, InstanceResults};
use crate::toolchain::Compiler;

pub const LOCK_VERSION: u32 = 1;
pub const LOCK_FILE: &str = "lock.json";
/// Environment variables that change what a run builds or loads.
const RECORDED_ENV: [&str; 3] = ["CC", "LD_PRELOAD", "LD_LIBRARY_PATH"];

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
}

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
    /// Every result file copied into the run directory, with its sha256.
    pub files: BTreeMap<String, String>,
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
    pub fn fixed() -> Seeds {
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageLock {
    pub key: String,
    pub result_sha256: Option<String>,
}

/// Writes the run directory of a finished run (called by the pipeline
/// after `campaign.json`); returns its path.
pub fn record_run(
    cx: &Cx,
    results: &BTreeMap<String, InstanceResults>,
    rec: &Recording,
) -> Result<PathBuf> {
    let plan = cx.plan;
    let campaign: CampaignRecord = fsutil::read_json(&plan.output_dir.join("campaign.json"))?;
    let instances = plan
        .instances
        .iter()
        .map(|inst| instance_lock(cx, inst, &results[&inst.key()], &campaign.cpus))
        .collect::<Result<Vec<_>>>()?;
    crate::measure::set_measuring_cpu(None);
    let runs_dir = rec
        .runs_dir
        .clone()
        .unwrap_or_else(|| plan.output_dir.join("runs"));
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
        support_version: cx.support.version.clone(),
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
    };
    std::fs::create_dir_all(&runs_dir)
        .with_context(|| format!("creating {}", runs_dir.display()))?;
    let staging = tempfile::Builder::new()
        .prefix(".tmp-")
        .tempdir_in(&runs_dir)?;
    for rel in result_files(plan) {
        let from = plan.output_dir.join(&rel);
        if from.is_file() {
            let sha = place(cx, &from, &staging.path().join(&rel))?;
            lock.files.insert(rel, sha);
        }
    }
    let digest = fsutil::sha256_hex(&serde_json::to_vec(&lock)?);
    lock.run_id = format!("{}-{}", compact_utc(&lock.start_utc), &digest[..8]);
    fsutil::write_json(&staging.path().join(LOCK_FILE), &lock)?;
    let dest = free_name(&runs_dir, &lock.run_id);
    let staged = staging.keep();
    std::fs::rename(&staged, &dest)
        .with_context(|| format!("moving the run directory to {}", dest.display()))?;
    cx.progress.note(&format!(
        "run {} recorded in {}",
        lock.run_id,
        plan.display_path(&dest)
    ));
    let _ = rec.written.set(dest.clone());
    Ok(dest)
}

fn instance_lock(
    cx: &Cx,
    inst: &Instance,
    r: &InstanceResults,
    cpus: &[usize],
) -> Result<InstanceLock> {
    let plan = cx.plan;
    let kat = r.kat.as_ref().map(|k| k.final_attempt());
    let profile = kat.map(|a| a.profile.clone()).or_else(|| {
        r.build
            .as_ref()
            .and_then(|b| b.built())
            .map(|a| a.profile.clone())
    });
    let flags = profile
        .as_ref()
        .and_then(|p| plan.flag_profiles.iter().find(|f| &f.name == p));
    let library = kat.and_then(|a| a.library_sha256.clone()).or_else(|| {
        r.build
            .as_ref()
            .and_then(|b| b.built())
            .and_then(|a| a.library_sha256.clone())
    });
    // Measuring stages key on the CPU; the pipeline shards whole
    // algorithms over the CPUs the same way.
    let shards = crate::engine::shard_by_algorithm(&plan.instances, cpus.len().max(1));
    let index = plan.instances.iter().position(|i| i.key() == inst.key());
    let shard = shards
        .iter()
        .position(|s| index.is_some_and(|i| s.contains(&i)));
    crate::measure::set_measuring_cpu(shard.and_then(|k| cpus.get(k).copied()));
    let mut stages = BTreeMap::new();
    use stages::{build, kat as katst, memory, profile as prof, sizes, survey, time};
    stage_lock(cx, &build::BuildStage, inst, r, &mut stages)?;
    stage_lock(cx, &katst::KatStage, inst, r, &mut stages)?;
    stage_lock(cx, &time::TimeStage, inst, r, &mut stages)?;
    stage_lock(cx, &memory::MemoryStage, inst, r, &mut stages)?;
    stage_lock(cx, &sizes::SizesStage, inst, r, &mut stages)?;
    stage_lock(cx, &prof::ProfileStage, inst, r, &mut stages)?;
    stage_lock(cx, &survey::SurveyStage, inst, r, &mut stages)?;
    Ok(InstanceLock {
        instance: inst.key(),
        algorithm: inst.algorithm.clone(),
        label: inst.label.clone(),
        implementation: inst.implementation.clone(),
        inputs: build::build_manifest(cx, inst)?.entries,
        profile,
        cflags: flags.map(|f| f.cflags.clone()).unwrap_or_default(),
        ldflags: flags.map(|f| f.ldflags.clone()).unwrap_or_default(),
        library_sha256: library,
        kat_status: kat.map(|a| a.status.to_string()),
        kat_log_sha256: kat.map(|a| a.log_sha256.clone()),
        kat_output_sha256: kat.and_then(|a| a.output_sha256.clone()),
        counter: r
            .time
            .as_ref()
            .and_then(|t| t.ops.iter().find_map(|o| o.counter.clone())),
        median_cycles: r
            .time
            .iter()
            .flat_map(|t| &t.ops)
            .filter_map(|o| Some((o.op.clone(), o.summary.as_ref()?.median_cycles)))
            .collect(),
        stages,
    })
}

/// The stage's key exactly as the engine computed it (the final results
/// hold everything the stage's manifest reads), and its stored result.
fn stage_lock<S: Stage>(
    cx: &Cx,
    stage: &S,
    inst: &Instance,
    r: &InstanceResults,
    out: &mut BTreeMap<String, StageLock>,
) -> Result<()> {
    if !cx.plan.runs(S::NAME) {
        return Ok(());
    }
    let Some(m) = stage.manifest(cx, inst, r)? else {
        return Ok(());
    };
    let key = m.key();
    let stored: Option<Value> = cx.cache.get(S::NAME.as_str(), &key);
    let result_sha256 = stored
        .map(|v| serde_json::to_vec(&v).map(|b| fsutil::sha256_hex(&b)))
        .transpose()?;
    out.insert(
        S::NAME.as_str().to_string(),
        StageLock { key, result_sha256 },
    );
    Ok(())
}

/// The run-level records and, per instance of the plan, its operation and
/// profile records and KAT log (never stale files of removed instances).
fn result_files(plan: &Plan) -> Vec<String> {
    let mut files: Vec<String> = ["campaign.json", "build.json", "sizes.json", "survey.json"]
        .map(String::from)
        .to_vec();
    for inst in &plan.instances {
        for op in inst.kind.operations() {
            files.push(crate::records::operation::record_path(
                &inst.algorithm,
                &inst.label,
                op,
            ));
            files.push(crate::records::analysis::profile_path(
                &inst.algorithm,
                &inst.label,
                op,
            ));
        }
        files.push(format!("kat/{}/{}.log", inst.algorithm, inst.label));
    }
    files
}

/// Stores `from` as a blob and links it to `to` (copying when the file
/// system cannot link); returns its sha256.
fn place(cx: &Cx, from: &Path, to: &Path) -> Result<String> {
    let sha = cx.cache.put_blob_file(from)?;
    if let Some(dir) = to.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let blob = cx.cache.blob_path(&sha);
    if std::fs::hard_link(&blob, to).is_err() {
        fsutil::copy_atomic(from, to)?;
    }
    Ok(sha)
}

/// `runs/<id>`, or `<id>-2`, ... when two runs share a second and a digest.
fn free_name(runs: &Path, id: &str) -> PathBuf {
    let mut dest = runs.join(id);
    let mut n = 2;
    while dest.exists() {
        dest = runs.join(format!("{id}-{n}"));
        n += 1;
    }
    dest
}

/// `2025-09-25T10:02:21` → `20250925T100221Z`.
fn compact_utc(utc: &str) -> String {
    let digits: String = utc.chars().filter(|c| *c != '-' && *c != ':').collect();
    format!("{digits}Z")
}

/// The plan as JSON with every path under the project root made relative
/// to it (the root itself becomes `.`), so a lock names no machine paths
/// beyond the tools it used.
pub fn relative_plan(plan: &Plan) -> Result<Value> {
    let mut v = serde_json::to_value(plan)?;
    let root = plan.project_root.display().to_string();
    strip_root(&mut v, &root);
    Ok(v)
}

fn strip_root(v: &mut Value, root: &str) {
    match v {
        Value::String(s) if s == root => *s = ".".into(),
        Value::String(s) if s.contains(root) => *s = s.replace(&format!("{root}/"), ""),
        Value::Array(items) => items.iter_mut().for_each(|x| strip_root(x, root)),
        Value::Object(map) => map.values_mut().for_each(|x| strip_root(x, root)),
        _ => {}
    }
}

fn config_files(plan: &Plan) -> BTreeMap<String, Option<String>> {
    let mut paths = vec![plan.campaign_file.clone()];
    for a in &plan.algorithms {
        paths.push(plan.project_root.join(&a.toml));
        paths.push(a.kat_manifest.clone());
    }
    paths
        .into_iter()
        .map(|p| (plan.display_path(&p), fsutil::sha256_file(&p).ok()))
        .collect()
}

pub fn load(run_dir: &Path) -> Result<Lock> {
    let lock: Lock = fsutil::read_json(&run_dir.join(LOCK_FILE))?;
    if lock.lock_version != LOCK_VERSION {
        bail!(
            "{} has lock version {}, this pqbench reads version {LOCK_VERSION}",
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
pub fn find_run(root: &Path, arg: &str) -> Result<PathBuf> {
    for base in [PathBuf::new(), root.to_path_buf()] {
        let p = base.join(arg);
        if p.is_file() && p.file_name().is_some_and(|n| n == LOCK_FILE) {
            return Ok(p.parent().unwrap_or(Path::new(".")).to_path_buf());
        }
        if p.join(LOCK_FILE).is_file() || p.join("campaign.json").is_file() {
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
    fn paths_under_the_root_become_relative() {
        let mut v = serde_json::json!({
            "root": "/p/proj",
            "src": ["/p/proj/algorithms/x/a.c", "/usr/include"],
            "flag": "-I/p/proj/algorithms/x",
            "other": "/p/project2/y"
        });
        strip_root(&mut v, "/p/proj");
        assert_eq!(v["root"], ".");
        assert_eq!(v["src"][0], "algorithms/x/a.c");
        assert_eq!(v["src"][1], "/usr/include");
        assert_eq!(v["flag"], "-Ialgorithms/x");
        assert_eq!(v["other"], "/p/project2/y");
    }

    #[test]
    fn run_ids_sort_by_time() {
        assert_eq!(compact_utc("2025-09-25T10:02:21"), "20250925T100221Z");
        assert!(compact_utc("2025-09-25T10:02:21") < compact_utc("2025-10-01T00:00:00"));
    }
}
