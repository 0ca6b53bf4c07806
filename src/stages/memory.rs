//! Memory stage: static size from the library's PT_LOAD segments, and per
//! operation the process proxies (baseline RSS after setup, VmHWM at exit)
//! beside what the operation itself used: the stack high-water mark on a
//! painted stack and the peak of live heap bytes through an interposed
//! allocator.

use std::time::Duration;

use anyhow::Result;

use super::kat::KatStage;
use crate::engine::{Job, Lender, Manifest, Policy, Results, Stage};
use crate::measure::driver;
use crate::measure::memory::{MemoryOutput, OpMemory};
use crate::measure::{measured_library_path, measurement_manifest, OpStatus};
use crate::records::operation::MemoryFigures;

pub(crate) struct MemoryStage;

impl Stage for MemoryStage {
    type Output = MemoryOutput;
    const NAME: &'static str = "memory";
    const REQUIRES: &'static [&'static str] = &["build", "kat"];
    const POLICY: Policy = Policy::Measuring;

    fn manifest(&self, job: &Job) -> Result<Option<Manifest>> {
        if job.cx.emulated() {
            // An emulator's memory and time figures describe the emulator.
            return Ok(None);
        }
        Ok(measurement_manifest(job, job.prior.get::<KatStage>()))
    }

    fn verdict(&self, out: &MemoryOutput) -> crate::engine::Verdict {
        let failures = out
            .ops
            .iter()
            .filter(|o| !o.figures.status.is_ok())
            .map(|o| {
                let f = &o.figures;
                (format!("memory {}: {}", o.op, f.status), f.detail.clone())
            })
            .collect();
        crate::engine::Verdict {
            failures,
            ..Default::default()
        }
    }

    fn lender(&self, job: &Job, own: &Manifest) -> Result<Option<Lender>> {
        Ok(crate::measure::lender(job, own))
    }

    fn run(&self, job: &Job) -> Result<MemoryOutput> {
        let cx = job.cx;
        let kat = job.prior.get::<KatStage>();
        let lib = measured_library_path(&cx.cache, cx.plan, job.inst, kat)?;
        let load_bytes = crate::elf::load_segment_bytes(&lib).ok();
        let mut ops = Vec::new();
        for op in crate::measure::instance_operations(job.inst, kat) {
            let first = measure_op(job, &lib, op)?;
            // Memory the kernel saw beyond what the call explains stands
            // only when a second process sees it too: a host's NUMA
            // balancing also makes faults, never the same ones twice.
            let beyond = |m: &OpMemory| faults_beyond_of(load_bytes, m);
            let kept = match beyond(&first) {
                None => first,
                Some(_) => {
                    let second = measure_op(job, &lib, op)?;
                    if beyond(&second) < beyond(&first) {
                        second
                    } else {
                        first
                    }
                }
            };
            ops.push(with_notes(kept, load_bytes));
        }
        Ok(MemoryOutput { load_bytes, ops })
    }

    /// One process an operation: from the KAT run's call costs
    /// (`measure::cost`), else 0.2 s each.
    fn page_section(&self) -> Option<&dyn crate::engine::PageSection> {
        Some(&super::memory_page::MemoryPages)
    }

    fn estimate_seconds(&self, job: &Job) -> Option<f64> {
        let kat = job.prior.get::<KatStage>();
        let ops = crate::measure::instance_operations(job.inst, kat);
        let from_kat = kat.and_then(|k| {
            crate::measure::cost::one_process_each(&ops, |op| k.call_seconds(op), true, |_, _| 1.0)
        });
        Some(from_kat.unwrap_or(0.2 * ops.len() as f64))
    }
}

fn faults_beyond_of(load_bytes: Option<u64>, m: &OpMemory) -> Option<u64> {
    let f = &m.figures;
    if !f.status.is_ok() {
        return None;
    }
    crate::measure::memory::faults_beyond(load_bytes, f.stack_bytes, f.heap_peak_bytes, &f.process)
}

/// One process measuring `op`: its figures, or why there are none.
fn measure_op(job: &Job, lib: &std::path::Path, op: &str) -> Result<OpMemory> {
    let cx = job.cx;
    let timeout = Duration::from_secs_f64(cx.plan.timing.timeout_seconds);
    let args: Vec<String> = ["--op", op, "--mode", "memory"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let (process, _) = driver::run(cx, lib, &args, job.cpu, timeout)?;
    let m = process.line("memory").cloned();
    let get = |k: &str| m.as_ref().and_then(|l| l.u64(k));
    let (status, detail) = process
        .failure()
        .map(|(s, d)| (s, Some(d)))
        .or_else(|| {
            crate::measure::memory::below_kernel(get("peak_rss_kib"), &process)
                .map(|why| (OpStatus::Implausible, Some(why)))
        })
        .unwrap_or((OpStatus::Ok, None));
    Ok(OpMemory {
        op: op.to_string(),
        stack_pages_bytes: get("stack_pages_bytes"),
        figures: MemoryFigures {
            status,
            detail,
            load_bytes: None,
            baseline_rss_kib: get("baseline_rss_kib"),
            peak_rss_kib: get("peak_rss_kib"),
            stack_bytes: get("stack_bytes"),
            heap_peak_bytes: get("heap_peak_bytes"),
            heap_allocs: get("heap_allocs"),
            process,
            measured_by: None,
        },
    })
}

/// The notes of a measured call whose two views of its memory disagree:
/// the kernel's pages of the stack beyond the paint, faults beyond what
/// the malloc count explains. Neither is a verdict: the figures stand with
/// the kernel's beside them.
fn with_notes(mut m: OpMemory, load_bytes: Option<u64>) -> OpMemory {
    if !m.figures.status.is_ok() {
        return m;
    }
    use crate::measure::memory::{faults_note, stack_by_pages, stack_note};
    let notes: Vec<String> = [
        stack_by_pages(m.figures.stack_bytes, m.stack_pages_bytes)
            .map(|p| stack_note(m.figures.stack_bytes.unwrap_or(0), p)),
        faults_beyond_of(load_bytes, &m).map(faults_note),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !notes.is_empty() {
        m.figures.detail = Some(notes.join("; "));
    }
    m
}

/// The memory figures of `op` that the time stage's record of it carries.
pub(super) fn figures(r: &Results, op: &str) -> Option<MemoryFigures> {
    let m = r.get::<MemoryStage>()?;
    m.ops.iter().find(|o| o.op == op).map(|o| MemoryFigures {
        load_bytes: m.load_bytes,
        measured_by: r.lent_by(MemoryStage::NAME),
        ..o.figures.clone()
    })
}
