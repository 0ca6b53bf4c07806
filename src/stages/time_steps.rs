//! Timing a KEX step (`init_a`, `init_b`, `pass<k>`, `derive_a`,
//! `derive_b`): every timed call is that one step inside a complete
//! protocol run, the counter read around the one call (see
//! `support/c/driver_kex.c`). A step has no calibration of its own: it
//! runs as many protocols per trial as the exchange's plan gives, so its
//! trials cost what the exchange's do. Trials are checked, repeated when
//! they lost the CPU and summarised as in `time`, the untimed rest of each
//! protocol counted in the CPU a trial may use.

use std::path::Path;

use anyhow::{Context, Result};

use super::time_op::{
    failed, finish, implausible_timing, inconsistent_timing, planned, trial_args, trial_timeout,
};
use super::time_trial::{trial, Expected, TrialEnd, TrialRun};
use crate::context::Cx;
use crate::measure::driver::ProcessRecord;
use crate::measure::timing::StepTiming;
use crate::measure::OpStatus;
use crate::records::operation::OperationRecord;

pub(crate) fn time_step(
    cx: &Cx,
    lib: &Path,
    op: &str,
    exchange: Option<&OperationRecord>,
    cpu: Option<usize>,
) -> Result<OperationRecord> {
    let s = &cx.plan.timing;
    let Some((ex, calibration, plan)) = exchange.and_then(|e| {
        Some((e, e.calibration.clone()?, e.plan.clone()?)).filter(|_| e.status.is_ok())
    }) else {
        return Ok(failed(
            op,
            OpStatus::Error,
            "not timed: the exchange it is planned from has no figures".into(),
            Vec::new(),
        ));
    };
    let iterations = plan.iterations;
    let protocol = calibration.seconds_per_call;
    let run = TrialRun {
        cx,
        lib,
        args: trial_args(op, iterations, s),
        cpu,
        timeout: trial_timeout(iterations, protocol, s),
        expected: Expected {
            iterations,
            warmup: s.warmup,
            samples: s.samples,
            calibration_cpu: ex
                .processes
                .first()
                .and_then(|p| p.sandbox.rusage)
                .map(|r| r.cpu_seconds()),
            // The rest of each protocol runs untimed around the step.
            untimed_per_call: protocol,
        },
        // No pool: a step's inputs are the protocol's, and every run's
        // randomness is re-seeded from the trial's seed, so picked runs
        // can be made again and checked.
        pool: crate::measure::inputs::PoolPlan::trial(op, iterations, s.warmup, protocol),
        full_replay_trial: crate::measure::inputs::full_replay_trial(s.trials)?,
        settings: s.clone(),
        busy: std::cell::Cell::new(false),
    };
    let started_utc = Some(crate::records::utc_now());
    let mut timing = planned(op, started_utc, calibration, plan, s);
    let mut overheads = Vec::new();
    for _ in 0..s.trials {
        match trial(&run, &mut timing, counter_overhead)? {
            TrialEnd::Kept(trial, overhead) => {
                overheads.push(overhead);
                timing.trials.push(trial);
            }
            TrialEnd::Failed => return Ok(finish(timing)),
            TrialEnd::Implausible(why) => return Ok(implausible_timing(timing, why)),
            TrialEnd::Inconsistent(why) => return Ok(inconsistent_timing(timing, why)),
        }
    }
    timing.step = Some(StepTiming {
        planned_from: "exchange".into(),
        counter_overhead_cycles: (!overheads.is_empty()).then(|| crate::stats::median(&overheads)),
    });
    Ok(finish(timing))
}

/// The cycles one read of the counter costs, which a step's driver reports.
fn counter_overhead(proc: &ProcessRecord) -> Result<f64> {
    proc.line("overhead")
        .and_then(|l| l.f64("counter_read_cycles"))
        .context("driver printed no counter overhead for a step")
}
