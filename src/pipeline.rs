//! Runs a campaign's stages in order and writes the run-level records;
//! also answers `plan` and `status` (which stage results are stale, why).

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use anyhow::Result;
use serde::Serialize;

use crate::engine::cache::Cache;
use crate::engine::progress::Progress;
use crate::engine::{self, freshness, Cx, Freshness, Stage, Tally};
use crate::error::Error;
use crate::host;
use crate::plan::{Instance, Plan, StageName};
use crate::records;
use crate::records::campaign::{AlgorithmInfo, CampaignRecord};
use crate::reproduce::lock::Recording;
use crate::stages::build::BuildStage;
use crate::stages::kat::KatStage;
use crate::stages::memory::MemoryStage;
use crate::stages::profile::ProfileStage;
use crate::stages::sizes::SizesStage;
use crate::stages::survey::SurveyStage;
use crate::stages::time::TimeStage;
use crate::stages::InstanceResults;
use crate::support::Support;
use crate::toolchain::Compiler;

#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub quiet: bool,
    pub remeasure: bool,
    pub jobs: Option<usize>,
    /// Measuring CPUs from the command line (overrides the campaign).
    pub cpus: Option<Vec<usize>>,
}

/// What a finished run reports.
#[derive(Debug, Serialize)]
pub struct RunSummary {
    pub reused: usize,
    pub computed: usize,
    pub errors: Vec<String>,
    /// Instances that did not pass their KAT: (instance, status).
    pub failing: Vec<(String, String)>,
}

impl RunSummary {
    /// What `pqbench run` prints at the end: counts, then every failure.
    pub fn report(&self, plan: &Plan) -> String {
        let mut s = format!(
            "{} stage results reused, {} computed; records in {}\n",
            self.reused,
            self.computed,
            plan.display_path(&plan.output_dir)
        );
        for e in &self.errors {
            s.push_str(&format!("error: {e}\n"));
        }
        for (inst, status) in &self.failing {
            s.push_str(&format!("{inst}: {status}\n"));
        }
        s
    }

    /// Failures of single items still let the run finish, but not exit 0.
    pub fn exit_code(&self) -> i32 {
        if self.errors.is_empty() && self.failing.is_empty() {
            crate::error::exit::OK
        } else {
            crate::error::exit::ITEM_FAILURES
        }
    }
}

pub fn context<'a>(plan: &'a Plan, opts: &RunOptions) -> Result<Cx<'a>> {
    let cache = Cache::new(&plan.cache_dir);
    let compiler = Compiler::detect(&plan.compiler)?;
    let support = Support::prepare(&cache, &compiler)?;
    Ok(Cx {
        plan,
        cache,
        compiler,
        support,
        host_fingerprint: None,
        remeasure: opts.remeasure,
        progress: Progress::new(opts.quiet),
    })
}

fn empty_results(plan: &Plan) -> BTreeMap<String, InstanceResults> {
    plan.instances
        .iter()
        .map(|i| (i.key(), InstanceResults::default()))
        .collect()
}

pub fn run(plan: &Plan, opts: &RunOptions) -> Result<RunSummary, Error> {
    run_with(plan, opts, &Recording::default())
}

/// `run`, recording the run directory as `rec` says (`reproduce` runs a
/// cloned plan in a fresh cache and files the run beside the original).
pub fn run_with(plan: &Plan, opts: &RunOptions, rec: &Recording) -> Result<RunSummary, Error> {
    let jobs = opts.jobs.unwrap_or(plan.jobs);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(anyhow::Error::from)?;
    pool.install(|| run_in_pool(plan, opts, rec))
}

fn run_in_pool(plan: &Plan, opts: &RunOptions, rec: &Recording) -> Result<RunSummary, Error> {
    let mut cx = context(plan, opts)?;
    let started = records::utc_now();
    let mut results = empty_results(plan);
    let tally = Tally::default();
    cx.progress.note(&format!(
        "campaign {} on {}: {} instances of {} algorithms",
        plan.campaign,
        plan.system,
        plan.instances.len(),
        plan.algorithms.len()
    ));
    if plan.runs(StageName::Build) {
        engine::run_stage(&cx, &BuildStage, &mut results, &tally);
    }
    if plan.runs(StageName::Kat) {
        engine::run_stage(&cx, &KatStage, &mut results, &tally);
    }
    records::write_build_json(&cx, &results, &started)?;
    let host = host_state(plan, opts);
    cx.host_fingerprint = Some(host.fingerprint.clone());
    let measuring = [StageName::Time, StageName::Memory, StageName::Profile];
    if measuring.iter().any(|s| plan.runs(*s)) {
        refuse_unfixed_host(&cx, &host)?;
    }
    if plan.runs(StageName::Time) {
        engine::run_stage_sharded(&cx, &TimeStage, &mut results, &tally, &host.cpus);
    }
    if plan.runs(StageName::Memory) {
        engine::run_stage_sharded(&cx, &MemoryStage, &mut results, &tally, &host.cpus);
    }
    if plan.runs(StageName::Sizes) {
        engine::run_stage(&cx, &SizesStage, &mut results, &tally);
    }
    if plan.runs(StageName::Profile) {
        engine::run_stage_sharded(&cx, &ProfileStage, &mut results, &tally, &host.cpus);
    }
    if plan.runs(StageName::Survey) {
        engine::run_stage(&cx, &SurveyStage, &mut results, &tally);
    }
    records::operation::write_operation_records(&cx, &results)?;
    records::analysis::write_analysis_records(&cx, &results)?;
    write_campaign_json(&cx, &results, host, &started)?;
    if plan.runs(StageName::Render) {
        // Every system's dataset of the campaign, so crumb lines link them.
        crate::render::render_campaign(plan)?;
    }
    crate::reproduce::lock::record_run(&cx, &results, rec)?;
    let failing = failures(plan, &results);
    Ok(RunSummary {
        reused: tally.reused.load(Ordering::Relaxed),
        computed: tally.ran.load(Ordering::Relaxed),
        errors: tally.failures.into_inner().expect("tally lock"),
        failing,
    })
}

/// Every instance that did not pass its KAT, and every operation whose
/// measurement, memory probe or profile failed: (instance, what).
fn failures(plan: &Plan, results: &BTreeMap<String, InstanceResults>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for inst in &plan.instances {
        let r = &results[&inst.key()];
        match &r.kat {
            Some(k) if k.status() != crate::kat::Status::Pass => {
                out.push((inst.key(), k.status().to_string()))
            }
            None if plan.runs(StageName::Kat) => out.push((inst.key(), "no KAT result".into())),
            _ => {}
        }
        let mut failed = |what: &str, op: &str, status: &str| {
            out.push((inst.key(), format!("{what} {op}: {status}")));
        };
        for o in r
            .time
            .iter()
            .flat_map(|t| &t.ops)
            .filter(|o| o.status != "ok")
        {
            failed("timing", &o.op, &o.status);
        }
        for o in r
            .memory
            .iter()
            .flat_map(|m| &m.ops)
            .filter(|o| o.status != "ok")
        {
            failed("memory", &o.op, &o.status);
        }
        for o in r.profile.iter().flat_map(|p| &p.ops) {
            if o.status != "ok" && o.status != "no-helpers" {
                failed("profile", &o.op, &o.status);
            }
        }
        if let Some(p) = r.profile.as_ref().filter(|p| p.status == "relink-failed") {
            failed("profile", "relink", &p.status);
        }
    }
    out
}

/// The CPUs measurements run on: the command line, else the campaign,
/// else the last CPU this process may use (CPU 0 takes most interrupts).
pub fn measuring_cpus(plan: &Plan, opts: &RunOptions) -> Vec<usize> {
    opts.cpus
        .clone()
        .filter(|c| !c.is_empty())
        .or_else(|| (!plan.timing.cpus.is_empty()).then(|| plan.timing.cpus.clone()))
        .unwrap_or_else(|| host::allowed_cpus().last().copied().into_iter().collect())
}

/// The measuring CPUs, their checks and the environment at the start.
pub struct HostState {
    pub cpus: Vec<usize>,
    pub checks: Vec<host::HostCheck>,
    pub environment: host::Environment,
    pub fingerprint: String,
}

pub fn host_state(plan: &Plan, opts: &RunOptions) -> HostState {
    let cpus = measuring_cpus(plan, opts);
    let checks: Vec<host::HostCheck> = cpus.iter().map(|&c| host::check(c)).collect();
    let environment = host::environment();
    let fingerprint = host::fingerprint(&environment, &checks, &counter_hint());
    HostState {
        cpus,
        checks,
        environment,
        fingerprint,
    }
}

/// Measuring stages refuse a host that is not fixed unless the campaign
/// allows it; either way every problem is shown and recorded.
fn refuse_unfixed_host(cx: &Cx, host: &HostState) -> Result<(), Error> {
    let plan = cx.plan;
    let problems: Vec<String> = host
        .checks
        .iter()
        .flat_map(|c| {
            c.problems
                .iter()
                .map(move |p| format!("CPU {}: {p}", c.cpu))
        })
        .collect();
    if problems.is_empty() {
        return Ok(());
    }
    if plan.host.require_fixed {
        return Err(Error::Other(anyhow::anyhow!(
            "the host is not fixed for measuring:\n  {}\nfix the host, or set `require-fixed = false` under [host] in {} to measure anyway (every problem is recorded)",
            problems.join("\n  "),
            plan.display_path(&plan.campaign_file)
        )));
    }
    for p in &problems {
        cx.progress
            .note(&format!("host: {p} (recorded; measuring anyway)"));
    }
    Ok(())
}

fn write_campaign_json(
    cx: &Cx,
    results: &BTreeMap<String, InstanceResults>,
    host: HostState,
    started: &str,
) -> Result<()> {
    let plan = cx.plan;
    let (counter, counter_hz) = results
        .values()
        .filter_map(|r| r.time.as_ref())
        .flat_map(|t| t.ops.iter())
        .find(|o| o.counter.is_some())
        .map(|o| (o.counter.clone(), o.counter_hz))
        .unwrap_or((None, None));
    // UTC stamps in one fixed format compare in time order as strings.
    let timed = results.values().filter_map(|r| r.time.as_ref());
    let record = CampaignRecord {
        campaign: plan.campaign.clone(),
        description: plan.description.clone(),
        system: plan.system.clone(),
        system_title: plan.system_title.clone(),
        pqbench_version: env!("CARGO_PKG_VERSION").to_string(),
        start_utc: started.to_string(),
        end_utc: records::utc_now(),
        measured_from_utc: timed.clone().filter_map(|t| t.started_utc.clone()).min(),
        measured_to_utc: timed.filter_map(|t| t.finished_utc.clone()).max(),
        environment_start: host.environment,
        environment_end: host::environment(),
        compiler: cx.compiler.clone(),
        build_tool: format!("pqbench {}", env!("CARGO_PKG_VERSION")),
        flag_profiles: plan.flag_profiles.iter().map(|p| p.name.clone()).collect(),
        cpus: host.cpus,
        host_checks: host.checks,
        host_require_fixed: plan.host.require_fixed,
        host_fingerprint: host.fingerprint,
        counter,
        counter_hz,
        timing: plan.timing.clone(),
        limits: plan.limits.clone(),
        kat_timeout_seconds: plan.kat.timeout_seconds,
        profile_wraps: plan.profile_wraps.clone(),
        stages: plan.stages.clone(),
        algorithms: plan
            .algorithms
            .iter()
            .map(|a| AlgorithmInfo::from_plan(plan, a))
            .collect(),
    };
    crate::fsutil::write_json(&plan.output_dir.join("campaign.json"), &record)
}

/// What decides the driver's counter: perf permission and the TSC flags.
fn counter_hint() -> String {
    let paranoid =
        std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").unwrap_or_default();
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let tsc = cpuinfo
        .split_whitespace()
        .filter(|f| ["constant_tsc", "nonstop_tsc", "hypervisor"].contains(f))
        .take(3)
        .collect::<Vec<_>>()
        .join(",");
    format!("paranoid={} {tsc}", paranoid.trim())
}

/// One row of `pqbench plan` / `status`.
#[derive(Debug, Serialize)]
pub struct StageState {
    pub instance: String,
    pub stage: StageName,
    pub freshness: Freshness,
}

/// Freshness of every (instance, stage) without running anything.
pub fn states(plan: &Plan) -> Result<Vec<StageState>> {
    let opts = RunOptions {
        quiet: true,
        ..Default::default()
    };
    let mut cx = context(plan, &opts)?;
    let HostState {
        cpus, fingerprint, ..
    } = host_state(plan, &opts);
    cx.host_fingerprint = Some(fingerprint);
    let shards = engine::shard_by_algorithm(&plan.instances, cpus.len().max(1));
    let mut out = Vec::new();
    for (index, inst) in plan.instances.iter().enumerate() {
        let shard = shards.iter().position(|s| s.contains(&index));
        crate::measure::set_measuring_cpu(shard.and_then(|k| cpus.get(k).copied()));
        let mut prior = InstanceResults::default();
        let mut rows = Vec::new();
        // Each stage is stale when one it depends on is.
        let build = check(&cx, &BuildStage, inst, &mut prior, false, plan, &mut rows)?;
        let kat = check(&cx, &KatStage, inst, &mut prior, build, plan, &mut rows)?;
        let time = check(&cx, &TimeStage, inst, &mut prior, kat, plan, &mut rows)?;
        check(&cx, &MemoryStage, inst, &mut prior, kat, plan, &mut rows)?;
        check(
            &cx,
            &SizesStage,
            inst,
            &mut prior,
            kat || time,
            plan,
            &mut rows,
        )?;
        check(&cx, &ProfileStage, inst, &mut prior, kat, plan, &mut rows)?;
        check(&cx, &SurveyStage, inst, &mut prior, build, plan, &mut rows)?;
        out.extend(rows.into_iter().map(|(stage, freshness)| StageState {
            instance: inst.key(),
            stage,
            freshness,
        }));
    }
    Ok(out)
}

/// Adds the freshness row of `stage` (when the campaign runs it) and says
/// whether it is stale, for the stages depending on it.
fn check<S: Stage>(
    cx: &Cx,
    stage: &S,
    inst: &Instance,
    prior: &mut InstanceResults,
    upstream_stale: bool,
    plan: &Plan,
    rows: &mut Vec<(StageName, Freshness)>,
) -> Result<bool> {
    if !plan.runs(S::NAME) {
        return Ok(upstream_stale);
    }
    if upstream_stale {
        let f = Freshness::Stale(vec!["an earlier stage is stale".into()]);
        rows.push((S::NAME, f));
        return Ok(true);
    }
    let (f, out) = freshness(cx, stage, inst, prior)?;
    let stale = matches!(f, Freshness::Stale(_));
    if let Some(o) = out {
        S::store(prior, o);
    }
    rows.push((S::NAME, f));
    Ok(stale)
}
