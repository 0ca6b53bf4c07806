//! Memory stage: static size from the library's PT_LOAD segments, and per
//! operation the process proxies (baseline RSS after setup, VmHWM at exit)
//! beside what the operation itself used: the stack high-water mark on a
//! painted stack and the peak of live heap bytes through an interposed
//! allocator.

use std::time::Duration;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::time::measurement_manifest;
use super::InstanceResults;
use crate::engine::{Cx, Manifest, Stage};
use crate::measure::driver::{self, ProcessRecord};
use crate::measure::{measured_library_path, measuring_cpu};
use crate::plan::{Instance, StageName};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpMemory {
    pub op: String,
    pub status: String,
    pub detail: Option<String>,
    pub baseline_rss_kib: Option<u64>,
    pub peak_rss_kib: Option<u64>,
    pub stack_bytes: Option<u64>,
    pub heap_peak_bytes: Option<u64>,
    pub heap_allocs: Option<u64>,
    pub process: ProcessRecord,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryOutput {
    /// Σ MemSiz over the library's PT_LOAD segments.
    pub load_bytes: Option<u64>,
    pub ops: Vec<OpMemory>,
}

pub struct MemoryStage;

impl Stage for MemoryStage {
    type Output = MemoryOutput;
    const NAME: StageName = StageName::Memory;

    fn parallel(&self) -> bool {
        false
    }

    fn is_measurement(&self) -> bool {
        true
    }

    fn manifest(
        &self,
        cx: &Cx,
        inst: &Instance,
        prior: &InstanceResults,
    ) -> Result<Option<Manifest>> {
        measurement_manifest(cx, inst, prior)
    }

    fn run(&self, cx: &Cx, inst: &Instance, prior: &InstanceResults) -> Result<MemoryOutput> {
        let lib = measured_library_path(cx, inst, prior)?;
        let load_bytes = crate::elf::load_segment_bytes(&lib).ok();
        let timeout = Duration::from_secs_f64(cx.plan.timing.timeout_seconds);
        let mut ops = Vec::new();
        for op in inst.kind.operations() {
            let args: Vec<String> = ["--op", op, "--mode", "memory"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            let (process, _) = driver::run(cx, &lib, &args, measuring_cpu(), timeout)?;
            let m = process.line("memory").cloned();
            let (status, detail) = process
                .failure()
                .map(|(s, d)| (s, Some(d)))
                .unwrap_or_else(|| ("ok".into(), None));
            let get = |k: &str| m.as_ref().and_then(|l| l.u64(k));
            ops.push(OpMemory {
                op: op.to_string(),
                status,
                detail,
                baseline_rss_kib: get("baseline_rss_kib"),
                peak_rss_kib: get("peak_rss_kib"),
                stack_bytes: get("stack_bytes"),
                heap_peak_bytes: get("heap_peak_bytes"),
                heap_allocs: get("heap_allocs"),
                process,
            });
        }
        Ok(MemoryOutput { load_bytes, ops })
    }

    fn store(results: &mut InstanceResults, out: MemoryOutput) {
        results.memory = Some(out);
    }
}
