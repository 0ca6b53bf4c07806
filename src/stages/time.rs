//! Time stage: per operation, calibrate with warm calls, plan the
//! iterations, then run each trial in a fresh pinned driver process;
//! a trial that lost the CPU is repeated (up to 3 attempts) and counted.
//! Statistics are derived from the raw trials kept in the output.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};

use super::kat::KatStage;
use super::time_trial::{trial, Expected, TrialEnd, TrialRun};
use crate::context::Cx;
use crate::engine::{Job, Lender, Manifest, Policy, Stage};
use crate::engine::{Publication, Results};
use crate::measure::driver::{self, ProcessRecord};
use crate::measure::inputs::{self, PoolPlan};
use crate::measure::timing::{Calibration, OpTiming, TimeOutput};
use crate::measure::witness;
use crate::measure::{
    measured_library_path, measurement_manifest, plan_iterations, IterationPlan, OpStatus,
};
use crate::plan::{Instance, TimingSettings};
use crate::records::operation::{record_path, OperationRecord};
use crate::stats;

pub(crate) struct TimeStage;

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
                full_replays: t.full_replays.clone(),
                witness: t.witness.clone(),
                witness_sets: t.witness_sets.clone(),
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
        full_replays: Vec::new(),
        witness: None,
        witness_sets: None,
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
        full_replay_trial: inputs::full_replay_trial(s.trials)?,
    };
    let mut timing = planned(op, started_utc, calibration, plan, s);
    timing.processes.push(calib_proc);
    if let Some(stop) = run_trials(&mut run, &counts, &mut timing, op)? {
        return Ok(stop.end(timing));
    }
    let seconds_per_call = timing
        .calibration
        .as_ref()
        .map_or(0.0, |c| c.seconds_per_call);
    let (verdict, sets) = match witness_sets(&mut run, &counts, &mut timing, op, seconds_per_call)?
    {
        Ok(judged) => judged,
        Err(stop) => return Ok(stop.end(timing)),
    };
    Ok(match verdict {
        // Named after the trial the check found; every trial is dropped.
        witness::Verdict::Below(why) => without_figures(timing, OpStatus::Implausible, why),
        witness::Verdict::Undecided(why) => {
            timing.status = OpStatus::Unwitnessed;
            timing.detail = Some(format!("⚠ unwitnessed after {sets} sets of trials: {why}"));
            finish(timing)
        }
        witness::Verdict::Upheld | witness::Verdict::Absent => finish(timing),
    })
}

/// Judges the first set of trials against the witness and, while the
/// verdict is open, runs further sets (`WITNESS_SETS` in all): the
/// verdict and how many sets ran, or the trial that ended the operation.
fn witness_sets(
    run: &mut TrialRun,
    counts: &[u64],
    timing: &mut OpTiming,
    op: &str,
    seconds_per_call: f64,
) -> Result<std::result::Result<(witness::Verdict, u32), Stop>> {
    let s = &run.cx.plan.timing;
    let mut scale = 1;
    let mut verdict = judge_witness(timing);
    let mut sets = 1;
    while verdict.open() && sets < WITNESS_SETS {
        // Evidence must survive repetition, and an undecided witness must
        // not let a claim pass. A claim below the witness runs again as it
        // was; an undecided one runs SET_SCALE times longer (within
        // the budget), so the calls' CPU outweighs the noise of each
        // process's set-up. The witness is fitted over every set's
        // processes with an intercept per set length (a set run later,
        // under another load, moves its own intercept, not the slope), and
        // the latest set's trials are the ones judged and kept; the pool stays
        // the first set's, so every process's set-up is alike and the fit
        // stays unbiased (longer trials walk it more than once). Earlier
        // sets' processes stay in the record (the fit counts them);
        // `repeated_trials` keeps meaning trials that lost the CPU.
        match verdict {
            witness::Verdict::Below(_) if sets >= 2 => break,
            witness::Verdict::Below(_) => {}
            _ => scale = next_scale(scale, timing, counts, seconds_per_call, s.budget_seconds),
        }
        let longer: Vec<u64> = counts.iter().map(|c| c * scale).collect();
        let longest = longer.iter().copied().max().unwrap_or(1);
        run.timeout = trial_timeout(longest, seconds_per_call, s);
        // The output checks describe the kept trials; the earlier sets'
        // agreed (a disagreement ends the operation), and their replay
        // processes stay in the record.
        timing.trials.clear();
        timing.output_checks.clear();
        timing.full_replays.clear();
        timing.sign_retries = 0;
        timing.setup_sign_retries = 0;
        timing.verify_rejects = 0;
        if let Some(stop) = run_trials(run, &longer, timing, op)? {
            // The record's fit covers every process it keeps, as `check`
            // recomputes it.
            judge_witness(timing);
            return Ok(Err(stop));
        }
        sets += 1;
        verdict = judge_witness(timing);
        timing.witness_sets = Some(crate::records::measure::WitnessSets { sets, scale });
    }
    Ok(Ok((verdict, sets)))
}

/// Why a trial ended its operation.
enum Stop {
    Failed,
    Implausible(String),
    Inconsistent(String),
}

impl Stop {
    fn end(self, timing: OpTiming) -> OpTiming {
        match self {
            Stop::Failed => finish(timing),
            Stop::Implausible(why) => implausible_timing(timing, why),
            Stop::Inconsistent(why) => inconsistent_timing(timing, why),
        }
    }
}

/// Runs one trial per call count into `timing`, or stops at the trial
/// that ends the operation.
fn run_trials(
    run: &mut TrialRun,
    counts: &[u64],
    timing: &mut OpTiming,
    op: &str,
) -> Result<Option<Stop>> {
    let s = &run.cx.plan.timing;
    for &calls in counts {
        run.args = trial_args(op, calls, s);
        run.expected.iterations = calls;
        run.expected.untimed_per_call =
            run.pool.as_ref().map_or(0.0, |p| p.untimed_per_call(calls));
        match trial(run, timing, retries)? {
            TrialEnd::Kept(trial, r) => {
                // Counted for kept trials only, so they refer to the same calls as n.
                timing.sign_retries += r.sign.unwrap_or(0);
                timing.setup_sign_retries += r.setup_sign.unwrap_or(0);
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

/// Sets of trials an operation runs at most while the witness is open
/// (`witness::Verdict::open`): a claim convicted twice is implausible, one
/// still undecided after the last set is `unwitnessed`.
const WITNESS_SETS: u32 = 3;

/// The longest a set of trials may run, in the first set's lengths.
const MAX_SCALE: u64 = 256;

/// The most calls a set of trials may run in all: the kept trials' per-call
/// samples go into the record, about 6 bytes each.
const MAX_SET_CALLS: u64 = 200_000;

/// The length of the next set while the witness is undecided, in the first
/// set's lengths: four times the last, or as many powers of four more as
/// the shortest trial's calls need to cost four times the set-up (the
/// fitted one, or the most CPU a kept process used beyond its claims);
/// always a power of four (the fit tells sets apart by it, see
/// `witness::fit`) and within `MAX_SCALE`, `MAX_SET_CALLS` and the
/// operation's time budget per set, at the dearer of the claimed and the
/// witnessed cost per call (a library that claims too little cannot make
/// the sets run long).
fn next_scale(
    scale: u64,
    timing: &OpTiming,
    counts: &[u64],
    claimed_per_call: f64,
    budget_seconds: f64,
) -> u64 {
    let fit = timing.witness.as_ref();
    let witnessed = fit.and_then(|f| f.per_call_seconds).unwrap_or(0.0);
    let per_call = claimed_per_call.max(witnessed).max(1e-9);
    // The fitted set-up is as noisy as the fit; each kept process's CPU
    // beyond what its calls claimed is set-up too, with no fit.
    let unclaimed = fit.map_or(0.0, |f| {
        let hz = timing
            .counter_hz
            .filter(|h| *h > 0.0)
            .unwrap_or(f64::INFINITY);
        let ceilings = f.per_call_ceilings_seconds.iter();
        timing
            .trials
            .iter()
            .zip(ceilings)
            .map(|(t, u)| u * t.calls as f64 - t.cycles / hz)
            .fold(0.0, f64::max)
    });
    let setup = fit
        .and_then(|f| f.setup_seconds)
        .unwrap_or(0.0)
        .abs()
        .max(unclaimed);
    let fewest = counts.iter().copied().min().unwrap_or(1).max(1) as f64;
    let planned: u64 = counts.iter().sum();
    let affordable =
        (budget_seconds / (planned as f64 * per_call)).min((MAX_SET_CALLS / planned.max(1)) as f64);
    let needed = 4.0 * setup / (fewest * per_call);
    let mut next = scale * witness::SET_SCALE;
    while (next as f64) < needed && next < MAX_SCALE {
        next *= witness::SET_SCALE;
    }
    while next > scale && (next > MAX_SCALE || next as f64 > affordable) {
        next /= witness::SET_SCALE;
    }
    next
}

/// Fits the witness over every trial process so far and judges the kept
/// trials against it.
fn judge_witness(timing: &mut OpTiming) -> witness::Verdict {
    let planned = timing.plan.as_ref().map(|p| p.iterations);
    timing.witness = witness::fit(&timing.processes, planned, &timing.trials);
    let Some(f) = timing.witness.as_ref() else {
        return witness::Verdict::Absent;
    };
    let (counter, hz) = (timing.counter.as_deref(), timing.counter_hz);
    witness::judge(&timing.trials, counter, hz, f)
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
        full_replays: Vec::new(),
        witness: None,
        witness_sets: None,
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
    // The fit's ceiling is the kept trials'; with none kept it has none
    // (as `check` recomputes it).
    if timing.witness.is_some() {
        judge_witness(&mut timing);
    }
    finish(timing)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::measure::CpuFit;

    /// Five kept trials of 1 µs calls, each process's CPU `unclaimed` over
    /// its claims, under a fit whose set-up came out `fitted`.
    fn judged(fitted: f64, unclaimed: Option<f64>) -> OpTiming {
        let counts = [50u64, 75, 100, 125, 150];
        let mut t = failed("keygen", OpStatus::Ok, String::new(), Vec::new());
        t.counter_hz = Some(1e9);
        t.trials = counts
            .iter()
            .map(|&n| crate::stats::Trial {
                calls: n,
                seconds: n as f64 * 1e-6,
                cycles: n as f64 * 1e3,
                samples: Vec::new(),
            })
            .collect();
        t.witness = Some(CpuFit {
            processes: 5,
            per_call_seconds: Some(1e-6),
            per_call_stderr_seconds: None,
            degrees_of_freedom: None,
            setup_seconds: Some(fitted),
            per_call_ceilings_seconds: unclaimed.map_or(Vec::new(), |u| {
                counts.iter().map(|&n| 1e-6 + u / n as f64).collect()
            }),
            missing: None,
        });
        t
    }

    #[test]
    fn sets_grow_until_the_calls_outweigh_the_set_up() {
        let counts = [50u64, 75, 100, 125, 150];
        // A fit whose set-up came out near nothing: four times longer.
        assert_eq!(next_scale(1, &judged(1e-5, None), &counts, 1e-6, 100.0), 4);
        // 6.6 ms each process used beyond its claims: the 50 calls need
        // 528 times their length to cost four times that; capped.
        let t = judged(1e-5, Some(6.6e-3));
        assert_eq!(next_scale(1, &t, &counts, 1e-6, 100.0), MAX_SCALE);
        // The budget bounds it (500 calls of 1 µs per set at the first
        // length: 0.05 s affords 100 times, so 64).
        assert_eq!(next_scale(1, &t, &counts, 1e-6, 0.05), 64);
    }
}
