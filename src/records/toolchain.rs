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
}
