//! Distinct, unpredictable inputs for the timed calls, and the check of
//! what those calls returned (the driver's side: `driver_inputs.c`).
//!
//! A deterministic operation timed on one repeated input can remember its
//! last answer, and an operation whose timed outputs nobody reads can stop
//! working once the KAT runner is done with it. So every calibration and
//! trial process of keygen, enc, dec, sign, verify, hash_<n> and the
//! key-exchange operations gets a fresh random seed on its input
//! descriptor, read by the driver only once the library is loaded. For
//! dec, sign, verify and hash_<n> the driver builds a pool of distinct
//! inputs from it in the untimed setup and walks it; before every call of
//! keygen, enc and sign, and every protocol run of a key exchange, it
//! re-seeds the library's randomness from the seed and the call's number,
//! so no two calls draw the same randomness and any one call can be made
//! again. The driver
//! reports a hash of every timed call's input and output; once the trial
//! process has ended (so nothing in it could know them) pqbench picks a
//! few timed calls at random and has a separate driver process of the same
//! library recompute exactly those, untimed, from the same seed, and check
//! each output against its counterpart (dec for enc, verify for sign, a
//! round trip for keygen, both sides' secrets for a key exchange); one
//! trial per operation, drawn at random, is remade in full. A difference
//! makes the operation `inconsistent`.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};

use super::driver::{self, ProcessRecord};
use crate::context::Cx;
use crate::records::measure::{FullReplay, OutputCheck};

/// A calibration process's pool: at most this many inputs, and no longer
/// to build than the calibration's own minimum (50 ms of calls).
pub(crate) const CALIBRATION_POOL: u64 = 64;
pub(crate) const CALIBRATION_POOL_SECONDS: f64 = 0.05;
/// A trial's pool is built in at most this share of its planned timed
/// seconds (the driver also stops at 64 MiB of inputs and at one input
/// per call): building an input costs about a call (enc for dec) or more
/// (sign for verify), so the pool is what the trial can afford untimed.
pub(crate) const POOL_SHARE: f64 = 0.5;
/// Timed calls of each kept trial recomputed by a separate process.
pub(crate) const CHECKED_CALLS: usize = 3;
/// Timed calls on inputs seen before whose median is below this share of
/// the first pass's are a cache, not the operation. A remembered answer
/// costs orders of magnitude less than the operation; honest calls vary
/// far less between passes, but not by a factor of two only: a library
/// whose calls write to a pipe was seen 8.5 times faster once the reader
/// caught up.
pub(crate) const DROP_RATIO: f64 = 0.05;
/// Samples each pass needs before the two are compared.
pub(crate) const MIN_PASS_SAMPLES: usize = 5;

/// Whether `op` walks a pool of distinct inputs.
pub(crate) fn pooled(op: &str) -> bool {
    matches!(op, "sign" | "verify" | "dec") || op.starts_with("hash_")
}

/// Whether `op`'s timed outputs are recomputed: those of the pooled
/// operations, and of keygen, enc and the key-exchange operations, whose
/// input is the library's randomness (re-seeded before every call of these
/// and sign, or every protocol run of a KEX, from the trial's seed and the
/// call's number, so a replay reproduces it).
pub fn checked(op: &str) -> bool {
    pooled(op) || matches!(op, "keygen" | "enc") || crate::kinds::is_kex_operation(op)
}

/// Whether the library's randomness is re-seeded before each of `op`'s
/// calls (`inputs_reseeded` in `driver_inputs.c`): its outputs should
/// repeat from the same seed and call number.
fn reseeded(op: &str) -> bool {
    matches!(op, "keygen" | "enc" | "sign") || crate::kinds::is_kex_operation(op)
}

/// `n` bytes from the operating system's random source.
fn os_random(n: usize) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut b = vec![0u8; n];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .context("reading /dev/urandom")?;
    Ok(b)
}

/// 32 bytes from the operating system, as 64 hex digits.
pub(crate) fn fresh_seed() -> Result<String> {
    Ok(hex::encode(os_random(32)?))
}

/// How the driver builds one process's pool.
#[derive(Debug, Clone)]
pub(crate) struct PoolPlan {
    pub op: String,
    pub pool_max: u64,
    pub pool_seconds: f64,
    /// Verify's pool, built once and fed to every process
    /// (`measure::pool`) instead of built by each.
    pub shared: Option<super::pool::SharedPool>,
    /// The key pair every process is given instead of making its own
    /// (`measure::keys`).
    pub keys: Option<std::sync::Arc<super::keys::SharedKeys>>,
}

impl PoolPlan {
    pub(crate) fn calibration(op: &str) -> Option<PoolPlan> {
        checked(op).then(|| PoolPlan {
            op: op.to_string(),
            shared: None,
            keys: None,
            pool_max: CALIBRATION_POOL,
            pool_seconds: if pooled(op) {
                CALIBRATION_POOL_SECONDS
            } else {
                0.0
            },
        })
    }

    /// For a trial of `iterations` calls after `warmup`, each taking about
    /// `seconds_per_call`.
    pub(crate) fn trial(
        op: &str,
        iterations: u64,
        warmup: u32,
        seconds_per_call: f64,
    ) -> Option<PoolPlan> {
        checked(op).then(|| PoolPlan {
            op: op.to_string(),
            shared: None,
            keys: None,
            pool_max: iterations + u64::from(warmup),
            // keygen and enc build no pool: no untimed time for one.
            pool_seconds: if pooled(op) {
                POOL_SHARE * iterations as f64 * seconds_per_call
            } else {
                0.0
            },
        })
    }

    /// The driver's settings line for `seed` (a shared pool's size is
    /// exact).
    pub(crate) fn settings(&self, seed: &str) -> String {
        match &self.shared {
            Some(p) => format!("seed={seed} pool={}", p.entries),
            None => format!(
                "seed={seed} pool_max={} pool_seconds={:.6}",
                self.pool_max, self.pool_seconds
            ),
        }
    }

    /// What a process of this plan is fed: `settings`, and the shared
    /// pool's bytes.
    pub(crate) fn fed<'a>(&'a self, settings: &'a str) -> driver::Fed<'a> {
        driver::Fed {
            settings: Some(settings),
            payload: self.shared.as_ref().map(|p| p.bytes.as_slice()),
            keys: self
                .keys
                .as_deref()
                .map(|k| (k.pk.as_slice(), k.sk.as_slice())),
        }
    }

    /// The pool's building time spread over the timed calls (untimed CPU a
    /// trial process may use beyond its calls): none when it is fed.
    pub(crate) fn untimed_per_call(&self, iterations: u64) -> f64 {
        match self.shared {
            Some(_) => 0.0,
            None => self.pool_seconds / iterations.max(1) as f64,
        }
    }
}

/// How a process walked its pool (its `inputs` line).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Walk {
    pub seed: String,
    /// 0: no pool (keygen, enc: each call's input is its randomness).
    pub pool: u64,
    pub warmup: u64,
    pub wraps: u64,
}

pub(crate) fn walk(proc: &ProcessRecord) -> Option<Walk> {
    let l = proc.line("inputs")?;
    Some(Walk {
        seed: l.get("seed")?.to_string(),
        pool: l.u64("pool")?,
        warmup: l.u64("warm")?,
        wraps: l.u64("wraps").unwrap_or(0),
    })
}

/// Why a trial's timed calls got cheaper once their inputs repeated, or
/// None. Timed call i is call `warmup + i` and uses input (that mod pool):
/// calls from `pool` on see inputs seen before.
pub(crate) fn cache_drop(samples: &[u64], w: &Walk) -> Option<String> {
    if w.pool == 0 {
        return None;
    }
    let (mut first, mut later): (Vec<u64>, Vec<u64>) = (Vec::new(), Vec::new());
    for (i, &s) in samples.iter().enumerate() {
        if w.warmup + (i as u64) < w.pool {
            first.push(s);
        } else {
            later.push(s);
        }
    }
    if first.len() < MIN_PASS_SAMPLES || later.len() < MIN_PASS_SAMPLES {
        return None;
    }
    let (a, b) = (median(&mut first), median(&mut later));
    (b < DROP_RATIO * a).then(|| {
        format!(
            "its timed calls on inputs seen before took a median {b} cycles, on new inputs {a} (a pool of {})",
            w.pool
        )
    })
}

fn median(v: &mut [u64]) -> f64 {
    v.sort_unstable();
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2] as f64
    } else {
        (v[n / 2 - 1] as f64 + v[n / 2] as f64) / 2.0
    }
}

/// The first inconsistent call of `checks` or of `full` replays, in
/// words. A full replay's hashes are no evidence when the picked checks
/// show outputs that do not repeat from the driver's randomness (the
/// library draws its own): those are judged by their counterparts only.
pub(crate) fn verdict(checks: &[OutputCheck], full: &[FullReplay]) -> Option<String> {
    let repeatable = checks.iter().all(|c| c.repeatable != Some(false));
    checks.iter().find_map(OutputCheck::problem).or_else(|| {
        full.iter()
            .filter(|f| repeatable || f.differing.is_none())
            .find_map(FullReplay::problem)
    })
}

/// One kept trial process and what it reported beside its record.
pub(crate) struct Timed<'a> {
    pub proc: &'a ProcessRecord,
    pub seed_sent: &'a str,
    pub samples: &'a [u64],
    pub outputs: &'a [u64],
    /// The kept trial, from 1.
    pub trial: u32,
    pub iterations: u64,
    /// Whether every timed call of this trial is remade, not a few.
    pub full: bool,
}

/// What checking one trial found.
#[derive(Default)]
pub(crate) struct TrialCheck {
    pub checks: Vec<OutputCheck>,
    pub full: Option<FullReplay>,
    /// The replay processes (to keep with the operation's processes).
    pub replays: Vec<ProcessRecord>,
    /// Why the trial's figures cannot stand.
    pub problem: Option<String>,
}

/// Checks one kept trial of `plan.op`: it walked the pool of the seed it
/// was sent, did not get cheaper on repeated inputs, and a few of its
/// timed calls, picked now, recompute to the same output in a separate
/// process.
pub(crate) fn check_trial(
    cx: &Cx,
    lib: &Path,
    plan: &PoolPlan,
    t: &Timed,
    cpu: Option<usize>,
    timeout: Duration,
) -> Result<TrialCheck> {
    let mut out = TrialCheck::default();
    let Some(w) = walk(t.proc) else {
        out.problem = Some("the driver reported no pool of inputs".into());
        return Ok(out);
    };
    if w.seed != t.seed_sent {
        out.problem = Some(format!(
            "the driver walked inputs of seed {}, pqbench sent {}",
            w.seed, t.seed_sent
        ));
        return Ok(out);
    }
    if let Some(why) = cache_drop(t.samples, &w) {
        out.problem = Some(why);
        return Ok(out);
    }
    if !checked(&plan.op) {
        return Ok(out);
    }
    if t.outputs.len() as u64 != t.iterations {
        out.problem = Some(format!(
            "the driver reported {} output hashes for {} timed calls",
            t.outputs.len(),
            t.iterations
        ));
        return Ok(out);
    }
    let calls = pick_calls(t.iterations)?;
    let reseeded = reseeded(&plan.op);
    let replayer = Replayer {
        cx,
        lib,
        plan,
        w: &w,
        cpu,
        timeout,
    };
    let once = replayer.picked(&calls, false)?;
    let mut replayed = read_checks(&once, &calls, t, &w, reseeded);
    let mut failure = once.failure().map(|(_, detail)| detail);
    out.replays.push(once);
    if reseeded && replayed.iter().any(|c| c.check.differs()) {
        // Only a call made twice in one process tells an output that does
        // not follow the driver's randomness from a lie: a second process
        // makes each picked call twice.
        let twice = replayer.picked(&calls, true)?;
        replayed = read_checks(&twice, &calls, t, &w, reseeded);
        failure = twice.failure().map(|(_, detail)| detail);
        out.replays.push(twice);
    }
    if t.full {
        out.full = Some(if calls.len() as u64 == t.iterations {
            // The picked calls are every timed call: their replay was a
            // full one.
            let made: Option<Vec<u64>> = replayed.iter().map(|c| c.hash).collect();
            full_replay(
                t.trial,
                t.outputs,
                made.filter(|_| failure.is_none()).as_deref(),
            )
        } else {
            let (all, made) = replayer.all(t.iterations)?;
            let made = all.failure().is_none().then_some(made.as_slice());
            out.replays.push(all);
            full_replay(t.trial, t.outputs, made)
        });
    }
    out.checks = replayed.into_iter().map(|c| c.check).collect();
    let full: Vec<FullReplay> = out.full.iter().cloned().collect();
    out.problem = verdict(&out.checks, &full).map(|why| match failure {
        Some(detail) => format!("{why} ({detail})"),
        None => why,
    });
    Ok(out)
}

/// A picked call's check and the output hash its replay made.
struct Replayed {
    check: OutputCheck,
    hash: Option<u64>,
}

/// The checks of `calls` from a replay process's lines. A re-seeded call
/// made once whose output equals the timed call's repeated, across two
/// processes; made twice, the replay says whether it repeated.
fn read_checks(
    replayed: &ProcessRecord,
    calls: &[u64],
    t: &Timed,
    w: &Walk,
    reseeded: bool,
) -> Vec<Replayed> {
    let timed = |call: u64| t.outputs[call as usize];
    calls
        .iter()
        .map(|&call| {
            let line = replayed
                .lines
                .iter()
                .find(|l| l.tag == "replay" && l.u64("call") == Some(call));
            let hash = line.and_then(|l| l.u64("hash"));
            let repeatable = match line.and_then(|l| l.get("repeat")) {
                Some(r) => Some(r == "1"),
                None => (reseeded && hash == Some(timed(call))).then_some(true),
            };
            let check = OutputCheck {
                trial: t.trial,
                seed: w.seed.clone(),
                pool: w.pool,
                warmup: w.warmup,
                wraps: w.wraps,
                call,
                timed_hash: format!("{:016x}", timed(call)),
                replay_hash: hash.map(|h| format!("{h:016x}")),
                agrees: line.and_then(|l| match l.get("agrees") {
                    Some("1") => Some(true),
                    Some("0") => Some(false),
                    _ => None,
                }),
                repeatable,
            };
            Replayed { check, hash }
        })
        .collect()
}

/// What remaking every timed call of `trial` gave (None: the replay
/// failed), against the output hashes the trial reported.
fn full_replay(trial: u32, outputs: &[u64], made: Option<&[u64]>) -> FullReplay {
    let (differing, first) = match made {
        Some(h) if h.len() == outputs.len() => {
            let diff: Vec<u64> = (0..h.len() as u64)
                .filter(|&i| h[i as usize] != outputs[i as usize])
                .collect();
            (Some(diff.len() as u64), diff.first().copied())
        }
        _ => (None, None),
    };
    FullReplay {
        trial,
        calls: outputs.len() as u64,
        differing,
        first_differing: first,
    }
}

/// The kept trial, from 1 of `trials`, whose every timed call is remade,
/// drawn at random: a library cannot tell which of its trials it is.
pub(crate) fn full_replay_trial(trials: u32) -> Result<u32> {
    let b = os_random(4)?;
    Ok(u32::from_le_bytes(b.try_into().expect("4 bytes")) % trials.max(1) + 1)
}

/// `CHECKED_CALLS` distinct timed calls drawn at random (the last one
/// always among them: a library that stops working after N calls shows it
/// there), in ascending order.
fn pick_calls(iterations: u64) -> Result<Vec<u64>> {
    let n = iterations.max(1);
    let want = CHECKED_CALLS.min(n as usize);
    let mut calls: Vec<u64> = vec![n - 1];
    while calls.len() < want {
        let b = os_random(8)?;
        let c = u64::from_le_bytes(b.try_into().expect("8 bytes")) % n;
        if !calls.contains(&c) {
            calls.push(c);
        }
    }
    calls.sort_unstable();
    Ok(calls)
}

/// Separate driver processes of the same library remaking, untimed, calls
/// of a trial that walked `w`.
struct Replayer<'a> {
    cx: &'a Cx<'a>,
    lib: &'a Path,
    plan: &'a PoolPlan,
    w: &'a Walk,
    cpu: Option<usize>,
    timeout: Duration,
}

impl Replayer<'_> {
    /// A process making `calls`; with `repeat`, each call of a re-seeded
    /// operation twice.
    fn picked(&self, calls: &[u64], repeat: bool) -> Result<ProcessRecord> {
        let list: Vec<String> = calls.iter().map(u64::to_string).collect();
        let settings = format!(
            "seed={} pool={} calls={} repeat={}",
            self.w.seed,
            self.w.pool,
            list.join(","),
            u8::from(repeat)
        );
        Ok(self.run(&settings, &[])?.proc)
    }

    /// A process making every one of a trial's `iterations` timed calls,
    /// and the output hashes it reported.
    fn all(&self, iterations: u64) -> Result<(ProcessRecord, Vec<u64>)> {
        let settings = format!("seed={} pool={} calls=all", self.w.seed, self.w.pool);
        let ran = self.run(&settings, &["--iters", &iterations.to_string()])?;
        Ok((ran.proc, ran.outputs))
    }

    fn run(&self, settings: &str, more: &[&str]) -> Result<driver::Ran> {
        let warmup = self.w.warmup.to_string();
        let args: Vec<String> = [
            "--op",
            &self.plan.op,
            "--mode",
            "replay",
            "--warmup",
            &warmup,
        ]
        .iter()
        .chain(more)
        .map(|s| s.to_string())
        .collect();
        let fed = self.plan.fed(settings);
        driver::run_with_files(self.cx, self.lib, &args, fed, self.cpu, self.timeout, &[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(pool: u64, warmup: u64) -> Walk {
        Walk {
            seed: "00".into(),
            pool,
            warmup,
            wraps: 1,
        }
    }

    #[test]
    fn a_second_pass_much_cheaper_than_the_first_is_a_cache() {
        let mut samples = vec![1000u64; 8];
        samples.extend([10u64; 10]);
        let why = cache_drop(&samples, &walk(10, 2)).expect("flagged");
        assert!(why.contains("median 10 cycles"), "{why}");
        // A tenfold drop is not (calls blocked on a pipe early on).
        let mut samples = vec![1000u64; 8];
        samples.extend([100u64; 10]);
        assert_eq!(cache_drop(&samples, &walk(10, 2)), None);
        // Noise on both passes is not.
        let samples: Vec<u64> = (0..20).map(|i| 1000 + (i % 3) * 200).collect();
        assert_eq!(cache_drop(&samples, &walk(10, 2)), None);
        // Too few repeated calls to compare.
        assert_eq!(
            cache_drop(&[1000, 1000, 1000, 1000, 1000, 1], &walk(5, 0)),
            None
        );
    }

    #[test]
    fn picked_calls_are_distinct_sorted_and_include_the_last() {
        for n in [1, 2, 3, 10, 1000] {
            let c = pick_calls(n).unwrap();
            assert_eq!(c.len(), CHECKED_CALLS.min(n as usize));
            assert_eq!(*c.last().unwrap(), n - 1);
            assert!(c.windows(2).all(|w| w[0] < w[1]));
        }
    }

    #[test]
    fn a_check_names_the_call_that_differs() {
        let ok = OutputCheck {
            trial: 2,
            seed: "ab".into(),
            pool: 10,
            warmup: 2,
            wraps: 0,
            call: 7,
            timed_hash: "00000000000000aa".into(),
            replay_hash: Some("00000000000000aa".into()),
            agrees: Some(true),
            repeatable: None,
        };
        assert_eq!(verdict(std::slice::from_ref(&ok), &[]), None);
        let bad = OutputCheck {
            replay_hash: Some("00000000000000bb".into()),
            ..ok.clone()
        };
        let why = verdict(&[ok.clone(), bad], &[]).unwrap();
        assert!(why.contains("timed call 7 of trial 2"), "{why}");
        let disagrees = OutputCheck {
            agrees: Some(false),
            ..ok.clone()
        };
        assert!(verdict(&[disagrees], &[]).is_some());
        // A signature the replay could not make twice alike is no
        // evidence by its hash, but still by its verification.
        let unrepeatable = OutputCheck {
            replay_hash: Some("00000000000000bb".into()),
            repeatable: Some(false),
            ..ok
        };
        assert_eq!(verdict(std::slice::from_ref(&unrepeatable), &[]), None);
        let rejected = OutputCheck {
            agrees: Some(false),
            ..unrepeatable
        };
        assert!(verdict(&[rejected], &[]).is_some());
    }

    #[test]
    fn a_full_replay_names_the_first_call_that_differs_unless_outputs_do_not_repeat() {
        let timed = [1, 2, 3, 4];
        let same = full_replay(2, &timed, Some(&[1, 2, 3, 4]));
        assert_eq!((same.differing, same.first_differing), (Some(0), None));
        assert_eq!(verdict(&[], std::slice::from_ref(&same)), None);
        let two = full_replay(2, &timed, Some(&[1, 9, 3, 9]));
        assert_eq!((two.differing, two.first_differing), (Some(2), Some(1)));
        let why = verdict(&[], std::slice::from_ref(&two)).expect("inconsistent");
        assert!(
            why.starts_with("timed call 1 of trial 2 (and 1 more of its 4"),
            "{why}"
        );
        // Too few hashes, or none: the replay failed, which is a problem
        // whatever the outputs' nature.
        let short = full_replay(2, &timed, Some(&[1, 2]));
        assert_eq!(short.differing, None);
        assert!(full_replay(2, &timed, None)
            .problem()
            .unwrap()
            .contains("failed"));
        // Outputs that do not repeat from the driver's randomness: their
        // hashes are no evidence, in a full replay as in a picked one.
        let unrepeatable = OutputCheck {
            trial: 2,
            seed: "00".into(),
            pool: 0,
            warmup: 2,
            wraps: 0,
            call: 3,
            timed_hash: "0000000000000004".into(),
            replay_hash: Some("0000000000000009".into()),
            agrees: Some(true),
            repeatable: Some(false),
        };
        assert_eq!(verdict(std::slice::from_ref(&unrepeatable), &[two]), None);
        assert!(verdict(&[unrepeatable], &[short]).is_some());
    }

    #[test]
    fn the_fully_replayed_trial_is_one_of_the_trials() {
        for trials in [1, 2, 5] {
            for _ in 0..50 {
                let k = full_replay_trial(trials).unwrap();
                assert!((1..=trials).contains(&k), "{k} of {trials}");
            }
        }
    }

    #[test]
    fn keygen_enc_and_kex_operations_are_checked_without_a_pool() {
        let keygen = PoolPlan::trial("keygen", 10, 2, 1e-3).expect("seeded");
        // No pool to build, so no untimed seconds a trial may spend on one.
        assert_eq!((keygen.pool_max, keygen.pool_seconds), (12, 0.0));
        assert_eq!(keygen.untimed_per_call(10), 0.0);
        let dec = PoolPlan::trial("dec", 10, 2, 1e-3).expect("pooled");
        assert!(dec.pool_seconds > 0.0);
        assert!(["hash_64", "sign", "verify", "dec", "keygen", "enc"]
            .iter()
            .all(|op| checked(op)));
        // A key exchange's every protocol run is re-seeded, so the exchange
        // and each step are checked, without a pool.
        for op in ["exchange", "init_a", "pass3", "derive_b"] {
            assert!(checked(op), "{op}");
            assert_eq!(PoolPlan::trial(op, 10, 2, 1e-3).unwrap().pool_seconds, 0.0);
        }
        assert!(!checked("passage") && !checked("hashing"));
        // Without a pool nothing repeats, so there is no second pass.
        let samples = [1000u64, 1000, 1000, 1000, 1000, 1, 1, 1, 1, 1, 1];
        assert_eq!(cache_drop(&samples, &walk(0, 0)), None);
    }
}
