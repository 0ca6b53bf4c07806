//! One trial of a timed operation: its process run with a fresh seed, its
//! claims checked against what the sandbox measured from outside
//! (`implausible`, `counter_disagrees`), repeated while disturbed, and the
//! outputs of a kept trial checked (`measure::inputs`).

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};

use crate::context::Cx;
use crate::measure::driver::{self, ProcessRecord};
use crate::measure::inputs::{self, PoolPlan};
use crate::measure::timing::{lost_cpu, Attempts, Next};
use crate::records::operation::OperationRecord;
use crate::stats::Trial;

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
    /// The kept trial (from 1) whose every timed call is remade: drawn
    /// before the trials run, and told to no process.
    pub full_replay_trial: u32,
    /// The campaign's timing settings as this operation follows them
    /// (`measure::op_settings`).
    pub settings: crate::plan::TimingSettings,
    /// The operation's last kept trial lost the CPU: the machine is busy,
    /// and a lost trial is not run again (`Attempts`).
    pub busy: std::cell::Cell<bool>,
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

/// Runs one trial, again while it lost the CPU (on a machine not found
/// busy) or was disturbed (`Attempts`), adding every process to `timing`;
/// `read` takes what the caller needs from the process beyond the trial's
/// figures.
pub(super) fn trial<X>(
    run: &TrialRun,
    timing: &mut OperationRecord,
    read: impl Fn(&ProcessRecord) -> Result<X>,
) -> Result<TrialEnd<X>> {
    let mut attempts = Attempts::new(run.busy.get());
    loop {
        // A fresh seed per process: no input is known before it runs.
        let seed = inputs::fresh_seed()?;
        let settings = run.pool.as_ref().map(|p| p.settings(&seed));
        let fed = match (&run.pool, &settings) {
            (Some(p), Some(s)) => p.fed(s),
            _ => driver::Fed::default(),
        };
        let ran =
            driver::run_with_files(run.cx, run.lib, &run.args, fed, run.cpu, run.timeout, &[])?;
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
                run.busy.set(lost);
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
    timing: &mut OperationRecord,
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
    note_lengths(timing, proc);
    Ok((trial, lost_cpu(proc)))
}

/// The longest lengths `proc` saw the library return, into `timing`'s.
pub(super) fn note_lengths(timing: &mut OperationRecord, proc: &ProcessRecord) {
    if let Some(l) = proc.line("lengths") {
        for (k, v) in &l.fields {
            if let Ok(v) = v.parse::<u64>() {
                let e = timing.lengths.entry(k.clone()).or_insert(0);
                *e = (*e).max(v);
            }
        }
    }
}

/// What a trial process was asked to do, and the CPU time the kernel
/// accounted to the operation's calibration process (which ran the same
/// set-up, warm-ups and at least 50 ms of calls).
pub(crate) struct Expected {
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
pub(crate) fn implausible(
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
    // share of CPU (a lost trial is kept whatever its share at its third
    // attempt, or its first on a machine found busy with other work).
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
        // The process's own set-up as the kernel counted it when the
        // driver said it starts timing; else as long as the calibration's
        // (a set-up that varies between processes, such as a key
        // generation that retries, can exceed that).
        let untimed = match proc.sandbox.cpu_witness.mark_ns {
            Some(ns) => ns as f64 * 1e-9 + CPU_SLACK,
            None => e.calibration_cpu.unwrap_or(f64::INFINITY) * SETUP_FACTOR + CPU_SLACK,
        };
        let allowed =
            CALL_FACTOR * (per_call + e.untimed_per_call) * (calls + u64::from(e.warmup)) as f64
                + untimed;
        if cpu > allowed {
            return Some(format!(
                "used {cpu:.3} s of CPU, but {calls} calls of {per_call:.3e} s with warm-ups, and {}, fit in {allowed:.3} s",
                match proc.sandbox.cpu_witness.mark_ns {
                    Some(ns) => format!("its own set-up of {:.3} s", ns as f64 * 1e-9),
                    None => "set-up as long as the calibration's".to_string(),
                }
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
pub(crate) fn counter_disagrees(proc: &ProcessRecord) -> Option<String> {
    let t = proc.line("trial")?;
    let seconds = t.f64("seconds")?;
    let cycles = t.f64("cycles")?;
    let meta = proc.line("meta");
    let counter = crate::records::counter::of(meta.and_then(|m| m.get("counter")));
    let hz = meta.and_then(|m| m.f64("counter_hz")).unwrap_or(0.0);
    if hz <= 0.0 || seconds < 1e-4 || lost_cpu(proc) {
        return None;
    }
    let rate = cycles / seconds / hz;
    // Core cycles follow the clock frequency, which may move between the
    // driver's rate measurement and the trial; reference counters tick at
    // a fixed rate.
    let (lo, hi) = if counter.is_some_and(|c| c.core_cycles) {
        (0.1, 10.0)
    } else {
        (0.8, 1.25)
    };
    (!(lo..=hi).contains(&rate)).then(|| {
        format!("{cycles} cycles in {seconds:.4} s is {rate:.3} times the counter's recorded rate")
    })
}

/// A kept trial's inputs and outputs checked (`measure::inputs`): why its
/// figures cannot stand, or None. The checks and the replay processes are
/// added to `timing`.
fn check_outputs(
    run: &TrialRun,
    timing: &mut OperationRecord,
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
        full: timing.trials.len() as u32 + 1 == run.full_replay_trial,
    };
    let c = inputs::check_trial(run.cx, run.lib, pool, &timed, run.cpu, run.timeout)?;
    timing.output_checks.extend(c.checks);
    timing.full_replays.extend(c.full);
    timing.processes.extend(c.replays);
    Ok(c.problem)
}
