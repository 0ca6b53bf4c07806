//! Timing a KEX step (`init_a`, `init_b`, `pass<k>`, `derive_a`,
//! `derive_b`): every timed call is that one step inside a complete
//! protocol run, the counter read around the one call (see
//! `support/c/driver_kex.c`). A step has no calibration of its own: it
//! runs as many protocols per trial as the exchange's plan gives, so its
//! trials cost what the exchange's do. Trials are checked, repeated when
//! they lost the CPU and summarised as in `time`, the untimed rest of each
//! protocol counted in the CPU a trial may use.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};

use super::time::{
    counter_disagrees, failed, finish, implausible, implausible_timing, read_trial, Expected,
};
use crate::context::Cx;
use crate::measure::driver;
use crate::measure::timing::{Attempts, Next, OpTiming, StepTiming};
use crate::measure::OpStatus;

pub fn time_step(
    cx: &Cx,
    lib: &Path,
    op: &str,
    exchange: Option<&OpTiming>,
    cpu: Option<usize>,
) -> Result<OpTiming> {
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
    let expected_seconds = (iterations + u64::from(s.warmup)) as f64 * protocol;
    let timeout = Duration::from_secs_f64((expected_seconds * 10.0 + 30.0).min(s.timeout_seconds));
    let mut args: Vec<String> = ["--op", op, "--mode", "trial", "--warmup"]
        .iter()
        .map(|x| x.to_string())
        .chain([
            s.warmup.to_string(),
            "--iters".into(),
            iterations.to_string(),
        ])
        .collect();
    if s.samples {
        args.push("--samples".into());
    }
    let calibration_cpu = ex
        .processes
        .first()
        .and_then(|p| p.sandbox.rusage)
        .map(|r| r.cpu_seconds());
    let mut timing = OpTiming {
        op: op.to_string(),
        status: OpStatus::Ok,
        detail: None,
        counter: None,
        counter_hz: None,
        calibration: Some(calibration),
        plan: Some(plan),
        trials_wanted: s.trials,
        warmup: s.warmup,
        processes: Vec::new(),
        trials: Vec::new(),
        repeated_trials: 0,
        sign_retries: 0,
        verify_rejects: 0,
        setup_sign_retries: 0,
        started_utc: Some(crate::records::utc_now()),
        lengths: Default::default(),
        summary: None,
        step: None,
    };
    let mut overheads = Vec::new();
    for _ in 0..s.trials {
        let mut attempts = Attempts::default();
        loop {
            let (proc, samples) = driver::run(cx, lib, &args, cpu, timeout)?;
            if let Some((status, detail)) = proc.failure() {
                timing.status = status;
                timing.detail = Some(format!("trial {}: {detail}", timing.trials.len() + 1));
                timing.processes.push(proc);
                return Ok(finish(timing));
            }
            let claims = (samples.len(), samples.iter().sum::<u64>());
            let expected = Expected {
                iterations,
                warmup: s.warmup,
                samples: s.samples,
                calibration_cpu,
                // The rest of each protocol runs untimed around the step.
                untimed_per_call: protocol,
            };
            if let Some(why) = implausible(&proc, &expected, claims) {
                timing.processes.push(proc);
                return Ok(implausible_timing(timing, why));
            }
            let disturbed = counter_disagrees(&proc);
            let (trial, lost) = read_trial(&proc, samples, &mut timing)?;
            let overhead = proc
                .line("overhead")
                .and_then(|l| l.f64("counter_read_cycles"))
                .context("driver printed no counter overhead for a step")?;
            timing.processes.push(proc);
            match attempts.judge(lost, disturbed) {
                Next::Keep => {}
                Next::Repeat => {
                    timing.repeated_trials += 1;
                    continue;
                }
                Next::Implausible(why) => return Ok(implausible_timing(timing, why)),
            }
            overheads.push(overhead);
            timing.trials.push(trial);
            break;
        }
    }
    timing.step = Some(StepTiming {
        planned_from: "exchange".into(),
        counter_overhead_cycles: (!overheads.is_empty()).then(|| crate::stats::median(&overheads)),
    });
    Ok(finish(timing))
}
