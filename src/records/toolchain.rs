//! The compiler as recorded: what identifies it.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// What identifies a compiler: a different path, version or binary is a
/// different compiler and invalidates every build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Compiler {
    /// The command as configured (`gcc`, or `$CC`).
    pub command: String,
    /// Resolved absolute path.
    pub path: PathBuf,
    /// First line of `--version`.
    pub version: String,
    /// sha256 of the compiler driver binary.
    pub binary_sha256: String,
    /// `-dumpmachine`, the target triple.
    pub target: String,
    /// The program that assembles plain assembly sources (`.s`) in this
    /// compiler's stead, when the system names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assembler: Option<Assembler>,
    /// What `-march=native` stood for on the build host, when a flag
    /// profile names it: the flags built in its stead. Empty when the
    /// compiler could not tell (a cross compiler): the flag then stays and
    /// the compiler's error is the build's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_flags: Option<Vec<String>>,
    /// The limits its jobs ran under, when the system sets its own
    /// (`[system.toolchain.limits]`); else `ToolchainLimits::default()`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<ToolchainLimits>,
    /// The names of pqbench's variables its jobs got, when the system
    /// names some (`toolchain.environment`); their values, which may be
    /// secrets, are recorded nowhere.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub environment: Vec<String>,
}

/// What one toolchain job (a compile, an assembly, a link, a submission's
/// own build) may use; past a limit the job is stopped and the build
/// detail names the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolchainLimits {
    /// Address space, MiB.
    pub memory_mib: u64,
    /// CPU time, seconds.
    pub cpu_seconds: u64,
    /// Largest file written (an object, a library, a log), MiB.
    pub file_mib: u64,
    /// Processes and threads at once.
    pub processes: u64,
}

impl Default for ToolchainLimits {
    fn default() -> ToolchainLimits {
        ToolchainLimits {
            memory_mib: 4096,
            cpu_seconds: 600,
            file_mib: 512,
            processes: 128,
        }
    }
}

/// What identifies a system's assembler (`toolchain.assembler`): a
/// compiler driver such as clang, run with the arguments configured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assembler {
    /// The command and its arguments as configured.
    pub command: Vec<String>,
    /// Resolved absolute path; None when it is not installed (only an
    /// instance with `.s` sources then fails to build, saying so).
    pub path: Option<PathBuf>,
    /// First line of `--version`.
    pub version: String,
    /// sha256 of the binary.
    pub binary_sha256: String,
}
