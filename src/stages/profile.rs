//! Profile stage: run one timed trial per operation of the library the
//! profile-link stage instrumented, with the wrappers accounting only
//! inside timed calls, and derive the share of the operation spent in the
//! hash helpers and in the DRNG.

use std::time::Duration;

use anyhow::{Context, Result};

use super::kat::KatStage;
use super::profile_link::ProfileLinkStage;
use super::time::TimeStage;
use crate::engine::{Job, Lender, Manifest, Policy, Stage};
use crate::engine::{Publication, Results};
use crate::measure::driver::{self, ProcessRecord};
use crate::measure::profile::{OpProfile, ProfileOutput, Shape};
use crate::measure::timing::{lost_cpu, Attempts, Next};
use crate::measure::{measurement_manifest, profiled_operations, OpStatus};
use crate::plan::HelperClass;
use crate::plan::Instance;
use crate::records::analysis::{profile_path, ProfileRecord};

pub(crate) struct ProfileStage;

impl Stage for ProfileStage {
    type Output = ProfileOutput;
    const NAME: &'static str = "profile";
    const REQUIRES: &'static [&'static str] = &["build", "kat", "profile-link"];
    /// Trials run as many calls as the timing trials did.
    const READS: &'static [&'static str] = &["time"];
    const POLICY: Policy = Policy::Measuring;

    fn manifest(&self, job: &Job) -> Result<Option<Manifest>> {
        if job.cx.emulated() {
            // An emulator's memory and time figures describe the emulator.
            return Ok(None);
        }
        // Kinds with no profiled operation (hashes) have no profile.
        if !job.inst.kind.def().profiled() {
            return Ok(None);
        }
        let Some(mut m) = measurement_manifest(job, job.prior.get::<KatStage>()) else {
            return Ok(None);
        };
        let Some(link) = job.prior.get::<ProfileLinkStage>() else {
            return Ok(None);
        };
        m.set("link", link);
        let iterations: Vec<u64> = profiled_operations(job.inst, job.prior.get::<KatStage>())
            .iter()
            .map(|op| iterations(job, op))
            .collect();
        m.set("iterations", iterations);
        Ok(Some(m))
    }

    fn verdict(&self, out: &ProfileOutput) -> crate::engine::Verdict {
        let mut failures = Vec::new();
        if out.status == OpStatus::RelinkFailed {
            failures.push((
                "profile relink: relink-failed".to_string(),
                out.detail.clone(),
            ));
        }
        for o in &out.ops {
            if !matches!(o.status, OpStatus::Ok | OpStatus::NoHelpers) {
                failures.push((format!("profile {}: {}", o.op, o.status), o.detail.clone()));
            }
        }
        crate::engine::Verdict {
            failures,
            ..Default::default()
        }
    }

    fn lender(&self, job: &Job, own: &Manifest) -> Result<Option<Lender>> {
        Ok(crate::measure::lender(job, own))
    }

    fn run(&self, job: &Job) -> Result<ProfileOutput> {
        let cx = job.cx;
        let inst = job.inst;
        let link = job
            .prior
            .get::<ProfileLinkStage>()
            .context("no profile-link result")?;
        let Some(sha) = &link.library_sha256 else {
            // Nothing to wrap (or no instrumented library) is a result too:
            // every operation spends 0 % in the helpers, and says why.
            let ops = profiled_operations(inst, job.prior.get::<KatStage>())
                .iter()
                .map(|op| OpProfile {
                    op: op.to_string(),
                    status: link.status,
                    detail: link.detail.clone(),
                    ops: 0,
                    total_ticks: 0,
                    tick_hz: None,
                    shapes: Vec::new(),
                    process: None,
                })
                .collect();
            let ops = if link.status == OpStatus::NoHelpers {
                ops
            } else {
                Vec::new()
            };
            return Ok(ProfileOutput {
                status: link.status,
                detail: link.detail.clone(),
                wrapped: link.wrapped.clone(),
                ops,
            });
        };
        let lib = cx.cache.existing_blob(sha).with_context(|| {
            format!(
                "instrumented library of {} missing from the cache",
                inst.key()
            )
        })?;
        let timeout = Duration::from_secs_f64(cx.plan.timing.timeout_seconds);
        let mut ops = Vec::new();
        let mut busy = false;
        for op in profiled_operations(inst, job.prior.get::<KatStage>()) {
            let args: Vec<String> = ["--op", op, "--mode", "trial", "--profile", "--warmup"]
                .iter()
                .map(|s| s.to_string())
                .chain([
                    warmup(job, op).to_string(),
                    "--iters".into(),
                    iterations(job, op).to_string(),
                ])
                .collect();
            // Like a timing trial, a profile that lost the CPU is run again,
            // unless the machine was found busy (`Attempts`).
            let mut attempts = Attempts::new(busy);
            let process = loop {
                let (process, _) = driver::run(cx, &lib, &args, job.cpu, timeout)?;
                let lost = lost_cpu(&process);
                if attempts.judge(lost, None) == Next::Keep {
                    busy = lost;
                    break process;
                }
            };
            ops.push(read_profile(op, process));
        }
        Ok(ProfileOutput {
            status: OpStatus::Ok,
            detail: None,
            wrapped: link.wrapped.clone(),
            ops,
        })
    }

    /// One trial an operation, of the time stage's plan: from the KAT
    /// run's call costs (`measure::cost`), else from the settings.
    fn estimate_seconds(&self, job: &Job) -> Option<f64> {
        let s = &job.cx.plan.timing;
        let kat = job.prior.get::<KatStage>();
        let ops = profiled_operations(job.inst, kat);
        let calls = |_: &str, t: f64| {
            let own = crate::measure::op_settings(s, t);
            let plan = crate::measure::plan_iterations(t, &own);
            (plan.iterations + u64::from(own.warmup)) as f64
        };
        let from_kat = kat.and_then(|k| {
            crate::measure::cost::one_process_each(&ops, |op| k.call_seconds(op), false, calls)
        });
        Some(from_kat.unwrap_or((s.trial_seconds + 0.2) * ops.len() as f64))
    }

    fn page_section(&self) -> Option<&dyn crate::engine::PageSection> {
        Some(&super::profile_page::ProfilePages)
    }

    fn records(&self) -> Option<&dyn crate::engine::Records> {
        Some(&RECORDS)
    }

    fn publish(
        &self,
        p: &mut Publication,
        inst: &Instance,
        out: &ProfileOutput,
        r: &Results,
    ) -> Result<()> {
        for op in &out.ops {
            let mut rec = ProfileRecord::from_op(&inst.algorithm, &inst.label, &out.wrapped, op);
            rec.measured_by = r.lent_by(Self::NAME);
            p.write(&profile_path(&inst.algorithm, &inst.label, &op.op), &rec)?;
        }
        Ok(())
    }
}

/// Calls per profiled trial: those of a timing trial of the operation.
fn iterations(job: &Job, op: &str) -> u64 {
    job.prior
        .get::<TimeStage>()
        .and_then(|t| t.ops.iter().find(|o| o.op == op))
        .and_then(|o| o.plan.as_ref())
        .map(|p| p.iterations)
        .unwrap_or(job.cx.plan.timing.min_iterations)
}

/// The warm-ups of the time stage's trials of `op` (none for a call as
/// long as a trial), else the campaign's.
fn warmup(job: &Job, op: &str) -> u32 {
    job.prior
        .get::<TimeStage>()
        .and_then(|t| t.ops.iter().find(|o| o.op == op))
        .filter(|o| o.plan.is_some())
        .map_or(job.cx.plan.timing.warmup, |o| o.warmup)
}

fn read_profile(op: &str, process: ProcessRecord) -> OpProfile {
    let mut p = OpProfile {
        op: op.to_string(),
        status: OpStatus::Ok,
        detail: None,
        ops: 0,
        total_ticks: 0,
        tick_hz: None,
        shapes: Vec::new(),
        process: None,
    };
    if let Some((status, detail)) = process.failure() {
        p.status = status;
        p.detail = Some(detail);
    }
    if let Some(l) = process.line("prof_op") {
        p.ops = l.u64("ops").unwrap_or(0);
        p.total_ticks = l.u64("ticks").unwrap_or(0);
        p.tick_hz = l.f64("tick_hz");
    }
    p.shapes = process
        .lines
        .iter()
        .filter(|l| l.tag == "prof")
        .map(|l| Shape {
            function: l.get("fn").unwrap_or("?").to_string(),
            // The class the generated wrapper was given (a configured
            // class name); anything else the line holds is not believed.
            class: l
                .get("class")
                .filter(|c| HelperClass::check_name(c).is_ok())
                .map_or_else(HelperClass::hash, HelperClass::new),
            in_bits: l.u64("in_bits").unwrap_or(0),
            out_bits: l.u64("out_bits").unwrap_or(0),
            calls: l.u64("calls").unwrap_or(0),
            ticks: l.u64("ticks").unwrap_or(0),
        })
        .collect();
    p.process = Some(process);
    p
}

/// The stage's record folder: one file per operation, recomputed by `check`.
pub(crate) static RECORDS: crate::engine::OperationRecords<
    crate::records::analysis::ProfileRecord,
> = crate::engine::OperationRecords::new("profiles", recompute_profile);

fn recompute_profile(
    file: &std::path::Path,
    rel: &str,
    _: &crate::records::campaign::CampaignRecord,
) -> Result<Vec<String>> {
    // A profile's shares and calls per operation are what its shapes give.
    let p: crate::records::analysis::ProfileRecord = crate::fsutil::read_json(file)?;
    let dir = crate::records::layout::PROFILE;
    let mut problems: Vec<String> =
        crate::engine::misplaced(rel, dir, &p.algorithm, &p.label, &p.op)
            .into_iter()
            .collect();
    let op = crate::measure::profile::OpProfile {
        op: p.op.clone(),
        status: p.status,
        detail: p.detail.clone(),
        ops: p.ops,
        total_ticks: p.total_ticks,
        tick_hz: p.tick_hz,
        shapes: p.shapes.clone(),
        process: None,
    };
    use crate::records::diff::differ;
    let fields = [
        differ("hash_share", &p.hash_share, &op.hash_share()),
        differ("drng_share", &p.drng_share, &op.drng_share()),
        differ("calls_per_op", &p.calls_per_op, &op.calls_per_op()),
        differ(
            "share_per_function",
            &p.share_per_function,
            &op.share_per_function(),
        ),
    ];
    problems.extend(fields.into_iter().flatten().map(|d| format!("{rel}: {d}")));
    Ok(problems)
}
