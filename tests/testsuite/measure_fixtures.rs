//! Timing and memory figures checked against fixtures with known answers
//! (tests/fixtures/measure): cost proportional to the work, the counter
//! agreeing with the clock, stack and heap high-water marks, the
//! per-operation time budget, and sign retries.
//!
//! The host is noisy (a shared VM, tests in parallel): timing assertions use
//! medians of per-call samples and ratios within one run.

use crate::common;
use common::*;

use pqbench::records::operation::OperationRecord;

const KIB: u64 = 1024;

/// Everything a measured operation's record must hold, whatever the fixture.
fn assert_complete(r: &OperationRecord, trials: u32) {
    let what = format!("{}/{} {}", r.algorithm, r.label, r.op);
    assert_eq!(r.status, "ok", "{what}: {:?}", r.detail);
    assert_figures_complete(r, trials);
}

/// What `assert_complete` checks beside the status: the plan, the trials,
/// their samples and the statistics.
fn assert_figures_complete(r: &OperationRecord, trials: u32) {
    let what = format!("{}/{} {}", r.algorithm, r.label, r.op);
    assert_eq!(r.kat_status, "NOKAT", "{what}");
    assert_eq!(r.known_issues, ["fixture without reference KAT"], "{what}");
    let plan = r.plan.as_ref().expect("plan");
    assert_eq!(r.trials.len(), trials as usize, "{what}");
    for t in &r.trials {
        assert!(kept_within_spread(r, t.calls, plan.iterations), "{what}");
        assert_eq!(t.samples.len() as u64, t.calls, "{what}");
        // The trial's cycles span the whole timed loop: its calls plus a
        // counter read or two per call, never less than the calls.
        let sum = t.samples.iter().sum::<u64>() as f64;
        assert!(sum <= t.cycles, "{what}: samples {sum}, trial {}", t.cycles);
        assert!(t.seconds > 0.0, "{what}");
    }
    // A single interruption between calls can outweigh a short trial's
    // loop, so the bound holds for at least one trial of the record: a
    // systematic gap (samples that miss part of the calls) breaks it.
    assert!(
        r.trials
            .iter()
            .any(|t| { t.cycles - t.samples.iter().sum::<u64>() as f64 <= gap_allowed(r, t) }),
        "{what}: every trial's cycles exceed its samples' sum beyond the loop: {:?}",
        r.trials
            .iter()
            .map(|t| (
                t.calls,
                t.cycles as u64,
                t.cycles as u64 - t.samples.iter().sum::<u64>(),
                gap_allowed(r, t) as u64
            ))
            .collect::<Vec<_>>()
    );
    assert_statistics_recompute(r);
    let n = r.statistics.as_ref().expect("statistics").n;
    let scale = r.witness_sets.as_ref().map_or(1, |w| w.scale);
    assert_eq!(n, u64::from(trials) * plan.iterations * scale, "{what}");
}

#[test]
#[ignore = "statistical: tests/README.md, `-- --ignored statistical_`"]
fn statistical_sign_cost_doubles_with_twice_the_work_and_cycles_match_the_clock() {
    let p = TestProject::bare();
    measure_fixture(
        &p,
        "fix-90",
        &[("W10", "FIX_WORK = 10"), ("W20", "FIX_WORK = 20")],
    );
    let campaign = measure_campaign(
        &["fix-90"],
        &["build", "kat", "time"],
        &[("trial-seconds", "0.01")],
        "",
    );
    p.write("campaigns/t.toml", &campaign);
    p.pqbench(&["run", "t"]).expect(1); // NOKAT counts as failing

    let k = op_record(&p, "t", "fix-90", "W10", "sign");
    let k2 = op_record(&p, "t", "fix-90", "W20", "sign");
    for op in ["keygen", "sign", "verify"] {
        for label in ["W10", "W20"] {
            assert_complete(&op_record(&p, "t", "fix-90", label, op), 5);
        }
    }
    // The undisturbed per-call costs (5th percentiles): the two records
    // are measured at different moments, and on a loaded machine their
    // medians carry different shares of interruptions. A shared VM's
    // effective clock also drifts between those moments (ratios of 1.85
    // and 2.14 were seen), so the band is ±15 %: wide enough for that, and
    // still far from the 1 of a cost the work does not reach or the 4 of
    // one counted twice.
    // A neighbour's burst can still land on one of the two quantiles: the
    // ratio is judged on the best of up to three measurements of the pair.
    let pair_ratio = |k: &OperationRecord, k2: &OperationRecord| {
        low_quantile_call_cycles(k2, 0.05) / low_quantile_call_cycles(k, 0.05)
    };
    let mut ratio = pair_ratio(&k, &k2);
    for _ in 0..2 {
        if (1.7..=2.3).contains(&ratio) {
            break;
        }
        p.pqbench(&["run", "t", "--remeasure"]).expect(1);
        let again = pair_ratio(
            &op_record(&p, "t", "fix-90", "W10", "sign"),
            &op_record(&p, "t", "fix-90", "W20", "sign"),
        );
        if (again / 2.0).ln().abs() < (ratio / 2.0).ln().abs() {
            ratio = again;
        }
    }
    assert!(
        (1.7..=2.3).contains(&ratio),
        "sign at 2k units costs {ratio:.3} x sign at k (5th percentiles; medians {} and {})",
        median_call_cycles(&k2),
        median_call_cycles(&k)
    );
    // One unit is about 60k cycles on a 2-3 GHz machine: 10 units are far
    // above the timer's resolution and far below a millisecond tick.
    assert!(median_call_cycles(&k) > 10_000.0);

    // Cycles and seconds of every trial agree through the recorded rate.
    for r in [&k, &k2] {
        let hz = r.counter_hz.expect("counter rate");
        assert!(hz > 1e6, "{hz}");
        assert!(!r.counter.as_deref().unwrap_or("").is_empty());
        for t in &r.trials {
            let rate = t.cycles / (t.seconds * hz);
            assert!(
                (rate - 1.0).abs() <= 0.02,
                "{}: {} cycles in {} s at {hz} Hz: ratio {rate}",
                r.label,
                t.cycles,
                t.seconds
            );
        }
        // The trial means agree with the seconds per call as well.
        let s = r.statistics.as_ref().unwrap();
        let rel = s.mean_cycles / (s.mean_seconds * hz);
        assert!((rel - 1.0).abs() <= 0.02, "{}: {rel}", r.label);
    }
}

#[test]
fn stack_and_heap_high_water_marks_of_sign() {
    let p = TestProject::bare();
    measure_fixture(
        &p,
        "fix-91",
        &[
            ("PLAIN", "FIX_WORK = 1"),
            ("STACK", "FIX_STACK = 1"),
            ("HEAP", "FIX_HEAP = 1"),
        ],
    );
    let campaign = measure_campaign(&["fix-91"], &["build", "kat", "time", "memory"], &[], "");
    p.write("campaigns/t.toml", &campaign);
    p.pqbench(&["run", "t"]).expect(1);

    let build = p.json("output/t/local/build.json");
    let mem = |label: &str, op: &str| {
        let r = op_record(&p, "t", "fix-91", label, op);
        assert_complete(&r, 5);
        let m = r
            .memory
            .clone()
            .unwrap_or_else(|| panic!("{label} {op}: no memory figures"));
        assert_eq!(m.status, "ok", "{label} {op}: {:?}", m.detail);
        let inst = build["instances"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["label"] == label)
            .unwrap();
        assert!(m.load_bytes.unwrap() > 0);
        assert_eq!(m.load_bytes, inst["load_bytes"].as_u64(), "{label}");
        let (base, peak) = (m.baseline_rss_kib.unwrap(), m.peak_rss_kib.unwrap());
        assert!(base > 0 && peak >= base, "{label} {op}: {base} {peak}");
        assert!(m
            .process
            .command
            .windows(2)
            .any(|w| w == ["--mode", "memory"]));
        m
    };

    let stack = mem("STACK", "sign");
    let s = stack.stack_bytes.unwrap();
    assert!(
        (64 * KIB..=72 * KIB).contains(&s),
        "stack high-water {s} bytes"
    );
    assert!(stack.heap_peak_bytes.unwrap() < 64 * KIB);
    // The 64 KiB touched became resident.
    let grew = stack.peak_rss_kib.unwrap() - stack.baseline_rss_kib.unwrap();
    assert!(grew >= 60, "peak RSS {grew} KiB over the baseline");

    let heap = mem("HEAP", "sign");
    let h = heap.heap_peak_bytes.unwrap();
    assert!(
        (1 << 20..=(1 << 20) * 11 / 10).contains(&h),
        "heap peak {h} bytes"
    );
    assert!(heap.heap_allocs.unwrap() >= 1);
    assert!(heap.stack_bytes.unwrap() < 16 * KIB);
    // The kernel records the high-water mark at the free's munmap from its
    // per-CPU RSS counters, which may lag by a batch of pages per counter
    // and CPU (188 KiB low was seen on 2 CPUs): half of the 1 MiB must show.
    let grew = heap.peak_rss_kib.unwrap() - heap.baseline_rss_kib.unwrap();
    assert!(grew >= 512, "peak RSS {grew} KiB over the baseline");

    // Without the defines sign needs neither, and keygen and verify never do.
    let plain = mem("PLAIN", "sign");
    assert!(plain.stack_bytes.unwrap() < 16 * KIB);
    assert_eq!(plain.heap_peak_bytes, Some(0));
    for label in ["STACK", "HEAP"] {
        for op in ["keygen", "verify"] {
            let m = mem(label, op);
            assert!(m.stack_bytes.unwrap() < 16 * KIB, "{label} {op}");
            assert_eq!(m.heap_peak_bytes, Some(0), "{label} {op}");
        }
    }
}

#[test]
fn per_operation_budget_bounds_the_trials() {
    const BUDGET: f64 = 0.2;
    let p = TestProject::bare();
    // About 60 units: about 1 ms per sign call.
    measure_fixture(&p, "fix-92", &[("SLOW", "FIX_WORK = 60")]);
    let campaign = measure_campaign(
        &["fix-92"],
        &["build", "kat", "time"],
        &[
            ("trial-seconds", "1.0"),
            ("budget-seconds", &BUDGET.to_string()),
        ],
        "",
    );
    p.write("campaigns/t.toml", &campaign);
    p.pqbench(&["run", "t"]).expect(1);

    let r = op_record(&p, "t", "fix-92", "SLOW", "sign");
    assert_complete(&r, 5);
    let plan = r.plan.as_ref().unwrap();
    let t1 = r.calibration.as_ref().unwrap().seconds_per_call;
    assert!(t1 > 2e-4, "sign should take about 1 ms, calibrated {t1} s");
    // A 1 s trial target wants 100 calls a trial (the cap): the budget cut it.
    assert!(plan.budget_limited, "{plan:?}");
    assert!(plan.iterations < 100);
    let per_trial = (plan.iterations + u64::from(r.warmup)) as f64;
    assert!(
        5.0 * per_trial * t1 <= BUDGET * 1.0001,
        "planned {} s",
        5.0 * per_trial * t1
    );
    // What the trials really took, warm-ups included: from the kept trials'
    // timed seconds, and from the median call (robust to a noisy host).
    let spent: f64 = r
        .trials
        .iter()
        .map(|t| t.seconds * per_trial / t.calls as f64)
        .sum();
    assert!(
        spent <= 1.5 * BUDGET,
        "trials took {spent} s for a {BUDGET} s budget"
    );
    let typical = 5.0 * per_trial * median_call_cycles(&r) / r.counter_hz.unwrap();
    assert!(
        typical <= 1.5 * BUDGET,
        "median calls add up to {typical} s"
    );
    // The trial processes, each with its setup (loading, counter rate, keys).
    let wall: f64 = kept_trial_processes(&r)
        .iter()
        .map(|p| p.wall_seconds)
        .sum();
    assert!(
        wall <= 1.5 * BUDGET + 5.0 * 0.1,
        "trial processes took {wall} s"
    );
    // Within the budget the operation still gets as many calls as it can.
    assert!(
        spent >= 0.25 * BUDGET,
        "only {spent} s of a {BUDGET} s budget used"
    );

    // The cheap operations want 100 calls a trial, well within the budget.
    // Their CPU witness needs sets long enough for a call of a few tenths
    // of a microsecond to outweigh milliseconds of set-up, which a budget
    // this tight may not allow on a loaded host: then `unwitnessed`, with
    // its figures kept, is the documented outcome.
    for op in ["keygen", "verify"] {
        let r = op_record(&p, "t", "fix-92", "SLOW", op);
        if r.status == "unwitnessed" {
            let detail = r.detail.as_deref().unwrap_or_default();
            assert!(detail.starts_with("⚠ unwitnessed after "), "{op}: {detail}");
            assert_figures_complete(&r, 5);
        } else {
            assert_complete(&r, 5);
        }
        let plan = r.plan.as_ref().unwrap();
        assert_eq!((plan.iterations, plan.budget_limited), (100, false), "{op}");
    }
}

#[test]
fn failed_signing_attempts_are_retried_inside_the_call_and_counted() {
    let p = TestProject::bare();
    // Every successful sign is preceded by 3 failing calls.
    measure_fixture(
        &p,
        "fix-93",
        &[("RETRY", "FIX_SIGN_FAILS = 3, FIX_WORK = 4")],
    );
    let campaign = measure_campaign(&["fix-93"], &["build", "kat", "time", "render"], &[], "");
    p.write("campaigns/t.toml", &campaign);
    p.pqbench(&["run", "t"]).expect(1);

    let r = op_record(&p, "t", "fix-93", "RETRY", "sign");
    assert_complete(&r, 5);
    let n = r.statistics.as_ref().unwrap().n;
    // Exactly 3 retries per timed call in every kept trial's process.
    for proc in kept_trial_processes(&r) {
        let line = proc.line("trial").unwrap();
        assert_eq!(
            line.u64("sign_retries"),
            Some(3 * line.u64("calls").unwrap())
        );
    }
    // The record's count covers at least those (exactly those when no trial
    // was repeated; see measure_lost_trials.rs).
    assert!(
        r.sign_failures_retried >= 3 * n,
        "{} for {n} calls",
        r.sign_failures_retried
    );
    if r.repeated_trials == 0 {
        assert_eq!(r.sign_failures_retried, 3 * n);
    }
    assert_eq!(
        r.setup_sign_failures_retried, 0,
        "sign's setup does not sign"
    );
    // Keygen sees no retries; verify none in its timed calls, and its
    // trials sign nothing: the honest signature its set-up needs is the
    // shared pool's first, made once, by the pool process, with 3.
    let k = op_record(&p, "t", "fix-93", "RETRY", "keygen");
    assert_eq!((k.sign_failures_retried, k.verify_rejects), (0, 0));
    assert_eq!(k.setup_sign_failures_retried, 0);
    let v = op_record(&p, "t", "fix-93", "RETRY", "verify");
    assert_eq!((v.sign_failures_retried, v.verify_rejects), (0, 0));
    for proc in kept_trial_processes(&v) {
        let line = proc.line("trial").unwrap();
        assert_eq!(line.u64("sign_retries"), Some(0));
        assert_eq!(line.u64("setup_sign_retries"), Some(0));
    }
    let pool = v
        .processes
        .iter()
        .find_map(|pr| pr.line("pool"))
        .expect("the shared pool's process");
    assert_eq!(pool.u64("setup_sign_retries"), Some(3), "{pool:?}");
    assert_eq!(v.setup_sign_failures_retried, 3);

    // The page shows them on the verify row, as the reference pages do.
    let page = p.read("output/t/site/local/fix-93.md");
    let row = |op: &str| {
        page.lines()
            .find(|l| l.starts_with("| `RETRY` |") && l.contains(&format!("| {op} |")))
            .unwrap_or_else(|| panic!("no {op} row in\n{page}"))
            .to_string()
    };
    assert!(
        row("verify").contains("; 3 failed signing attempts retried"),
        "{}",
        row("verify")
    );
    assert!(
        row("sign").contains(&format!(
            "; {} failed signing attempts retried",
            r.sign_failures_retried
        )),
        "{}",
        row("sign")
    );
    assert!(!row("keygen").contains("retried"), "{}", row("keygen"));
}
