//! The sets of trials the CPU witness asks for: after the first set, while
//! its verdict is open (`measure::witness::Verdict::open`), further sets,
//! longer where the claim is undecided, until the claims are upheld,
//! convicted twice or the last set has run.

use anyhow::Result;

use super::time_op::{judge_witness, run_trials, trial_timeout, Stop};
use super::time_trial::TrialRun;
use crate::measure::witness;
use crate::records::operation::OperationRecord;

/// Judges the first set of trials against the witness and, while the
/// verdict is open, runs further sets (`WITNESS_SETS` in all): the
/// verdict and how many sets ran, or the trial that ended the operation.
pub(super) fn witness_sets(
    run: &mut TrialRun,
    counts: &[u64],
    timing: &mut OperationRecord,
    op: &str,
    seconds_per_call: f64,
) -> Result<std::result::Result<(witness::Verdict, u32), Stop>> {
    let s = run.settings.clone();
    let s = &s;
    let mut scale = 1;
    let mut verdict = judge_witness(timing);
    let mut sets = 1;
    while verdict.open() && sets < WITNESS_SETS {
        // Evidence must survive repetition, and an undecided witness must
        // not let a claim pass. A claim below the witness runs again as it
        // was; an undecided one runs SET_SCALE times longer (within
        // the budget), so the calls' CPU outweighs the noise of each
        // process's set-up. The witness is fitted over every set's
        // processes with an intercept per set length (a set run later,
        // under another load, moves its own intercept, not the slope), and
        // the latest set's trials are the ones judged and kept; the pool stays
        // the first set's, so every process's set-up is alike and the fit
        // stays unbiased (longer trials walk it more than once). Earlier
        // sets' processes stay in the record (the fit counts them);
        // `repeated_trials` keeps meaning trials that lost the CPU.
        match verdict {
            witness::Verdict::Below(_) if sets >= 2 => break,
            witness::Verdict::Below(_) => {}
            _ => scale = next_scale(scale, timing, counts, seconds_per_call, s.budget_seconds),
        }
        let longer: Vec<u64> = counts.iter().map(|c| c * scale).collect();
        let longest = longer.iter().copied().max().unwrap_or(1);
        run.timeout = trial_timeout(longest, seconds_per_call, s);
        // The output checks describe the kept trials; the earlier sets'
        // agreed (a disagreement ends the operation), and their replay
        // processes stay in the record.
        timing.trials.clear();
        timing.output_checks.clear();
        timing.full_replays.clear();
        timing.sign_failures_retried = 0;
        timing.setup_sign_failures_retried = 0;
        timing.verify_rejects = 0;
        if let Some(stop) = run_trials(run, &longer, timing, op)? {
            // The record's fit covers every process it keeps, as `check`
            // recomputes it.
            judge_witness(timing);
            return Ok(Err(stop));
        }
        sets += 1;
        verdict = judge_witness(timing);
        timing.witness_sets = Some(crate::records::measure::WitnessSets { sets, scale });
    }
    Ok(Ok((verdict, sets)))
}

/// Sets of trials an operation runs at most while the witness is open
/// (`witness::Verdict::open`): a claim convicted twice is implausible, one
/// still undecided after the last set is `unwitnessed`.
const WITNESS_SETS: u32 = 3;

/// The longest a set of trials may run, in the first set's lengths.
const MAX_SCALE: u64 = 256;

/// The most calls a set of trials may run in all: the kept trials' per-call
/// samples go into the record, about 6 bytes each.
const MAX_SET_CALLS: u64 = 200_000;

/// The length of the next set while the witness is undecided, in the first
/// set's lengths: four times the last, or as many powers of four more as
/// the shortest trial's calls need to cost four times the set-up (the
/// fitted one, or the most CPU a kept process used beyond its claims);
/// always a power of four (the fit tells sets apart by it, see
/// `witness::fit`) and within `MAX_SCALE`, `MAX_SET_CALLS` and the
/// operation's time budget per set, at the dearer of the claimed and the
/// witnessed cost per call (a library that claims too little cannot make
/// the sets run long).
fn next_scale(
    scale: u64,
    timing: &OperationRecord,
    counts: &[u64],
    claimed_per_call: f64,
    budget_seconds: f64,
) -> u64 {
    let fit = timing.witness.as_ref();
    let witnessed = fit.and_then(|f| f.per_call_seconds).unwrap_or(0.0);
    let per_call = claimed_per_call.max(witnessed).max(1e-9);
    // The fitted set-up is as noisy as the fit; each kept process's CPU
    // beyond what its calls claimed is set-up too, with no fit.
    let unclaimed = fit.map_or(0.0, |f| {
        let hz = timing
            .counter_hz
            .filter(|h| *h > 0.0)
            .unwrap_or(f64::INFINITY);
        let ceilings = f.per_call_ceilings_seconds.iter();
        timing
            .trials
            .iter()
            .zip(ceilings)
            .map(|(t, u)| u * t.calls as f64 - t.cycles / hz)
            .fold(0.0, f64::max)
    });
    let setup = fit
        .and_then(|f| f.setup_seconds)
        .unwrap_or(0.0)
        .abs()
        .max(unclaimed);
    let fewest = counts.iter().copied().min().unwrap_or(1).max(1) as f64;
    let planned: u64 = counts.iter().sum();
    let affordable =
        (budget_seconds / (planned as f64 * per_call)).min((MAX_SET_CALLS / planned.max(1)) as f64);
    let needed = 4.0 * setup / (fewest * per_call);
    let mut next = scale * witness::SET_SCALE;
    while (next as f64) < needed && next < MAX_SCALE {
        next *= witness::SET_SCALE;
    }
    while next > scale && (next > MAX_SCALE || next as f64 > affordable) {
        next /= witness::SET_SCALE;
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::OpStatus;
    use crate::records::measure::CpuFit;
    use crate::stages::time_op::failed;

    /// Five kept trials of 1 µs calls, each process's CPU `unclaimed` over
    /// its claims, under a fit whose set-up came out `fitted`.
    fn judged(fitted: f64, unclaimed: Option<f64>) -> OperationRecord {
        let counts = [50u64, 75, 100, 125, 150];
        let mut t = failed("keygen", OpStatus::Ok, String::new(), Vec::new());
        t.counter_hz = Some(1e9);
        t.trials = counts
            .iter()
            .map(|&n| crate::stats::Trial {
                calls: n,
                seconds: n as f64 * 1e-6,
                cycles: n as f64 * 1e3,
                samples: Vec::new(),
            })
            .collect();
        t.witness = Some(CpuFit {
            processes: 5,
            per_call_seconds: Some(1e-6),
            per_call_stderr_seconds: None,
            degrees_of_freedom: None,
            setup_seconds: Some(fitted),
            per_call_ceilings_seconds: unclaimed.map_or(Vec::new(), |u| {
                counts.iter().map(|&n| 1e-6 + u / n as f64).collect()
            }),
            missing: None,
        });
        t
    }

    #[test]
    fn sets_grow_until_the_calls_outweigh_the_set_up() {
        let counts = [50u64, 75, 100, 125, 150];
        // A fit whose set-up came out near nothing: four times longer.
        assert_eq!(next_scale(1, &judged(1e-5, None), &counts, 1e-6, 100.0), 4);
        // 6.6 ms each process used beyond its claims: the 50 calls need
        // 528 times their length to cost four times that; capped.
        let t = judged(1e-5, Some(6.6e-3));
        assert_eq!(next_scale(1, &t, &counts, 1e-6, 100.0), MAX_SCALE);
        // The budget bounds it (500 calls of 1 µs per set at the first
        // length: 0.05 s affords 100 times, so 64).
        assert_eq!(next_scale(1, &t, &counts, 1e-6, 0.05), 64);
    }
}
