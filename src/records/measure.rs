//! What the measuring stages record per operation: status, iteration
//! plan, calibration, KEX step timing, the DRBG cost and helper profiles.

use serde::{Deserialize, Serialize};

use super::process::ProcessRecord;
use super::settings::HelperClass;

/// How a measured operation ended; `ok` and `unwitnessed` have figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpStatus {
    Ok,
    /// The process died on a signal.
    Crash,
    Timeout,
    /// The driver reported an error (setup, a failing call, ...).
    Error,
    /// The process's own accounting does not fit what the kernel saw.
    Implausible,
    /// Profile: the objects define none of the wrapped helpers.
    NoHelpers,
    /// Profile: the instrumented library could not be linked.
    RelinkFailed,
    /// The system is emulated: the operation ran (a functional check) but
    /// was not timed.
    Emulated,
    /// What the timed calls returned differs from what a separate process
    /// of the same library recomputes for the same inputs (or the timed
    /// calls got cheaper once their inputs repeated): no figures.
    Inconsistent,
    /// The kernel's CPU witness could neither confirm nor refute the
    /// trials' claimed time after repeated sets of trials (its fit too
    /// noisy on this host): the figures stand on the process's word alone,
    /// kept and flagged, and left out of the summary chart.
    Unwitnessed,
}

/// One timed call whose output was checked after the trial: the trial's
/// seed and pool say what its input was, `timed_hash` is what the trial
/// reported for it and `replay_hash` what a separate process of the same
/// library computed for it, untimed (hashes of input and output, 16 hex
/// digits). `check` recomputes the verdict from these.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputCheck {
    /// The kept trial, from 1.
    pub trial: u32,
    /// The trial's seed (64 hex digits) and pool of distinct inputs (0:
    /// none; keygen's and enc's input is the randomness re-seeded per call).
    pub seed: String,
    pub pool: u64,
    pub warmup: u64,
    /// Passes over the pool beyond the first.
    pub wraps: u64,
    /// The timed call, from 0.
    pub call: u64,
    pub timed_hash: String,
    /// None when the replay process failed.
    pub replay_hash: Option<String>,
    /// Whether the replayed output passed its counterpart's check. dec: the
    /// secret equals the one enc gave; verify: the signature was accepted;
    /// sign: the signature verifies; enc: dec of the ciphertext gives the
    /// secret; keygen: the pair round-trips (a KEM's enc and dec, a
    /// signature's sign and verify). None for a hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agrees: Option<bool>,
    /// keygen, enc, sign: whether the replay, making the call twice, got
    /// the same output both times. When not, the output does not follow
    /// the driver's randomness and the timed one cannot be recomputed: its
    /// hash is no evidence either way (None for the other operations).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeatable: Option<bool>,
}

/// A kept trial all of whose timed calls a separate process made again,
/// untimed (one trial per operation, drawn before its trials ran and told
/// to no process). `pqbench check` recomputes the verdict from these.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FullReplay {
    /// The kept trial, from 1.
    pub trial: u32,
    /// Its timed calls, all remade.
    pub calls: u64,
    /// How many of them gave another output hash than the timed call, and
    /// the first of those (from 0). None: the replay failed.
    pub differing: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_differing: Option<u64>,
}

impl FullReplay {
    /// Why this trial is inconsistent, or None.
    pub fn problem(&self) -> Option<String> {
        match (self.differing, self.first_differing) {
            (None, _) => Some(format!(
                "the replay of all {} timed calls of trial {} failed",
                self.calls, self.trial
            )),
            (Some(n), Some(first)) if n > 0 => Some(format!(
                "timed call {first} of trial {} (and {} more of its {} calls) returned an output a separate process remaking every call did not",
                self.trial,
                n - 1,
                self.calls
            )),
            _ => None,
        }
    }
}

impl OutputCheck {
    /// Whether the replay made an output other than the timed call's.
    pub fn differs(&self) -> bool {
        self.replay_hash
            .as_ref()
            .is_some_and(|h| *h != self.timed_hash)
    }

    /// Why this call is inconsistent, or None.
    pub fn problem(&self) -> Option<String> {
        let call = format!("timed call {} of trial {}", self.call, self.trial);
        match &self.replay_hash {
            None => Some(format!("{call}: its replay failed")),
            Some(h) if self.differs() && self.repeatable != Some(false) => Some(format!(
                "{call} returned output hash {}, a separate process recomputed {h}",
                self.timed_hash
            )),
            _ if self.agrees == Some(false) => Some(format!(
                "{call}: the recomputed output fails its check (a round trip, a verification or the secret enc gave)"
            )),
            _ => None,
        }
    }
}

/// Iterations of one trial, from a warm per-call time `t1`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IterationPlan {
    pub iterations: u64,
    /// The budget cut the iterations below what the target asked for.
    pub budget_limited: bool,
    /// Fewer timed calls than `min-calls` in total.
    pub below_min_calls: bool,
    /// A call was as long as a trial (`trial-seconds`) or longer: it is its
    /// own warm-up, so the trials ran none. Absent otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub slow_calls: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    pub calls: u64,
    pub seconds: f64,
    /// Seconds per warm call.
    pub seconds_per_call: f64,
    /// The first timed call, for comparison with a cold-call calibration.
    pub first_seconds: Option<f64>,
}

/// How a KEX step was timed: inside complete protocol runs, planned from
/// the exchange's calibration, each sample including two counter reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepTiming {
    /// The operation whose calibration planned the step (`exchange`).
    pub planned_from: String,
    /// Median cycles of two counter reads around nothing, measured in each
    /// trial process (the median over the kept trials): the measurement's
    /// own share of every step sample.
    pub counter_overhead_cycles: Option<f64>,
}

/// An operation's trial processes' CPU time as the kernel witnessed it
/// (task-clock, counted from outside the process), fitted over trials of
/// different call counts as set-up + calls × per call: CPU burnt in set-up
/// lands in the intercept, never in the per-call figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuFit {
    /// Trial processes with a witness: the fit's points.
    pub processes: u32,
    /// Least-squares CPU seconds per timed call; absent with fewer than
    /// two distinct call counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_call_seconds: Option<f64>,
    /// The per-call figure's standard error (from the residuals; three
    /// points or more).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_call_stderr_seconds: Option<f64>,
    /// The residuals' degrees of freedom behind the standard error
    /// (processes, less one per set length, less one): a conviction takes
    /// off Student's t for them, not three.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degrees_of_freedom: Option<u32>,
    /// Its intercept: CPU seconds of everything a trial does once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup_seconds: Option<f64>,
    /// Per kept trial, in order, the most CPU one of its calls can have
    /// cost: its own process's witnessed CPU (set-up included) over the
    /// calls pqbench asked of it. A bound, not an estimate: no noise can
    /// make it fall below the calls' true cost. Empty when a kept trial
    /// has no witnessed process.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_call_ceilings_seconds: Vec<f64>,
    /// Why there is no witness (the first trial process's reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

/// The further sets of trials an operation ran because the CPU witness's
/// verdict on the first set was open (docs: measurement.md, "The CPU
/// witness"); absent when one set sufficed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WitnessSets {
    /// Sets of trials run, the first included.
    pub sets: u32,
    /// The kept (last) set's call counts over the first set's: 1 where a
    /// claim below the witness ran again as it was, more where an
    /// undecided witness asked for longer trials.
    pub scale: u64,
}

/// The DRBG cost measured at campaign start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DrbgCost {
    /// The AES the instance libraries use on this host: `aesni`,
    /// `armv8-aes` or `table`.
    pub implementation: String,
    /// Every implementation this host can run, fastest first.
    pub usable: Vec<String>,
    /// The counter the figures are in (as in the operation records).
    pub counter: String,
    pub counter_hz: f64,
    /// One entry per draw size (32 and 64 bytes).
    pub draws: Vec<DrawCost>,
}

/// Cost of one `randombytes` call of `bytes` bytes: the median over
/// `batches` batches of `batch` consecutive draws of the per-draw figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DrawCost {
    pub bytes: u64,
    pub median_cycles: f64,
    pub min_cycles: f64,
    pub median_seconds: f64,
    pub batches: u64,
    pub batch: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpProfile {
    pub op: String,
    pub status: OpStatus,
    pub detail: Option<String>,
    /// Timed operations and their total ticks.
    pub ops: u64,
    pub total_ticks: u64,
    pub tick_hz: Option<f64>,
    pub shapes: Vec<Shape>,
    pub process: Option<ProcessRecord>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shape {
    pub function: String,
    pub class: HelperClass,
    pub in_bits: u64,
    pub out_bits: u64,
    pub calls: u64,
    pub ticks: u64,
}
