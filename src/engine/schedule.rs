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
use super::shards::{cpu_assignment, passes};
use super::state::{self, LastInputs};
use super::{Job, Policy};
use crate::cache::Lookup;
use crate::context::Cx;

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
    /// Once, before the first measurement the run computes (the host
    /// check, the CPU locks): a run that reuses every measurement never
    /// calls it, so it waits for no other run's CPU. An error stops the
    /// run.
    pub before_measuring: &'a (dyn Fn() -> Result<()> + Sync),
    /// Once every instance but the deferred ones (whose keys it is given)
    /// went through every stage, before the deferred ones are measured
    /// (records and pages of what is done so far).
    pub before_deferred: &'a (dyn Fn(&AllResults, &[String]) -> Result<()> + Sync),
    /// After the instance stages, before the campaign stages (records),
    /// with the instances `--deferred-only` left without a usable
    /// measurement (in plan order).
    pub before_campaign: &'a (dyn Fn(&AllResults, &[String]) -> Result<()> + Sync),
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
    /// Instances a measuring stage skipped because `--deferred-only` keeps
    /// them as stored and nothing usable was stored.
    not_measured: Mutex<Vec<String>>,
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

    pub(crate) fn failures(&self) -> Vec<StageFailure> {
        self.failures.lock().expect("tally lock").clone()
    }

    fn not_measured(&self, unit: &str) {
        let mut list = self.not_measured.lock().expect("tally lock");
        if !list.iter().any(|u| u == unit) {
            list.push(unit.to_string());
        }
    }

    /// Instances `--deferred-only` left without a usable measurement.
    pub(crate) fn not_measured_units(&self) -> Vec<String> {
        self.not_measured.lock().expect("tally lock").clone()
    }
}

/// What every job of a run shares: the runner, the tally and the gate.
#[derive(Clone, Copy)]
struct With<'a> {
    runner: &'a dyn Runner,
    tally: &'a RunTally,
    gate: &'a Gate<'a>,
}

/// `Hooks::before_measuring`, called at most once, by the first job that
/// will measure; the others wait for it and share its outcome.
struct Gate<'a> {
    hook: &'a (dyn Fn() -> Result<()> + Sync),
    outcome: std::sync::OnceLock<Result<(), String>>,
}

impl Gate<'_> {
    fn open(&self) -> Result<()> {
        self.outcome
            .get_or_init(|| (self.hook)().map_err(|e| format!("{e:#}")))
            .clone()
            .map_err(|e| anyhow!(e))
    }
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
    let assignment = cpu_assignment(cx.plan, cpus, cx.deferred_cpu);
    let mut all = AllResults::default();
    for inst in &cx.plan.instances {
        all.instances.insert(inst.key(), Results::default());
    }
    // The stages before the first measuring one (builds, KATs) run for
    // every instance first; from there on, instances go through the
    // remaining stages pass by pass (deferred instances last).
    let instance_stages: Vec<StageInfo> = selected
        .iter()
        .filter(|i| i.policy != Policy::Campaign)
        .copied()
        .collect();
    let first_measuring = instance_stages
        .iter()
        .position(|i| i.policy == Policy::Measuring)
        .unwrap_or(instance_stages.len());
    let (before, from_measuring) = instance_stages.split_at(first_measuring);
    let everyone: Vec<usize> = (0..cx.plan.instances.len()).collect();
    let gate = Gate {
        hook: hooks.before_measuring,
        outcome: std::sync::OnceLock::new(),
    };
    let stage_over = |info: &StageInfo, members: &[usize], all: &mut AllResults| {
        let stage = registry
            .instance_stage(info.name)
            .expect("selected stages are registered");
        let with = With {
            runner,
            tally: &tally,
            gate: &gate,
        };
        let outs = run_instance_stage(cx, stage, all, &assignment, members, &with);
        if let Some(e) = tally.fatal.lock().expect("tally lock").take() {
            return Err(e);
        }
        for (unit, done) in outs {
            if let Some(r) = all.instances.get_mut(&unit) {
                store(r, *info, done.slot);
                r.put_key(info.name, done.key);
            }
        }
        Ok(())
    };
    for info in before {
        stage_over(info, &everyone, &mut all)?;
    }
    if !from_measuring.is_empty() {
        for (k, members) in passes(cx).iter().enumerate() {
            if k > 0 {
                let pending: Vec<String> = members
                    .iter()
                    .map(|&i| cx.plan.instances[i].key())
                    .collect();
                (hooks.before_deferred)(&all, &pending)?;
            }
            for info in from_measuring {
                stage_over(info, members, &mut all)?;
            }
        }
    }
    let not_measured = tally.not_measured_units();
    let in_plan_order: Vec<String> = cx
        .plan
        .instances
        .iter()
        .map(|i| i.key())
        .filter(|k| not_measured.contains(k))
        .collect();
    (hooks.before_campaign)(&all, &in_plan_order)?;
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

/// Runs `stage` for the instances `members` (indices into the plan).
fn run_instance_stage(
    cx: &Cx,
    stage: &dyn ErasedStage,
    all: &AllResults,
    assignment: &[Option<usize>],
    members: &[usize],
    with: &With,
) -> Vec<(String, Done)> {
    let tally = with.tally;
    let info = stage.info();
    let plan = cx.plan;
    let total = members.len();
    let done = AtomicUsize::new(0);
    // The plan's seconds per instance index, 0 where the stage has none.
    let planned: BTreeMap<usize, f64> = members
        .iter()
        .map(|&i| {
            let inst = &plan.instances[i];
            let job = Job {
                cx,
                inst,
                prior: all.of(&inst.key()),
                cpu: assignment[i],
            };
            (i, stage.estimate_seconds(&job).unwrap_or(0.0))
        })
        .collect();
    cx.progress.begin_stage(
        info.name,
        total,
        planned.values().sum(),
        info.policy == Policy::Measuring,
    );
    let one = |i: usize| -> Option<(String, Done)> {
        let inst = &plan.instances[i];
        let job = Job {
            cx,
            inst,
            prior: all.of(&inst.key()),
            cpu: assignment[i],
        };
        let started = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| run_job(cx, stage, &job, with)))
            .unwrap_or_else(|p| Err(anyhow!("internal error: {}", panic_text(&p))));
        let k = done.fetch_add(1, Ordering::Relaxed) + 1;
        let planned = planned.get(&i).copied().unwrap_or(0.0);
        match outcome {
            Ok(Some(done)) => {
                if done.computed {
                    let took = started.elapsed();
                    cx.progress
                        .job_done(info.name, &inst.key(), (k, total), planned, took);
                } else {
                    cx.progress.job_reused(planned);
                }
                Some((inst.key(), done))
            }
            Ok(None) => {
                cx.progress.job_reused(planned);
                None
            }
            Err(e) => {
                cx.progress.job_failed(planned);
                tally.fail(cx, info.name, &inst.key(), &e);
                None
            }
        }
    };
    let outs: Vec<Option<(String, Done)>> = match info.policy {
        Policy::Measuring => run_sharded(assignment, members, &one),
        _ => members.par_iter().map(|&i| one(i)).collect(),
    };
    cx.progress.end_stage(info.name);
    outs.into_iter().flatten().collect()
}

/// One thread per measuring CPU, each with a pool of its own (one thread),
/// so nothing a job starts in parallel lands on another shard's core; each
/// shard measures its `members` in plan order.
fn run_sharded<T: Send>(
    assignment: &[Option<usize>],
    members: &[usize],
    one: &(dyn Fn(usize) -> Option<T> + Sync),
) -> Vec<Option<T>> {
    let mut shards: BTreeMap<Option<usize>, Vec<usize>> = BTreeMap::new();
    for &i in members {
        shards.entry(assignment[i]).or_default().push(i);
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
fn run_job(cx: &Cx, stage: &dyn ErasedStage, job: &Job, with: &With) -> Result<Option<Done>> {
    let With {
        runner,
        tally,
        gate,
    } = *with;
    let info = stage.info();
    let Some(m) = stage.manifest(job)? else {
        return Ok(None);
    };
    let key = m.key();
    let unit = job.inst.key();
    // `--deferred-only`: the other instances keep what is stored, and are
    // never measured (nor remeasured).
    let keep_only =
        info.policy == Policy::Measuring && cx.deferred_only && !cx.plan.is_deferred(job.inst);
    let stored = stored(cx, stage, job, &m, cx.remeasure && !keep_only)?;
    if keep_only && !matches!(stored, Stored::Usable(_)) {
        tally.not_measured(&unit);
        return Ok(None);
    }
    if let Stored::Usable(u) = stored {
        tally.reused.fetch_add(1, Ordering::Relaxed);
        // Record the reuse too: this campaign now vouches for this result
        // (a lent one under the lender's key, so the next run takes it
        // from the lender again).
        // The time it took when it was computed stays with it.
        let seconds = state::read(cx, info.name, &unit)
            .filter(|l| l.key == u.key)
            .and_then(|l| l.seconds);
        let held = Held {
            key: u.key,
            manifest: u.manifest,
            sha256: u.sha256,
            seconds,
        };
        return Ok(Some(Done {
            slot: u.decoded.slot,
            key: vouch(cx, info.name, &unit, held, u.lent_by)?,
            computed: false,
        }));
    }
    if info.policy == Policy::Measuring {
        if let Err(e) = gate.open() {
            // Fatal: the run stops after this stage, as it would have
            // before measuring anything.
            tally.fatal.lock().expect("tally lock").get_or_insert(e);
            return Ok(None);
        }
    }
    cx.progress.job_start(info.name, &unit);
    let started = Instant::now();
    let value = runner.run(info, job, &|| stage.run(job))?;
    let seconds = Some(started.elapsed().as_secs_f64());
    let decoded = stage.decode(value.clone())?;
    let sha256 = cx.cache.put(info.name, &key, &value)?;
    tally.computed.fetch_add(1, Ordering::Relaxed);
    let held = Held {
        key,
        manifest: m,
        sha256,
        seconds,
    };
    Ok(Some(Done {
        slot: decoded.slot,
        key: vouch(cx, info.name, &unit, held, None)?,
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
                let seconds = state::read(cx, info.name, "campaign")
                    .filter(|l| l.key == key)
                    .and_then(|l| l.seconds);
                let held = Held {
                    key,
                    manifest: m,
                    sha256,
                    seconds,
                };
                let sk = vouch(cx, info.name, "campaign", held, None)?;
                return Ok(Some((slot, sk)));
            }
        }
        cx.progress.job_start(info.name, "campaign");
        let started = Instant::now();
        let value = runner.run_campaign(info, &|| stage.run(cx, all, registry))?;
        let seconds = Some(started.elapsed().as_secs_f64());
        let slot = stage
            .decode(cx, value.clone())?
            .map_err(|why| anyhow!("{why} right after running"))?;
        let sha256 = cx.cache.put(info.name, &key, &value)?;
        let held = Held {
            key,
            manifest: m,
            sha256,
            seconds,
        };
        Ok(Some((slot, vouch(cx, info.name, "campaign", held, None)?)))
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

/// A result this campaign holds for a unit: under which key, from which
/// manifest, its digest and the seconds it took to compute (when known).
struct Held {
    key: String,
    manifest: super::Manifest,
    sha256: String,
    seconds: Option<f64>,
}

/// Records that this campaign holds `held` for `unit` (so a later run can
/// tell its own result from another's), and returns the entry the lock
/// will carry.
fn vouch(
    cx: &Cx,
    stage: &'static str,
    unit: &str,
    held: Held,
    lent_by: Option<String>,
) -> Result<StageKey> {
    let last = LastInputs {
        key: held.key.clone(),
        manifest: held.manifest,
        result_sha256: Some(held.sha256.clone()),
        seconds: held.seconds,
    };
    state::write(cx, stage, unit, &last)?;
    Ok(StageKey {
        key: held.key,
        result_sha256: held.sha256,
        lent_by,
    })
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a stage panicked".into())
}
