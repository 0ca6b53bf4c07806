//! What the time stage found for one instance: per operation the
//! calibration, the iteration plan, every driver process and the raw trials
//! (statistics are derived from them and recomputable), in the type the
//! stage publishes.

use serde::{Deserialize, Serialize};

use super::driver::ProcessRecord;
use crate::records::operation::OperationRecord;

/// A trial whose process ran less than this share of its wall time (or whose
/// cycle rate fell below this share of the clock) lost the CPU.
pub(crate) const LOST_CPU_SHARE: f64 = 0.95;
pub(crate) const TRIAL_ATTEMPTS: u32 = 3;

pub use crate::records::measure::CpuFit;

pub use crate::records::measure::StepTiming;

pub use crate::records::measure::Calibration;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct TimeOutput {
    pub cpu: Option<usize>,
    /// Each operation's record as the stage publishes it, less what the
    /// plan and the other stages know of the instance (its algorithm,
    /// label, KAT status, known issues, CPU, host and memory figures),
    /// which are filled in when it is published.
    pub ops: Vec<OperationRecord>,
    /// When this instance was timed (UTC); kept with the cached result.
    #[serde(default)]
    pub started_utc: Option<String>,
    #[serde(default)]
    pub finished_utc: Option<String>,
    /// The host fingerprint the measurement was taken under.
    #[serde(default)]
    pub host_fingerprint: Option<String>,
}

/// The attempts of one trial. A trial that lost the CPU is run again, and
/// the last of `TRIAL_ATTEMPTS` is kept whatever its share (a busy machine
/// stays busy). Once a trial of the operation has been kept that way, the
/// machine is taken as busy (`busy`): the next trials that lose the CPU are
/// kept at their first attempt, until one holds the CPU again. Repeating
/// them could only spend time on a machine that stays loaded (on the
/// complete PQClean tree beside two compile loops, 1,144 repeated trials
/// made the time stage's trial processes take 5.4 times their idle wall
/// time). A trial whose counter disagrees with the clock
/// (`counter_disagrees`) is run again too, and its figures are never kept:
/// only when `TRIAL_ATTEMPTS` of its attempts all disagree is that taken as
/// evidence against the process rather than as a disturbance.
#[derive(Debug, Default)]
pub(crate) struct Attempts {
    lost: u32,
    disturbed: u32,
    /// The operation's last kept trial lost the CPU.
    busy: bool,
}

/// What to do with an attempt that passed the hard checks.
#[derive(Debug, PartialEq)]
pub(crate) enum Next {
    Keep,
    Repeat,
    Implausible(String),
}

impl Attempts {
    /// A trial's attempts; `busy` when the operation's last kept trial
    /// lost the CPU.
    pub(crate) fn new(busy: bool) -> Attempts {
        Attempts {
            busy,
            ..Attempts::default()
        }
    }

    pub(crate) fn judge(&mut self, lost: bool, disturbed: Option<String>) -> Next {
        if let Some(why) = disturbed {
            self.disturbed += 1;
            return if self.disturbed >= TRIAL_ATTEMPTS {
                Next::Implausible(format!("{why} (in {TRIAL_ATTEMPTS} attempts)"))
            } else {
                Next::Repeat
            };
        }
        if lost {
            self.lost += 1;
            if self.lost < TRIAL_ATTEMPTS && !self.busy {
                return Next::Repeat;
            }
        }
        Next::Keep
    }
}

/// Whether a trial process lost the CPU: it ran less than 95 % of its wall
/// time, or (with a counter that stops while descheduled) its cycle rate
/// fell below 95 % of the clock.
pub fn lost_cpu(proc: &ProcessRecord) -> bool {
    let Some(t) = proc.line("trial") else {
        return false;
    };
    let seconds = t.f64("seconds").unwrap_or(0.0).max(1e-12);
    let cpu_share = t.f64("cpu_seconds").unwrap_or(seconds) / seconds;
    let meta = proc.line("meta");
    // A counter that stops off the CPU shows the loss in its rate too.
    let rate_share = match (
        crate::records::counter::of(meta.and_then(|m| m.get("counter"))),
        meta.and_then(|m| m.f64("counter_hz")),
    ) {
        (Some(c), Some(hz)) if c.user_only && hz > 0.0 => {
            t.f64("cycles").unwrap_or(0.0) / seconds / hz
        }
        _ => 1.0,
    };
    cpu_share < LOST_CPU_SHARE || rate_share < LOST_CPU_SHARE
}

#[cfg(test)]
mod tests {
    use super::{Attempts, Next, TRIAL_ATTEMPTS};

    fn why() -> Option<String> {
        Some("0.78 times the counter's rate".into())
    }

    #[test]
    fn a_disturbed_attempt_is_repeated_and_never_kept() {
        let mut a = Attempts::default();
        assert_eq!(a.judge(false, why()), Next::Repeat);
        assert_eq!(a.judge(false, None), Next::Keep);
        // Lost attempts and disturbed ones are counted apart.
        let mut a = Attempts::default();
        assert_eq!(a.judge(false, why()), Next::Repeat);
        assert_eq!(a.judge(true, None), Next::Repeat);
        assert_eq!(a.judge(false, why()), Next::Repeat);
        assert_eq!(a.judge(true, None), Next::Repeat);
        assert_eq!(a.judge(true, None), Next::Keep);
    }

    #[test]
    fn only_a_disagreement_every_attempt_shows_is_implausible() {
        let mut a = Attempts::default();
        for _ in 1..TRIAL_ATTEMPTS {
            assert_eq!(a.judge(false, why()), Next::Repeat);
        }
        match a.judge(false, why()) {
            Next::Implausible(w) => assert!(w.contains("(in 3 attempts)"), "{w}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn on_a_busy_machine_a_lost_attempt_is_kept_at_once_and_a_disagreement_still_repeated() {
        let mut a = Attempts::new(true);
        assert_eq!(a.judge(true, None), Next::Keep);
        let mut a = Attempts::new(true);
        assert_eq!(a.judge(false, why()), Next::Repeat);
        assert_eq!(a.judge(false, None), Next::Keep);
    }

    #[test]
    fn the_last_lost_attempt_is_kept() {
        let mut a = Attempts::default();
        for _ in 1..TRIAL_ATTEMPTS {
            assert_eq!(a.judge(true, None), Next::Repeat);
        }
        assert_eq!(a.judge(true, None), Next::Keep);
    }
}
