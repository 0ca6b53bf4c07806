//! Time stage: per operation, calibrate with warm calls, plan the
//! iterations, then run each trial in a fresh pinned driver process;
//! a trial that lost the CPU is repeated (up to 3 attempts; none on a
//! machine found busy) and counted.
//! Statistics are derived from the raw trials kept in the output.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};

use super::kat::KatStage;
use super::time_op::{
    driver_args, failed, finish, planned, run_trials, trial_args, trial_timeout, without_figures,
};
use super::time_trial::{Expected, TrialRun};
use super::time_witness::witness_sets;
use crate::context::Cx;
use crate::engine::{Job, Lender, Manifest, Policy, Stage};
use crate::engine::{Publication, Results};
use crate::measure::driver::{self, ProcessRecord};
use crate::measure::inputs::{self, PoolPlan};
use crate::measure::keys;
use crate::measure::timing::{Calibration, TimeOutput};
use crate::measure::witness;
use crate::measure::{measured_library_path, measurement_manifest, plan_iterations, OpStatus};
use crate::plan::Instance;
use crate::records::operation::{record_path, OperationRecord};

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
        let mut ops: Vec<OperationRecord> = Vec::new();
        // Made at the first operation that shares it, for every later one.
        let mut shared: Option<keys::Built> = None;
        for op in crate::measure::instance_operations(job.inst, kat) {
            let t = if cx.emulated() {
                functional_check(cx, &lib, op, job.cpu)?
            } else if crate::kinds::is_kex_step(op) {
                // A KEX step is timed inside whole protocols, planned from
                // the exchange's calibration (timed first).
                let exchange = ops.iter().find(|o| o.op == "exchange");
                super::time_steps::time_step(cx, &lib, op, exchange, job.cpu)?
            } else {
                let keys = shared_keys(cx, &lib, op, &ops, job.cpu, &mut shared)?;
                time_op(cx, &lib, op, job.cpu, keys)?
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

    /// From what each call cost in the KAT run (`measure::cost`), else
    /// from the settings alone.
    fn estimate_seconds(&self, job: &Job) -> Option<f64> {
        let s = &job.cx.plan.timing;
        let kat = job.prior.get::<KatStage>();
        let ops = crate::measure::instance_operations(job.inst, kat);
        let from_kat = kat
            .and_then(|k| crate::measure::cost::instance_seconds(&ops, |op| k.call_seconds(op), s));
        let per_op = (f64::from(s.trials) * s.trial_seconds + 0.5).min(s.budget_seconds);
        Some(from_kat.unwrap_or(per_op * ops.len() as f64))
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
                .filter_map(|o| Some((o.op.clone(), o.statistics.as_ref()?.median_cycles)))
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
            // The stage's own record, with what other stages and the plan
            // know of its instance.
            let rec = OperationRecord {
                algorithm: inst.algorithm.clone(),
                label: inst.label.clone(),
                kat_status: kat_status.clone(),
                known_issues: issues.clone(),
                cpu: out.cpu,
                host_fingerprint: out.host_fingerprint.clone(),
                memory: super::memory::figures(r, &t.op),
                measured_by: r.lent_by(Self::NAME),
                ..t.clone()
            };
            p.write(&record_path(&inst.algorithm, &inst.label, &t.op), &rec)?;
        }
        Ok(())
    }
}

/// On an emulated system: run the operation a few times through the
/// driver (set-up, its counter, the adapter) and record that it works,
/// never a figure: an emulator's cycles describe the emulator.
fn functional_check(cx: &Cx, lib: &Path, op: &str, cpu: Option<usize>) -> Result<OperationRecord> {
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
pub(super) fn op_summary(t: &OperationRecord) -> String {
    match (&t.statistics, t.status) {
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

/// The key pair `op` shares with the instance's other operations, made
/// now if it is the first to want one (`measure::keys`); None when its
/// processes make their own.
fn shared_keys<'a>(
    cx: &Cx,
    lib: &Path,
    op: &str,
    done: &[OperationRecord],
    cpu: Option<usize>,
    shared: &'a mut Option<keys::Built>,
) -> Result<Option<&'a keys::Built>> {
    let s = &cx.plan.timing;
    let keygen = done
        .iter()
        .find(|o| o.op == "keygen")
        .and_then(|o| o.calibration.as_ref())
        .map(|c| c.seconds_per_call);
    if !keys::wanted(s.share_keys, op, keygen, s.trial_seconds) {
        return Ok(None);
    }
    if shared.is_none() {
        let timeout = Duration::from_secs_f64(s.timeout_seconds);
        *shared = Some(keys::build(cx, lib, &inputs::fresh_seed()?, cpu, timeout)?);
    }
    Ok(shared.as_ref())
}

fn time_op(
    cx: &Cx,
    lib: &Path,
    op: &str,
    cpu: Option<usize>,
    keys: Option<&keys::Built>,
) -> Result<OperationRecord> {
    let s = &cx.plan.timing;
    let timeout = Duration::from_secs_f64(s.timeout_seconds);
    let started_utc = Some(crate::records::utc_now_millis());
    // The keys process is in the record of each operation that used them.
    let mut before: Vec<ProcessRecord> = keys.iter().map(|k| k.proc.clone()).collect();
    let pair = match keys.map(|k| &k.keys) {
        Some(Err(why)) => {
            let status = keys
                .and_then(|k| k.proc.failure())
                .map_or(OpStatus::Error, |f| f.0);
            let mut t = failed(op, status, why.clone(), before);
            t.started_utc = started_utc;
            return Ok(t);
        }
        Some(Ok(pair)) => Some(pair.clone()),
        None => None,
    };
    let calibrate = driver_args(op, "calibrate", s.warmup);
    let seed = inputs::fresh_seed()?;
    let calib_plan = PoolPlan::calibration(op).map(|mut p| {
        p.keys.clone_from(&pair);
        p
    });
    let settings = calib_plan.as_ref().map(|p| p.settings(&seed));
    let fed = match (&calib_plan, &settings) {
        (Some(p), Some(s)) => p.fed(s),
        _ => driver::Fed::default(),
    };
    let calib_proc = driver::run_with_files(cx, lib, &calibrate, fed, cpu, timeout, &[])?.proc;
    if let Some((status, detail)) = calib_proc.failure() {
        before.push(calib_proc);
        let mut t = failed(op, status, format!("calibration: {detail}"), before);
        t.started_utc = started_utc;
        return Ok(t);
    }
    let calibration = calibration(&calib_proc)?;
    let own = crate::measure::op_settings(s, calibration.seconds_per_call);
    let s = &own;
    let plan = plan_iterations(calibration.seconds_per_call, s);
    // Trials of different call counts, so the kernel's witness of their
    // CPU time separates per-call cost from set-up (`measure::witness`).
    let counts = witness::spread_counts(plan.iterations, s.trials);
    let longest = counts.iter().copied().max().unwrap_or(plan.iterations);
    // One pool size for every trial: its building is then set-up the
    // witness fit puts in its intercept.
    let pool = PoolPlan::trial(op, longest, s.warmup, calibration.seconds_per_call).map(|mut p| {
        p.keys = pair;
        p
    });
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
        settings: own.clone(),
        busy: std::cell::Cell::new(false),
    };
    let mut timing = planned(op, started_utc, calibration, plan, s);
    let lengths = calib_proc.line("lengths").cloned();
    timing.processes = before;
    timing.processes.push(calib_proc);
    if let Some(failed) = share_pool(&mut run, lengths.as_ref(), &mut timing)? {
        return Ok(failed);
    }
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

/// Verify's pool, built once in a process of its own and fed to every
/// trial and replay (`measure::pool`), within what a driver's input
/// descriptor holds (`lengths`: the calibration's). A pool process that
/// fails ends the operation (returned); a pool that cannot be fed leaves
/// each process to build its own.
fn share_pool(
    run: &mut TrialRun,
    lengths: Option<&crate::measure::driver::Line>,
    timing: &mut OperationRecord,
) -> Result<Option<OperationRecord>> {
    let Some(plan) = run.pool.as_mut().filter(|p| p.op == "verify") else {
        return Ok(None);
    };
    let (pk, sig) = (
        lengths.and_then(|l| l.u64("pk")).unwrap_or(0),
        lengths.and_then(|l| l.u64("sig")).unwrap_or(0),
    );
    // Room for signatures a quarter longer than the calibration's longest.
    let fits = crate::measure::pool::max_entries(pk, sig + sig / 4);
    if fits < 2 {
        return Ok(None);
    }
    let mut wanted = plan.clone();
    wanted.pool_max = plan.pool_max.min(fits).max(2);
    let settings = wanted.settings(&inputs::fresh_seed()?);
    let fed = wanted.fed(&settings);
    let built =
        crate::measure::pool::build(run.cx, run.lib, &wanted.op, fed, run.cpu, run.timeout)?;
    let failure = built.proc.failure();
    // Its signatures are the operation's: their lengths are verify's.
    super::time_trial::note_lengths(timing, &built.proc);
    timing.processes.push(built.proc);
    if let Some((status, detail)) = failure {
        let mut t = failed(
            &plan.op,
            status,
            format!("shared pool: {detail}"),
            std::mem::take(&mut timing.processes),
        );
        t.started_utc = timing.started_utc.clone();
        return Ok(Some(t));
    }
    if let Ok(pool) = built.pool {
        timing.setup_sign_failures_retried += built.setup_sign_retries;
        plan.shared = Some(pool);
    }
    Ok(None)
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
