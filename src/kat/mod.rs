//! Known-answer tests: reference manifests, comparison of a generated KAT
//! file with the references, and the per-instance verdict.

pub mod compare;
pub mod manifest;
mod outcome;
pub mod provenance;

pub use outcome::{KatAttempt, KatFile, KatOutput};

use serde::{Deserialize, Serialize};

/// The verdict of an instance's KAT (plus `BUILDFAIL` when nothing built).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    Pass,
    Mismatch,
    Nokat,
    Cryptofail,
    Overflow,
    Loadfail,
    Timeout,
    Crash,
    Buildfail,
    /// Not built on this system (another architecture, missing CPU
    /// features): not a failure.
    Skipped,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Mismatch => "MISMATCH",
            Status::Nokat => "NOKAT",
            Status::Cryptofail => "CRYPTOFAIL",
            Status::Overflow => "OVERFLOW",
            Status::Loadfail => "LOADFAIL",
            Status::Timeout => "TIMEOUT",
            Status::Crash => "CRASH",
            Status::Buildfail => "BUILDFAIL",
            Status::Skipped => "SKIPPED",
        }
    }

    pub fn parse(s: &str) -> Option<Status> {
        [
            Status::Pass,
            Status::Mismatch,
            Status::Nokat,
            Status::Cryptofail,
            Status::Overflow,
            Status::Loadfail,
            Status::Timeout,
            Status::Crash,
            Status::Buildfail,
            Status::Skipped,
        ]
        .into_iter()
        .find(|st| st.as_str() == s)
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
