//! Runs a campaign's further `[matrix]` combinations, each as a plan of its
//! own (`Plan::combination_plan`) with its own dataset, cache keys and run
//! directory, before the campaign's own plan: the pages rendered at the
//! end of that run then hold every combination. A combination that fails
//! to build or to pass its KAT is a finding shown in its cell, and one that
//! cannot run at all is reported; neither stops the others.

use std::collections::BTreeMap;

use super::summary::CombinationSummary;
use super::{run_registry, Recording, RunOptions, RunSummary};
use crate::engine::{RealRunner, Registry};
use crate::plan::Plan;
use crate::records::lock::CombinationRun;
use crate::records::settings::Combination;
use crate::toolchain::Compiler;

impl CombinationSummary {
    fn of(c: &Combination, s: &RunSummary) -> CombinationSummary {
        CombinationSummary {
            combination: c.name.clone(),
            reused: s.reused,
            computed: s.computed,
            kat: s.kat.clone(),
            failures: s.failures.clone(),
            errors: s.errors.iter().map(|e| e.to_string()).collect(),
        }
    }

    fn failed(c: &Combination, why: String) -> CombinationSummary {
        CombinationSummary {
            combination: c.name.clone(),
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
        let mut s = match kat.is_empty() {
            true => format!("matrix {}: not run", self.combination),
            false => format!(
                "matrix {}: KAT {}; {} stage results reused, {} computed",
                self.combination,
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

/// Runs every combination but the primary, in matrix order; returns what
/// each came to and records their runs in `rec` for the campaign's lock.
pub(super) fn run_combinations(
    plan: &Plan,
    opts: &RunOptions,
    rec: &Recording,
    registry: &Registry,
) -> Vec<CombinationSummary> {
    let mut out = Vec::new();
    let mut runs = Vec::new();
    for c in plan.combinations().iter().filter(|c| !c.primary) {
        let cp = plan.combination_plan(c);
        if cp.instances.is_empty() {
            // Only `submitter` can apply to nothing: no implementation
            // declares its own flags. Its cells say "not run".
            if !opts.quiet {
                eprintln!(
                    "matrix: combination {} applies to no instance (no implementation declares submitter-cflags)",
                    c.name
                );
            }
            continue;
        }
        if !opts.quiet {
            eprintln!(
                "matrix: combination {} ({} instances)",
                c.name,
                cp.instances.len()
            );
        }
        let crec = combination_recording(plan, &cp, c, rec);
        let mut copts = opts.clone();
        if cp.deferred.is_empty() {
            copts.deferred_only = false;
            copts.deferred_cpu = None;
        }
        let result = Compiler::for_plan(&cp)
            .map_err(crate::error::Error::from)
            .and_then(|compiler| run_registry(&cp, &copts, &crec, registry, &RealRunner, compiler));
        match result {
            Ok(s) => {
                if let Some(id) = crec.written.get().and_then(|d| d.file_name()) {
                    runs.push(CombinationRun {
                        combination: c.name.clone(),
                        run_id: id.to_string_lossy().into_owned(),
                    });
                }
                out.push(CombinationSummary::of(c, &s));
            }
            Err(e) => out.push(CombinationSummary::failed(c, format!("{e:#}"))),
        }
    }
    let _ = rec.combinations.set(runs);
    out
}

/// Where a combination's run directory goes: beside its dataset, or, for a
/// reproduction, beside the recorded combination run it reproduces.
fn combination_recording(plan: &Plan, cp: &Plan, c: &Combination, rec: &Recording) -> Recording {
    let runs_dir = rec.runs_dir.as_ref().map(|campaign_runs| {
        let dataset = campaign_runs.parent().unwrap_or(campaign_runs);
        let rel = cp
            .output_dir
            .strip_prefix(&plan.output_dir)
            .unwrap_or(&cp.output_dir);
        dataset.join(rel).join(crate::records::layout::RUNS)
    });
    Recording {
        runs_dir,
        reproduces: rec.combinations_reproduce.get(&c.name).cloned(),
        fresh_cache: rec.fresh_cache,
        ..Recording::default()
    }
}
