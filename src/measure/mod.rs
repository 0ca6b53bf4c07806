//! Shared pieces of the measuring stages: which instances are measured, on
//! which CPU, and how many iterations a trial gets.

pub(crate) mod cost;
pub mod drbg_cost;
pub mod driver;
pub mod inputs;
pub(crate) mod keys;
pub(crate) mod least_squares;
pub mod memory;
pub(crate) mod pool;
pub mod profile;
pub mod timing;
pub(crate) mod valgrind;
pub(crate) mod vgxml;
pub mod witness;

use crate::cache::Cache;
use crate::engine::{Job, Lender, Manifest};
use crate::kat::{KatOutput, Status};
use crate::plan::{Instance, IssueAction, Plan, TimingSettings};
use crate::support::Part;

pub use crate::records::measure::OpStatus;

impl OpStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            OpStatus::Ok => "ok",
            OpStatus::Crash => "crash",
            OpStatus::Timeout => "timeout",
            OpStatus::Error => "error",
            OpStatus::Implausible => "implausible",
            OpStatus::NoHelpers => "no-helpers",
            OpStatus::RelinkFailed => "relink-failed",
            OpStatus::Emulated => "emulated",
            OpStatus::Inconsistent => "inconsistent",
            OpStatus::Unwitnessed => "unwitnessed",
        }
    }

    pub(crate) fn is_ok(self) -> bool {
        self == OpStatus::Ok
    }

    /// Not a failure: measured, or run as the emulated system's check.
    pub(crate) fn is_success(self) -> bool {
        matches!(self, OpStatus::Ok | OpStatus::Emulated)
    }
}

/// Compares with the JSON spelling (`status == "ok"`).
impl PartialEq<&str> for OpStatus {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl std::fmt::Display for OpStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The operations an instance has (a KEX's passes as its KAT run found
/// them: none before a KAT).
pub(crate) fn instance_operations(inst: &Instance, kat: Option<&KatOutput>) -> Vec<&'static str> {
    let passes = kat.and_then(|k| k.figure("passes")).map(|p| p as u32);
    inst.kind.instance_operations(passes)
}

/// The operations the profile stage profiles: all of a signature's or
/// KEM's, a KEX's `exchange`, none of a hash's.
pub(crate) fn profiled_operations(inst: &Instance, kat: Option<&KatOutput>) -> Vec<&'static str> {
    instance_operations(inst, kat)
        .into_iter()
        .filter(|op| inst.kind.profiles(op))
        .collect()
}

/// The library an instance is measured with, or None when it is excluded:
/// it must pass its KAT, or carry a known issue with action `measure`.
pub(crate) fn measured_library(
    plan: &Plan,
    inst: &Instance,
    kat: Option<&KatOutput>,
) -> Option<String> {
    let attempt = kat?.final_attempt();
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
pub(crate) fn measured_library_path(
    cache: &Cache,
    plan: &Plan,
    inst: &Instance,
    kat: Option<&KatOutput>,
) -> anyhow::Result<std::path::PathBuf> {
    use anyhow::Context;
    let sha = measured_library(plan, inst, kat).context("instance is not measured")?;
    cache.existing_blob(&sha).with_context(|| {
        format!(
            "library {} of {} missing from the cache (run again to rebuild it)",
            &sha[..12],
            inst.key()
        )
    })
}

/// Inputs of every measuring stage: the library, the driver, the settings,
/// the measuring CPU and the host state, and the campaign the measurement
/// belongs to; None when the instance is excluded.
pub(crate) fn measurement_manifest(job: &Job, kat: Option<&KatOutput>) -> Option<Manifest> {
    let cx = job.cx;
    let lib = measured_library(cx.plan, job.inst, kat)?;
    let mut m = Manifest::new();
    m.set("library", lib)
        .set("driver", Part::Driver.version())
        .set("timing", &cx.plan.timing)
        .set("limits", &cx.plan.limits)
        .set("cpu", job.cpu)
        .set("host", cx.host_fingerprint.clone().unwrap_or_default())
        // A measurement belongs to the campaign (and system) that made it:
        // another campaign's --remeasure never replaces it.
        .set("owner", format!("{}/{}", cx.plan.campaign, cx.plan.system))
        .set("pqbench", crate::STAGE_LOGIC_VERSION);
    Some(m)
}

/// The campaign this one takes measurements from
/// (`reuse-measurements-from`): the same inputs as this campaign's own
/// manifest `own`, owned by that campaign on this system.
pub(crate) fn lender(job: &Job, own: &Manifest) -> Option<Lender> {
    let plan = job.cx.plan;
    let from = plan.reuse_measurements_from.as_ref()?;
    let owner = format!("{from}/{}", plan.system);
    let mut manifest = own.clone();
    manifest.set("owner", &owner);
    let output_dir = plan
        .output_dir
        .parent()?
        .parent()?
        .join(from)
        .join(&plan.system);
    Some(Lender {
        owner,
        manifest,
        output_dir,
    })
}

pub use crate::records::measure::IterationPlan;

/// iterations = max(ceil(target / t1), min-iterations, ceil(min-calls /
/// trials)), capped at max-iterations, then cut so that trials ×
/// (iterations + warm-ups) × t1 fits the per-operation budget.
pub(crate) fn plan_iterations(t1: f64, s: &TimingSettings) -> IterationPlan {
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
        slow_calls: t1 >= s.trial_seconds,
    }
}

/// The campaign's timing settings as one operation follows them: a call
/// as long as a trial (`trial-seconds`) is its own warm-up (caches and
/// predictors are warm long before it ends), so its trials and their
/// replays make none; the record's `warmup` says so.
pub(crate) fn op_settings(s: &TimingSettings, seconds_per_call: f64) -> TimingSettings {
    let mut own = s.clone();
    if plan_iterations(seconds_per_call, s).slow_calls {
        own.warmup = 0;
    }
    own
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
            share_keys: Default::default(),
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
        // A call as long as a trial is slow (its own warm-up); a shorter
        // one is not.
        assert!(plan_iterations(1.0, &s).slow_calls);
        assert!(!plan_iterations(0.5, &s).slow_calls);
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
