//! Comparisons of synthetic records: verdicts, incomparable cases, the
//! derived threshold and the exact test.

use super::*;
use crate::records::lock::Lock;
use crate::records::testutil::{self, record};

pub(crate) fn default(a: &RunData, b: &RunData) -> Threshold {
    Threshold::default_for(a, b, &[])
}

/// `trials` trials of `n` calls around `centre` (±2 %, deterministic).
pub(crate) fn samples(centre: f64, trials: usize, n: usize, seed: u64) -> Vec<Vec<u64>> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..trials)
        .map(|_| {
            (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let u = (x % 10_000) as f64 / 10_000.0;
                    (centre * (0.98 + 0.04 * u)).round() as u64
                })
                .collect()
        })
        .collect()
}

pub(crate) fn run(host: &str, recs: Vec<OperationRecord>) -> RunData {
    RunData {
        dir: std::path::PathBuf::from("/nonexistent/run"),
        info: RunInfo {
            name: host.into(),
            campaign: Some("c".into()),
            system: Some("local".into()),
            start_utc: None,
            host_fingerprint: Some(host.into()),
            host_fixed: Some(true),
        },
        records: recs
            .into_iter()
            .map(|r| ((format!("{}/{}", r.algorithm, r.label), r.op.clone()), r))
            .collect(),
        counts: Default::default(),
    }
}

#[test]
fn doubling_is_slower_and_unchanged_is_within_noise() {
    let a = run(
        "h",
        vec![
            record("sign", "tsc", &samples(1e5, 5, 200, 1)),
            record("verify", "tsc", &samples(3e4, 5, 200, 2)),
        ],
    );
    let b = run(
        "h",
        vec![
            record("sign", "tsc", &samples(2e5, 5, 200, 3)),
            record("verify", "tsc", &samples(3e4, 5, 200, 4)),
        ],
    );
    let r = compare_runs(&a, &b, default(&a, &b));
    let sign = &r.operations[0];
    assert_eq!((sign.op.as_str(), sign.verdict), ("sign", Verdict::Slower));
    let (lo, hi) = sign.ci.unwrap();
    assert!(lo < 2.0 && 2.0 < hi, "{sign:?}");
    assert_eq!(r.operations[1].verdict, Verdict::WithinNoise);
    assert_eq!(r.algorithms[0].counts["slower"], 1);
    let g = r.algorithms[0].geomean_ratio.unwrap();
    assert!((g - 2f64.sqrt()).abs() < 0.05, "{g}");
    // The other way round the doubling is faster.
    let back = compare_runs(&b, &a, Threshold::given(0.1));
    assert_eq!(back.operations[0].verdict, Verdict::Faster);
    assert_eq!(back.threshold.source, "given");
}

#[test]
fn different_counters_hosts_or_missing_data_are_incomparable() {
    let a = run("h1", vec![record("sign", "tsc", &samples(1e5, 5, 50, 1))]);
    let b = run(
        "h1",
        vec![record("sign", "perf-user-cycles", &samples(2e5, 5, 50, 2))],
    );
    let r = compare_runs(&a, &b, default(&a, &b));
    assert_eq!(r.operations[0].verdict, Verdict::Incomparable);
    assert!(r.operations[0]
        .reason
        .as_deref()
        .unwrap()
        .contains("counter"));
    assert_eq!(r.algorithms[0].verdict, Verdict::Incomparable);

    let c = run("h2", vec![record("sign", "tsc", &samples(2e5, 5, 50, 2))]);
    let r = compare_runs(&a, &c, default(&a, &c));
    assert_eq!(r.operations[0].verdict, Verdict::Incomparable);
    assert!(r.operations[0].reason.as_deref().unwrap().contains("host"));

    let mut failed = record("sign", "tsc", &[]);
    failed.status = crate::measure::OpStatus::Crash;
    let d = run(
        "h1",
        vec![failed, record("keygen", "tsc", &samples(1e4, 3, 30, 5))],
    );
    let r = compare_runs(&a, &d, default(&a, &d));
    let verdicts: Vec<_> = r
        .operations
        .iter()
        .map(|o| (o.op.as_str(), o.verdict))
        .collect();
    assert_eq!(
        verdicts,
        vec![
            ("keygen", Verdict::Incomparable),
            ("sign", Verdict::Incomparable)
        ]
    );
    assert!(r.operations[0]
        .reason
        .as_deref()
        .unwrap()
        .contains("only in run B"));
    assert!(r.operations[1].reason.as_deref().unwrap().contains("crash"));
}

#[test]
fn run_level_noise_and_resolution_widen_the_interval() {
    // Quantised samples, all trials of a run on one level: 260 vs 286
    // cycles is one counter step, not a 10 % regression.
    let a = run("h", vec![record("keygen", "tsc", &vec![vec![260; 100]; 5])]);
    let b = run(
        "h",
        vec![record("keygen", "tsc", &vec![vec![286, 260, 286, 312]; 5])],
    );
    let r = compare_runs(&a, &b, Threshold::given(0.05));
    let k = &r.operations[0];
    assert_eq!(k.verdict, Verdict::WithinNoise, "{k:?}");
    assert!(k.ci.unwrap().0 < 1.0);
    // Trials that disagree (process-to-process noise) widen it as well.
    let wobbly: Vec<Vec<u64>> = [1.0, 1.3, 1.0, 1.35, 1.05]
        .iter()
        .map(|f| vec![(1e5 * f) as u64; 50])
        .collect();
    let c = run("h", vec![record("sign", "tsc", &wobbly)]);
    let d = run(
        "h",
        vec![record("sign", "tsc", &vec![vec![130_000; 50]; 5])],
    );
    let k = &compare_runs(&c, &d, Threshold::given(0.1)).operations[0];
    assert_eq!(k.verdict, Verdict::WithinNoise, "{k:?}");
}

#[test]
fn threshold_follows_trial_dispersion_and_host_state() {
    let quiet = record("sign", "tsc", &samples(1e5, 5, 20, 9));
    let t = threshold::from_trials([&quiet].into_iter(), false);
    assert!(
        t.source == "trials" && t.value == threshold::THRESHOLD_FLOOR,
        "{t:?}"
    );
    let noisy_trials: Vec<Vec<u64>> = [1.0, 1.2, 0.9, 1.1, 1.0]
        .iter()
        .map(|f| vec![(1e5 * f) as u64; 10])
        .collect();
    let noisy = record("sign", "tsc", &noisy_trials);
    let cv = trial_cv(&noisy);
    let t = threshold::from_trials([&noisy].into_iter(), false);
    assert!((t.value - 3.0 * cv).abs() < 1e-12 && t.explanation.contains("median"));
    let one = record("sign", "tsc", &samples(1e5, 1, 20, 9));
    let t = threshold::from_trials([&one].into_iter(), false);
    assert_eq!(t.value, threshold::FALLBACK_THRESHOLD);
    // An unfixed host shifts whole runs: the trials cannot vouch for it.
    let t = threshold::from_trials([&quiet].into_iter(), true);
    assert_eq!(
        (t.value, t.source.as_str()),
        (threshold::UNFIXED_HOST_THRESHOLD, "unfixed host")
    );
    let (mut a, b) = (run("h", vec![quiet.clone()]), run("h", vec![quiet]));
    a.info.host_fixed = Some(false);
    assert_eq!(default(&a, &b).source, "unfixed host");
}

fn lock(run_id: &str, host: &str, lib: &str, digest: &str, median: f64) -> Lock {
    let medians = serde_json::json!({"sign": median, "verify": median / 3.0});
    let i = testutil::instance("sign-1/L", lib, ("PASS", "l", "o"), digest, medians);
    testutil::lock(run_id, host, vec![i])
}

#[test]
fn history_of_repeated_runs_sets_the_threshold() {
    // Six independent measurements of one library: medians up to 1.3×
    // apart; a reused result (same digest) and another host do not count.
    let medians = [1.0e5, 1.1e5, 1.3e5, 1.05e5, 1.0e5, 1.2e5];
    let mut h: Vec<Lock> = medians
        .iter()
        .enumerate()
        .map(|(i, m)| lock(&format!("r{i}"), "h", "lib", &format!("d{i}"), *m))
        .collect();
    h.push(lock("r9", "h", "lib", "d0", 9.0e5));
    h.push(lock("r8", "other", "lib", "e0", 9.0e5));
    let t = threshold::from_history(&h, "h").unwrap();
    // 2 ops × C(6, 2) = 30 pairs.
    assert_eq!((t.source.as_str(), t.history_pairs), ("history", 30));
    assert!(t.value > 0.2 && t.value < 0.31, "{t:?}");
    assert!(threshold::from_history(&h[..3], "h").is_none());
    let (a, b) = (
        run("h", vec![record("sign", "tsc", &samples(1e5, 5, 20, 1))]),
        run("h", vec![record("sign", "tsc", &samples(1e5, 5, 20, 2))]),
    );
    assert_eq!(Threshold::default_for(&a, &b, &h).source, "history");
}

#[test]
fn exact_test_matches_the_permutation_distribution() {
    // Complete separation of 5 and 5: 2 of C(10, 5) = 252 arrangements.
    let p = exact_mann_whitney_p(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]);
    assert!((p.unwrap() - 2.0 / 252.0).abs() < 1e-15);
    // U = 1 for 2 against 2 ({1,3} vs {2,4}): P(U ≤ 1) = 2/6, two-sided 2/3.
    let p = exact_mann_whitney_p(&[1.0, 3.0], &[2.0, 4.0]).unwrap();
    assert!((p - 2.0 / 3.0).abs() < 1e-15);
    assert!(exact_mann_whitney_p(&[1.0, 2.0], &[2.0, 3.0]).is_none());
    // Trial means only: 5 clearly separated trials give p < 0.01.
    let means = |c: f64| -> Vec<Vec<u64>> { (0..5).map(|i| vec![(c + i as f64) as u64]).collect() };
    let mut a = record("sign", "tsc", &means(1000.0));
    let mut b = record("sign", "tsc", &means(2000.0));
    for r in [&mut a, &mut b] {
        r.trials.iter_mut().for_each(|t| t.samples.clear());
    }
    let (a, b) = (run("h", vec![a]), run("h", vec![b]));
    let r = compare_runs(&a, &b, default(&a, &b));
    let o = &r.operations[0];
    assert_eq!(
        (o.basis.as_deref(), o.verdict),
        (Some("trial means"), Verdict::Slower)
    );
}
