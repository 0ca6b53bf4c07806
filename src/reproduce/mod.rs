//! `pqbench reproduce <run>`: names every input that differs from the
//! run's lock and stops unless told to go on; then re-runs the campaign in
//! a fresh cache (nothing reused: every library is rebuilt, every KAT and
//! measurement re-run), files the new run beside the original, checks the
//! libraries are bit-identical and the KAT logs identical, compares every
//! timing figure, and writes a report into the new run's directory.
//!
//! Exit codes: 0 reproduced; 1 a KAT changed, an operation is `slower`, or
//! a library differs although no input did; 2 inputs changed and
//! `--allow-changed` was not given (nothing ran).
//!
//! Nothing here prints (the campaign run reports its progress on stderr as
//! any run does): `prepare` and `reproduce` return values, which the binary
//! prints through the exporters.

pub(crate) mod inputs;

pub mod report;

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::compare::{self, Verdict};
use crate::engine::Registry;
use crate::error::{exit, Error};
use crate::pipeline::Recording;
use crate::pipeline::{self, RunOptions};
use crate::plan::{self, Project};
use crate::records::lock::{self, Lock};
use crate::toolchain::Compiler;

#[derive(Debug, Clone, Default)]
pub struct ReproduceOptions {
    /// Re-run even though inputs differ from the lock.
    pub allow_changed: bool,
    pub quiet: bool,
    pub jobs: Option<usize>,
    /// Noise threshold of the comparison (default: derived from the runs).
    pub threshold: Option<f64>,
}

/// What re-runs a reproduction: the standard registry and runner, or a
/// test's, and the compiler when it is not the plan's.
pub struct Reproducer<'a> {
    pub registry: &'a Registry,
    pub runner: &'a dyn crate::engine::Runner,
    pub compiler: Option<Compiler>,
}

impl<'a> Reproducer<'a> {
    /// The registry's stages, run for real with the plan's compiler.
    pub fn standard(registry: &'a Registry) -> Reproducer<'a> {
        Reproducer {
            registry,
            runner: &crate::engine::RealRunner,
            compiler: None,
        }
    }

    fn compiler(&self, plan: &plan::Plan) -> Result<Compiler, Error> {
        match &self.compiler {
            Some(c) => Ok(c.clone()),
            None => Ok(Compiler::for_plan(plan)?),
        }
    }
}

/// What was found before anything ran.
#[derive(Debug)]
pub struct Prepared {
    pub run_dir: PathBuf,
    pub lock: Lock,
    pub plan: plan::Plan,
    pub cpus: Vec<usize>,
    pub differences: Vec<String>,
}

/// Loads the run's lock and lists what differs now; builds and runs nothing.
/// The registry's stages say which inputs they pinned in the lock.
pub fn prepare(project: &Project, run: &str, engine: &Reproducer) -> Result<Prepared, Error> {
    let registry = engine.registry;
    let run_dir = lock::find_run(&project.root, run).map_err(Error::input)?;
    if !run_dir.join(lock::LOCK_FILE).is_file() {
        return Err(Error::input(anyhow::anyhow!(
            "{} has no {}: only runs recorded by `pqbench run` can be reproduced",
            run_dir.display(),
            lock::LOCK_FILE
        )));
    }
    let lock = lock::load(&run_dir).map_err(Error::input)?;
    let plan = pipeline::resolve_registered(project, &lock.campaign, None, registry)?;
    let compiler = engine.compiler(&plan)?;
    // Measure where the run measured, when this process may.
    let allowed = crate::host::allowed_cpus();
    let cpus = if !lock.host.cpus.is_empty() && lock.host.cpus.iter().all(|c| allowed.contains(c)) {
        lock.host.cpus.clone()
    } else {
        pipeline::measuring_cpus(&plan, &RunOptions::default())
    };
    let opts = RunOptions {
        cpus: Some(cpus.clone()),
        ..Default::default()
    };
    let host = pipeline::host_state(&plan, &opts);
    let mut differences = inputs::differences(&lock, &plan, registry, &compiler, &host)?;
    differences.extend(inputs::child_changes(
        &lock, &plan, registry, &compiler, &run_dir,
    ));
    Ok(Prepared {
        run_dir,
        lock,
        plan,
        cpus,
        differences,
    })
}

/// Writes a reproduction's report files into a run directory.
pub(crate) type Writer = fn(&Path, &report::ReproductionReport) -> anyhow::Result<()>;

/// Re-runs a prepared reproduction and writes its report; returns the
/// report and the new run's directory.
pub(crate) fn execute(
    p: &Prepared,
    opts: &ReproduceOptions,
    write: Writer,
    engine: &Reproducer,
) -> Result<(report::ReproductionReport, PathBuf), Error> {
    let project_output = p.plan.project_root.join("output");
    let scratch_base = project_output.join(".cache").join("tmp");
    std::fs::create_dir_all(&scratch_base)
        .with_context(|| format!("creating {}", scratch_base.display()))?;
    let scratch = tempfile::Builder::new()
        .prefix("reproduce-")
        .tempdir_in(&scratch_base)
        .context("creating the scratch directory")?;
    let mut plan = p.plan.clone();
    plan.cache_dir = scratch.path().join("cache");
    plan.output_dir = scratch.path().join("out").join(&plan.system);
    plan.site_dir = scratch
        .path()
        .join("out")
        .join(crate::records::layout::SITE);
    let rec = Recording {
        runs_dir: Some(
            p.run_dir
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| p.plan.output_dir.join(crate::records::layout::RUNS)),
        ),
        reproduces: Some(p.lock.run_id.clone()),
        fresh_cache: true,
        children_reproduce: p
            .lock
            .children
            .iter()
            .map(|r| (r.child(), r.run_id.clone()))
            .collect(),
        ..Recording::default()
    };
    let run_opts = RunOptions {
        quiet: opts.quiet,
        remeasure: false,
        jobs: opts.jobs,
        cpus: Some(p.cpus.clone()),
        ..RunOptions::default()
    };
    let compiler = engine.compiler(&plan)?;
    let summary = pipeline::run_registry(
        &plan,
        &run_opts,
        &rec,
        engine.registry,
        engine.runner,
        compiler,
    )?;
    let new_dir = rec
        .written
        .get()
        .cloned()
        .context("the reproducing run recorded no run directory")?;
    let new_lock = lock::load(&new_dir)?;
    let a = compare::RunData::load(&p.run_dir)?;
    let b = compare::RunData::load(&new_dir)?;
    let timing = compare::compare_runs(&a, &b, compare::choose_threshold(opts.threshold, &a, &b));
    let mut rep = report::build(
        &p.lock,
        &new_lock,
        (&a, &b),
        p.differences.clone(),
        timing,
        summary.errors.iter().map(|e| e.to_string()).collect(),
    );
    reproduce_children(p, opts, &rec, &mut rep)?;
    write(&new_dir, &rep)?;
    Ok((rep, new_dir))
}

/// Compares each recorded further dataset's run with the one the
/// reproducing run made; one without a new run is a failure.
fn reproduce_children(
    p: &Prepared,
    opts: &ReproduceOptions,
    rec: &Recording,
    rep: &mut report::ReproductionReport,
) -> Result<(), Error> {
    let made = rec.children.get().cloned().unwrap_or_default();
    let made = lock::child_runs(&made, &p.run_dir)?;
    for old in p.lock.child_runs(&p.run_dir)? {
        let Some(new) = made.iter().find(|n| n.child == old.child) else {
            rep.failures.push(format!(
                "{}: the reproducing run made no run of it",
                old.child
            ));
            rep.exit_code = exit::ITEM_FAILURES;
            continue;
        };
        let (old_lock, new_lock) = (lock::load(&old.dir)?, lock::load(&new.dir)?);
        let a = compare::RunData::load(&old.dir)?;
        let b = compare::RunData::load(&new.dir)?;
        let timing =
            compare::compare_runs(&a, &b, compare::choose_threshold(opts.threshold, &a, &b));
        let sub = report::build(
            &old_lock,
            &new_lock,
            (&a, &b),
            Vec::new(),
            timing,
            Vec::new(),
        );
        for f in &sub.failures {
            rep.failures.push(format!("{}: {f}", old.child));
        }
        if sub.exit_code != exit::OK {
            rep.exit_code = sub.exit_code;
        }
        rep.children.push(sub);
    }
    Ok(())
}

/// The recorded run being reproduced and what differs from its lock now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunStart {
    pub run_id: String,
    pub campaign: String,
    pub system: String,
    pub start_utc: String,
    /// Inputs that differ from the lock, one line each; empty when none.
    pub input_differences: Vec<String>,
}

/// What `pqbench reproduce` returns: the run, the report when the
/// reproduction ran, and the exit code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reproduction {
    pub run: RunStart,
    /// `None` when inputs changed and `--allow-changed` was not given:
    /// nothing ran.
    pub report: Option<report::ReproductionReport>,
    /// `reproduction.md` of the new run, relative to the project.
    pub report_file: Option<String>,
    /// 0 reproduced; 1 not reproduced (see `report.failures`); 2 stopped
    /// because inputs changed.
    pub exit_code: i32,
}

impl Prepared {
    pub fn start(&self) -> RunStart {
        RunStart {
            run_id: self.lock.run_id.clone(),
            campaign: self.lock.campaign.clone(),
            system: self.lock.system.clone(),
            start_utc: self.lock.start_utc.clone(),
            input_differences: self.differences.clone(),
        }
    }
}

/// Stops when inputs changed (unless `opts.allow_changed`), else re-runs
/// the prepared run through `engine` and reports. Prints nothing but the
/// campaign run's own progress; `write` stores the report files beside the
/// new run's lock (the exporters live above this module).
pub fn reproduce(
    p: &Prepared,
    opts: &ReproduceOptions,
    write: Writer,
    engine: &Reproducer,
) -> Result<Reproduction, Error> {
    let run = p.start();
    if !p.differences.is_empty() && !opts.allow_changed {
        return Ok(Reproduction {
            run,
            report: None,
            report_file: None,
            exit_code: exit::BAD_INPUT,
        });
    }
    let (rep, dir) = execute(p, opts, write, engine)?;
    assert!(rep.exit_code != exit::OK || !rep.timing.any(Verdict::Slower));
    Ok(Reproduction {
        run,
        exit_code: rep.exit_code,
        report: Some(rep),
        report_file: Some(p.plan.display_path(&dir.join(report::MARKDOWN_FILE))),
    })
}
