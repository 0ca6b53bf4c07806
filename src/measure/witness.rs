//! The kernel's word on an operation's CPU time, checked against the
//! driver's. Every trial process runs under a task-clock counter the
//! launcher opened (`sandbox::witness`); the trials of an operation run
//! different numbers of calls (`spread_counts`), so a least-squares fit of
//! witnessed CPU time over call count separates what a trial costs per
//! call from what it costs once (loading, set-up, warm-ups). A library
//! that burns CPU on purpose outside its calls moves the intercept, not
//! the slope; one that makes the driver claim fewer cycles than its calls
//! took is caught by `judge`. Each kept trial's own process also bounds its
//! calls' cost from above with no fit at all (`ceilings`): an honest claim
//! stands on that bound once the calls outweigh the set-up.

use std::hash::{BuildHasher, Hasher};

use super::least_squares::least_squares;
use crate::records::measure::CpuFit;
use crate::records::process::ProcessRecord;
use crate::stats::Trial;

/// A claim is evidence only below this share of the witness's lower
/// bound (`STDERRS` standard errors under the fitted per-call CPU): on
/// honest runs of the demo on a loaded 2-core VM the witnessed per-call
/// CPU came out up to 2.7 times the claimed time, its lower bound up to
/// 1.46 times (docs: measurement.md, "The CPU witness"); halving it
/// leaves room for that, and a library must claim less than about half
/// its calls' true cost to be named.
pub(crate) const BELOW_SHARE: f64 = 0.5;
/// Standard errors of the fitted slope around it (the normal tail of
/// 0.135 %), for a fit whose degrees of freedom are not known.
pub(crate) const STDERRS: f64 = 3.0;

/// Standard errors of the fitted slope taken off before convicting a
/// claim, and added before upholding one, for a fit with `dof` degrees of
/// freedom: Student's t at the one-sided tail of three normal standard
/// errors (0.135 %). A fit over a few processes estimates its own noise
/// poorly: with one degree of freedom three standard errors are exceeded
/// by chance one time in ten, either way.
pub(crate) fn tail_stderrs(dof: u32) -> f64 {
    match dof {
        0 => f64::INFINITY,
        1 => 235.8,
        2 => 19.21,
        3 => 9.22,
        4 => 6.62,
        5 => 5.51,
        6 => 4.90,
        7 => 4.53,
        8 => 4.28,
        9 => 4.09,
        10..=14 => 3.96,
        15..=19 => 3.59,
        20..=29 => 3.42,
        30..=59 => 3.27,
        _ => 3.13,
    }
}
/// ... minus this many seconds per call (the driver's untimed per-call
/// work: writing each per-call sample).
pub(crate) const BELOW_SECONDS: f64 = 0.5e-6;
/// User-mode cycles leave kernel time out and follow the clock frequency,
/// so against them only a claim below this share of the witness counts.
pub(crate) const BELOW_SHARE_USER_CYCLES: f64 = 0.25;

/// Spreads the trials' call counts around `planned`: `trials` counts from
/// half to one and a half times it, evenly, in an order pqbench draws at
/// random, adding up to `trials × planned` so the budget and the number
/// of calls stay the plan's. Every count is at least 1.
pub(crate) fn spread_counts(planned: u64, trials: u32) -> Vec<u64> {
    let t = u64::from(trials);
    let mut counts: Vec<u64> = (0..t)
        .map(|k| {
            // Offsets symmetric around the middle trial, so they cancel.
            let f = if t > 1 {
                (k as f64 - (t - 1) as f64 / 2.0) / (t - 1) as f64
            } else {
                0.0
            };
            // Capped alike both ways, so every count is at least 1 and
            // the offsets still cancel.
            let cap = planned.saturating_sub(1) as f64;
            let d = (planned as f64 * f).round().clamp(-cap, cap) as i64;
            (planned as i64 + d) as u64
        })
        .collect();
    // Fisher–Yates with a seed the process cannot predict or choose.
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    for i in (1..counts.len()).rev() {
        h.write_usize(i);
        let j = (h.finish() % (i as u64 + 1)) as usize;
        counts.swap(i, j);
    }
    counts
}

/// The call count pqbench asked a process for (`--iters` on the command it
/// recorded), never what the process says it did.
fn asked_calls(p: &ProcessRecord) -> Option<u64> {
    let c = &p.command;
    let mode = c.windows(2).find(|w| w[0] == "--mode")?;
    if mode[1] != "trial" {
        return None;
    }
    c.windows(2)
        .find(|w| w[0] == "--iters")
        .and_then(|w| w[1].parse().ok())
}

/// How many times longer each further set of trials runs than the last
/// while the witness is undecided (a power of it, or the same length).
pub(crate) const SET_SCALE: u64 = 4;

/// The set of trials a process of `calls` calls belongs to, when the first
/// set's counts spread around `planned`: set lengths grow by powers of
/// `SET_SCALE`, and the spread (half to one and a half times) keeps their
/// ranges apart. Sets of one length share a group.
fn length_group(calls: u64, planned: Option<u64>) -> i64 {
    planned.filter(|p| *p > 0).map_or(0, |p| {
        // Set k spans 4^k times [0.5, 1.5] of the plan: k - 0.5 to
        // k + 0.29 in powers of four.
        ((calls as f64 / p as f64).log(SET_SCALE as f64) + 0.6).floor() as i64
    })
}

/// A trial process's witnessed CPU seconds from its first timed call on:
/// its task-clock less what the kernel had counted when the driver said it
/// starts timing (`CpuWitness::mark_ns`, read a moment later, so the
/// difference never exceeds the timed part and its end). A set-up that
/// varies between processes (a key generation that retries) then moves
/// neither the fit nor the ceilings. Without the mark: the whole
/// task-clock.
fn timed_cpu(p: &ProcessRecord) -> Option<f64> {
    let w = &p.sandbox.cpu_witness;
    let ns = w.task_clock_ns?;
    Some(ns.saturating_sub(w.mark_ns.unwrap_or(0)) as f64 * 1e-9)
}

/// Per kept trial, the most CPU one of its calls can have cost: its own
/// process's witnessed CPU over the calls pqbench asked of it (everything
/// the process did counts against the calls, so this bounds their true
/// cost from above whatever the set-up and the load did). Empty when a
/// kept trial has no witnessed process (its `trial` line is the one the
/// trial was read from).
fn ceilings(processes: &[ProcessRecord], kept: &[Trial]) -> Vec<f64> {
    // The library writes the trial lines, so two processes may print the
    // same one: a trial is bounded by the dearest process that printed it,
    // and a cheap twin cannot lend it a lower ceiling.
    let own = |t: &Trial| {
        processes
            .iter()
            .filter_map(|p| {
                let line = p.line("trial")?;
                let same =
                    line.u64("calls") == Some(t.calls) && line.f64("cycles") == Some(t.cycles);
                let calls = asked_calls(p).filter(|c| *c > 0 && same && p.ok())?;
                Some(timed_cpu(p)? / calls as f64)
            })
            .reduce(f64::max)
    };
    let each: Option<Vec<f64>> = kept.iter().map(own).collect();
    each.unwrap_or_default()
}

/// The fit over an operation's trial processes that ran to the end (kept
/// or repeated: CPU time is CPU time, whoever else had the CPU), with an
/// intercept per length of set (`length_group`, from the plan's
/// iterations), and the kept trials' ceilings; None when the operation ran
/// no trial process.
pub fn fit(processes: &[ProcessRecord], planned: Option<u64>, kept: &[Trial]) -> Option<CpuFit> {
    let trials: Vec<(&ProcessRecord, u64)> = processes
        .iter()
        .filter(|p| p.ok())
        .filter_map(|p| Some((p, asked_calls(p)?)))
        .collect();
    if trials.is_empty() {
        return None;
    }
    let points: Vec<(i64, f64, f64)> = trials
        .iter()
        .filter_map(|(p, calls)| {
            Some((length_group(*calls, planned), *calls as f64, timed_cpu(p)?))
        })
        .collect();
    let line = least_squares(&points);
    let missing = match points.first() {
        None => Some(
            trials
                .iter()
                .find_map(|(p, _)| p.sandbox.cpu_witness.missing.clone())
                .unwrap_or_else(|| "no trial process was witnessed".into()),
        ),
        // The campaign's choice (one trial), or a call so long that the
        // budget affords one a trial: said, not judged.
        Some((_, calls, _)) if line.is_none() && planned == Some(1) => Some(format!(
            "every witnessed trial ran {calls} call, all the budget affords; the witness fits trials of different lengths (a larger timing.budget-seconds)"
        )),
        Some((_, calls, _)) if line.is_none() => Some(format!(
            "every witnessed trial ran {calls} calls; the witness fits trials of different lengths (timing.trials of 3 or more)"
        )),
        Some(_) => None,
    };
    Some(CpuFit {
        processes: points.len() as u32,
        per_call_seconds: line.map(|l| l.slope),
        per_call_stderr_seconds: line.and_then(|l| l.stderr).map(|e| e.0),
        degrees_of_freedom: line.and_then(|l| l.stderr).map(|e| e.1),
        setup_seconds: line.map(|l| l.setup),
        per_call_ceilings_seconds: ceilings(processes, kept),
        missing,
    })
}

/// What the kernel's witness says of an operation's claimed per-call time.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Verdict {
    /// Every claim holds even against the witness's upper bound.
    Upheld,
    /// A claim below the witness's lower bound: why (implausible).
    Below(String),
    /// The claims fall between the bounds, or the fit cannot bound them:
    /// why. More trial processes narrow the bounds.
    Undecided(String),
    /// Nothing to judge against: no witness on this host, one call count
    /// only, or no counter rate (the fit's `missing` says which).
    Absent,
}

impl Verdict {
    /// Another set of trials could change it.
    pub(crate) fn open(&self) -> bool {
        matches!(self, Verdict::Below(_) | Verdict::Undecided(_))
    }
}

/// Judges the trials' claimed per-call time against the witness, one-sided:
/// time off the CPU makes a claim (wall time on the counter) longer than
/// the CPU time, never shorter, so a loaded honest run is never `Below`.
/// The claims are `Upheld` when each is at or over `share` of its own
/// trial's ceiling (a bound that needs no fit), or when every one is at or
/// over `share` of the fit's upper bound (`tail_stderrs` standard errors over
/// its slope); a claim under `share` of the lower bound is `Below`;
/// anything between, or a fit without a standard error, is `Undecided`: a
/// noisy fit never lets a claim pass unjudged.
pub(crate) fn judge(
    trials: &[Trial],
    counter: Option<&str>,
    counter_hz: Option<f64>,
    fit: &CpuFit,
) -> Verdict {
    let (Some(witnessed), Some(hz)) = (fit.per_call_seconds, counter_hz.filter(|h| *h > 0.0))
    else {
        return Verdict::Absent;
    };
    let user_only = crate::records::counter::of(counter).is_some_and(|c| c.user_only);
    let share = if user_only {
        BELOW_SHARE_USER_CYCLES
    } else {
        BELOW_SHARE
    };
    let claims: Vec<(usize, &Trial, f64)> = trials
        .iter()
        .enumerate()
        .filter(|(_, t)| t.calls > 0)
        .map(|(i, t)| (i, t, t.cycles / t.calls as f64 / hz))
        .collect();
    let Some(&(i, t, claimed)) = claims.iter().min_by(|a, b| a.2.total_cmp(&b.2)) else {
        return Verdict::Absent;
    };
    let claim = || {
        format!(
            "trial {} claims {claimed:.4e} s per call ({} cycles / {} calls at {hz:.4e} Hz), the kernel's task-clock witnessed {witnessed:.4e} s of CPU per call",
            i + 1,
            t.cycles,
            t.calls
        )
    };
    // A trial's ceiling bounds its calls' true cost with no statistics,
    // and its claim ran under the same load: a claim at `share` of it
    // stands however noisy the fit.
    let rates: Vec<f64> = trials
        .iter()
        .map(|t| t.cycles / t.calls.max(1) as f64 / hz)
        .collect();
    let ceilings = &fit.per_call_ceilings_seconds;
    let held = |(c, u): (&f64, &f64)| *c >= u * share - BELOW_SECONDS;
    if ceilings.len() == rates.len() && rates.iter().zip(ceilings).all(held) {
        return Verdict::Upheld;
    }
    let worst = rates
        .iter()
        .zip(ceilings)
        .enumerate()
        .map(|(k, (c, u))| (k, *c, *u))
        .min_by(|a, b| (a.1 / a.2).total_cmp(&(b.1 / b.2)))
        .map_or(String::new(), |(k, c, u)| {
            format!(
                "; trial {}'s process bounds its calls at {u:.4e} s each, set-up included, against {c:.4e} s claimed",
                k + 1
            )
        });
    let fitted = format!(
        "fit over {} processes, set-up {:.4} s{worst}",
        fit.processes,
        fit.setup_seconds.unwrap_or(0.0),
    );
    let Some(stderr) = fit.per_call_stderr_seconds else {
        return Verdict::Undecided(format!(
            "{} ({fitted}, no standard error: fewer than three processes)",
            claim()
        ));
    };
    // Student's t both ways: a fit over few processes that happens to
    // scatter little must not uphold a claim it could not convict.
    let t = fit.degrees_of_freedom.map_or(STDERRS, tail_stderrs);
    let (lower, upper) = (witnessed - t * stderr, witnessed + t * stderr);
    // An upper bound at or below zero says the calls cost no CPU at all:
    // the fit is broken (work moved out of the calls and settled at
    // random), not a bound a claim can stand on.
    if upper > 0.0 && claimed >= upper * share - BELOW_SECONDS {
        return Verdict::Upheld;
    }
    // Where the smallest trial's calls witness less CPU than the set-up's
    // size (its noise on a loaded machine: library loading, keygen, the
    // input pool), the slope convicts no one.
    let fewest = claims.iter().map(|c| c.1.calls).min().unwrap_or(1);
    let setup_bound = witnessed * (fewest as f64) < fit.setup_seconds.unwrap_or(0.0).abs();
    if claimed < lower * share - BELOW_SECONDS && !setup_bound {
        return Verdict::Below(format!(
            "{} (at least {lower:.4e} s; {fitted}): below {share} of it",
            claim()
        ));
    }
    let why = match setup_bound {
        true => format!("the set-up is as large as the fewest calls' CPU; {fitted}"),
        false => format!("between {lower:.4e} and {upper:.4e} s; {fitted}"),
    };
    Verdict::Undecided(format!(
        "{} ({why}): neither below {share} of its lower bound nor at {share} of its upper one",
        claim()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::process::{CpuWitness, Outcome, ProcessFacts};

    fn process(calls: u64, ns: Option<u64>) -> ProcessRecord {
        claiming(calls, 1.0, ns)
    }

    /// A trial process that printed `cycles` for its `calls`.
    fn claiming(calls: u64, cycles: f64, ns: Option<u64>) -> ProcessRecord {
        let lines = crate::measure::driver::parse_lines(&format!(
            "trial calls={calls} seconds=1 cycles={cycles}\ndone\n"
        ));
        ProcessRecord {
            command: ["--mode", "trial", "--warmup", "2", "--iters"]
                .iter()
                .map(|s| s.to_string())
                .chain([calls.to_string()])
                .collect(),
            cpu: None,
            outcome: Outcome::Exited(0),
            wall_seconds: 1.0,
            lines,
            stderr_tail: String::new(),
            sandbox: ProcessFacts {
                cpu_witness: match ns {
                    Some(n) => CpuWitness {
                        task_clock_ns: Some(n),
                        mark_ns: None,
                        missing: None,
                    },
                    None => CpuWitness::missing("perf_event_open task-clock: EACCES"),
                },
                ..Default::default()
            },
        }
    }

    fn trial(calls: u64, cycles: f64) -> Trial {
        Trial {
            calls,
            seconds: 0.0,
            cycles,
            samples: Vec::new(),
        }
    }

    #[test]
    fn counts_spread_around_the_plan_and_keep_its_total() {
        for (planned, trials) in [(100, 5), (1000, 7), (3, 5), (1, 5), (10, 1), (2, 2)] {
            let c = spread_counts(planned, trials);
            assert_eq!(c.len(), trials as usize);
            assert!(c.iter().all(|&n| n >= 1));
            assert_eq!(c.iter().sum::<u64>(), planned * u64::from(trials));
            assert!(c
                .iter()
                .all(|&n| 2 * n + 1 >= planned && 2 * n <= 3 * planned + 1));
        }
        let mut c = spread_counts(100, 5);
        c.sort();
        assert_eq!(c, vec![50, 75, 100, 125, 150]);
    }

    #[test]
    fn trials_of_one_length_name_why_they_are_not_judged() {
        let procs: Vec<ProcessRecord> = (0..3).map(|_| process(1, Some(2_000_000_000))).collect();
        // One call a trial because the budget affords no more: the fix is
        // the budget, not more trials.
        let f = fit(&procs, Some(1), &[]).unwrap();
        let why = f.missing.unwrap();
        assert!(why.contains("ran 1 call, all the budget affords"), "{why}");
        let procs: Vec<ProcessRecord> = (0..3).map(|_| process(10, Some(2_000_000))).collect();
        let why = fit(&procs, Some(10), &[]).unwrap().missing.unwrap();
        assert!(why.contains("timing.trials of 3 or more"), "{why}");
    }

    #[test]
    fn set_up_burnt_on_purpose_lands_in_the_intercept() {
        // 2 ms per call; every process burns a second in its set-up (as a
        // library that sees itself measured would): the slope stays.
        let procs: Vec<ProcessRecord> = [50u64, 75, 100, 125, 150]
            .iter()
            .map(|&n| process(n, Some(((1.3 + n as f64 * 2e-3) * 1e9) as u64)))
            .collect();
        let f = fit(&procs, None, &[]).unwrap();
        assert_eq!(f.processes, 5);
        assert!((f.per_call_seconds.unwrap() - 2e-3).abs() < 1e-9);
        assert!((f.setup_seconds.unwrap() - 1.3).abs() < 1e-6);
        assert!(f.per_call_stderr_seconds.unwrap() < 1e-9);
    }

    /// The NOISY liar's shape: 5 µs claimed per call, about fifty times
    /// that moved to the process's exit and settled at a random share.
    fn liar_set(cpu_ms: &[(u64, f64)]) -> Vec<ProcessRecord> {
        cpu_ms
            .iter()
            .map(|&(n, ms)| claiming(n, n as f64 * 5e3, Some((ms * 1e6) as u64)))
            .collect()
    }

    #[test]
    fn a_fit_that_scatters_little_by_chance_upholds_nothing_it_could_not_convict() {
        // One set whose dearer trials settled less: the slope comes out
        // -168 µs ± 54 µs over 3 degrees of freedom. Three standard errors
        // over it (-7 µs) would have upheld any claim; Student's t (9.22)
        // puts it at 327 µs, and a negative bound upholds nothing anyway.
        let procs = liar_set(&[
            (20, 7.842),
            (30, 9.727_05),
            (40, 6.325),
            (50, 2.908_25),
            (60, 2.872_5),
        ]);
        let claims: Vec<Trial> = [20, 30, 40, 50, 60]
            .map(|n| trial(n, n as f64 * 5e3))
            .to_vec();
        let f = fit(&procs, Some(40), &claims).unwrap();
        assert_eq!(f.degrees_of_freedom, Some(3));
        let (b, se) = (
            f.per_call_seconds.unwrap(),
            f.per_call_stderr_seconds.unwrap(),
        );
        assert!(
            (b + 167.6e-6).abs() < 0.1e-6 && (se - 53.6e-6).abs() < 0.1e-6,
            "{f:?}"
        );
        undecided(judge(&claims, Some("tsc"), Some(1e9), &f));
    }

    #[test]
    fn each_set_of_trials_brings_its_own_noise_to_the_slope() {
        // Three sets of the same liar, four and sixteen times longer: the
        // longest set's scatter is the slope's noise. Pooled with the short
        // sets' small residuals over 11 degrees of freedom it came out
        // 51 µs, and the upper bound (-149 + 3 × 51 µs) upheld the claim;
        // taken set by set it is 60 µs over 3 effective degrees of freedom.
        let procs = liar_set(&[
            (20, 0.7468),
            (30, 6.110_85),
            (40, 5.247),
            (50, 6.411_75),
            (60, 15.5733),
            (80, 21.5092),
            (120, 14.5062),
            (160, 52.936),
            (200, 82.095),
            (240, 13.254),
            (320, 106.4992),
            (480, 114.12),
            (640, 14.96),
            (800, 44.964),
            (960, 6.9168),
        ]);
        let kept: Vec<Trial> = [320, 480, 640, 800, 960]
            .map(|n| trial(n, n as f64 * 5e3))
            .to_vec();
        let f = fit(&procs, Some(40), &kept).unwrap();
        assert_eq!(f.degrees_of_freedom, Some(3), "{f:?}");
        let (b, se) = (
            f.per_call_seconds.unwrap(),
            f.per_call_stderr_seconds.unwrap(),
        );
        assert!(
            (b + 148.7e-6).abs() < 0.1e-6 && (se - 60.4e-6).abs() < 0.1e-6,
            "{f:?}"
        );
        undecided(judge(&kept, Some("tsc"), Some(1e9), &f));
        // One set alone is the ordinary fit, to the last bit (records
        // made before keep their figures): n - 2 degrees of freedom.
        let first = fit(&procs[..5], Some(40), &[]).unwrap();
        assert_eq!(first.degrees_of_freedom, Some(3));
        let xy: Vec<(f64, f64)> = procs[..5]
            .iter()
            .map(|p| (asked_calls(p).unwrap() as f64, timed_cpu(p).unwrap()))
            .collect();
        let (mx, my) = (
            xy.iter().map(|p| p.0).sum::<f64>() / 5.0,
            xy.iter().map(|p| p.1).sum::<f64>() / 5.0,
        );
        let sxx: f64 = xy.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
        let slope = xy.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>() / sxx;
        let rss: f64 = xy
            .iter()
            .map(|p| ((p.1 - my) - slope * (p.0 - mx)).powi(2))
            .sum();
        assert_eq!(first.per_call_seconds, Some(slope));
        assert_eq!(
            first.per_call_stderr_seconds,
            Some((rss / 3.0 / sxx).sqrt())
        );
    }

    #[test]
    fn a_longer_set_under_another_load_moves_its_intercept_not_the_slope() {
        // 2 µs per call; the first set (around 100 calls) costs 2 ms of
        // set-up, the second, four times longer, ran while the host was
        // busier: 4 ms. One line through both would take the extra set-up
        // for calls (2 ms over 300 calls: 6.7 µs more per call).
        let set = |scale: u64, setup: f64| {
            [50u64, 75, 100, 125, 150].map(|n| {
                let calls = n * scale;
                process(calls, Some(((setup + calls as f64 * 2e-6) * 1e9) as u64))
            })
        };
        let procs: Vec<ProcessRecord> = set(1, 2e-3).into_iter().chain(set(4, 4e-3)).collect();
        let f = fit(&procs, Some(100), &[]).unwrap();
        assert!((f.per_call_seconds.unwrap() - 2e-6).abs() < 1e-12, "{f:?}");
        assert!((f.setup_seconds.unwrap() - 4e-3).abs() < 1e-9, "{f:?}");
        let naive = fit(&procs, None, &[]).unwrap();
        assert!(naive.per_call_seconds.unwrap() > 2.5e-6, "{naive:?}");
        // Lengths a power of four apart fall in their own groups.
        assert_eq!(
            [50, 150, 200, 600, 800, 2400].map(|c| length_group(c, Some(100))),
            [0, 0, 1, 1, 2, 2]
        );
    }

    #[test]
    fn no_witness_is_recorded_with_its_reason_and_checks_nothing() {
        let procs = vec![process(50, None), process(150, None)];
        let f = fit(&procs, None, &[]).unwrap();
        assert_eq!(f.processes, 0);
        assert_eq!(f.per_call_seconds, None);
        assert!(f.missing.as_deref().unwrap().contains("EACCES"));
        let t = [trial(50, 1.0)];
        assert_eq!(judge(&t, Some("tsc"), Some(1e9), &f), Verdict::Absent);
        // One call count only: no slope, and the record says why.
        let f = fit(&[process(100, Some(1)), process(100, Some(2))], None, &[]).unwrap();
        assert_eq!((f.processes, f.per_call_seconds), (2, None));
        assert!(f.missing.unwrap().contains("ran 100 calls"));
    }

    fn undecided(v: Verdict) -> String {
        match v {
            Verdict::Undecided(why) => why,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_claim_below_the_witness_is_named_and_a_slower_one_never() {
        let f = CpuFit {
            processes: 5,
            per_call_seconds: Some(1.1e-3),
            per_call_stderr_seconds: Some(0.1e-3 / STDERRS),
            degrees_of_freedom: None,
            setup_seconds: Some(0.02),
            per_call_ceilings_seconds: Vec::new(),
            missing: None,
        };
        let hz = Some(1e9);
        // Honest: 1 ms per call, or slower (preempted, loaded).
        let honest = [trial(100, 1e8), trial(50, 0.5e8 * 3.0)];
        assert_eq!(judge(&honest, Some("tsc"), hz, &f), Verdict::Upheld);
        // Scaled down by a third: named, with both figures.
        let forged = [trial(100, 1e8), trial(300, 1e8)];
        let Verdict::Below(why) = judge(&forged, Some("tsc"), hz, &f) else {
            panic!()
        };
        assert!(
            why.starts_with("trial 2 claims 3.3333e-4 s per call"),
            "{why}"
        );
        assert!(why.contains("witnessed 1.1000e-3 s"), "{why}");
        assert!(why.contains("at least 1.0000e-3 s"), "{why}");
        // The same standard error from a fit with two degrees of freedom
        // is its own poor estimate: Student's t takes off 19 of them, and
        // adds as many.
        let few = CpuFit {
            degrees_of_freedom: Some(2),
            ..f.clone()
        };
        let why = undecided(judge(&forged, Some("tsc"), hz, &few));
        assert!(why.contains("between 4.5967e-4 and 1.7403e-3 s"), "{why}");
        // User-mode cycles get the wider margin.
        assert_eq!(
            judge(&forged, Some("perf-user-cycles"), hz, &f),
            Verdict::Upheld
        );
    }

    #[test]
    fn a_noisy_fit_never_lets_a_low_claim_pass() {
        let f = CpuFit {
            processes: 5,
            per_call_seconds: Some(1.1e-3),
            per_call_stderr_seconds: Some(0.1e-3 / STDERRS),
            degrees_of_freedom: None,
            setup_seconds: Some(0.02),
            per_call_ceilings_seconds: Vec::new(),
            missing: None,
        };
        let hz = Some(1e9);
        let forged = [trial(100, 1e8), trial(300, 1e8)];
        // Between half the lower bound (0.5 ms) and half the upper one
        // (0.6 ms): neither convicted nor passed.
        let near = [trial(100, 0.55e8)];
        let why = undecided(judge(&near, Some("tsc"), hz, &f));
        assert!(why.contains("between 1.0000e-3 and 1.2000e-3 s"), "{why}");
        // A standard error as large as the slope: a fiftieth still stands
        // undecided, never upheld.
        let noisy = CpuFit {
            per_call_stderr_seconds: Some(1.1e-3),
            ..f.clone()
        };
        undecided(judge(&forged, Some("tsc"), hz, &noisy));
        // Without a standard error (two points) nothing is concluded.
        let two = CpuFit {
            per_call_stderr_seconds: None,
            ..f.clone()
        };
        let why = undecided(judge(&forged, Some("tsc"), hz, &two));
        assert!(why.contains("no standard error"), "{why}");
        // Set-up larger than the fewest calls' CPU: its noise could make
        // the slope, so no one is convicted (an honest loaded verify), and
        // a low claim is not passed either.
        let setup = CpuFit {
            setup_seconds: Some(0.2),
            ..f.clone()
        };
        let why = undecided(judge(&forged, Some("tsc"), hz, &setup));
        assert!(why.contains("set-up is as large"), "{why}");
        let honest = [trial(100, 1e8)];
        assert_eq!(judge(&honest, Some("tsc"), hz, &setup), Verdict::Upheld);
    }

    #[test]
    fn each_kept_trial_bounds_its_calls_and_an_honest_claim_stands_on_it() {
        // 10 µs per call (10,000 cycles at 1 GHz), set-up 90 or 20 ms: a
        // fit over two processes has no standard error, yet each process's
        // CPU over its calls bounds the calls' cost.
        let hz = Some(1e9);
        let kept = [trial(20_000, 2.0e8), trial(60_000, 6.0e8)];
        let witnessed = |claims: &[Trial]| {
            [(20_000u64, 90e-3), (60_000, 20e-3)]
                .iter()
                .zip(claims)
                .map(|(&(n, setup), t)| {
                    let ns = ((setup + n as f64 * 1e-5) * 1e9) as u64;
                    claiming(n, t.cycles, Some(ns))
                })
                .collect::<Vec<_>>()
        };
        let f = fit(&witnessed(&kept), None, &kept).unwrap();
        assert_eq!(f.per_call_stderr_seconds, None);
        // The shorter trial's 90 ms of set-up weigh most: 14.5 µs per call.
        let c = &f.per_call_ceilings_seconds;
        assert!(
            (c[0] - 1.45e-5).abs() < 1e-11 && (c[1] - 1.0333e-5).abs() < 1e-9,
            "{f:?}"
        );
        assert_eq!(judge(&kept, Some("tsc"), hz, &f), Verdict::Upheld);
        // The same processes claiming a third of their calls' cost: a
        // ceiling never falls below the true cost, so nothing upholds them.
        let forged = kept.clone().map(|t| trial(t.calls, t.cycles / 3.0));
        let f = fit(&witnessed(&forged), None, &forged).unwrap();
        let why = undecided(judge(&forged, Some("tsc"), hz, &f));
        assert!(
            why.contains("trial 1's process bounds its calls at 1.4500e-5 s each"),
            "{why}"
        );
        // A cheap twin printing the first trial's very line (the library
        // writes it) lends it no lower ceiling.
        let mut twins = witnessed(&forged);
        twins.push(claiming(20_000, forged[0].cycles, Some(1_000_000)));
        let t = fit(&twins, None, &forged).unwrap();
        assert_eq!(t.per_call_ceilings_seconds, f.per_call_ceilings_seconds);
        // A kept trial no witnessed process printed: no ceilings.
        let stray = [trial(20_000, 2.0e8), trial(30_000, 3.0e8)];
        let f = fit(&witnessed(&kept), None, &stray).unwrap();
        assert!(f.per_call_ceilings_seconds.is_empty());
    }

    #[test]
    fn a_trial_slowed_by_load_is_judged_against_its_own_process() {
        // Trial 2 ran beside a busy neighbour: its calls took 2.5 times
        // longer, on the clock and on the CPU alike. Against the other
        // trial's claim its ceiling would be far too high; against its own
        // it holds.
        let f = CpuFit {
            processes: 2,
            per_call_seconds: Some(2e-5),
            per_call_stderr_seconds: None,
            degrees_of_freedom: None,
            setup_seconds: Some(0.0),
            per_call_ceilings_seconds: vec![1.1e-5, 2.7e-5],
            missing: None,
        };
        let t = [trial(1000, 1e7), trial(1000, 2.5e7)];
        assert_eq!(judge(&t, Some("tsc"), Some(1e9), &f), Verdict::Upheld);
        let pooled = CpuFit {
            per_call_ceilings_seconds: vec![2.7e-5, 2.7e-5],
            ..f
        };
        undecided(judge(&t, Some("tsc"), Some(1e9), &pooled));
    }
}
