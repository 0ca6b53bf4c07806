//! What pqbench hands the launcher (`JailConfig`, JSON in a memfd whose
//! descriptor is the argument after `JAIL_ARG`) and
//! what the launcher's init reports back on its private status pipe
//! (`Report`, one JSON object per line).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{CpuWitness, Layer, Limits, Outcome, Rusage};

/// The hidden first argument that turns pqbench's binary into the launcher.
pub(super) const JAIL_ARG: &str = "__pqbench-jail";

/// How much a job is confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum Level {
    /// Submission code: every layer, a job uid of its own when root, a
    /// minimal environment, reads limited to system directories.
    Submission,
    /// The compiler, assembler, linker and a submission's own build: the
    /// same identity, namespaces, environment and socket ban as submission
    /// code; reads the system's toolchain and its inputs, executes only
    /// the toolchain's own programs, writes only its scratch folder.
    Toolchain,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct JailConfig {
    pub level: Level,
    pub program: PathBuf,
    pub args: Vec<String>,
    /// The job's whole environment (the launcher itself starts with none).
    pub env: Vec<(String, String)>,
    pub cwd: Option<PathBuf>,
    pub timeout_ms: u64,
    pub limits: Limits,
    pub cpu: Option<usize>,
    /// Descriptor of the status pipe (never inherited by the job).
    pub status_fd: i32,
    /// Channel descriptors the job inherits at these numbers.
    pub keep_fds: Vec<i32>,
    /// Hierarchies the job may read beyond the system ones (and execute
    /// from, for submission jobs).
    pub reads: Vec<PathBuf>,
    /// Hierarchies a toolchain job may read and execute from: the
    /// compiler's own installation.
    #[serde(default)]
    pub execs: Vec<PathBuf>,
    /// Hierarchies the job may write (its job directory, a compiler's
    /// output directory).
    pub writes: Vec<PathBuf>,
    /// Run the job as this uid/gid (pqbench is root and leased it).
    pub job_ids: Option<(u32, u32)>,
    /// Only set the layers up and report them; run nothing.
    pub probe: bool,
    /// Measure the launcher's share of the job's `ru_maxrss`
    /// (`Rusage::launcher_rss_kib`).
    #[serde(default)]
    pub rss_floor: bool,
}

/// One line on the status pipe.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "report", rename_all = "kebab-case")]
pub(super) enum Report {
    /// Every layer set up (or why not), sent before the job starts.
    Ready { layers: Vec<Layer> },
    /// How the job ended, with its resource usage (including descendants
    /// it waited for) and its wall time from fork to reap.
    Exit {
        outcome: Outcome,
        rusage: Rusage,
        wall_seconds: f64,
        #[serde(default)]
        cpu_witness: CpuWitness,
    },
    /// The job could not be started: the launcher's setup failed or the
    /// program could not be executed.
    NotStarted { error: String },
    /// init ended without reporting the job's exit (it was killed).
    Failed { error: String },
}

impl Report {
    pub(super) fn line(&self) -> Vec<u8> {
        let mut v = serde_json::to_vec(self).unwrap_or_default();
        v.push(b'\n');
        v
    }
}

/// Parses the status pipe's lines; unparsable lines are dropped (only init
/// writes there, so there are none unless the launcher died mid-line).
pub(super) fn parse_reports(bytes: &[u8]) -> Vec<Report> {
    bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .filter_map(|l| serde_json::from_slice(l).ok())
        .collect()
}
