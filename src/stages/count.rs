//! Count stage (opt-in): the exact instructions of each operation call of
//! the measured library, setup and warm-ups excluded as for timing. Under
//! callgrind collection is switched on only around each counted call and
//! every call is dumped on its own; where the host has the hardware
//! `instructions` event (and `[count] method` allows it) the driver reads
//! that counter around each call instead. The record says which.
//!
//! Instruction counts do not move with the host's noise: two runs of the
//! same library on the same host give the same figures, so `compare`
//! treats any difference as real.

use std::time::Duration;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::kat::KatStage;
use crate::context::Cx;
use crate::engine::{Job, Manifest, Policy, Stage};
use crate::engine::{Publication, Results};
use crate::measure::driver;
use crate::measure::valgrind::{self, Valgrind};
use crate::measure::{measured_library, measured_library_path, measurement_manifest, OpStatus};
use crate::plan::Instance;
use crate::records::count::count_path;
use crate::records::count::{
    CountRecord, ExactStatus, Instructions, METHOD_CALLGRIND, METHOD_PERF,
};

pub(crate) struct CountStage;

/// `[count]`: instructions per call, counted by callgrind or the hardware
/// `instructions` event. Defaults: 3 counted calls after 1 warm-up (counts
/// are exact, so a few calls show whether they vary from call to call).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct CountSettings {
    /// Counted calls per operation (after the warm-ups).
    #[serde(deserialize_with = "crate::config::values::count_u32_or_default")]
    pub calls: u32,
    /// Uncounted calls first (lazy binding, first-touch effects).
    pub warmup: u32,
    pub method: CountMethod,
    /// Timeout of one counting process, seconds.
    #[serde(deserialize_with = "crate::config::values::seconds_or_default")]
    pub timeout_seconds: f64,
}

impl Default for CountSettings {
    fn default() -> Self {
        CountSettings {
            calls: 3,
            warmup: 1,
            method: CountMethod::Auto,
            timeout_seconds: 600.0,
        }
    }
}

/// How instructions are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CountMethod {
    /// The hardware counter where the host has it, else callgrind.
    #[default]
    Auto,
    /// Valgrind's callgrind: exact, on any host Valgrind runs on.
    Callgrind,
    /// The user-mode hardware `instructions` event (perf_event_open).
    Perf,
}

/// The campaign's `[count]` (validated before any stage runs).
fn settings(cx: &Cx) -> Result<CountSettings> {
    crate::engine::settings::<CountSettings>(cx.plan, CountStage::NAME)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct CountOutput {
    pub ops: Vec<CountRecord>,
}

/// How this host counts, or why it cannot.
#[derive(Debug, Clone, PartialEq)]
enum Method {
    Callgrind(Valgrind),
    Perf,
}

impl Method {
    fn name(&self) -> &'static str {
        match self {
            Method::Callgrind(_) => METHOD_CALLGRIND,
            Method::Perf => METHOD_PERF,
        }
    }
    fn tool(&self) -> String {
        match self {
            Method::Callgrind(v) => format!("{} callgrind", v.version),
            Method::Perf => "perf_event_open instructions (user mode)".into(),
        }
    }
}

fn method(cx: &Cx) -> Result<Method, String> {
    if let Some(why) = valgrind::unsupported_reason(cx) {
        // The emulator's own instructions are not the algorithm's either.
        return Err(why);
    }
    let method = settings(cx).map_err(|e| e.to_string())?.method;
    match method {
        CountMethod::Perf => perf_instructions_available().map(|_| Method::Perf),
        CountMethod::Callgrind => valgrind::find().map(Method::Callgrind),
        CountMethod::Auto => match perf_instructions_available() {
            Ok(()) => Ok(Method::Perf),
            Err(_) => valgrind::find().map(Method::Callgrind),
        },
    }
}

impl Stage for CountStage {
    type Output = CountOutput;
    const NAME: &'static str = "count";
    const REQUIRES: &'static [&'static str] = &["build", "kat"];
    /// The cycles the timed calls took, outside Valgrind, against which
    /// the counted instructions are held.
    const READS: &'static [&'static str] = &["time"];
    const POLICY: Policy = Policy::Measuring;
    const OPT_IN: bool = true;

    fn manifest(&self, job: &Job) -> Result<Option<Manifest>> {
        let Some(mut m) = measurement_manifest(job, job.prior.get::<KatStage>()) else {
            return Ok(None);
        };
        let how = match method(job.cx) {
            Ok(m) => format!("{} {}", m.name(), m.tool()),
            Err(why) => format!("not run: {why}"),
        };
        m.set("count", &settings(job.cx)?).set("method", how).set(
            "time-cycles",
            job.prior.get::<super::time::TimeStage>().map(|t| {
                t.ops
                    .iter()
                    .filter_map(|o| Some((&o.op, cycle_range(o.statistics.as_ref()?))))
                    .collect::<Vec<_>>()
            }),
        );
        Ok(Some(m))
    }

    fn run(&self, job: &Job) -> Result<CountOutput> {
        let cx = job.cx;
        let inst = job.inst;
        let kat = job.prior.get::<KatStage>();
        let lib_sha = measured_library(cx.plan, inst, kat);
        let lib = measured_library_path(&cx.cache, cx.plan, inst, kat)?;
        let how = method(cx);
        let warmup = settings(cx)?.warmup;
        // Callgrind obeys client requests in the code it counts; the
        // hardware counter does not.
        let suspicious = match &how {
            Ok(Method::Callgrind(_)) => super::client_requests::found(job)?,
            _ => None,
        };
        let mut ops = Vec::new();
        let counted = crate::measure::instance_operations(inst, kat)
            .into_iter()
            .filter(|op| inst.kind.counts(op));
        for op in counted {
            let mut rec = CountRecord {
                algorithm: inst.algorithm.clone(),
                label: inst.label.clone(),
                op: op.to_string(),
                status: ExactStatus::Skipped,
                detail: None,
                method: None,
                tool: None,
                host_fingerprint: cx.host_fingerprint.clone(),
                library_sha256: lib_sha.clone(),
                cpu: job.cpu,
                warmup,
                per_call: Vec::new(),
                instructions: None,
                process: None,
            };
            match &how {
                Err(why) => rec.detail = Some(why.clone()),
                Ok(m) if suspicious.is_some() => {
                    rec.method = Some(m.name().into());
                    rec.tool = Some(m.tool());
                    rec.status = ExactStatus::Suspicious;
                    rec.detail = suspicious.clone();
                }
                Ok(m) => {
                    rec.method = Some(m.name().into());
                    rec.tool = Some(m.tool());
                    count_op(cx, m, &lib, op, job.cpu, &mut rec)?;
                    let timed = job.prior.get::<super::time::TimeStage>();
                    if let Some(why) = implausible_ipc(&rec, timed) {
                        rec.status = ExactStatus::Suspicious;
                        rec.detail = Some(why);
                    }
                }
            }
            let summary = match (&rec.instructions, rec.status) {
                (Some(i), ExactStatus::Ok) => format!(
                    "{} instructions per call ({}, {} calls)",
                    crate::format::cycles(i.per_call),
                    rec.method.as_deref().unwrap_or("?"),
                    i.calls
                ),
                _ => format!("{} ({})", rec.status, rec.detail.as_deref().unwrap_or("")),
            };
            cx.progress.operation(Self::NAME, &inst.key(), op, &summary);
            ops.push(rec);
        }
        Ok(CountOutput { ops })
    }

    fn estimate_seconds(&self, job: &Job) -> Option<f64> {
        let ops = crate::measure::instance_operations(job.inst, job.prior.get::<KatStage>());
        Some(2.0 * ops.iter().filter(|op| job.inst.kind.counts(op)).count() as f64)
    }

    /// `[count]`, read as the stage reads it: a misspelt key or a value out
    /// of range is named before anything runs.
    fn check_settings(&self, table: &serde_json::Value) -> std::result::Result<(), String> {
        serde_json::from_value::<CountSettings>(table.clone())
            .map(drop)
            .map_err(|e| e.to_string())
    }

    fn records(&self) -> Option<&dyn crate::engine::Records> {
        Some(&RECORDS)
    }

    fn page_section(&self) -> Option<&dyn crate::engine::PageSection> {
        Some(&super::count_page::CountPages)
    }

    fn publish(
        &self,
        p: &mut Publication,
        _: &Instance,
        out: &CountOutput,
        _: &Results,
    ) -> Result<()> {
        for rec in &out.ops {
            p.write(&count_path(&rec.algorithm, &rec.label, &rec.op), rec)?;
        }
        Ok(())
    }
}

fn count_op(
    cx: &Cx,
    m: &Method,
    lib: &std::path::Path,
    op: &str,
    cpu: Option<usize>,
    rec: &mut CountRecord,
) -> Result<()> {
    let s = &settings(cx)?;
    let args: Vec<String> = ["--op", op, "--mode", "count", "--warmup"]
        .iter()
        .map(|x| x.to_string())
        .chain([s.warmup.to_string(), "--iters".into(), s.calls.to_string()])
        .collect();
    let timeout = Duration::from_secs_f64(s.timeout_seconds);
    const OUT: &str = "callgrind.out";
    let (process, per_call) = match m {
        Method::Perf => {
            let (p, _) = driver::run(cx, lib, &args, cpu, timeout)?;
            let v = p
                .line("instructions")
                .map(|l| l.values.clone())
                .unwrap_or_default();
            (p, v)
        }
        Method::Callgrind(vg) => {
            let tool: Vec<String> = [
                "--tool=callgrind",
                "--instr-atstart=no",
                "--collect-atstart=no",
                "--dump-line=no",
                "--callgrind-out-file=callgrind.out",
            ]
            .iter()
            .map(|x| x.to_string())
            .collect();
            let how = valgrind::Invocation {
                tool: &tool,
                driver: &args,
                cpu,
                timeout,
            };
            let run = valgrind::run(cx, vg, lib, &how, |n| n.starts_with(OUT))?;
            let v = if run.process.ok() {
                valgrind::callgrind_calls(&run.files, OUT).context("reading callgrind's dumps")?
            } else {
                Vec::new()
            };
            (run.process, v)
        }
    };
    if let Some((status, detail)) = process.failure() {
        rec.status = match status {
            OpStatus::Crash => ExactStatus::Crash,
            OpStatus::Timeout => ExactStatus::Timeout,
            _ => ExactStatus::Error,
        };
        rec.detail = Some(detail);
    } else if per_call.len() != s.calls as usize {
        rec.status = ExactStatus::Error;
        rec.detail = Some(format!(
            "{} counts for {} planned calls",
            per_call.len(),
            s.calls
        ));
    } else {
        rec.status = ExactStatus::Ok;
        rec.instructions = Instructions::of(&per_call);
        rec.per_call = per_call;
    }
    rec.process = Some(process);
    Ok(())
}

/// Opens (and closes) the user-mode hardware `instructions` event for this
/// thread, as the driver would.
fn perf_instructions_available() -> Result<(), String> {
    // perf_event_attr, version 5 layout (112 bytes); only the fields we set.
    let mut attr = [0u8; 112];
    attr[0..4].copy_from_slice(&0u32.to_ne_bytes()); // PERF_TYPE_HARDWARE
    attr[4..8].copy_from_slice(&112u32.to_ne_bytes()); // size
    attr[8..16].copy_from_slice(&1u64.to_ne_bytes()); // PERF_COUNT_HW_INSTRUCTIONS
    let flags: u64 = 1 | (1 << 5) | (1 << 6); // disabled, exclude_kernel, exclude_hv
    attr[40..48].copy_from_slice(&flags.to_ne_bytes());
    // SAFETY: the attribute buffer is valid for the size it declares.
    let fd = unsafe { libc::syscall(libc::SYS_perf_event_open, attr.as_ptr(), 0, -1, -1, 0) };
    if fd < 0 {
        return Err(format!(
            "no hardware instruction counter here (perf_event_open: {})",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: closing the descriptor just opened.
    unsafe { libc::close(fd as i32) };
    Ok(())
}

/// The stage's record folder: one file per operation, recomputed by `check`.
pub(crate) static RECORDS: crate::engine::OperationRecords<crate::records::count::CountRecord> =
    crate::engine::OperationRecords::new("instruction counts", recompute_count);

fn recompute_count(
    file: &std::path::Path,
    rel: &str,
    _: &crate::records::campaign::CampaignRecord,
) -> Result<Vec<String>> {
    // A count record's figures are what its per-call counts give.
    let r: crate::records::count::CountRecord = crate::fsutil::read_json(file)?;
    let dir = crate::records::layout::COUNT;
    let mut problems: Vec<String> =
        crate::engine::misplaced(rel, dir, &r.algorithm, &r.label, &r.op)
            .into_iter()
            .collect();
    problems.extend(
        crate::records::diff::differ("instructions", &r.instructions, &r.recomputed())
            .map(|d| format!("{rel}: {d}")),
    );
    Ok(problems)
}

/// Instructions per cycle no honest call reaches outside this band: the
/// slowest memory-bound code retires more than one instruction in twenty
/// cycles, and no core retires sixteen per cycle of the time-stamp counter
/// (a core clocked twice the counter's rate at four per cycle makes
/// eight).
const IPC_BAND: (f64, f64) = (0.05, 16.0);

/// The fastest and slowest trial's cycles per call.
fn cycle_range(s: &crate::stats::Summary) -> (f64, f64) {
    (s.min_trial_cycles, s.max_trial_cycles)
}

/// Why the counted instructions cannot be the timed calls' work, or None:
/// held against the cycles per call the time stage measured outside
/// Valgrind, the instructions per cycle leave `IPC_BAND` even at the
/// most favourable of the trials (a library that does less, or more, when
/// it finds itself counted). Counts of operations the time stage did not
/// time, or timed with no usable trial, are not judged.
fn implausible_ipc(
    rec: &CountRecord,
    timed: Option<&crate::measure::timing::TimeOutput>,
) -> Option<String> {
    let per_call = rec.instructions.as_ref()?.per_call;
    let op = timed?
        .ops
        .iter()
        .find(|o| o.op == rec.op && o.status.is_ok())?;
    let (fastest, slowest) = cycle_range(op.statistics.as_ref()?);
    ipc_verdict(per_call, fastest, slowest)
}

/// `implausible_ipc` on the figures: instructions per call, and the
/// fastest and slowest trial's cycles per call.
fn ipc_verdict(per_call: f64, fastest: f64, slowest: f64) -> Option<String> {
    if fastest <= 0.0 || slowest <= 0.0 {
        return None;
    }
    let (low, high) = IPC_BAND;
    let best = per_call / fastest;
    let worst = per_call / slowest;
    let band = format!("{low}–{high}");
    if best < low {
        Some(format!(
            "{per_call:.0} instructions per call counted, but the timed calls took at least {fastest:.0} cycles each: {best:.3} instructions per cycle, below the plausible {band}"
        ))
    } else if worst > high {
        Some(format!(
            "{per_call:.0} instructions per call counted, but the timed calls took at most {slowest:.0} cycles each: {worst:.1} instructions per cycle, above the plausible {band}"
        ))
    } else {
        None
    }
}

#[cfg(test)]
mod ipc_tests {
    use super::ipc_verdict;

    #[test]
    fn instructions_far_from_the_timed_cycles_are_named() {
        // An honest call: 5 M instructions in 2.5-4 M cycles.
        assert_eq!(ipc_verdict(5.0e6, 2.5e6, 4.0e6), None);
        // A library that skips its work when counted: 50 k instructions.
        let low = ipc_verdict(5.0e4, 2.5e6, 4.0e6).unwrap();
        assert!(low.contains("below the plausible"), "{low}");
        // One that does far more when counted than its timed calls can.
        let high = ipc_verdict(8.0e7, 2.5e6, 4.0e6).unwrap();
        assert!(high.contains("above the plausible"), "{high}");
        // No cycles: nothing to judge.
        assert_eq!(ipc_verdict(5.0e4, 0.0, 0.0), None);
    }
}

#[cfg(test)]
mod settings_tests {
    use super::{CountMethod, CountSettings, CountStage};
    use crate::engine::Stage;
    use serde_json::json;

    #[test]
    fn the_count_table_is_read_with_its_defaults_and_checked() {
        let read = |v: serde_json::Value| serde_json::from_value::<CountSettings>(v);
        assert_eq!(read(json!({})).unwrap(), CountSettings::default());
        let s = read(json!({"calls": 2, "method": "callgrind", "timeout-seconds": 30})).unwrap();
        assert_eq!((s.calls, s.warmup), (2, 1));
        assert_eq!(s.method, CountMethod::Callgrind);
        assert_eq!(s.timeout_seconds, 30.0);
        // Zero counted calls, a negative timeout, an unknown key or method:
        // refused by the stage's own check, which validation runs.
        for bad in [
            json!({"calls": 0}),
            json!({"timeout-seconds": -1}),
            json!({"timeout_seconds": 30}),
            json!({"method": "papi"}),
        ] {
            assert!(CountStage.check_settings(&bad).is_err(), "{bad}");
        }
        assert_eq!(CountStage.check_settings(&json!({"warmup": 0})), Ok(()));
    }
}
