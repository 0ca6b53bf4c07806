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
use crate::engine::{Job, Lender, Manifest, Policy, Stage};
use crate::engine::{Publication, Results};
use crate::measure::driver::{self, ProcessRecord};
use crate::measure::inputs::{self, PoolPlan};
use crate::measure::timing::{lost_cpu, Attempts, Calibration, Next, OpTiming, TimeOutput};
use crate::measure::witness;
use crate::measure::{
    measured_library_path, measurement_manifest, plan_iterations, IterationPlan, OpStatus,
};
use crate::plan::{Instance, TimingSettings};
use crate::records::operation::{record_path, OperationRecord};
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

    fn lender(&self, job: &Job, own: &Manifest) -> Result<Option<Lender>> {
        Ok(crate::measure::lender(job, own))
    }

    fn run(&self, job: &Job) -> Result<TimeOutput> {
        let cx = job.cx;
        let kat = job.prior.get::<KatStage>();
        let lib = measured_library_path(&cx.cache, cx.plan, job.inst, kat)?;
        let started_utc = Some(crate::records::utc_now());
        let mut ops: Vec<OpTiming> = Vec::new();
        for op in crate::measure::instance_operations(job.inst, kat) {
            let t = if cx.emulated() {
                functional_check(cx, &lib, op, job.cpu)?
            } else if crate::kinds::is_kex_step(op) {
                // A KEX step is timed inside whole protocols, planned from
                // the exchange's calibration (timed first).
                let exchange = ops.iter().find(|o| o.op == "exchange");
                super::time_steps::time_step(cx, &lib, op, exchange, job.cpu)?
            } else {
                time_op(cx, &lib, op, job.cpu)?
            };
            cx.progress
                .operation(Self::NAME, &job.inst.key(), op, &op_summary(&t));
            ops.push(t);
        }
        Ok(TimeOutput {
            cpu: job.cpu,
            ops,
            started_utc,
            finished_utc: Some(crate::records::utc_now()),
            host_fingerprint: cx.host_fingerprint.clone(),
        })
    }

    fn estimate_seconds(&self, job: &Job) -> Option<f64> {
        let s = &job.cx.plan.timing;
        let per_op = (f64::from(s.trials) * s.trial_seconds + 0.5).min(s.budget_seconds);
        let ops = crate::measure::instance_operations(job.inst, job.prior.get::<KatStage>());
        Some(per_op * ops.len() as f64)
    }

    fn records(&self) -> Option<&dyn crate::engine::Records> {
        Some(&super::time_records::RECORDS)
    }

    fn verdict(&self, out: &TimeOutput) -> crate::engine::Verdict {
        let failures = out
            .ops
            .iter()
            .filter(|o| !o.status.is_success())
            .map(|o| (format!("timing {}: {}", o.op, o.status), o.detail.clone()))
            .collect();
        crate::engine::Verdict {
            failures,
            ..Default::default()
        }
    }

    /// The counter and each operation's median, so repeated runs compare.
    fn lock(
        &self,
        _: &Cx,
        _: &Instance,
        out: Option<&TimeOutput>,
        entry: &mut crate::records::lock::InstanceLock,
    ) -> Result<()> {
        if let Some(t) = out {
            entry.counter = t.ops.iter().find_map(|o| o.counter.clone());
            entry.median_cycles = t
                .ops
                .iter()
                .filter_map(|o| Some((o.op.clone(), o.summary.as_ref()?.median_cycles)))
                .collect();
        }
        Ok(())
    }

    /// The counter and when the measurements ran.
    fn campaign(
        &self,
        outs: &[&TimeOutput],
        record: &mut crate::records::campaign::CampaignRecord,
    ) {
        let first = outs
            .iter()
            .flat_map(|t| t.ops.iter())
            .find(|o| o.counter.is_some());
        if let Some(o) = first {
            record.counter.clone_from(&o.counter);
            record.counter_hz = o.counter_hz;
        }
        record.measured_from_utc = outs.iter().filter_map(|t| t.started_utc.clone()).min();
        record.measured_to_utc = outs.iter().filter_map(|t| t.finished_utc.clone()).max();
    }

    /// One record per measured operation, with the memory stage's figures
    /// for it and the instance's KAT status and known issues.
    fn publish(
        &self,
        p: &mut Publication,
        inst: &Instance,
        out: &TimeOutput,
        r: &Results,
    ) -> Result<()> {
        let issues: Vec<String> =
            p.cx.plan
                .algorithm(&inst.algorithm)
                .map(|a| {
                    a.issues_for(&inst.label)
                        .iter()
                        .map(|k| k.cause.clone())
                        .collect()
                })
                .unwrap_or_default();
        let kat_status = r
            .get::<KatStage>()
            .map(|k| k.status().to_string())
            .unwrap_or_default();
        for t in &out.ops {
            let rec = OperationRecord {
                algorithm: inst.algorithm.clone(),
                label: inst.label.clone(),
                op: t.op.clone(),
                started_utc: t.started_utc.clone(),
                kat_status: kat_status.clone(),
                known_issues: issues.clone(),
                status: t.status,
                detail: t.detail.clone(),
                cpu: out.cpu,
                host_fingerprint: out.host_fingerprint.clone(),
                counter: t.counter.clone(),
                counter_hz: t.counter_hz,
                calibration: t.calibration.clone(),
                plan: t.plan.clone(),
                trials_wanted: t.trials_wanted,
                warmup: t.warmup,
                processes: t.processes.clone(),
                trials: t.trials.clone(),
                repeated_trials: t.repeated_trials,
                sign_failures_retried: t.sign_retries,
                setup_sign_failures_retried: t.setup_sign_retries,
                verify_rejects: t.verify_rejects,
                lengths: t.lengths.clone(),
                memory: super::memory::figures(r, &t.op),
                statistics: t.summary.clone(),
                measured_by: r.lent_by(Self::NAME),
                step: t.step.clone(),
                output_checks: t.output_checks.clone(),
                witness: t.witness.clone(),
            };
            p.write(&record_path(&inst.algorithm, &inst.label, &t.op), &rec)?;
        }
        Ok(())
    }
}

/// On an emulated system: run the operation a few times through the
/// driver (set-up, its counter, the adapter) and record that it works,
/// never a figure: an emulator's cycles describe the emulator.
fn functional_check(cx: &Cx, lib: &Path, op: &str, cpu: Option<usize>) -> Result<OpTiming> {
    const CALLS: u64 = 3;
    let args: Vec<String> = ["--op", op, "--mode", "trial", "--warmup", "0", "--iters"]
        .iter()
        .map(|s| s.to_string())
        .chain([CALLS.to_string()])
        .collect();
    let timeout = Duration::from_secs_f64(cx.plan.timing.timeout_seconds);
    let (proc, _) = driver::run(cx, lib, &args, cpu, timeout)?;
    if let Some((status, detail)) = proc.failure() {
        return Ok(failed(
            op,
            status,
            format!("functional check: {detail}"),
            vec![proc],
        ));
    }
    let mut t = failed(
        op,
        OpStatus::Emulated,
        format!(
            "functional check only: {CALLS} calls ran under the emulator of system {}; not timed",
            cx.plan.system
        ),
        Vec::new(),
    );
    if let Some(l) = proc.line("lengths") {
        for (k, v) in &l.fields {
            if let Ok(v) = v.parse::<u64>() {
                t.lengths.insert(k.clone(), v);
            }
        }
    }
    t.counter = proc
        .line("meta")
        .and_then(|m| m.get("counter"))
        .map(String::from);
    t.processes.push(proc);
    Ok(t)
}

/// One progress line per measured operation.
pub(super) fn op_summary(t: &OpTiming) -> String {
    match (&t.summary, t.status) {
        (Some(sum), OpStatus::Ok) => format!(
            "{} calls in {} trials, median {} cycles",
            sum.n,
            t.trials.len(),
            crate::format::cycles(sum.median_cycles)
        ),
        _ => format!(
            "{} ({})",
            t.status,
            t.detail.as_deref().unwrap_or("no detail")
        ),
    }
}

pub(super) fn failed(
    op: &str,
    status: OpStatus,
    detail: String,
    processes: Vec<ProcessRecord>,
) -> OpTiming {
    OpTiming {
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
        sign_retries: 0,
        setup_sign_retries: 0,
        verify_rejects: 0,
        lengths: BTreeMap::new(),
        summary: None,
        step: None,
        output_checks: Vec::new(),
        witness: None,
    }
}

fn time_op(cx: &Cx, lib: &Path, op: &str, cpu: Option<usize>) -> Result<OpTiming> {
    let s = &cx.plan.timing;
    let timeout = Duration::from_secs_f64(s.timeout_seconds);
    let started_utc = Some(crate::records::utc_now_millis());
    let calibrate = driver_args(op, "calibrate", s.warmup);
    let seed = inputs::fresh_seed()?;
    let settings = PoolPlan::calibration(op).map(|p| p.settings(&seed));
    let calib_proc = driver::run_fed(cx, lib, &calibrate, settings.as_deref(), cpu, timeout)?.proc;
    if let Some((status, detail)) = calib_proc.failure() {
        let mut t = failed(
            op,
            status,
            format!("calibration: {detail}"),
            vec![calib_proc],
        );
        t.started_utc = started_utc;
        return Ok(t);
    }
    let calibration = calibration(&calib_proc)?;
    let plan = plan_iterations(calibration.seconds_per_call, s);
    // Trials of different call counts, so the kernel's witness of their
    // CPU time separates per-call cost from set-up (`measure::witness`).
    let counts = witness::spread_counts(plan.iterations, s.trials);
    let longest = counts.iter().copied().max().unwrap_or(plan.iterations);
    // One pool size for every trial: its building is then set-up the
    // witness fit puts in its intercept.
    let pool = PoolPlan::trial(op, longest, s.warmup, calibration.seconds_per_call);
    let mut run = TrialRun {
        cx,
        lib,
        args: trial_args(op, plan.iterations, s),
        cpu,
        timeout: trial_timeout(longest, calibration.seconds_per_call, s),
        expected: Expected {
            iterations: plan.iterations,
            warmup: s.warmup,
            samples: s.samples,
            calibration_cpu: calib_proc.sandbox.rusage.map(|r| r.cpu_seconds()),
            untimed_per_call: pool
                .as_ref()
                .map_or(0.0, |p| p.untimed_per_call(plan.iterations)),
        },
        pool,
    };
    let mut timing = planned(op, started_utc, calibration, plan, s);
    timing.processes.push(calib_proc);
    for &calls in &counts {
        run.args = trial_args(op, calls, s);
        run.expected.iterations = calls;
        run.expected.untimed_per_call =
            run.pool.as_ref().map_or(0.0, |p| p.untimed_per_call(calls));
        match trial(&run, &mut timing, retries)? {
            TrialEnd::Kept(trial, r) => {
                // Counted for kept trials only, so they refer to the same calls as n.
                timing.sign_retries += r.sign.unwrap_or(0);
                timing.setup_sign_retries += r.setup_sign.unwrap_or(0);
                timing.verify_rejects += r.verify_rejects.unwrap_or(0);
                timing.trials.push(trial);
            }
            TrialEnd::Failed => return Ok(finish(timing)),
            TrialEnd::Implausible(why) => return Ok(implausible_timing(timing, why)),
            TrialEnd::Inconsistent(why) => return Ok(inconsistent_timing(timing, why)),
        }
    }
    timing.witness = witness::fit(&timing.processes);
    let below = timing.witness.as_ref().and_then(|f| {
        let (counter, hz) = (timing.counter.as_deref(), timing.counter_hz);
        witness::claims_below_witness(&timing.trials, counter, hz, f)
    });
    Ok(match below {
        // Named after the trial the check found; every trial is dropped.
        Some(why) => without_figures(timing, OpStatus::Implausible, why),
        None => finish(timing),
    })
}

/// The driver's arguments for `op` in `mode`, up to its warm-up calls.
fn driver_args(op: &str, mode: &str, warmup: u32) -> Vec<String> {
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

/// The calibration the driver printed.
fn calibration(calib_proc: &ProcessRecord) -> Result<Calibration> {
    let c = calib_proc
        .line("calib")
        .context("driver printed no calibration")?;
    let calls = c.u64("calls").unwrap_or(1).max(1);
    let seconds = c.f64("seconds").unwrap_or(0.0);
    Ok(Calibration {
        calls,
        seconds,
        seconds_per_call: seconds / calls as f64,
        first_seconds: c.f64("first_seconds"),
    })
}

/// An operation's timing before its first trial: planned, with no trial
/// and no process yet.
pub(super) fn planned(
    op: &str,
    started_utc: Option<String>,
    calibration: Calibration,
    plan: IterationPlan,
    s: &TimingSettings,
) -> OpTiming {
    OpTiming {
        op: op.to_string(),
        started_utc,
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
        setup_sign_retries: 0,
        verify_rejects: 0,
        lengths: BTreeMap::new(),
        summary: None,
        step: None,
        output_checks: Vec::new(),
        witness: None,
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

/// How every trial process of one operation is run.
pub(super) struct TrialRun<'a> {
    pub cx: &'a Cx<'a>,
    pub lib: &'a Path,
    pub args: Vec<String>,
    pub cpu: Option<usize>,
    pub timeout: Duration,
    pub expected: Expected,
    /// Distinct inputs per call (`measure::inputs`), for the operations
    /// that take them.
    pub pool: Option<PoolPlan>,
}

/// How one trial ended.
pub(super) enum TrialEnd<X> {
    /// Kept, with what the caller read from its process.
    Kept(Trial, X),
    /// The driver failed: `timing` has its status and detail.
    Failed,
    /// None of the operation's trials can be used, for this reason.
    Implausible(String),
    /// What the timed calls returned does not hold up (`measure::inputs`).
    Inconsistent(String),
}

/// Runs one trial, again while it lost the CPU or was disturbed
/// (`Attempts`), adding every process to `timing`; `read` takes what the
/// caller needs from the process beyond the trial's figures.
pub(super) fn trial<X>(
    run: &TrialRun,
    timing: &mut OpTiming,
    read: impl Fn(&ProcessRecord) -> Result<X>,
) -> Result<TrialEnd<X>> {
    let mut attempts = Attempts::default();
    loop {
        // A fresh seed per process: no input is known before it runs.
        let seed = inputs::fresh_seed()?;
        let settings = run.pool.as_ref().map(|p| p.settings(&seed));
        let ran = driver::run_fed(
            run.cx,
            run.lib,
            &run.args,
            settings.as_deref(),
            run.cpu,
            run.timeout,
        )?;
        let (proc, samples, outputs) = (ran.proc, ran.samples, ran.outputs);
        if let Some((status, detail)) = proc.failure() {
            timing.status = status;
            timing.detail = Some(format!("trial {}: {detail}", timing.trials.len() + 1));
            timing.processes.push(proc);
            return Ok(TrialEnd::Failed);
        }
        let claims = (samples.len(), samples.iter().sum::<u64>());
        if let Some(why) = implausible(&proc, &run.expected, claims) {
            timing.processes.push(proc);
            return Ok(TrialEnd::Implausible(why));
        }
        let disturbed = counter_disagrees(&proc);
        let (trial, lost) = read_trial(&proc, samples, timing)?;
        let extra = read(&proc)?;
        timing.processes.push(proc);
        match attempts.judge(lost, disturbed) {
            Next::Keep => {
                if let Some(why) = check_outputs(run, timing, &trial, &seed, &outputs)? {
                    return Ok(TrialEnd::Inconsistent(why));
                }
                return Ok(TrialEnd::Kept(trial, extra));
            }
            Next::Repeat => timing.repeated_trials += 1,
            Next::Implausible(why) => return Ok(TrialEnd::Implausible(why)),
        }
    }
}

/// Reads one trial's figures; `lost` when it ran below the CPU share.
pub(super) fn read_trial(
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

/// What a trial process was asked to do, and the CPU time the kernel
/// accounted to the operation's calibration process (which ran the same
/// set-up, warm-ups and at least 50 ms of calls).
pub struct Expected {
    pub iterations: u64,
    pub warmup: u32,
    pub samples: bool,
    pub calibration_cpu: Option<f64>,
    /// Seconds of untimed work around each timed call (a KEX step runs the
    /// rest of its protocol around it): part of the CPU a trial may use.
    pub untimed_per_call: f64,
}

/// Why a trial process's claims (calls, timed seconds, cycles, CPU time)
/// cannot be true given what the sandbox measured of the process from the
/// outside (its CPU time from wait4, its wall time from fork to reap), or
/// None when they can. The library runs inside the process and can write
/// whatever it likes to the driver's results; this bounds what it gains.
///
/// The bounds hold for an honest process on a loaded 2-core VM: time off
/// the CPU only makes wall and timed seconds longer than CPU time, never
/// shorter, so every CPU bound is one-sided; a trial's untimed work (set-up,
/// warm-ups, loading) is bounded by the whole calibration process's CPU
/// time, which did the same; the counter-rate bounds apply only to a trial
/// that held the CPU.
pub fn implausible(
    proc: &ProcessRecord,
    e: &Expected,
    (samples, sample_sum): (usize, u64),
) -> Option<String> {
    // CPU seconds of noise between two processes doing the same untimed
    // work, and the factor on the calibration's CPU time.
    const CPU_SLACK: f64 = 0.3;
    const SETUP_FACTOR: f64 = 1.5;
    // A warm-up call may cost this many timed calls (cold caches).
    const CALL_FACTOR: f64 = 3.0;
    // Of its claimed timed seconds a process must at least have had this
    // share of CPU (the third attempt of a lost trial is kept whatever its
    // share, on a machine busy with other work).
    const MIN_CPU_SHARE: f64 = 0.05;
    let iterations = e.iterations;
    let samples_wanted = e.samples;
    let t = proc.line("trial")?;
    let calls = t.u64("calls").unwrap_or(0);
    if calls != iterations {
        return Some(format!("claims {calls} calls, {iterations} were planned"));
    }
    if samples_wanted && samples as u64 != calls {
        return Some(format!("gave {samples} per-call samples for {calls} calls"));
    }
    let seconds = t.f64("seconds").unwrap_or(f64::NAN);
    let cycles = t.f64("cycles").unwrap_or(f64::NAN);
    if !(seconds.is_finite() && seconds > 0.0 && cycles.is_finite() && cycles >= 0.0) {
        return Some("claims no timed seconds or cycles".into());
    }
    if samples_wanted && sample_sum as f64 > cycles * 1.001 + 1000.0 {
        return Some(format!(
            "its per-call samples add up to {sample_sum} cycles, more than the trial's {cycles}"
        ));
    }
    if seconds > proc.wall_seconds + 0.01 {
        return Some(format!(
            "claims {seconds:.4} s timed in a process that lived {:.4} s",
            proc.wall_seconds
        ));
    }
    let claimed_cpu = t.f64("cpu_seconds").unwrap_or(0.0);
    if let Some(ru) = &proc.sandbox.rusage {
        let cpu = ru.cpu_seconds();
        if cpu + 0.01 < claimed_cpu * 0.98 {
            return Some(format!(
                "claims {claimed_cpu:.4} s on the CPU, the kernel accounted {cpu:.4} s to the whole process"
            ));
        }
        if cpu < MIN_CPU_SHARE * seconds - 0.05 {
            return Some(format!(
                "claims {seconds:.4} s of timed calls, the process had {cpu:.4} s of CPU"
            ));
        }
        let per_call = seconds / calls.max(1) as f64;
        let untimed = e.calibration_cpu.unwrap_or(f64::INFINITY) * SETUP_FACTOR + CPU_SLACK;
        let allowed =
            CALL_FACTOR * (per_call + e.untimed_per_call) * (calls + u64::from(e.warmup)) as f64
                + untimed;
        if cpu > allowed {
            return Some(format!(
                "used {cpu:.3} s of CPU, but {calls} calls of {per_call:.3e} s with warm-ups, and set-up as long as the calibration's, fit in {allowed:.3} s"
            ));
        }
    }
    None
}

/// Why a trial's cycles and seconds disagree with the counter's recorded
/// rate, or None. The two are read at slightly different moments: on a
/// short trial one preemption between the reads moves the ratio by a
/// quarter, so a disagreement is a disturbance to repeat (`Attempts`), and
/// only one that every repetition shows is taken as evidence.
pub fn counter_disagrees(proc: &ProcessRecord) -> Option<String> {
    let t = proc.line("trial")?;
    let seconds = t.f64("seconds")?;
    let cycles = t.f64("cycles")?;
    let meta = proc.line("meta");
    let counter = meta.and_then(|m| m.get("counter"));
    let hz = meta.and_then(|m| m.f64("counter_hz")).unwrap_or(0.0);
    if hz <= 0.0 || seconds < 1e-4 || lost_cpu(proc) {
        return None;
    }
    let rate = cycles / seconds / hz;
    // User-mode cycles follow the clock frequency, which may move between
    // the driver's rate measurement and the trial; the other counters tick
    // at a fixed rate.
    let (lo, hi) = match counter {
        Some("perf-user-cycles") => (0.1, 10.0),
        _ => (0.8, 1.25),
    };
    (!(lo..=hi).contains(&rate)).then(|| {
        format!("{cycles} cycles in {seconds:.4} s is {rate:.3} times the counter's recorded rate")
    })
}

/// A process whose claims the sandbox's own measurements contradict lied
/// (or was disturbed in every repetition): none of this operation's trials
/// are used.
pub(super) fn implausible_timing(timing: OpTiming, why: String) -> OpTiming {
    let why = format!("trial {}: {why}", timing.trials.len() + 1);
    without_figures(timing, OpStatus::Implausible, why)
}

/// `timing` with `status` and `detail` and none of its trials or counts.
fn without_figures(mut timing: OpTiming, status: OpStatus, detail: String) -> OpTiming {
    timing.status = status;
    timing.detail = Some(detail);
    timing.trials.clear();
    timing.sign_retries = 0;
    timing.setup_sign_retries = 0;
    timing.verify_rejects = 0;
    finish(timing)
}

/// A kept trial's inputs and outputs checked (`measure::inputs`): why its
/// figures cannot stand, or None. The checks and the replay process are
/// added to `timing`.
fn check_outputs(
    run: &TrialRun,
    timing: &mut OpTiming,
    trial: &Trial,
    seed: &str,
    outputs: &[u64],
) -> Result<Option<String>> {
    let (Some(pool), Some(proc)) = (&run.pool, timing.processes.last()) else {
        return Ok(None);
    };
    let timed = inputs::Timed {
        proc,
        seed_sent: seed,
        samples: &trial.samples,
        outputs,
        trial: timing.trials.len() as u32 + 1,
        iterations: run.expected.iterations,
    };
    let c = inputs::check_trial(run.cx, run.lib, pool, &timed, run.cpu, run.timeout)?;
    timing.output_checks.extend(c.checks);
    timing.processes.extend(c.replay);
    Ok(c.problem)
}

/// Timed calls whose outputs or costs do not hold up: none of this
/// operation's figures are used.
pub(super) fn inconsistent_timing(timing: OpTiming, why: String) -> OpTiming {
    let why = format!("trial {}: {why}", timing.trials.len() + 1);
    without_figures(timing, OpStatus::Inconsistent, why)
}

pub(super) fn finish(mut t: OpTiming) -> OpTiming {
    t.summary = stats::summarize(&t.trials);
    t
}
