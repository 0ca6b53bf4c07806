//! Running the registry's stages: each instance stage over every instance
//! (in parallel on the current pool, or sharded on the measuring CPUs with a
//! pool of one thread per shard), then the campaign stages. A job that
//! fails, or panics, is a failure of that item: it is reported, counted,
//! and the run goes on.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{anyhow, Result};
use rayon::prelude::*;
use serde::Serialize;
use serde_json::Value;

use super::freshness::{stored, Stored};
use super::registry::{store, ErasedStage, Registry, StageInfo};
use super::results::{AllResults, Results, StageKey};
use super::state::{self, LastInputs};
use super::{Job, Policy};
use crate::cache::Lookup;
use crate::context::Cx;
use crate::plan::{Instance, Plan};

/// Produces the result of one job. The real runner does the stage's work;
/// tests substitute canned results (see `engine::testing`).
pub trait Runner: Sync {
    fn run(&self, stage: StageInfo, job: &Job, work: &dyn Fn() -> Result<Value>) -> Result<Value>;

    fn run_campaign(&self, _stage: StageInfo, work: &dyn Fn() -> Result<Value>) -> Result<Value> {
        work()
    }
}

/// Runs every stage for real.
pub struct RealRunner;

impl Runner for RealRunner {
    fn run(&self, _: StageInfo, _: &Job, work: &dyn Fn() -> Result<Value>) -> Result<Value> {
        work()
    }
}

/// Points where the pipeline acts between stages.
pub struct Hooks<'a> {
    /// Before the first measuring stage (the host check); an error stops
    /// the run.
    pub before_measuring: &'a (dyn Fn() -> Result<()> + Sync),
    /// After the instance stages, before the campaign stages (records).
    pub before_campaign: &'a (dyn Fn(&AllResults) -> Result<()> + Sync),
}

/// One item a stage could not produce.
#[derive(Debug, Clone, Serialize)]
pub struct StageFailure {
    pub stage: &'static str,
    /// `<id>/<label>`, or `campaign`.
    pub instance: String,
    pub message: String,
}

impl std::fmt::Display for StageFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.stage, self.instance, self.message)
    }
}

/// Counters of a run: instance-stage results reused and computed (campaign
/// stages such as render follow every change of the records, so they are
/// not counted), and every failed job.
#[derive(Debug, Default)]
pub struct RunTally {
    pub reused: AtomicUsize,
    pub computed: AtomicUsize,
    pub failures: Mutex<Vec<StageFailure>>,
    /// A failure no later job can escape (a full disk, a file-size limit):
    /// the run stops after the current stage with this error.
    fatal: Mutex<Option<anyhow::Error>>,
}

impl RunTally {
    fn fail(&self, cx: &Cx, stage: &'static str, unit: &str, e: &anyhow::Error) {
        if crate::fsutil::is_storage_full(e) {
            let mut fatal = self.fatal.lock().expect("tally lock");
            if fatal.is_none() {
                *fatal = Some(anyhow!("{e:#}"));
            }
            return;
        }
        let f = StageFailure {
            stage,
            instance: unit.to_string(),
            message: format!("{e:#}"),
        };
        cx.progress.error(&f.to_string());
        self.failures.lock().expect("tally lock").push(f);
    }

    pub fn failures(&self) -> Vec<StageFailure> {
        self.failures.lock().expect("tally lock").clone()
    }
}

/// The measuring CPU of each instance (by plan order): whole algorithms
/// stay on one CPU, the largest algorithms first onto the least loaded one.
pub fn cpu_assignment(plan: &Plan, cpus: &[usize]) -> Vec<Option<usize>> {
    let shards = shard_by_algorithm(&plan.instances, cpus.len().max(1));
    let mut out = vec![None; plan.instances.len()];
    for (k, members) in shards.iter().enumerate() {
        for &i in members {
            out[i] = cpus.get(k).copied();
        }
    }
    out
}

/// Splits instance indices into `n` shards, whole algorithms at a time.
pub fn shard_by_algorithm(instances: &[Instance], n: usize) -> Vec<Vec<usize>> {
    let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, inst) in instances.iter().enumerate() {
        groups.entry(inst.algorithm.as_str()).or_default().push(i);
    }
    let mut groups: Vec<Vec<usize>> = groups.into_values().collect();
    groups.sort_by_key(|g| std::cmp::Reverse(g.len()));
    let mut shards = vec![Vec::new(); n.max(1)];
    for g in groups {
        let target = shards
            .iter_mut()
            .min_by_key(|s| s.len())
            .expect("at least one shard");
        target.extend(g);
    }
    for s in &mut shards {
        s.sort();
    }
    shards
}

/// Runs the campaign's stages in registry order.
pub fn run(
    cx: &Cx,
    registry: &Registry,
    runner: &dyn Runner,
    cpus: &[usize],
    hooks: &Hooks,
) -> Result<(AllResults, RunTally)> {
    let tally = RunTally::default();
    let selected = registry.selected(&cx.plan.stages);
    let assignment = cpu_assignment(cx.plan, cpus);
    let mut all = AllResults::default();
    for inst in &cx.plan.instances {
        all.instances.insert(inst.key(), Results::default());
    }
    let mut measuring_started = false;
    for info in selected.iter().filter(|i| i.policy != Policy::Campaign) {
        let stage = registry
            .instance_stage(info.name)
            .expect("selected stages are registered");
        if info.policy == Policy::Measuring && !measuring_started {
            (hooks.before_measuring)()?;
            measuring_started = true;
        }
        let outs = run_instance_stage(cx, stage, &all, &assignment, runner, &tally);
        if let Some(e) = tally.fatal.lock().expect("tally lock").take() {
            return Err(e);
        }
        for (unit, done) in outs {
            if let Some(r) = all.instances.get_mut(&unit) {
                store(r, *info, done.slot);
                r.put_key(info.name, done.key);
            }
        }
    }
    (hooks.before_campaign)(&all)?;
    for info in selected.iter().filter(|i| i.policy == Policy::Campaign) {
        run_campaign_stage(cx, registry, *info, &mut all, runner, &tally);
    }
    Ok((all, tally))
}

type Slot = super::registry::Slot;

/// A job's result: its slot, where it is stored, whether it was computed.
struct Done {
    slot: Slot,
    key: StageKey,
    computed: bool,
}

fn run_instance_stage(
    cx: &Cx,
    stage: &dyn ErasedStage,
    all: &AllResults,
    assignment: &[Option<usize>],
    runner: &dyn Runner,
    tally: &RunTally,
) -> Vec<(String, Done)> {
    let info = stage.info();
    let plan = cx.plan;
    let total = plan.instances.len();
    let done = AtomicUsize::new(0);
    let estimate: f64 = plan
        .instances
        .iter()
        .zip(assignment)
        .filter_map(|(inst, cpu)| {
            let job = Job {
                cx,
                inst,
                prior: all.of(&inst.key()),
                cpu: *cpu,
            };
            stage.estimate_seconds(&job)
        })
        .sum();
    cx.progress
        .begin_stage(info.name, total, estimate, info.policy == Policy::Measuring);
    let one = |i: usize| -> Option<(String, Done)> {
        let inst = &plan.instances[i];
        let job = Job {
            cx,
            inst,
            prior: all.of(&inst.key()),
            cpu: assignment[i],
        };
        let started = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| run_job(cx, stage, &job, runner, tally)))
            .unwrap_or_else(|p| Err(anyhow!("internal error: {}", panic_text(&p))));
        let k = done.fetch_add(1, Ordering::Relaxed) + 1;
        match outcome {
            Ok(Some(done)) => {
                if done.computed {
                    cx.progress
                        .job_done(info.name, &inst.key(), k, total, started.elapsed());
                }
                Some((inst.key(), done))
            }
            Ok(None) => None,
            Err(e) => {
                tally.fail(cx, info.name, &inst.key(), &e);
                None
            }
        }
    };
    let outs: Vec<Option<(String, Done)>> = match info.policy {
        Policy::Measuring => run_sharded(assignment, &one),
        _ => (0..total).into_par_iter().map(one).collect(),
    };
    cx.progress.end_stage(info.name);
    outs.into_iter().flatten().collect()
}

/// One thread per measuring CPU, each with a pool of its own (one thread),
/// so nothing a job starts in parallel lands on another shard's core.
fn run_sharded<T: Send>(
    assignment: &[Option<usize>],
    one: &(dyn Fn(usize) -> Option<T> + Sync),
) -> Vec<Option<T>> {
    let mut shards: BTreeMap<Option<usize>, Vec<usize>> = BTreeMap::new();
    for (i, cpu) in assignment.iter().enumerate() {
        shards.entry(*cpu).or_default().push(i);
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = shards
            .into_values()
            .map(|members| {
                scope.spawn(move || {
                    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build();
                    let work = || members.iter().map(|&i| one(i)).collect::<Vec<_>>();
                    match pool {
                        Ok(p) => p.install(work),
                        Err(_) => work(),
                    }
                })
            })
            .collect();
        // `one` catches panics, so a shard thread cannot die with results.
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    })
}

/// Reuses or computes one job; None when the stage does not apply.
fn run_job(
    cx: &Cx,
    stage: &dyn ErasedStage,
    job: &Job,
    runner: &dyn Runner,
    tally: &RunTally,
) -> Result<Option<Done>> {
    let info = stage.info();
    let Some(m) = stage.manifest(job)? else {
        return Ok(None);
    };
    let key = m.key();
    let unit = job.inst.key();
    if let Stored::Usable { decoded, sha256 } = stored(cx, stage, &unit, &key, &m) {
        tally.reused.fetch_add(1, Ordering::Relaxed);
        // Record the reuse too: this campaign now vouches for this result.
        let last = LastInputs {
            key: key.clone(),
            manifest: m,
            result_sha256: Some(sha256.clone()),
        };
        state::write(cx, info.name, &unit, &last)?;
        return Ok(Some(Done {
            slot: decoded.slot,
            key: StageKey {
                key,
                result_sha256: sha256,
            },
            computed: false,
        }));
    }
    cx.progress.job_start(info.name, &unit);
    let value = runner.run(info, job, &|| stage.run(job))?;
    let decoded = stage.decode(value.clone())?;
    let sha256 = cx.cache.put(info.name, &key, &value)?;
    let last = LastInputs {
        key: key.clone(),
        manifest: m,
        result_sha256: Some(sha256.clone()),
    };
    state::write(cx, info.name, &unit, &last)?;
    tally.computed.fetch_add(1, Ordering::Relaxed);
    Ok(Some(Done {
        slot: decoded.slot,
        key: StageKey {
            key,
            result_sha256: sha256,
        },
        computed: true,
    }))
}

fn run_campaign_stage(
    cx: &Cx,
    registry: &Registry,
    info: StageInfo,
    all: &mut AllResults,
    runner: &dyn Runner,
    tally: &RunTally,
) {
    let stage = registry
        .campaign_stage_named(info.name)
        .expect("selected stages are registered");
    let result = catch_unwind(AssertUnwindSafe(|| -> Result<Option<(Slot, StageKey)>> {
        let Some(m) = stage.manifest(cx, all)? else {
            return Ok(None);
        };
        let key = m.key();
        if let Lookup::Hit { value, sha256 } = cx.cache.lookup(info.name, &key) {
            if let Ok(Ok(slot)) = stage.decode(cx, value) {
                let last = LastInputs {
                    key: key.clone(),
                    manifest: m,
                    result_sha256: Some(sha256.clone()),
                };
                state::write(cx, info.name, "campaign", &last)?;
                let sk = StageKey {
                    key,
                    result_sha256: sha256,
                };
                return Ok(Some((slot, sk)));
            }
        }
        cx.progress.job_start(info.name, "campaign");
        let value = runner.run_campaign(info, &|| stage.run(cx, all))?;
        let slot = stage
            .decode(cx, value.clone())?
            .map_err(|why| anyhow!("{why} right after running"))?;
        let sha256 = cx.cache.put(info.name, &key, &value)?;
        let last = LastInputs {
            key: key.clone(),
            manifest: m,
            result_sha256: Some(sha256.clone()),
        };
        state::write(cx, info.name, "campaign", &last)?;
        let sk = StageKey {
            key,
            result_sha256: sha256,
        };
        Ok(Some((slot, sk)))
    }))
    .unwrap_or_else(|p| Err(anyhow!("internal error: {}", panic_text(&p))));
    match result {
        Ok(Some((slot, key))) => {
            store(&mut all.campaign, info, slot);
            all.campaign.put_key(info.name, key);
        }
        Ok(None) => {}
        Err(e) => tally.fail(cx, info.name, "campaign", &e),
    }
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a stage panicked".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{ApiFamily, Binding, Kind};

    fn inst(alg: &str, label: &str) -> Instance {
        Instance {
            algorithm: alg.into(),
            label: label.into(),
            implementation: "reference".into(),
            kind: Kind::Sign,
            api: ApiFamily::Ngcc,
            sources: vec![],
            include_dirs: vec![],
            defines: vec![],
            binding: Binding::Ngcc { headers: vec![] },
            cpu_features: vec![],
            kat_records: 10,
            cmake: None,
            spec: Default::default(),
        }
    }

    #[test]
    fn shards_keep_algorithms_together_and_balance_load() {
        let insts = vec![
            inst("a", "1"),
            inst("a", "2"),
            inst("a", "3"),
            inst("b", "1"),
            inst("c", "1"),
            inst("c", "2"),
        ];
        let shards = shard_by_algorithm(&insts, 2);
        assert_eq!(shards.len(), 2);
        let all: Vec<usize> = shards.iter().flatten().copied().collect();
        assert_eq!(all.len(), 6, "every instance in exactly one shard");
        for alg in ["a", "b", "c"] {
            let homes: Vec<usize> = (0..2)
                .filter(|&s| shards[s].iter().any(|&i| insts[i].algorithm == alg))
                .collect();
            assert_eq!(homes.len(), 1, "{alg} split across shards");
        }
        assert_eq!(shards.iter().map(Vec::len).collect::<Vec<_>>(), vec![3, 3]);
        assert_eq!(
            shard_by_algorithm(&insts, 1),
            vec![(0..6).collect::<Vec<_>>()]
        );
    }
}
