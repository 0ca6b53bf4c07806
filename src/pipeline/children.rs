//! Runs a campaign's further datasets (every registered dimension's, such
//! as the `[matrix]`'s combinations), each as a plan of its own with its
//! own dataset, cache keys and run directory, before the campaign's own
//! plan: the pages rendered at the end of that run then hold them all. A
//! further dataset whose build or KAT fails is a finding shown on its
//! pages, and one that cannot run at all is reported; neither stops the
//! others.

use std::collections::BTreeMap;

use anyhow::Result;

use super::summary::ChildSummary;
use super::{run_registry, Recording, RunOptions, RunSummary};
use crate::engine::{ChildPlan, Registry, Runner};
use crate::plan::Plan;
use crate::records::campaign::ChildDataset;
use crate::records::lock::ChildRunRecord;
use crate::toolchain::Compiler;

impl ChildSummary {
    fn of(c: &ChildDataset, s: &RunSummary) -> ChildSummary {
        ChildSummary {
            dimension: c.dimension.clone(),
            name: c.name.clone(),
            reused: s.reused,
            computed: s.computed,
            kat: s.kat.clone(),
            failures: s.failures.clone(),
            errors: s.errors.iter().map(|e| e.to_string()).collect(),
        }
    }

    fn failed(c: &ChildDataset, why: String) -> ChildSummary {
        ChildSummary {
            dimension: c.dimension.clone(),
            name: c.name.clone(),
            reused: 0,
            computed: 0,
            kat: BTreeMap::new(),
            failures: Vec::new(),
            errors: vec![why],
        }
    }

    /// One line of `pqbench run`'s report.
    pub(crate) fn line(&self) -> String {
        let kat: Vec<String> = self.kat.iter().map(|(k, n)| format!("{n} {k}")).collect();
        let mut s = match (kat.is_empty(), self.computed + self.reused) {
            (true, 0) => format!("{} {}: not run", self.dimension, self.name),
            (true, _) => format!(
                "{} {}: {} stage results reused, {} computed",
                self.dimension, self.name, self.reused, self.computed
            ),
            (false, _) => format!(
                "{} {}: KAT {}; {} stage results reused, {} computed",
                self.dimension,
                self.name,
                kat.join(", "),
                self.reused,
                self.computed
            ),
        };
        for f in &self.failures {
            s.push_str(&format!("; {} {}", f.instance, f.what));
        }
        for e in &self.errors {
            s.push_str(&format!("; error: {e}"));
        }
        s
    }
}

/// The compiler of a further plan: the campaign's own when the plan
/// builds as the campaign does, else the one its plan names.
pub(crate) fn child_compiler(parent: &Plan, compiler: &Compiler, child: &Plan) -> Result<Compiler> {
    if child.compiler == parent.compiler && child.flag_profiles == parent.flag_profiles {
        return Ok(compiler.clone());
    }
    Compiler::for_plan(child)
}

/// Runs every further dataset of `plan`, in the registry's order; returns
/// what each came to and records their runs in `rec` for the campaign's
/// lock.
pub(super) fn run_children(
    plan: &Plan,
    opts: &RunOptions,
    rec: &Recording,
    registry: &Registry,
    runner: &dyn Runner,
    compiler: &Compiler,
) -> Vec<ChildSummary> {
    let mut out = Vec::new();
    let mut runs = Vec::new();
    for c in registry.child_plans(plan) {
        let (child, cp) = (&c.child, &c.plan);
        if cp.instances.is_empty() {
            // Its pages say "not run".
            if !opts.quiet {
                eprintln!("{child}: applies to no instance ({})", c.applies_to_none);
            }
            continue;
        }
        if !opts.quiet {
            eprintln!("{child}: {} instances", cp.instances.len());
        }
        let crec = child_recording(plan, &c, rec);
        let mut copts = opts.clone();
        if cp.deferred.is_empty() {
            copts.deferred_only = false;
            copts.deferred_cpu = None;
        }
        let result = child_compiler(plan, compiler, cp)
            .map_err(crate::error::Error::from)
            .and_then(|compiler| run_registry(cp, &copts, &crec, registry, runner, compiler));
        match result {
            Ok(s) => {
                if let Some(id) = crec.written.get().and_then(|d| d.file_name()) {
                    runs.push(ChildRunRecord::new(
                        child,
                        id.to_string_lossy().into_owned(),
                    ));
                }
                out.push(ChildSummary::of(child, &s));
            }
            Err(e) => out.push(ChildSummary::failed(child, format!("{e:#}"))),
        }
    }
    let _ = rec.children.set(runs);
    out
}

/// Where a further dataset's run directory goes: beside its dataset, or,
/// for a reproduction, beside the recorded run it reproduces.
fn child_recording(plan: &Plan, c: &ChildPlan, rec: &Recording) -> Recording {
    let runs_dir = rec.runs_dir.as_ref().map(|campaign_runs| {
        let dataset = campaign_runs.parent().unwrap_or(campaign_runs);
        let rel = c
            .plan
            .output_dir
            .strip_prefix(&plan.output_dir)
            .unwrap_or(&c.plan.output_dir);
        dataset.join(rel).join(crate::records::layout::RUNS)
    });
    Recording {
        runs_dir,
        reproduces: rec.children_reproduce.get(&c.child).cloned(),
        fresh_cache: rec.fresh_cache,
        ..Recording::default()
    }
}
