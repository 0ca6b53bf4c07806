//! `records/<id>/<label>__<op>.json`: everything measured about one
//! operation of one instance, with the raw trials and processes, so every
//! statistic on a page can be recomputed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::measure::Calibration;
use super::measure::{IterationPlan, OpStatus};
use super::process::ProcessRecord;
use crate::stats::{Summary, Trial};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OperationRecord {
    pub algorithm: String,
    pub label: String,
    pub op: String,
    /// When the operation's first process started (UTC, milliseconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_utc: Option<String>,
    pub kat_status: String,
    /// Known-issue causes that apply to this instance.
    pub known_issues: Vec<String>,
    pub status: OpStatus,
    pub detail: Option<String>,
    pub cpu: Option<usize>,
    /// The host fingerprint the measurement was taken under: `check` and
    /// `merge` accept only those registered for the dataset's system.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_fingerprint: Option<String>,
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
    /// Failed signing attempts of the honest signature verify's inputs
    /// begin with: made once by the shared pool's process, or (a pool not
    /// shared) by each kept trial's untimed set-up; absent when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub setup_sign_failures_retried: u64,
    pub verify_rejects: u64,
    pub lengths: BTreeMap<String, u64>,
    pub memory: Option<MemoryFigures>,
    /// Derived from `trials`; `pqbench check` recomputes it.
    pub statistics: Option<Summary>,
    /// The campaign (`<campaign>/<system>`) that made these timings, when
    /// this campaign took them from it (`reuse-measurements-from`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_by: Option<String>,
    /// KEX steps: timed inside protocol runs, planned from the exchange.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<super::measure::StepTiming>,
    /// Timed calls whose outputs a separate process recomputed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output_checks: Vec<super::measure::OutputCheck>,
    /// A kept trial whose every timed call a separate process remade.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub full_replays: Vec<super::measure::FullReplay>,
    /// The trial processes' CPU time as the kernel's task-clock witnessed
    /// it, fitted per call and per process; `pqbench check` recomputes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub witness: Option<super::measure::CpuFit>,
    /// The sets of trials the witness asked for beyond the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub witness_sets: Option<super::measure::WitnessSets>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryFigures {
    pub status: OpStatus,
    pub detail: Option<String>,
    pub load_bytes: Option<u64>,
    pub baseline_rss_kib: Option<u64>,
    pub peak_rss_kib: Option<u64>,
    pub stack_bytes: Option<u64>,
    pub heap_peak_bytes: Option<u64>,
    pub heap_allocs: Option<u64>,
    pub process: ProcessRecord,
    /// The campaign that made these figures, when taken from another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_by: Option<String>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

pub(crate) fn record_path(algorithm: &str, label: &str, op: &str) -> String {
    super::layout::operation_file(super::layout::RECORDS, algorithm, label, op)
}

impl super::folder::FolderRecord for OperationRecord {
    const DIR: &'static str = super::layout::RECORDS;

    fn key(&self) -> super::folder::OpKey {
        (self.algorithm.clone(), self.label.clone(), self.op.clone())
    }
}
