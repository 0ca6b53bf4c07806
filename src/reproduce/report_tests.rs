//! Unit tests of the reproduction report: exit code, failures, escaping.

use super::*;
use crate::compare::{compare_runs, RunInfo, Threshold};
use crate::records::testutil::{instance, lock, record};
use serde_json::json;

pub(crate) fn run(name: &str, sign_cycles: u64, stack: Option<u64>) -> RunData {
    let mut r = record("sign", "tsc", &vec![vec![sign_cycles; 30]; 5]);
    r.lengths.insert("sig".into(), 64);
    r.memory = stack.map(|s| crate::records::operation::MemoryFigures {
        status: crate::measure::OpStatus::Ok,
        detail: None,
        load_bytes: Some(4096),
        baseline_rss_kib: Some(900),
        peak_rss_kib: Some(1000),
        stack_bytes: Some(s),
        heap_peak_bytes: None,
        heap_allocs: Some(0),
        process: crate::measure::driver::ProcessRecord {
            command: vec![],
            cpu: None,
            outcome: crate::sandbox::Outcome::Exited(0),
            wall_seconds: 0.0,
            lines: vec![],
            stderr_tail: String::new(),
            sandbox: Default::default(),
        },
        measured_by: None,
    });
    RunData {
        dir: std::path::PathBuf::from(name),
        info: RunInfo {
            name: name.into(),
            campaign: Some("c".into()),
            system: Some("local".into()),
            start_utc: None,
            host_fingerprint: Some("h".into()),
            host_fixed: Some(true),
        },
        records: [(("sign-1/L".to_string(), "sign".to_string()), r)].into(),
        counts: Default::default(),
    }
}

pub(crate) fn locks(lib_b: &str, kat_b: (&str, &str, &str)) -> (Lock, Lock) {
    let m = json!({"sign": 100.0});
    (
        lock(
            "A",
            "h",
            vec![instance(
                "sign-1/L",
                "lib",
                ("PASS", "log", "out"),
                "d1",
                m.clone(),
            )],
        ),
        lock("B", "h", vec![instance("sign-1/L", lib_b, kat_b, "d2", m)]),
    )
}

#[test]
fn failures_decide_the_exit_code() {
    let (a, b) = (run("A", 1000, Some(512)), run("B", 1000, Some(512)));
    let timing = compare_runs(&a, &b, Threshold::given(0.1));
    let (la, lb) = locks("lib", ("PASS", "log", "out"));
    let r = build(&la, &lb, (&a, &b), vec![], timing.clone(), vec![]);
    assert_eq!((r.exit_code, r.failures.len()), (0, 0), "{r:?}");
    assert_eq!(
        (r.instances[0].library.as_str(), r.instances[0].kat.as_str()),
        ("bit-identical", "identical")
    );
    // sig length, load bytes, stack bytes, heap allocations.
    assert_eq!(
        (r.fixed_figures_identical, r.fixed_figures_differing.len()),
        (4, 0)
    );

    // Same status and generated file, another log: equivalent, fine.
    let (la, lb) = locks("lib2", ("PASS", "log2", "out"));
    let r = build(
        &la,
        &lb,
        (&a, &b),
        vec!["compiler changed: x → y".into()],
        timing.clone(),
        vec![],
    );
    assert_eq!(
        (r.instances[0].kat.as_str(), r.exit_code),
        ("equivalent", 0),
        "{r:?}"
    );
    // ... but a library that differs with no input changed is not.
    let r = build(&la, &lb, (&a, &b), vec![], timing.clone(), vec![]);
    assert_eq!(r.exit_code, 1);
    assert!(r.failures[0].contains("not bit-identical"), "{r:?}");

    let (la, lb) = locks("lib", ("MISMATCH", "log3", "out3"));
    let r = build(&la, &lb, (&a, &b), vec![], timing, vec![]);
    assert_eq!(r.instances[0].kat, "changed");
    assert!(
        r.failures[0].contains("KAT changed: sign-1/L (PASS → MISMATCH)"),
        "{r:?}"
    );

    let slow = run("B", 3000, Some(600));
    let timing = compare_runs(&a, &slow, Threshold::given(0.1));
    let (la, lb) = locks("lib", ("PASS", "log", "out"));
    let r = build(&la, &lb, (&a, &slow), vec![], timing, vec![]);
    assert_eq!(r.exit_code, 1);
    assert!(
        r.failures
            .iter()
            .any(|f| f.starts_with("slower: sign-1/L sign")),
        "{r:?}"
    );
    assert_eq!(
        r.fixed_figures_differing,
        vec!["sign-1/L sign stack bytes: 512 → 600"]
    );

    let mut gone = run("B", 1000, None);
    gone.records.clear();
    let timing = compare_runs(&a, &gone, Threshold::given(0.1));
    let r = build(&la, &lb, (&a, &gone), vec![], timing, vec![]);
    assert!(
        r.failures
            .iter()
            .any(|f| f == "not timed again: sign-1/L sign"),
        "{r:?}"
    );
}
