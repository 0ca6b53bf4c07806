//! `leak/<id>/<label>__<op>.json`: the timing test of one operation whose
//! input holds the secret key (stage `leak`): per-call cycles of calls with
//! one fixed key and of calls with other keys, interleaved at random, run
//! natively (outside Valgrind), and Welch's t between the two classes as
//! dudect computes it (`stats::welch`). `pqbench check` recomputes the
//! tests and the status from the recorded cycles.
//!
//! The test corroborates the constant-time check; it is no verdict of its
//! own. A difference may come from secret data, or from public data the
//! key holds (a public seed whose rejection sampling takes longer for some
//! keys), and no difference at this number of calls does not prove none.

use serde::{Deserialize, Serialize};

use super::process::ProcessRecord;
use crate::stats::welch::{dudect_tests, max_abs_t, CropTest, MIN_PER_CLASS};

/// |t| from which a difference is reported: dudect's threshold for "leaks
/// with high probability" is 4.5 for one test; this stage takes the
/// largest of eleven, on loaded hosts, so only a difference far beyond
/// noise counts.
pub(crate) const DIFFERENCE_T: f64 = 10.0;

/// |t| below which the classes are said not to differ: dudect's 4.5.
pub(crate) const NO_DIFFERENCE_T: f64 = 4.5;

/// The smallest shift that counts as a difference, as a share of the fixed
/// class's mean and in cycles: below it a clear |t| is `slight`. Honest
/// code's time follows a key by a little (a public seed's rejection
/// sampling: 0.2–3.5 % on PQClean's ML-KEM dec), and an operation of a few
/// hundred cycles by a counter tick or a cache line whatever it computes.
pub(crate) const MIN_SHIFT_SHARE: f64 = 0.01;
pub(crate) const MIN_SHIFT_CYCLES: f64 = 100.0;

/// What the timing test found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LeakStatus {
    /// Largest |t| below 4.5.
    NoDifference,
    /// Largest |t| between 4.5 and 10: neither.
    Inconclusive,
    /// Largest |t| of 10 or more, and the classes apart by at least 1 %
    /// of the fixed class's time and 100 cycles: the time follows the key.
    Difference,
    /// Largest |t| of 10 or more, but the classes closer than that.
    Slight,
    /// Fewer than `MIN_PER_CLASS` calls of a class: no test.
    TooFewCalls,
    /// The process failed; `detail` says how.
    Error,
}

impl std::fmt::Display for LeakStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(match self {
            LeakStatus::NoDifference => "no difference",
            LeakStatus::Inconclusive => "inconclusive",
            LeakStatus::Difference => "difference",
            LeakStatus::Slight => "slight difference",
            LeakStatus::TooFewCalls => "too few calls",
            LeakStatus::Error => "error",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeakRecord {
    pub algorithm: String,
    pub label: String,
    pub op: String,
    pub status: LeakStatus,
    pub detail: Option<String>,
    /// What differs between the classes: `secret-key`.
    pub secret: String,
    /// Keys of the random class besides the fixed one.
    pub keys: u32,
    /// The counter the cycles come from (`tsc`, `clock`, ...).
    pub counter: Option<String>,
    /// Per-call cycles, in call order: the fixed key's calls.
    pub fixed_cycles: Vec<u64>,
    /// Per-call cycles, in call order: the other keys' calls.
    pub random_cycles: Vec<u64>,
    /// Derived from the cycles: every call, then each crop.
    pub tests: Vec<CropTest>,
    /// Derived: the largest |t| of the tests.
    pub max_t: Option<f64>,
    /// Derived: the random class's mean minus the fixed class's, over the
    /// calls at or below the pooled 90th percentile, in cycles.
    pub shift_cycles: Option<f64>,
    /// Derived: the fixed class's mean over the same calls.
    pub fixed_mean_cycles: Option<f64>,
    pub process: Option<ProcessRecord>,
}

impl LeakRecord {
    /// The derived fields as the cycles give them. A failed process stays
    /// an error.
    pub fn recomputed(&self) -> Derived {
        let tests = dudect_tests(&self.fixed_cycles, &self.random_cycles);
        let max_t = max_abs_t(&tests);
        let shift = crate::stats::welch::shift(&self.fixed_cycles, &self.random_cycles);
        let few =
            (self.fixed_cycles.len() as u64).min(self.random_cycles.len() as u64) < MIN_PER_CLASS;
        let apart = shift.is_some_and(|(d, mean)| {
            d.abs() >= MIN_SHIFT_CYCLES && d.abs() >= MIN_SHIFT_SHARE * mean
        });
        let status = match (self.status, max_t) {
            (LeakStatus::Error, _) => LeakStatus::Error,
            (_, None) => LeakStatus::TooFewCalls,
            _ if few => LeakStatus::TooFewCalls,
            (_, Some(t)) if t >= DIFFERENCE_T && apart => LeakStatus::Difference,
            (_, Some(t)) if t >= DIFFERENCE_T => LeakStatus::Slight,
            (_, Some(t)) if t < NO_DIFFERENCE_T => LeakStatus::NoDifference,
            _ => LeakStatus::Inconclusive,
        };
        Derived {
            status,
            tests,
            max_t,
            shift_cycles: shift.map(|s| s.0),
            fixed_mean_cycles: shift.map(|s| s.1),
        }
    }

    /// The record with its derived fields as its cycles give them.
    pub fn derive(mut self) -> LeakRecord {
        let d = self.recomputed();
        self.status = d.status;
        self.tests = d.tests;
        self.max_t = d.max_t;
        self.shift_cycles = d.shift_cycles;
        self.fixed_mean_cycles = d.fixed_mean_cycles;
        self
    }

    /// `|t| = 1.8 over 2 × 2,000 calls`: the figure a page cites.
    pub fn figure(&self) -> String {
        match self.max_t {
            Some(t) => format!(
                "|t| = {t:.1}, {} over {} + {} calls",
                self.shift_text(),
                self.fixed_cycles.len(),
                self.random_cycles.len()
            ),
            None => format!(
                "{} + {} calls",
                self.fixed_cycles.len(),
                self.random_cycles.len()
            ),
        }
    }
}

/// What a record's cycles give.
#[derive(Debug, Clone, PartialEq)]
pub struct Derived {
    pub status: LeakStatus,
    pub tests: Vec<CropTest>,
    pub max_t: Option<f64>,
    pub shift_cycles: Option<f64>,
    pub fixed_mean_cycles: Option<f64>,
}

impl LeakRecord {
    /// `+0.3 %`: the shift as a share of the fixed class's mean.
    fn shift_text(&self) -> String {
        match (self.shift_cycles, self.fixed_mean_cycles) {
            (Some(d), Some(m)) if m > 0.0 => format!("{:+.1} %", 100.0 * d / m),
            _ => "no shift".to_string(),
        }
    }
}

pub(crate) fn leak_path(algorithm: &str, label: &str, op: &str) -> String {
    super::layout::operation_file(super::layout::LEAK, algorithm, label, op)
}

impl super::folder::FolderRecord for LeakRecord {
    const DIR: &'static str = super::layout::LEAK;

    fn key(&self) -> super::folder::OpKey {
        (self.algorithm.clone(), self.label.clone(), self.op.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(fixed: Vec<u64>, random: Vec<u64>) -> LeakRecord {
        LeakRecord {
            algorithm: "a".into(),
            label: "L".into(),
            op: "sign".into(),
            status: LeakStatus::Inconclusive,
            detail: None,
            secret: "secret-key".into(),
            keys: 16,
            counter: None,
            fixed_cycles: fixed,
            random_cycles: random,
            tests: Vec::new(),
            max_t: None,
            shift_cycles: None,
            fixed_mean_cycles: None,
            process: None,
        }
    }

    #[test]
    fn the_status_follows_the_cycles() {
        let flat: Vec<u64> = (0..400).map(|i| 10_000 + (i * 7919) % 101).collect();
        let same = record(flat.clone(), flat.clone()).recomputed();
        assert_eq!(same.status, LeakStatus::NoDifference);
        assert_eq!(same.max_t, Some(0.0));
        assert_eq!(same.shift_cycles, Some(0.0));
        assert!(!same.tests.is_empty());
        let status = |by: u64| {
            let slower: Vec<u64> = flat.iter().map(|c| c + by).collect();
            record(flat.clone(), slower).recomputed().status
        };
        // 500 cycles is 5 % of 10,000: a difference; 60 is clear, but slight.
        assert_eq!(status(500), LeakStatus::Difference);
        assert_eq!(status(60), LeakStatus::Slight);
        assert_eq!(
            record(flat[..10].to_vec(), flat.clone())
                .recomputed()
                .status,
            LeakStatus::TooFewCalls
        );
        let mut failed = record(flat.clone(), flat);
        failed.status = LeakStatus::Error;
        assert_eq!(failed.recomputed().status, LeakStatus::Error);
    }
}
