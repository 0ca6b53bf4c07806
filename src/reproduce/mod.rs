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

pub mod inputs;

pub mod report;
#[cfg(test)]
pub mod testutil;

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::compare::{self, Verdict};
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
pub fn prepare(project: &Project, run: &str) -> Result<Prepared, Error> {
    let run_dir = lock::find_run(&project.root, run).map_err(Error::input)?;
    if !run_dir.join(lock::LOCK_FILE).is_file() {
        return Err(Error::input(anyhow::anyhow!(
            "{} has no {}: only runs recorded by `pqbench run` can be reproduced",
            run_dir.display(),
            lock::LOCK_FILE
        )));
    }
    let lock = lock::load(&run_dir).map_err(Error::input)?;
    let plan = pipeline::resolve(project, &lock.campaign)?;
    let compiler = Compiler::detect(&plan.compiler)?;
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
    let differences = inputs::differences(&lock, &plan, &compiler, &host)?;
    Ok(Prepared {
        run_dir,
        lock,
        plan,
        cpus,
        differences,
    })
}

/// Re-runs a prepared reproduction and writes its report; returns the
/// report and the new run's directory.
pub fn execute(
    p: &Prepared,
    opts: &ReproduceOptions,
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
    plan.site_dir = scratch.path().join("out").join("site");
    let rec = Recording {
        runs_dir: Some(
            p.run_dir
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| p.plan.output_dir.join("runs")),
        ),
        reproduces: Some(p.lock.run_id.clone()),
        fresh_cache: true,
        written: Default::default(),
    };
    let run_opts = RunOptions {
        quiet: opts.quiet,
        remeasure: false,
        jobs: opts.jobs,
        cpus: Some(p.cpus.clone()),
    };
    let summary = pipeline::run_with(&plan, &run_opts, &rec)?;
    let new_dir = rec
        .written
        .get()
        .cloned()
        .context("the reproducing run recorded no run directory")?;
    let new_lock = lock::load(&new_dir)?;
    let a = compare::RunData::load(&p.run_dir)?;
    let b = compare::RunData::load(&new_dir)?;
    let timing = compare::compare_runs(&a, &b, compare::choose_threshold(opts.threshold, &a, &b));
    let rep = report::build(
        &p.lock,
        &new_lock,
        (&a, &b),
        p.differences.clone(),
        timing,
        summary.errors.iter().map(|e| e.to_string()).collect(),
    );
    report::write(&new_dir, &rep)?;
    Ok((rep, new_dir))
}

/// `pqbench reproduce`: prints the differences, stops or re-runs, prints
/// the outcome; returns the exit code.
pub fn cli(project: &Project, run: &str, opts: &ReproduceOptions) -> Result<i32, Error> {
    let p = prepare(project, run)?;
    println!(
        "run {} (campaign {}, system {}, started {})",
        p.lock.run_id, p.lock.campaign, p.lock.system, p.lock.start_utc
    );
    if p.differences.is_empty() {
        println!("inputs: identical to the lock");
    } else {
        println!("inputs that differ from the lock:");
        for d in &p.differences {
            println!("  {d}");
        }
        if !opts.allow_changed {
            println!("nothing was run; give --allow-changed to reproduce with the changed inputs");
            return Ok(exit::BAD_INPUT);
        }
    }
    let (rep, dir) = execute(&p, opts)?;
    for i in &rep.instances {
        println!("{}: library {}, KAT {}", i.instance, i.library, i.kat);
    }
    for o in &rep.timing.operations {
        let detail = match (o.ratio, o.ci, &o.reason) {
            (Some(r), Some((lo, hi)), _) => format!(" (ratio {r:.3}, {lo:.3}–{hi:.3})"),
            (_, _, Some(why)) => format!(" ({why})"),
            _ => String::new(),
        };
        println!("{} {}: {}{detail}", o.instance, o.op, o.verdict.as_str());
    }
    println!(
        "fixed figures (lengths, load bytes, stack, heap): {} identical",
        rep.fixed_figures_identical
    );
    for d in &rep.fixed_figures_differing {
        println!("fixed figure differs: {d}");
    }
    let shown = p.plan.display_path(&dir.join("reproduction.md"));
    println!("report: {shown}");
    if rep.failures.is_empty() {
        println!(
            "reproduced: {}",
            compare::render::counts_text(&rep.timing.counts)
        );
    } else {
        for f in &rep.failures {
            println!("not reproduced: {f}");
        }
    }
    debug_assert!(rep.exit_code != exit::OK || !rep.timing.any(Verdict::Slower));
    Ok(rep.exit_code)
}
