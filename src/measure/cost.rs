//! What the time stage will spend on an instance, predicted before it
//! runs: the stage's header and its time left (`progress`) weigh the
//! instances by it.
//!
//! Every figure is an estimate, never evidence: a call's CPU seconds come
//! from the instance's KAT run (the runner's `cost_<op>_seconds` over its
//! records), and the stage's own rules turn them into processes and calls:
//! the calibration, the trials with their warm-ups, each trial's output
//! check and the one full replay (none where the checks remade every
//! call), verify's shared pool and the instance's
//! shared key pair, each process with its start and end. The witness's
//! further sets of trials, which only an undecided witness asks for, are
//! not foreseen.

use super::inputs::{checked, pooled, CHECKED_CALLS, POOL_SHARE};
use super::{keys, op_settings, plan_iterations};
use crate::plan::TimingSettings;

/// Starting and ending one sandboxed driver process (its namespaces, its
/// copy of the library, the kernel's witness), seconds: about 30 to 50 ms
/// on the 2-core development VM, less on bare metal.
pub(crate) const PROCESS_SECONDS: f64 = 0.04;

/// The driver's calibration: at least 2 calls and 50 ms after its
/// warm-ups, a call of half a second or more alone (`driver.h`).
const CALIB_MIN_CALLS: f64 = 2.0;
const CALIB_MIN_SECONDS: f64 = 0.05;
const CALIB_SLOW_SECONDS: f64 = 0.5;
const CALIB_MAX_SECONDS: f64 = 10.0;

/// Predicted seconds the time stage spends on an instance's `ops`, from
/// `call` (one call's CPU seconds by operation); None when a call's cost
/// is unknown.
pub(crate) fn instance_seconds(
    ops: &[&str],
    call: impl Fn(&str) -> Option<f64>,
    s: &TimingSettings,
) -> Option<f64> {
    let keygen = call("keygen");
    let mut total = 0.0;
    let mut keys_made = false;
    for &op in ops {
        let t = call(op)?;
        let shared = keys::wanted(s.share_keys, op, keygen, s.trial_seconds);
        if shared && !keys_made {
            total += PROCESS_SECONDS + keygen.unwrap_or(0.0);
            keys_made = true;
        }
        // verify's processes sign nothing: the pool is built once.
        let setup = match (op, shared) {
            ("keygen", _) | (_, true) => 0.0,
            ("verify", false) => keygen?,
            _ => own_keys_setup(op, keygen?, t, &call, true),
        };
        let pool = (op == "verify").then(|| setup + 2.0 * call("sign").unwrap_or(t));
        total += op_seconds(op, t, setup, pool, s);
    }
    Some(total)
}

/// Predicted seconds of a stage that runs one driver process an operation
/// (memory, profile): each process's set-up, which makes its own key pair
/// (`keygen_in_setup`: keygen's own in mode `memory` only), and the
/// `calls(op, seconds_per_call)` it times; None when a cost is unknown.
pub(crate) fn one_process_each(
    ops: &[&str],
    call: impl Fn(&str) -> Option<f64>,
    keygen_in_setup: bool,
    calls: impl Fn(&str, f64) -> f64,
) -> Option<f64> {
    let keygen = call("keygen")?;
    ops.iter().try_fold(0.0, |total, &op| {
        let t = call(op)?;
        let setup = own_keys_setup(op, keygen, t, &call, keygen_in_setup);
        Some(total + PROCESS_SECONDS + setup + calls(op, t) * t)
    })
}

/// The set-up of a process that makes its own key pair: the pair (none
/// for keygen unless `keygen_in_setup`), and verify's honest signature or
/// dec's honest encapsulation (at `t` when its cost is unknown).
fn own_keys_setup(
    op: &str,
    keygen: f64,
    t: f64,
    call: &impl Fn(&str) -> Option<f64>,
    keygen_in_setup: bool,
) -> f64 {
    match op {
        "keygen" if keygen_in_setup => keygen,
        "keygen" => 0.0,
        "dec" => keygen + call("enc").unwrap_or(t),
        "verify" => keygen + call("sign").unwrap_or(t),
        _ => keygen,
    }
}

/// One operation: its calibration, trials, output checks, full replay and
/// (verify) shared pool, for a call of `t` seconds after a set-up of
/// `setup`.
fn op_seconds(op: &str, t: f64, setup: f64, pool: Option<f64>, s: &TimingSettings) -> f64 {
    let t = t.max(1e-9);
    let process = |calls: f64| PROCESS_SECONDS + setup + calls * t;
    let calibration = if t >= CALIB_SLOW_SECONDS {
        t
    } else {
        let timed = (CALIB_MIN_SECONDS / t).ceil().max(CALIB_MIN_CALLS) * t;
        f64::from(s.warmup) * t + timed.min(CALIB_MAX_SECONDS)
    };
    // The stage's own rule for the warm-ups (`op_settings`).
    let own = op_settings(s, t);
    let plan = plan_iterations(t, &own);
    let warm = f64::from(own.warmup);
    let n = plan.iterations as f64;
    let trials = f64::from(s.trials.max(1));
    // Each trial's pool is built untimed, in at most a share of its calls.
    let untimed = if pooled(op) { POOL_SHARE * n * t } else { 0.0 };
    let mut total = PROCESS_SECONDS + setup + calibration + trials * (process(warm + n) + untimed);
    if checked(op) {
        // Each checked call is made once (twice only where its output did
        // not repeat); a trial of no more calls than are checked has had
        // its full replay.
        let replayed = n.min(CHECKED_CALLS as f64);
        total += trials * (process(warm + replayed) + untimed);
        if n > CHECKED_CALLS as f64 {
            total += process(warm + n) + untimed;
        }
    }
    total + pool.map_or(0.0, |p| PROCESS_SECONDS + p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::ShareKeys;

    fn settings() -> TimingSettings {
        TimingSettings {
            trials: 3,
            warmup: 1,
            trial_seconds: 0.05,
            min_iterations: 20,
            max_iterations: 2000,
            min_calls: 10,
            budget_seconds: 2.0,
            samples: true,
            cpus: vec![],
            timeout_seconds: 600.0,
            share_keys: ShareKeys::Auto,
        }
    }

    fn kem(keygen: f64, enc: f64, dec: f64) -> impl Fn(&str) -> Option<f64> {
        move |op| match op {
            "keygen" => Some(keygen),
            "enc" => Some(enc),
            "dec" => Some(dec),
            _ => None,
        }
    }

    #[test]
    fn an_unknown_cost_predicts_nothing() {
        let s = settings();
        assert_eq!(instance_seconds(&["sign"], kem(1e-3, 1e-3, 1e-3), &s), None);
    }

    #[test]
    fn fast_calls_cost_their_processes_and_trial_lengths() {
        let s = settings();
        // 30 µs calls: each trial is 0.05 s of calls; 8 processes an
        // operation (calibration, 3 trials, 3 checks, 1 full replay).
        let total = instance_seconds(&["keygen", "enc", "dec"], kem(3e-5, 3e-5, 3e-5), &s).unwrap();
        assert!((1.0..2.5).contains(&total), "{total}");
    }

    #[test]
    fn a_dear_key_generation_is_made_once_when_shared_and_in_every_process_when_not() {
        let mut s = settings();
        let costs = kem(2.0, 1e-4, 1e-4);
        let shared = instance_seconds(&["enc", "dec"], &costs, &s).unwrap();
        s.share_keys = ShareKeys::Never;
        let own = instance_seconds(&["enc", "dec"], &costs, &s).unwrap();
        // Shared: one key generation; own: one in each of 16 processes.
        assert!((2.0..4.0).contains(&shared), "{shared}");
        assert!(own > 16.0 * 2.0, "{own}");
    }

    #[test]
    fn one_process_an_operation_makes_its_own_keys() {
        let costs = kem(2.0, 1e-3, 1e-3);
        // keygen's process makes a pair in its set-up and one in its call;
        // enc's and dec's in their set-ups.
        let memory = one_process_each(&["keygen", "enc", "dec"], &costs, true, |_, _| 1.0);
        let m = memory.unwrap();
        assert!((8.0..8.2).contains(&m), "{m}");
        let timed = one_process_each(&["keygen"], &costs, false, |_, _| 1.0).unwrap();
        assert!((2.0..2.1).contains(&timed), "{timed}");
    }

    #[test]
    fn a_slow_call_is_counted_without_warm_ups() {
        let s = settings();
        // 5 s key generations: a calibration of one call, then 3 trials of
        // one call and 3 checks of one, which are the full replay: 7 calls.
        let total = instance_seconds(&["keygen"], kem(5.0, 0.0, 0.0), &s).unwrap();
        let calls = total / 5.0;
        assert!((7.0..7.2).contains(&calls), "{calls}");
    }
}
