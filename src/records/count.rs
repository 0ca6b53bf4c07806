//! `count/<id>/<label>__<op>.json`: the exact instructions of each counted
//! call of one operation (stage `count`), the figures derived from them
//! (which `pqbench check` recomputes) and the process that counted them.

use serde::{Deserialize, Serialize};

use super::process::ProcessRecord;

/// How a `count` or `ct` operation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExactStatus {
    Ok,
    /// Not run here, with the reason (an emulated system, no Valgrind).
    Skipped,
    /// The tool or the driver reported an error.
    Error,
    Crash,
    Timeout,
    /// The instance's own code makes Valgrind client requests: no count
    /// Valgrind produced for it stands.
    Suspicious,
}

impl ExactStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ExactStatus::Ok => "ok",
            ExactStatus::Skipped => "skipped",
            ExactStatus::Error => "error",
            ExactStatus::Crash => "crash",
            ExactStatus::Timeout => "timeout",
            ExactStatus::Suspicious => "suspicious",
        }
    }
}

impl std::fmt::Display for ExactStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Counting methods as recorded.
pub(crate) const METHOD_CALLGRIND: &str = "callgrind";
pub(crate) const METHOD_PERF: &str = "perf-instructions";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CountRecord {
    pub algorithm: String,
    pub label: String,
    pub op: String,
    pub status: ExactStatus,
    pub detail: Option<String>,
    /// `callgrind` (exact: Valgrind executes every instruction) or
    /// `perf-instructions` (the hardware counter, user mode).
    pub method: Option<String>,
    /// The tool's identity, e.g. `valgrind-3.19.0`.
    pub tool: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_fingerprint: Option<String>,
    /// The measured library (the one the time stage times).
    pub library_sha256: Option<String>,
    pub cpu: Option<usize>,
    /// Uncounted calls before the counted ones (after setup).
    pub warmup: u32,
    /// Instructions of each counted call, in call order: the raw figures.
    pub per_call: Vec<u64>,
    /// Derived from `per_call`.
    pub instructions: Option<Instructions>,
    pub process: Option<ProcessRecord>,
}

/// What the pages show of the counted calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Instructions {
    pub calls: u64,
    pub total: u64,
    /// total / calls.
    pub per_call: f64,
    pub min: u64,
    pub max: u64,
}

impl Instructions {
    pub(crate) fn of(per_call: &[u64]) -> Option<Instructions> {
        let calls = per_call.len() as u64;
        if calls == 0 {
            return None;
        }
        let total: u64 = per_call.iter().sum();
        Some(Instructions {
            calls,
            total,
            per_call: total as f64 / calls as f64,
            min: *per_call.iter().min()?,
            max: *per_call.iter().max()?,
        })
    }
}

impl CountRecord {
    /// The derived figures as the raw ones give them.
    pub fn recomputed(&self) -> Option<Instructions> {
        Instructions::of(&self.per_call)
    }
}

pub(crate) fn count_path(algorithm: &str, label: &str, op: &str) -> String {
    super::layout::operation_file(super::layout::COUNT, algorithm, label, op)
}

impl super::folder::FolderRecord for CountRecord {
    const DIR: &'static str = super::layout::COUNT;

    fn key(&self) -> super::folder::OpKey {
        (self.algorithm.clone(), self.label.clone(), self.op.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_follow_the_calls() {
        let i = Instructions::of(&[10, 20, 30]).unwrap();
        assert_eq!((i.calls, i.total, i.min, i.max), (3, 60, 10, 30));
        assert_eq!(i.per_call, 20.0);
        assert!(Instructions::of(&[]).is_none());
    }
}
