//! One process of a stage as recorded: its command, how it ended, what
//! it wrote on its results channel and what the sandbox saw of it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One driver process as recorded: enough to rerun it and to see why it
/// failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessRecord {
    /// The driver's logical command: its settings written as arguments
    /// (`--lib <library> --op sign --mode trial --warmup 2 --iters 100
    /// --samples`, `--inputs-fd 5` when a seed was given), so a reader can
    /// cite them. The process itself got none of them in argv: every
    /// driver process of an instance is started with the same command
    /// line and environment (`--results-fd 3 --inputs-fd 5 --lib
    /// ./lib.so`), and these settings reach it on its input descriptor,
    /// read only after the library is loaded, so the library cannot tell
    /// a trial from its calibration by them. Under Valgrind the record
    /// starts with Valgrind's own arguments, which the library can see.
    pub command: Vec<String>,
    pub cpu: Option<usize>,
    pub outcome: Outcome,
    pub wall_seconds: f64,
    /// Every output line except the per-call samples (kept in the trial).
    pub lines: Vec<Line>,
    pub stderr_tail: String,
    /// What the sandbox saw of the process, beyond its own lines (absent
    /// from records made without a sandbox, e.g. synthesized ones).
    #[serde(default, skip_serializing_if = "ProcessFacts::is_empty")]
    pub sandbox: ProcessFacts,
}

/// Facts about a driver process that come from the sandbox, not from the
/// process: unforgeable by the library it loaded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessFacts {
    /// CPU time (and peak RSS) the kernel accounted to the process.
    pub rusage: Option<Rusage>,
    /// Bytes written to stdout (the library's business; only the last
    /// lines are kept).
    pub stdout_bytes: u64,
    pub stdout_tail: String,
    /// Why the results channel was rejected (overflow, not what the
    /// driver wrote, cut short).
    pub results_error: Option<String>,
    /// The process's CPU time as the kernel's task-clock counter saw it
    /// (opened by the launcher, not by the process), or why it could not.
    #[serde(default, skip_serializing_if = "CpuWitness::is_empty")]
    pub cpu_witness: CpuWitness,
}

/// One line of driver output: its tag and fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Line {
    pub tag: String,
    pub fields: BTreeMap<String, String>,
    /// Space-separated values after the tag (the `samples` line).
    pub values: Vec<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "kebab-case")]
pub enum Outcome {
    Exited(i32),
    Signaled(i32),
    TimedOut,
}

/// CPU time and peak memory of a job as the kernel accounted them (the job
/// process and every descendant it waited for), unforgeable by the job.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Rusage {
    pub user_seconds: f64,
    pub system_seconds: f64,
    pub max_rss_kib: u64,
    /// The launcher's share of `max_rss_kib`: the high-water mark of a
    /// copy of the launcher forked like the job and ended where the job
    /// execs. The kernel carries the job's pre-exec high-water mark across
    /// exec, so `max_rss_kib` is never below about this, and up to it says
    /// nothing of the job. Measured for jobs that ask (`Spec::rss_floor`);
    /// None otherwise, without the launcher, and in records made before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launcher_rss_kib: Option<u64>,
}

/// The witness's `missing` reason of a job started without the launcher,
/// which pqbench forked itself: its `ru_maxrss` then carries pqbench's own
/// high-water mark (the kernel keeps it across exec), so it bounds nothing.
pub(crate) const WITHOUT_LAUNCHER: &str = "the job ran without the launcher";

/// What init saw of the job's CPU time: nanoseconds of task-clock, or why
/// there is no witness.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuWitness {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_clock_ns: Option<u64>,
    /// The job's CPU time when its results channel carried the mark (the
    /// driver's `timed` line, written just before the first timed call):
    /// the run time of its tasks as the kernel keeps it
    /// (`/proc/<pid>/task/*/schedstat`), read by pqbench as the line
    /// arrived, so at least the set-up's and warm-ups' CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mark_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

impl CpuWitness {
    pub(crate) fn is_empty(&self) -> bool {
        *self == CpuWitness::default()
    }

    pub(crate) fn missing(why: impl Into<String>) -> CpuWitness {
        CpuWitness {
            task_clock_ns: None,
            mark_ns: None,
            missing: Some(why.into()),
        }
    }
}
