//! Running untrusted code. Submissions are adversaries: their code runs in
//! pqbench's own child processes (`pqb-kat`, `pqb-driver` dlopen the
//! instance library) and in the toolchain (a submission's flags and its own
//! build run in the compiler and CMake), so every such process is started
//! through a launcher
//! (`jail.rs`: pqbench's binary re-executed with a hidden argument) that
//! - puts the job in new PID, mount, network and IPC namespaces (and a user
//!   namespace when pqbench is not root) under a tiny init, PID 1 of the
//!   namespace, whose exit takes every descendant with it (`init.rs`);
//! - applies resource limits (clamped to pqbench's own hard limits), a
//!   process limit and an unprivileged uid of the job's own when pqbench is
//!   root, no capabilities, no_new_privs, Landlock (writes only in the job
//!   directory, reads only system directories, no TCP) and a seccomp filter
//!   (no socket of any family; `confine.rs`), a read-only mount view in
//!   which a toolchain job's inputs stay reachable by their own paths
//!   (`mounts.rs`) and a minimal environment;
//! - keeps the evidence off stdout: machine-readable results travel on a
//!   pipe at a fixed descriptor (`Channel`, `--results-fd 3`), stdout and
//!   stderr are kept only as short tails (`pipes.rs`);
//! - reports every layer it could set up and why not for the others
//!   (`layers()`): a missing layer degrades the isolation, it never stops a
//!   run.
//!
//! A crash, hang or flood becomes an `Outcome` or a capped tail, never a
//! stuck or aborted campaign.

mod config;
mod confine;
mod cputime;
pub(crate) mod frame;
mod init;
mod jail;
pub mod layer_name;
mod layers;
mod mounts;
mod pipes;
mod spawn;
mod uids;
mod witness;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use jail::{jail_entry, jail_entry_from};
pub use layer_name as layer;
pub use layers::{layers, Layer, LayerReport};
pub use witness::CpuWitness;

/// Descriptor of the results channel in every pqbench tool.
pub(crate) const RESULTS_FD: i32 = 3;
/// Descriptor of the KAT runner's KAT-file channel.
pub(crate) const KAT_FD: i32 = 4;
/// Descriptor of the driver's settings input (`Input`).
pub(crate) const INPUT_FD: i32 = 5;
/// Descriptor of the CPU mark's acknowledgement (`Spec::cpu_mark`): the
/// job reads one byte there after writing the mark, which pqbench writes
/// once it has read the job's CPU time.
pub(crate) const MARK_FD: i32 = 6;
/// A results channel above this is an error, never a silent truncation.
pub(crate) const RESULTS_CAP: usize = 512 << 20;
/// The KAT file channel's cap (the largest NIST KAT files are a few
/// hundred MiB).
pub(crate) const KAT_CAP: usize = 1 << 30;
/// How much of a submission's stdout and stderr is kept: the last bytes.
pub(crate) const TAIL_BYTES: usize = 16 << 10;
/// Processes and threads a submission job may have at once.
pub const JOB_PROCESSES: u64 = 128;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Address space, bytes (0 = unlimited).
    pub address_space: u64,
    /// CPU time, seconds (0 = unlimited).
    pub cpu_seconds: u64,
    /// Largest file written, bytes (0 = unlimited).
    pub file_size: u64,
    /// Processes and threads of the job's uid (0 = unlimited); only
    /// enforced where the uid is the job's alone.
    #[serde(default)]
    pub processes: u64,
}

impl Limits {
    pub(crate) fn unlimited() -> Limits {
        Limits {
            address_space: 0,
            cpu_seconds: 0,
            file_size: 0,
            processes: 0,
        }
    }

    /// A toolchain job's limits (`[system.toolchain.limits]`, else
    /// `ToolchainLimits::default()`).
    pub(crate) fn toolchain(l: &crate::records::toolchain::ToolchainLimits) -> Limits {
        Limits {
            address_space: l.memory_mib << 20,
            cpu_seconds: l.cpu_seconds,
            file_size: l.file_mib << 20,
            processes: l.processes,
        }
    }

    pub(crate) fn from_plan(l: &crate::plan::Limits) -> Limits {
        Limits {
            address_space: l.memory_mib << 20,
            cpu_seconds: l.cpu_seconds,
            file_size: l.file_mib << 20,
            processes: JOB_PROCESSES,
        }
    }
}

/// How far a process is confined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Isolation {
    /// Submission code: every layer; writes only in `cwd` (the job
    /// directory); reads system directories, the program and `readable`.
    Submission { readable: Vec<PathBuf> },
    /// The compiler, assembler, linker and a submission's own build: a job
    /// uid of its own, no capability, every namespace, no socket, a
    /// minimal environment; reads only the system's toolchain
    /// directories, `readable`, `executable` and `writable`; executes
    /// only from the system's toolchain directories and `executable`;
    /// writes only beneath `writable` (HOME and TMPDIR are the first);
    /// gets those of pqbench's variables `passed` names that are set
    /// (`toolchain.environment`, see `plan::system::passed_variable_refused`), their
    /// values read when the job starts.
    Toolchain {
        writable: Vec<PathBuf>,
        readable: Vec<PathBuf>,
        executable: Vec<PathBuf>,
        passed: Vec<String>,
    },
}

/// A pipe the job writes to at a fixed descriptor, read in full up to `cap`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Channel {
    pub name: String,
    pub fd: i32,
    pub cap: usize,
}

impl Channel {
    pub(crate) fn results() -> Channel {
        Channel {
            name: "results".into(),
            fd: RESULTS_FD,
            cap: RESULTS_CAP,
        }
    }
}

/// A pipe the job reads from at a fixed descriptor, holding `bytes` and
/// then end of file. pqbench writes it before the job starts, so it must
/// fit in a pipe's buffer (grown to hold it, up to `INPUT_CAP`); the
/// descriptor is guarded like a channel (the job cannot put a pipe of its
/// own in its place), and reading a pipe empties it: whoever reads it
/// first takes its bytes away from the other readers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    pub fd: i32,
    pub bytes: Vec<u8>,
}

/// The most an `Input` holds: the largest pipe buffer an unprivileged
/// process may ask for by default (`/proc/sys/fs/pipe-max-size`).
pub(crate) const INPUT_CAP: usize = 1 << 20;

/// What fits in any pipe without growing it (Linux's smallest buffer).
const PIPE_ALWAYS: usize = 4096;

#[derive(Debug, Clone)]
pub struct Spec {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub cwd: Option<PathBuf>,
    /// Variables set for the job, on top of its minimal environment.
    pub env: Vec<(String, String)>,
    pub timeout: Duration,
    pub limits: Limits,
    /// Pin the process to this CPU.
    pub cpu: Option<usize>,
    pub isolation: Isolation,
    /// Pipes beyond stdout and stderr, at fixed descriptors (3 and up).
    pub channels: Vec<Channel>,
    /// Pipes the job reads, at fixed descriptors distinct from the channels.
    pub inputs: Vec<Input>,
    /// How much of stdout and stderr is kept (their last bytes).
    pub tail_bytes: usize,
    /// A line tag on the results channel at whose arrival pqbench reads
    /// the job's CPU time so far from the kernel (`CpuWitness::mark_ns`):
    /// the driver's `timed`, written just before its first timed call.
    /// The job waits on `MARK_FD` until pqbench has read it, so the
    /// reading is the set-up's, whatever the load.
    pub cpu_mark: Option<&'static str>,
    /// Measure the launcher's own share of the job's peak RSS
    /// (`Rusage::launcher_rss_kib`), for a job whose `ru_maxrss` bounds a
    /// figure it reports: a fork of the launcher more.
    pub rss_floor: bool,
}

impl Spec {
    /// A submission process in `job_dir` with a results channel; 60 s and
    /// only the process limit until the caller sets more.
    pub fn submission(program: impl Into<PathBuf>, args: Vec<String>, job_dir: &Path) -> Spec {
        Spec {
            program: program.into(),
            args,
            cwd: Some(job_dir.to_path_buf()),
            env: Vec::new(),
            timeout: Duration::from_secs(60),
            limits: Limits {
                processes: JOB_PROCESSES,
                ..Limits::unlimited()
            },
            cpu: None,
            isolation: Isolation::Submission {
                readable: Vec::new(),
            },
            channels: vec![Channel::results()],
            inputs: Vec::new(),
            tail_bytes: TAIL_BYTES,
            cpu_mark: None,
            rss_floor: false,
        }
    }

    /// A toolchain process writing only beneath `writable`, reading only
    /// there, in the system's toolchain directories and in `readable`
    /// (`Spec::reading`), executing only the system's toolchain and
    /// `executable` (`Spec::executing`), within the default toolchain
    /// limits until the caller sets its system's.
    pub(crate) fn toolchain(
        program: impl Into<PathBuf>,
        args: Vec<String>,
        writable: Vec<PathBuf>,
    ) -> Spec {
        Spec {
            program: program.into(),
            args,
            cwd: None,
            env: Vec::new(),
            timeout: Duration::from_secs(600),
            limits: Limits::toolchain(&Default::default()),
            cpu: None,
            isolation: Isolation::Toolchain {
                writable,
                readable: Vec::new(),
                executable: Vec::new(),
                passed: Vec::new(),
            },
            channels: Vec::new(),
            inputs: Vec::new(),
            // Compiler diagnostics are the build log: keep a long tail.
            tail_bytes: 1 << 20,
            cpu_mark: None,
            rss_floor: false,
        }
    }

    /// Lets a toolchain process also read beneath `roots` (its inputs).
    pub(crate) fn reading(mut self, roots: impl IntoIterator<Item = PathBuf>) -> Spec {
        if let Isolation::Toolchain { readable, .. } = &mut self.isolation {
            readable.extend(roots);
        }
        self
    }

    /// Lets a toolchain process also read and execute beneath `roots` (the
    /// compiler's own installation).
    pub(crate) fn executing(mut self, roots: impl IntoIterator<Item = PathBuf>) -> Spec {
        if let Isolation::Toolchain { executable, .. } = &mut self.isolation {
            executable.extend(roots);
        }
        self
    }

    /// Gives a toolchain process those of pqbench's variables `names`
    /// names that are set when it starts (its system's
    /// `toolchain.environment`); a name `plan::system::passed_variable_refused` refuses,
    /// or one the job's environment already has, is never passed.
    pub(crate) fn passing(mut self, names: &[String]) -> Spec {
        if let Isolation::Toolchain { passed, .. } = &mut self.isolation {
            passed.extend(names.iter().cloned());
        }
        self
    }
}

pub use crate::records::process::Outcome;

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Exited(c) => write!(f, "exit status {c}"),
            Outcome::Signaled(s) => write!(f, "killed by signal {s} ({})", signal_name(*s)),
            Outcome::TimedOut => write!(f, "timed out"),
        }
    }
}

pub(crate) fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGABRT => "SIGABRT",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGTERM => "SIGTERM",
        libc::SIGSYS => "SIGSYS",
        _ => "signal",
    }
}

pub use crate::records::process::Rusage;

impl Rusage {
    pub fn cpu_seconds(&self) -> f64 {
        self.user_seconds + self.system_seconds
    }
}

#[derive(Debug, Clone)]
pub struct Output {
    pub outcome: Outcome,
    /// The last `Spec::tail_bytes` of stdout and stderr.
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// How many bytes the job wrote to stdout and stderr in all.
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    /// Each of `Spec::channels`, in order, complete.
    pub channels: Vec<Vec<u8>>,
    /// The channel that went beyond its cap (the job was killed then).
    pub overflow: Option<String>,
    /// The job's wall time (from fork to reap when the launcher measured
    /// it, else from spawn to end).
    pub wall: Duration,
    /// The job's resource usage, None when it could not be measured.
    pub rusage: Option<Rusage>,
    /// The isolation layers this job ran under.
    pub layers: Vec<Layer>,
    /// The job's CPU time as the kernel's task-clock counted it, or why
    /// it could not be counted.
    pub cpu_witness: CpuWitness,
}

impl Output {
    /// The named channel's bytes (empty when there is no such channel).
    pub(crate) fn channel(&self, spec: &Spec, name: &str) -> &[u8] {
        spec.channels
            .iter()
            .position(|c| c.name == name)
            .and_then(|i| self.channels.get(i))
            .map(Vec::as_slice)
            .unwrap_or_default()
    }
}

/// Why a process could not be run at all (as opposed to running and
/// failing, which is an `Outcome`).
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("starting {program}: {reason}")]
    Start { program: String, reason: String },
    #[error("sandbox plumbing: {0}")]
    Io(#[from] std::io::Error),
}

/// Runs `spec` to completion, timeout or overflow; returns within its
/// timeout plus a few seconds whatever its descendants do.
pub fn run(spec: &Spec) -> Result<Output, SandboxError> {
    spawn::run(spec)
}
