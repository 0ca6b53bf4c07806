//! Runs a campaign: resolves the plan against the stage registry, takes the
//! run's locks, runs the engine with the host check before measuring and
//! the records before the campaign stages, files the run directory, and
//! returns a summary. Also answers `plan` and `status`.

pub mod bench_engine;
pub mod bench_tree;
pub mod bench_tree_measure;
pub(crate) mod campaign;
pub(crate) mod children;
pub(crate) mod evidence;
pub mod locks;
pub(crate) mod rundir;
mod stage_tables;
pub mod status;
pub(crate) mod summary;
pub(crate) mod timing;

use anyhow::{Context, Result};

use crate::context::Cx;
use crate::engine::{self, Hooks, Registry, Runner};
use crate::error::{ConfigError, Error};
use crate::plan::{self, Plan, Project, ALL_STAGES};
use crate::stages;
use crate::toolchain::Compiler;
pub(crate) use campaign::{host_state, measuring_cpus, HostState};
pub use rundir::Recording;
pub use status::StatusReport;
pub use summary::RunSummary;

#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub quiet: bool,
    pub remeasure: bool,
    pub jobs: Option<usize>,
    /// Measuring CPUs from the command line (overrides the campaign).
    pub cpus: Option<Vec<usize>>,
    /// Run here only these instances (`<id>/<label>`), whatever executor
    /// the system names: how a shard runs on the machine it was sent to.
    pub local_shard: Option<Vec<String>>,
    /// Submit a Slurm job and return without waiting for it.
    pub detach: bool,
    /// Measure only the campaign's deferred instances; the others keep
    /// their stored measurements (`--deferred-only`).
    pub deferred_only: bool,
    /// Measure the deferred instances on this CPU, beside the others
    /// (`--deferred-cpu`), instead of after them.
    pub deferred_cpu: Option<usize>,
}

/// Resolves `campaigns/<campaign>.toml` into a plan whose stage names are
/// those of the stage registry.
pub fn resolve(project: &Project, campaign: &str) -> Result<Plan, Error> {
    resolve_for(project, campaign, None)
}

/// `resolve` for one of the campaign's systems (`--system`); None picks the
/// first this host runs natively.
pub fn resolve_for(project: &Project, campaign: &str, system: Option<&str>) -> Result<Plan, Error> {
    resolve_registered(project, campaign, system, &stages::registry())
}

/// `resolve_for` against a given registry's stages.
pub fn resolve_registered(
    project: &Project,
    campaign: &str,
    system: Option<&str>,
    registry: &Registry,
) -> Result<Plan, Error> {
    let names = registry.names();
    let opts = plan::ResolveOptions {
        stages: &names,
        system,
    };
    plan::resolve_with(project, campaign, &opts)
}

/// Every name in the campaign's `stages` must be a registered stage.
pub fn check_stage_names(plan: &Plan, registry: &Registry) -> Result<(), Error> {
    let names = registry.names();
    let mut errors = Vec::new();
    for (i, s) in plan.stages.iter().enumerate() {
        if s == ALL_STAGES || names.contains(&s.as_str()) {
            continue;
        }
        let e = ConfigError::new(format!("unknown stage `{s}`"))
            .help(format!("stages are {}", names.join(", ")));
        let e = match plan.stage_locations.get(i).cloned().flatten() {
            Some(loc) => e.at(loc),
            None => e.in_file(&plan.campaign_file),
        };
        errors.push(e);
    }
    for (name, table) in &plan.stage_settings {
        let at = crate::config::campaign::settings_table(name);
        let table_at = plan.stage_settings_at.get(name).cloned();
        let (problem, loc) = match registry.check_settings(name, table) {
            None => (
                ConfigError::new(format!("[{at}]: no stage `{name}` takes settings"))
                    .help(format!("stages are {}", names.join(", "))),
                table_at,
            ),
            Some(Err(why)) => {
                let culprit =
                    stage_tables::culprit(registry, &plan.campaign_file, name, table, &why);
                let (key, loc) = match culprit {
                    Some((key, loc)) => (format!(" `{key}`"), Some(loc)),
                    None => (String::new(), table_at),
                };
                (
                    ConfigError::new(format!("[{at}]{key}: {why}"))
                        .help("fix the key, or remove it to use the stage's default"),
                    loc,
                )
            }
            Some(Ok(())) => continue,
        };
        errors.push(match loc {
            Some(loc) => problem.at(loc),
            None => problem.in_file(&plan.campaign_file),
        });
    }
    match errors.len() {
        0 => Ok(()),
        1 => Err(errors.remove(0).into()),
        _ => Err(Error::ConfigMany(errors)),
    }
}

/// Parallel build and KAT jobs per core at most: more only adds threads
/// that wait (and a huge number stalls the machine).
pub(crate) const MAX_JOBS_PER_CORE: usize = 8;

/// The build pool's size: `--jobs`, else the campaign's `jobs`; 0 (the
/// default) means one per core; above `MAX_JOBS_PER_CORE` per core is
/// refused.
fn build_jobs(plan: &Plan, opts: &RunOptions) -> Result<usize, Error> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (jobs, from) = match opts.jobs {
        Some(j) => (j, "--jobs"),
        None => (plan.jobs, "jobs"),
    };
    let max = MAX_JOBS_PER_CORE * cores;
    if jobs > max {
        return Err(ConfigError::new(format!(
            "{from} = {jobs} is out of range: 0 (one per core) to {max} ({MAX_JOBS_PER_CORE} per core on this {cores}-core host)"
        ))
        .in_file(&plan.campaign_file)
        .help(format!("give at most {max}, or 0"))
        .into());
    }
    Ok(if jobs == 0 { cores } else { jobs })
}

/// Every CPU the run would measure on must be one this process may run on:
/// refused up front rather than failing every job later.
fn check_cpus(plan: &Plan, opts: &RunOptions) -> Result<(), Error> {
    if plan.system_spec.emulated() {
        return Ok(());
    }
    let allowed = crate::host::allowed_cpus();
    let mut wanted = campaign::shard_cpus(plan, opts);
    wanted.extend(opts.deferred_cpu);
    match wanted.iter().find(|c| !allowed.contains(c)) {
        None => Ok(()),
        Some(cpu) => Err(ConfigError::new(format!(
            "CPU {cpu} is not one this process may run on (allowed: {})",
            allowed
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .in_file(&plan.campaign_file)
        .help("name allowed CPUs with --cpu/--cpus or [timing] cpus")
        .into()),
    }
}

/// `--deferred-only` and `--deferred-cpu` need deferred instances, and the
/// deferred CPU must not also measure the others.
fn check_deferral(plan: &Plan, opts: &RunOptions) -> Result<(), Error> {
    let flag = match (opts.deferred_only, opts.deferred_cpu) {
        (true, _) => "--deferred-only",
        (false, Some(_)) => "--deferred-cpu",
        (false, None) => return Ok(()),
    };
    if plan.deferred.is_empty() {
        return Err(ConfigError::new(format!(
            "{flag}: campaign `{}` defers no instance",
            plan.campaign
        ))
        .in_file(&plan.campaign_file)
        .help("list the instances to measure last under `defer = [\"<regex>\", ...]`")
        .into());
    }
    if let Some(cpu) = opts.deferred_cpu {
        if campaign::shard_cpus(plan, opts).contains(&cpu) {
            return Err(ConfigError::new(format!(
                "--deferred-cpu {cpu} is also a measuring CPU of this run"
            ))
            .in_file(&plan.campaign_file)
            .help("give the deferred instances a CPU of their own (--cpu/--cpus or [timing] cpus name the others')")
            .into());
        }
    }
    Ok(())
}

/// Runs the campaign here (a system whose shards run elsewhere goes
/// through `executor::run_campaign`, which calls this for each shard).
pub fn run(plan: &Plan, opts: &RunOptions) -> Result<RunSummary, Error> {
    if let Some(keys) = &opts.local_shard {
        let shard = only_instances(plan, keys)?;
        return run_with(&shard, opts, &Recording::default());
    }
    run_with(plan, opts, &Recording::default())
}

/// The plan restricted to the instances `keys` names (a shard).
fn only_instances(plan: &Plan, keys: &[String]) -> Result<Plan, Error> {
    let mut p = plan.clone();
    if let Some(k) = keys
        .iter()
        .find(|k| !plan.instances.iter().any(|i| &i.key() == *k))
    {
        return Err(ConfigError::new(format!(
            "the shard names `{k}`, which the campaign does not have"
        ))
        .help("the shard list must come from the same project inputs")
        .into());
    }
    p.instances.retain(|i| keys.contains(&i.key()));
    p.algorithms
        .retain(|a| p.instances.iter().any(|i| i.algorithm == a.id));
    Ok(p)
}

/// `run`, recording the run directory as `rec` says (`reproduce` runs a
/// cloned plan in a fresh cache and files the run beside the original).
pub(crate) fn run_with(
    plan: &Plan,
    opts: &RunOptions,
    rec: &Recording,
) -> Result<RunSummary, Error> {
    let compiler = Compiler::for_plan(plan)?;
    run_registry(
        plan,
        opts,
        rec,
        &stages::registry(),
        &engine::RealRunner,
        compiler,
    )
}

/// The whole run over a given registry and runner (tests substitute
/// both): the further datasets of its dimensions first, so that the pages
/// the campaign's own run renders hold them, then the campaign's own.
pub fn run_registry(
    plan: &Plan,
    opts: &RunOptions,
    rec: &Recording,
    registry: &Registry,
    runner: &dyn Runner,
    compiler: Compiler,
) -> Result<RunSummary, Error> {
    check_stage_names(plan, registry)?;
    check_deferral(plan, opts)?;
    let jobs = build_jobs(plan, opts)?;
    check_cpus(plan, opts)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(anyhow::Error::from)?;
    // Refused before anything is written: a native system on another host.
    let host = host_state(plan, opts);
    campaign::check_system_host(plan, &host)?;
    let children = children::run_children(plan, opts, rec, registry, runner, &compiler);
    let _project_lock = locks::ProjectLock::acquire(plan, "run")?;
    let mut summary =
        pool.install(|| run_in_pool(plan, opts, rec, registry, runner, compiler, host))?;
    summary.children = children;
    Ok(summary)
}

/// Writes the dataset's evidence under its completeness marker: a run
/// killed while `write` runs leaves the marker, and no page or check takes
/// the half-written dataset for a finished one.
pub(crate) fn writing(plan: &Plan, write: impl FnOnce() -> Result<()>) -> Result<()> {
    let marker = plan.output_dir.join(crate::records::layout::WRITING);
    crate::fsutil::write_atomic(&marker, b"a pqbench run is writing this dataset\n")?;
    write()?;
    std::fs::remove_file(&marker).with_context(|| format!("removing {}", marker.display()))
}

fn run_in_pool(
    plan: &Plan,
    opts: &RunOptions,
    rec: &Recording,
    registry: &Registry,
    runner: &dyn Runner,
    compiler: Compiler,
    host: HostState,
) -> Result<RunSummary, Error> {
    let mut cx = Cx::new(plan, compiler, opts.remeasure, opts.quiet);
    cx.deferred_only = opts.deferred_only;
    cx.compiles_to_key = true;
    cx.deferred_cpu = opts.deferred_cpu;
    let started = crate::records::utc_now();
    cx.progress.note(&format!(
        "campaign {} on {}: {} instances of {} algorithms",
        plan.campaign,
        plan.system,
        plan.instances.len(),
        plan.algorithms.len()
    ));
    cx.host_fingerprint = Some(host.fingerprint.clone());
    for l in crate::sandbox::layers().layers.iter().filter(|l| !l.active) {
        cx.progress.note(&format!(
            "isolation: {} is not available here ({}); submission code runs without it",
            l.name, l.detail
        ));
    }
    let cpu_locks = locks::CpuLocks::default();
    let drbg = std::sync::OnceLock::new();
    // A run that measures nothing keeps the figure of the run that did,
    // read before this run writes its own record.
    let previous_drbg = campaign::recorded_drbg(plan);
    let drbg_now = || match drbg.get() {
        Some(measured) => Option::clone(measured),
        None => previous_drbg.clone(),
    };
    let cx = &cx;
    let before_measuring = || -> Result<()> {
        if cx.emulated() {
            // Nothing is measured on an emulated system: no host state to
            // require, no CPU to lock, no DRBG cost to know.
            return Ok(());
        }
        campaign::refuse_unfixed_host(cx, &host)?;
        let who = format!(
            "measuring campaign {} for {}",
            cx.plan.campaign,
            cx.plan.output_dir.display()
        );
        cpu_locks.acquire(&host.cpus, &who, &cx.progress)?;
        // Under the CPU lock, like every measurement.
        drbg.get_or_init(|| campaign::drbg_cost(cx, &host));
        Ok(())
    };
    let before_campaign = |all: &engine::AllResults, preliminary: &[String]| -> Result<()> {
        let drbg = drbg_now();
        writing(plan, || {
            evidence::write(cx, registry, all, &started)?;
            campaign::write_campaign_json(cx, registry, all, &host, drbg, &started, preliminary)
        })
    };
    // Everything but the deferred instances is measured: publish it now
    // (records, and pages marking the deferred instances preliminary), as
    // the deferred ones may take long.
    let before_deferred = |all: &engine::AllResults, pending: &[String]| -> Result<()> {
        let drbg = drbg_now();
        writing(plan, || {
            evidence::write(cx, registry, all, &started)?;
            campaign::write_campaign_json(cx, registry, all, &host, drbg, &started, pending)
        })?;
        registry.before_deferred(&registry.selected(&plan.stages), cx)?;
        cx.progress.note(&format!(
            "every instance but the {} deferred one(s) measured; records and pages written, deferred ones marked preliminary",
            pending.len()
        ));
        Ok(())
    };
    let hooks = Hooks {
        before_measuring: &before_measuring,
        before_deferred: &before_deferred,
        before_campaign: &before_campaign,
    };
    let shards = campaign::shard_cpus(plan, opts);
    let (all, tally) = engine::run(cx, registry, runner, &shards, &hooks)?;
    let run_dir = rundir::record_run(cx, registry, &all, rec)?;
    Ok(RunSummary::new(plan, registry, &all, &tally, &run_dir))
}
