//! Time stage: per operation, calibrate with warm calls, plan the
//! iterations, then run each trial in a fresh pinned driver process;
//! a trial that lost the CPU is repeated (up to 3 attempts) and counted.
//! Statistics are derived from the raw trials kept in the output.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};

use super::kat::KatStage;
use crate::context::Cx;
use crate::engine::{Job, Manifest, Policy, Stage};
use crate::measure::driver::{self, ProcessRecord};
use crate::measure::timing::{lost_cpu, Calibration, OpTiming, TimeOutput, TRIAL_ATTEMPTS};
use crate::measure::{measured_library_path, measurement_manifest, plan_iterations, OpStatus};
use crate::stats::{self, Trial};

pub struct TimeStage;

impl Stage for TimeStage {
    type Output = TimeOutput;
    const NAME: &'static str = "time";
    const REQUIRES: &'static [&'static str] = &["build", "kat"];
    const POLICY: Policy = Policy::Measuring;

    fn manifest(&self, job: &Job) -> Result<Option<Manifest>> {
        Ok(measurement_manifest(job, job.prior.get::<KatStage>()))
    }

    fn run(&self, job: &Job) -> Result<TimeOutput> {
        let cx = job.cx;
        let kat = job.prior.get::<KatStage>();
        let lib = measured_library_path(&cx.cache, cx.plan, job.inst, kat)?;
        let started_utc = Some(crate::records::utc_now());
        let mut ops = Vec::new();
        for op in job.inst.kind.operations() {
            let t = time_op(cx, &lib, op, job.cpu)?;
            cx.progress
                .operation(Self::NAME, &job.inst.key(), op, &op_summary(&t));
            ops.push(t);
        }
        Ok(TimeOutput {
            cpu: job.cpu,
            ops,
            started_utc,
            finished_utc: Some(crate::records::utc_now()),
        })
    }

    fn estimate_seconds(&self, job: &Job) -> Option<f64> {
        let s = &job.cx.plan.timing;
        let per_op = (f64::from(s.trials) * s.trial_seconds + 0.5).min(s.budget_seconds);
        Some(per_op * job.inst.kind.operations().len() as f64)
    }
}

/// One progress line per measured operation.
fn op_summary(t: &OpTiming) -> String {
    match (&t.summary, t.status) {
        (Some(sum), OpStatus::Ok) => format!(
            "{} calls in {} trials, median {:.0} cycles",
            sum.n,
            t.trials.len(),
            sum.median_cycles
        ),
        _ => format!(
            "{} ({})",
            t.status,
            t.detail.as_deref().unwrap_or("no detail")
        ),
    }
}

fn failed(op: &str, status: OpStatus, detail: String, processes: Vec<ProcessRecord>) -> OpTiming {
    OpTiming {
        op: op.to_string(),
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
        sign_retries: 0,
        verify_rejects: 0,
        lengths: BTreeMap::new(),
        summary: None,
    }
}

fn time_op(cx: &Cx, lib: &Path, op: &str, cpu: Option<usize>) -> Result<OpTiming> {
    let s = &cx.plan.timing;
    let timeout = Duration::from_secs_f64(s.timeout_seconds);
    let base = |mode: &str| -> Vec<String> {
        ["--op", op, "--mode", mode, "--warmup"]
            .iter()
            .map(|x| x.to_string())
            .chain([s.warmup.to_string()])
            .collect()
    };
    let (calib_proc, _) = driver::run(cx, lib, &base("calibrate"), cpu, timeout)?;
    if let Some((status, detail)) = calib_proc.failure() {
        return Ok(failed(
            op,
            status,
            format!("calibration: {detail}"),
            vec![calib_proc],
        ));
    }
    let c = calib_proc
        .line("calib")
        .context("driver printed no calibration")?;
    let calls = c.u64("calls").unwrap_or(1).max(1);
    let seconds = c.f64("seconds").unwrap_or(0.0);
    let calibration = Calibration {
        calls,
        seconds,
        seconds_per_call: seconds / calls as f64,
        first_seconds: c.f64("first_seconds"),
    };
    let plan = plan_iterations(calibration.seconds_per_call, s);
    // A trial may take a few times its planned length on a noisy host, but
    // a hang must still end well before the campaign-wide limit.
    let expected = (plan.iterations + u64::from(s.warmup)) as f64 * calibration.seconds_per_call;
    let trial_timeout = Duration::from_secs_f64((expected * 10.0 + 30.0).min(s.timeout_seconds));
    let mut args = base("trial");
    args.extend(["--iters".to_string(), plan.iterations.to_string()]);
    if s.samples {
        args.push("--samples".into());
    }
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
        processes: vec![calib_proc],
        trials: Vec::new(),
        repeated_trials: 0,
        sign_retries: 0,
        verify_rejects: 0,
        lengths: BTreeMap::new(),
        summary: None,
    };
    for _ in 0..s.trials {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let (proc, samples) = driver::run(cx, lib, &args, cpu, trial_timeout)?;
            if let Some((status, detail)) = proc.failure() {
                timing.status = status;
                timing.detail = Some(format!("trial {}: {detail}", timing.trials.len() + 1));
                timing.processes.push(proc);
                return Ok(finish(timing));
            }
            let (trial, lost) = read_trial(&proc, samples, &mut timing)?;
            let t = proc.line("trial").context("driver printed no trial line")?;
            let (retries, rejects) = (t.u64("sign_retries"), t.u64("verify_rejects"));
            timing.processes.push(proc);
            if lost && attempt < TRIAL_ATTEMPTS {
                timing.repeated_trials += 1;
                continue;
            }
            // Counted for kept trials only, so they refer to the same calls as n.
            timing.sign_retries += retries.unwrap_or(0);
            timing.verify_rejects += rejects.unwrap_or(0);
            timing.trials.push(trial);
            break;
        }
    }
    Ok(finish(timing))
}

/// Reads one trial's figures; `lost` when it ran below the CPU share.
fn read_trial(
    proc: &ProcessRecord,
    samples: Vec<u64>,
    timing: &mut OpTiming,
) -> Result<(Trial, bool)> {
    let meta = proc.line("meta").context("driver printed no meta line")?;
    timing.counter = meta.get("counter").map(String::from);
    timing.counter_hz = meta.f64("counter_hz");
    let t = proc.line("trial").context("driver printed no trial line")?;
    let trial = Trial {
        calls: t.u64("calls").unwrap_or(0),
        seconds: t.f64("seconds").unwrap_or(0.0),
        cycles: t.f64("cycles").unwrap_or(0.0),
        samples,
    };
    if let Some(l) = proc.line("lengths") {
        for (k, v) in &l.fields {
            if let Ok(v) = v.parse::<u64>() {
                let e = timing.lengths.entry(k.clone()).or_insert(0);
                *e = (*e).max(v);
            }
        }
    }
    Ok((trial, lost_cpu(proc)))
}

fn finish(mut t: OpTiming) -> OpTiming {
    t.summary = stats::summarize(&t.trials);
    t
}
