//! One operation's timing record through its life: planned after the
//! calibration, filled trial by trial, and ended (`finish`, or without
//! figures when a trial failed, lied or gave outputs that do not hold up).
//! The stage, its key-exchange steps and the witness's further sets all
//! run their trials through it.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Context, Result};

use super::time_trial::{trial, TrialEnd, TrialRun};
use crate::measure::driver::ProcessRecord;
use crate::measure::timing::Calibration;
use crate::measure::witness;
use crate::measure::{IterationPlan, OpStatus};
use crate::plan::TimingSettings;
use crate::records::operation::OperationRecord;
use crate::stats;

pub(super) fn failed(
    op: &str,
    status: OpStatus,
    detail: String,
    processes: Vec<ProcessRecord>,
) -> OperationRecord {
    OperationRecord {
        // The instance's fields are filled in when the stage publishes.
        algorithm: String::new(),
        label: String::new(),
        kat_status: String::new(),
        known_issues: Vec::new(),
        cpu: None,
        host_fingerprint: None,
        memory: None,
        measured_by: None,
        op: op.to_string(),
        started_utc: None,
        status,
        detail: Some(detail),
        counter: None,
        counter_hz: None,
        calibration: None,
        plan: None,
        trials_wanted: 0,
        warmup: 0,
        processes,
        trials: Vec::new(),
        repeated_trials: 0,
        sign_failures_retried: 0,
        setup_sign_failures_retried: 0,
        verify_rejects: 0,
        lengths: BTreeMap::new(),
        statistics: None,
        step: None,
        output_checks: Vec::new(),
        full_replays: Vec::new(),
        witness: None,
        witness_sets: None,
    }
}

/// Why a trial ended its operation.
pub(super) enum Stop {
    Failed,
    Implausible(String),
    Inconsistent(String),
}

impl Stop {
    pub(super) fn end(self, timing: OperationRecord) -> OperationRecord {
        match self {
            Stop::Failed => finish(timing),
            Stop::Implausible(why) => implausible_timing(timing, why),
            Stop::Inconsistent(why) => inconsistent_timing(timing, why),
        }
    }
}

/// Runs one trial per call count into `timing`, or stops at the trial
/// that ends the operation.
pub(super) fn run_trials(
    run: &mut TrialRun,
    counts: &[u64],
    timing: &mut OperationRecord,
    op: &str,
) -> Result<Option<Stop>> {
    let s = &run.settings;
    for &calls in counts {
        run.args = trial_args(op, calls, s);
        run.expected.iterations = calls;
        run.expected.untimed_per_call =
            run.pool.as_ref().map_or(0.0, |p| p.untimed_per_call(calls));
        match trial(run, timing, retries)? {
            TrialEnd::Kept(trial, r) => {
                // Counted for kept trials only, so they refer to the same calls as n.
                timing.sign_failures_retried += r.sign.unwrap_or(0);
                timing.setup_sign_failures_retried += r.setup_sign.unwrap_or(0);
                timing.verify_rejects += r.verify_rejects.unwrap_or(0);
                timing.trials.push(trial);
            }
            TrialEnd::Failed => return Ok(Some(Stop::Failed)),
            TrialEnd::Implausible(why) => return Ok(Some(Stop::Implausible(why))),
            TrialEnd::Inconsistent(why) => return Ok(Some(Stop::Inconsistent(why))),
        }
    }
    Ok(None)
}

/// The driver's arguments for `op` in `mode`, up to its warm-up calls.
pub(super) fn driver_args(op: &str, mode: &str, warmup: u32) -> Vec<String> {
    ["--op", op, "--mode", mode, "--warmup"]
        .iter()
        .map(|x| x.to_string())
        .chain([warmup.to_string()])
        .collect()
}

/// The driver's arguments for one trial of `iterations` calls.
pub(super) fn trial_args(op: &str, iterations: u64, s: &TimingSettings) -> Vec<String> {
    let mut args = driver_args(op, "trial", s.warmup);
    args.extend(["--iters".to_string(), iterations.to_string()]);
    if s.samples {
        args.push("--samples".into());
    }
    args
}

/// A trial may take a few times its planned length on a noisy host, but
/// a hang must still end well before the campaign-wide limit.
pub(super) fn trial_timeout(
    iterations: u64,
    seconds_per_call: f64,
    s: &TimingSettings,
) -> Duration {
    let expected = (iterations + u64::from(s.warmup)) as f64 * seconds_per_call;
    Duration::from_secs_f64((expected * 10.0 + 30.0).min(s.timeout_seconds))
}

/// An operation's timing before its first trial: planned, with no trial
/// and no process yet.
pub(super) fn planned(
    op: &str,
    started_utc: Option<String>,
    calibration: Calibration,
    plan: IterationPlan,
    s: &TimingSettings,
) -> OperationRecord {
    OperationRecord {
        started_utc,
        detail: None,
        calibration: Some(calibration),
        plan: Some(plan),
        trials_wanted: s.trials,
        warmup: s.warmup,
        ..failed(op, OpStatus::Ok, String::new(), Vec::new())
    }
}

/// The signing retries and verify rejections a trial reports.
struct Retries {
    sign: Option<u64>,
    setup_sign: Option<u64>,
    verify_rejects: Option<u64>,
}

fn retries(proc: &ProcessRecord) -> Result<Retries> {
    let t = proc.line("trial").context("driver printed no trial line")?;
    Ok(Retries {
        sign: t.u64("sign_retries"),
        setup_sign: t.u64("setup_sign_retries"),
        verify_rejects: t.u64("verify_rejects"),
    })
}

/// A process whose claims the sandbox's own measurements contradict lied
/// (or was disturbed in every repetition): none of this operation's trials
/// are used.
pub(super) fn implausible_timing(timing: OperationRecord, why: String) -> OperationRecord {
    let why = format!("trial {}: {why}", timing.trials.len() + 1);
    without_figures(timing, OpStatus::Implausible, why)
}

/// `timing` with `status` and `detail` and none of its trials or counts.
pub(super) fn without_figures(
    mut timing: OperationRecord,
    status: OpStatus,
    detail: String,
) -> OperationRecord {
    timing.status = status;
    timing.detail = Some(detail);
    timing.trials.clear();
    timing.sign_failures_retried = 0;
    timing.setup_sign_failures_retried = 0;
    timing.verify_rejects = 0;
    // The fit's ceiling is the kept trials'; with none kept it has none
    // (as `check` recomputes it).
    if timing.witness.is_some() {
        judge_witness(&mut timing);
    }
    finish(timing)
}

/// Timed calls whose outputs or costs do not hold up: none of this
/// operation's figures are used.
pub(super) fn inconsistent_timing(timing: OperationRecord, why: String) -> OperationRecord {
    let why = format!("trial {}: {why}", timing.trials.len() + 1);
    without_figures(timing, OpStatus::Inconsistent, why)
}

pub(super) fn finish(mut t: OperationRecord) -> OperationRecord {
    t.statistics = stats::summarize(&t.trials);
    t
}

/// Fits the witness over every trial process so far and judges the kept
/// trials against it.
pub(super) fn judge_witness(timing: &mut OperationRecord) -> witness::Verdict {
    let planned = timing.plan.as_ref().map(|p| p.iterations);
    timing.witness = witness::fit(&timing.processes, planned, &timing.trials);
    let Some(f) = timing.witness.as_ref() else {
        return witness::Verdict::Absent;
    };
    let (counter, hz) = (timing.counter.as_deref(), timing.counter_hz);
    witness::judge(&timing.trials, counter, hz, f)
}
