//! Shared pieces of the measuring stages: which instances are measured, on
//! which CPU, and how many iterations a trial gets.

pub mod drbg_cost;
pub mod driver;

use std::cell::Cell;

use serde::{Deserialize, Serialize};

use crate::kat::Status;
use crate::plan::{Instance, IssueAction, Plan, TimingSettings};
use crate::stages::InstanceResults;

thread_local! {
    static MEASURING_CPU: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Sets the CPU the current thread's measurements are pinned to.
pub fn set_measuring_cpu(cpu: Option<usize>) {
    MEASURING_CPU.with(|c| c.set(cpu));
}

pub fn measuring_cpu() -> Option<usize> {
    MEASURING_CPU.with(|c| c.get())
}

/// The library an instance is measured with, or None when it is excluded:
/// it must pass its KAT, or carry a known issue with action `measure`.
pub fn measured_library(plan: &Plan, inst: &Instance, prior: &InstanceResults) -> Option<String> {
    let kat = prior.kat.as_ref()?;
    let attempt = kat.final_attempt();
    let lib = attempt.library_sha256.clone()?;
    if attempt.status == Status::Pass {
        return Some(lib);
    }
    let alg = plan.algorithm(&inst.algorithm)?;
    let allowed = alg
        .issues_for(&inst.label)
        .iter()
        .any(|k| k.action == IssueAction::Measure);
    // A library that crashed or hung in its KAT is never timed.
    let runnable = !matches!(
        attempt.status,
        Status::Crash | Status::Timeout | Status::Loadfail | Status::Buildfail
    );
    (allowed && runnable).then_some(lib)
}

/// The measured library's file in the cache (an error when the instance
/// is excluded or the cache lost it).
pub fn measured_library_path(
    cx: &crate::engine::Cx,
    inst: &Instance,
    prior: &InstanceResults,
) -> anyhow::Result<std::path::PathBuf> {
    use anyhow::Context;
    let sha = measured_library(cx.plan, inst, prior).context("instance is not measured")?;
    cx.cache
        .existing_blob(&sha)
        .context("library missing from the cache")
}

/// Iterations of one trial, from a warm per-call time `t1`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IterationPlan {
    pub iterations: u64,
    /// The budget cut the iterations below what the target asked for.
    pub budget_limited: bool,
    /// Fewer timed calls than `min-calls` in total.
    pub below_min_calls: bool,
}

/// iterations = max(ceil(target / t1), min-iterations, ceil(min-calls /
/// trials)), capped at max-iterations, then cut so that trials ×
/// (iterations + warm-ups) × t1 fits the per-operation budget.
pub fn plan_iterations(t1: f64, s: &TimingSettings) -> IterationPlan {
    let t1 = t1.max(1e-9);
    let trials = u64::from(s.trials.max(1));
    let wanted = ((s.trial_seconds / t1).ceil() as u64)
        .max(s.min_iterations)
        .max(s.min_calls.div_ceil(trials))
        .min(s.max_iterations)
        .max(1);
    let affordable = ((s.budget_seconds / (trials as f64 * t1)).floor() as u64)
        .saturating_sub(u64::from(s.warmup));
    let iterations = wanted.min(affordable.max(1));
    IterationPlan {
        iterations,
        budget_limited: iterations < wanted,
        below_min_calls: iterations * trials < s.min_calls,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> TimingSettings {
        TimingSettings {
            trials: 5,
            warmup: 2,
            trial_seconds: 1.0,
            min_iterations: 20,
            max_iterations: 20_000,
            min_calls: 100,
            budget_seconds: 120.0,
            samples: true,
            cpus: vec![],
            timeout_seconds: 600.0,
        }
    }

    #[test]
    fn iterations_follow_target_floor_cap_and_budget() {
        let s = settings();
        assert_eq!(plan_iterations(1e-3, &s).iterations, 1000);
        assert_eq!(plan_iterations(1e-7, &s).iterations, 20_000);
        // Slow operation: at least 20 per trial while the budget allows.
        let p = plan_iterations(0.5, &s);
        assert_eq!((p.iterations, p.budget_limited), (20, false));
        // 5 s per call: 120 s budget over 5 trials allows 24 calls minus warm-ups.
        let p = plan_iterations(5.0, &s);
        assert_eq!(
            (p.iterations, p.budget_limited, p.below_min_calls),
            (2, true, true)
        );
        // The budget is never exceeded by the timed calls and warm-ups.
        for t1 in [1e-6, 1e-4, 1e-2, 0.3, 2.0] {
            let p = plan_iterations(t1, &s);
            let spent = 5.0 * (p.iterations as f64 + 2.0) * t1;
            assert!(
                spent <= s.budget_seconds * 1.0001 || p.iterations == 1,
                "{t1}"
            );
        }
    }
}
