//! `records/<id>/<label>__<op>.json`: everything measured about one
//! operation of one instance, with the raw trials and processes, so every
//! statistic on a page can be recomputed.

use std::collections::BTreeMap;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::engine::Cx;
use crate::fsutil;
use crate::measure::driver::ProcessRecord;
use crate::measure::IterationPlan;
use crate::stages::time::Calibration;
use crate::stages::InstanceResults;
use crate::stats::{Summary, Trial};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OperationRecord {
    pub algorithm: String,
    pub label: String,
    pub op: String,
    pub kat_status: String,
    /// Known-issue causes that apply to this instance.
    pub known_issues: Vec<String>,
    pub status: String,
    pub detail: Option<String>,
    pub cpu: Option<usize>,
    pub counter: Option<String>,
    pub counter_hz: Option<f64>,
    pub calibration: Option<Calibration>,
    pub plan: Option<IterationPlan>,
    pub trials_wanted: u32,
    pub warmup: u32,
    pub processes: Vec<ProcessRecord>,
    pub trials: Vec<Trial>,
    pub repeated_trials: u32,
    pub sign_failures_retried: u64,
    pub verify_rejects: u64,
    pub lengths: BTreeMap<String, u64>,
    pub memory: Option<MemoryFigures>,
    /// Derived from `trials`; `pqbench check` recomputes it.
    pub statistics: Option<Summary>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryFigures {
    pub status: String,
    pub detail: Option<String>,
    pub load_bytes: Option<u64>,
    pub baseline_rss_kib: Option<u64>,
    pub peak_rss_kib: Option<u64>,
    pub stack_bytes: Option<u64>,
    pub heap_peak_bytes: Option<u64>,
    pub heap_allocs: Option<u64>,
    pub process: ProcessRecord,
}

pub fn record_path(algorithm: &str, label: &str, op: &str) -> String {
    format!("records/{algorithm}/{label}__{op}.json")
}

/// Writes one record per measured operation (atomically, one file each).
pub fn write_operation_records(cx: &Cx, results: &BTreeMap<String, InstanceResults>) -> Result<()> {
    for inst in &cx.plan.instances {
        let r = &results[&inst.key()];
        let Some(time) = &r.time else { continue };
        let alg = cx.plan.algorithm(&inst.algorithm);
        let issues: Vec<String> = alg
            .map(|a| {
                a.issues_for(&inst.label)
                    .iter()
                    .map(|k| k.cause.clone())
                    .collect()
            })
            .unwrap_or_default();
        for t in &time.ops {
            let memory = r.memory.as_ref().and_then(|m| {
                m.ops.iter().find(|o| o.op == t.op).map(|o| MemoryFigures {
                    status: o.status.clone(),
                    detail: o.detail.clone(),
                    load_bytes: m.load_bytes,
                    baseline_rss_kib: o.baseline_rss_kib,
                    peak_rss_kib: o.peak_rss_kib,
                    stack_bytes: o.stack_bytes,
                    heap_peak_bytes: o.heap_peak_bytes,
                    heap_allocs: o.heap_allocs,
                    process: o.process.clone(),
                })
            });
            let rec = OperationRecord {
                algorithm: inst.algorithm.clone(),
                label: inst.label.clone(),
                op: t.op.clone(),
                kat_status: r
                    .kat
                    .as_ref()
                    .map(|k| k.status().to_string())
                    .unwrap_or_default(),
                known_issues: issues.clone(),
                status: t.status.clone(),
                detail: t.detail.clone(),
                cpu: time.cpu,
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
                verify_rejects: t.verify_rejects,
                lengths: t.lengths.clone(),
                memory,
                statistics: t.summary.clone(),
            };
            let path = cx
                .plan
                .output_dir
                .join(record_path(&inst.algorithm, &inst.label, &t.op));
            fsutil::write_json(&path, &rec)?;
        }
    }
    Ok(())
}
