//! The verdict of an instance's known-answer test, as `build.json` and
//! the KAT log record it.

use serde::{Deserialize, Serialize};

/// The verdict of an instance's KAT (plus `BUILDFAIL` when nothing built).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum KatStatus {
    Pass,
    Mismatch,
    Nokat,
    Cryptofail,
    Overflow,
    Loadfail,
    Timeout,
    Crash,
    Buildfail,
    /// The KAT passed in one process, but a fresh process given only the
    /// bytes it made (keys, ciphertext, signature) cannot use them: the
    /// outputs work only in the process that made them.
    Crossfail,
    /// The generated file differs from the reference, and a second run
    /// with the same seeds differs from the first: the library draws
    /// randomness other than `randombytes` (`getrandom()`, `rand()`, the
    /// time), so no reference can match.
    Nondeterministic,
    /// Not built on this system (another architecture, missing CPU
    /// features): not a failure.
    Skipped,
    /// The KAT stage did not run for the instance in this run (the
    /// campaign's stages stop before it).
    #[serde(rename = "NOT RUN")]
    NotRun,
}

impl KatStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            KatStatus::Pass => "PASS",
            KatStatus::Mismatch => "MISMATCH",
            KatStatus::Nokat => "NOKAT",
            KatStatus::Cryptofail => "CRYPTOFAIL",
            KatStatus::Overflow => "OVERFLOW",
            KatStatus::Loadfail => "LOADFAIL",
            KatStatus::Timeout => "TIMEOUT",
            KatStatus::Crash => "CRASH",
            KatStatus::Buildfail => "BUILDFAIL",
            KatStatus::Crossfail => "CROSSFAIL",
            KatStatus::Nondeterministic => "NONDETERMINISTIC",
            KatStatus::Skipped => "SKIPPED",
            KatStatus::NotRun => "NOT RUN",
        }
    }

    pub fn parse(s: &str) -> Option<KatStatus> {
        [
            KatStatus::Pass,
            KatStatus::Mismatch,
            KatStatus::Nokat,
            KatStatus::Cryptofail,
            KatStatus::Overflow,
            KatStatus::Loadfail,
            KatStatus::Timeout,
            KatStatus::Crash,
            KatStatus::Buildfail,
            KatStatus::Crossfail,
            KatStatus::Nondeterministic,
            KatStatus::Skipped,
            KatStatus::NotRun,
        ]
        .into_iter()
        .find(|st| st.as_str() == s)
    }
}

impl std::fmt::Display for KatStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
