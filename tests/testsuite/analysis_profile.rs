//! The helper profile against a fixture with a designed time split
//! (tests/fixtures/measure, FIX_PROFILE): calls per operation exact, shares
//! near the design, nested calls counted once. Its own test binary, so no
//! other test of this set measures beside it.

use crate::common;
use common::*;

use pqbench::records::analysis::ProfileRecord;

fn profile_record(p: &TestProject, id: &str, label: &str, op: &str) -> ProfileRecord {
    let rel = format!("output/t/local/profile/{id}/{label}__{op}.json");
    serde_json::from_str(&p.read(&rel)).unwrap_or_else(|e| panic!("parsing {rel}: {e}"))
}

/// Share of the profiled trial's time its process had the CPU.
fn cpu_share(r: &ProfileRecord) -> f64 {
    let proc = r.process.as_ref().expect("profile process");
    let t = proc.line("trial").expect("trial line");
    t.f64("cpu_seconds").unwrap() / t.f64("seconds").unwrap()
}

/// measure.c's FIX_PROFILE=1 sign, in units of busy work: 10 pseudoXOF
/// calls of 10 units (100, 50 %), 3 pseudohash calls of 2 units (6, 3 %),
/// 94 units of its own; each helper's nested sm3hash calls (one object
/// further) belong to the helper.
#[test]
#[ignore = "statistical: tests/README.md, `-- --ignored statistical_`"]
fn statistical_profile_of_a_designed_split() {
    let p = TestProject::bare();
    measure_fixture(&p, "fix-96", &[("PROF", "FIX_PROFILE = 1")]);
    // The profile runs as many signs as a timing trial: one trial of about
    // 300 signs of 3 ms, enough that stalls of a busy (virtual) CPU, each
    // landing in whatever function runs, cannot move a share by much.
    let campaign = measure_campaign(
        &["fix-96"],
        &["build", "kat", "time", "profile"],
        &[
            ("trials", "1"),
            ("trial-seconds", "1.0"),
            ("max-iterations", "1000"),
            ("budget-seconds", "4.0"),
        ],
        "",
    );
    p.write("campaigns/t.toml", &campaign);
    p.pqbench(&["run", "t"]).expect(1);
    // The profile stage runs one trial and keeps it even when it lost the
    // CPU. Like the time stage, take another (at most 3 in all) when so,
    // and keep the one that had the CPU most, with its run's timing plan.
    let attempt = || {
        let timed = op_record(&p, "t", "fix-96", "PROF", "sign");
        let iterations = timed.plan.as_ref().expect("timing plan").iterations;
        (profile_record(&p, "fix-96", "PROF", "sign"), iterations)
    };
    let (mut sign, mut timed_iterations) = attempt();
    for _ in 0..2 {
        if cpu_share(&sign) >= 0.95 {
            break;
        }
        p.pqbench(&["run", "t", "--remeasure"]).expect(1);
        let again = attempt();
        if cpu_share(&again.0) > cpu_share(&sign) {
            (sign, timed_iterations) = again;
        }
    }
    assert_eq!(sign.status, "ok", "{:?}", sign.detail);
    // Every helper the objects define is wrapped, sm3hash included...
    let mut wrapped = sign.wrapped.clone();
    wrapped.sort();
    assert_eq!(
        wrapped,
        ["get_random_number", "pseudoXOF", "pseudohash", "sm3hash"]
    );
    // ...yet none of its calls shows: all are nested in pseudoXOF and
    // pseudohash.
    let calls: Vec<(&str, f64)> = sign
        .calls_per_op
        .iter()
        .map(|(f, c)| (f.as_str(), *c))
        .collect();
    assert_eq!(
        calls,
        [
            ("get_random_number", 1.0),
            ("pseudoXOF", 10.0),
            ("pseudohash", 3.0)
        ]
    );
    assert!(sign.shapes.iter().all(|s| s.function != "sm3hash"));
    // Calls by shape: (class, input bits, output bits).
    let shape = |f: &str| {
        let s = sign.shapes.iter().find(|s| s.function == f).unwrap();
        (s.class.as_str(), s.in_bits, s.out_bits, s.calls)
    };
    let ops = sign.ops;
    assert_eq!(shape("pseudoXOF"), ("hash", 256, 512, 10 * ops));
    assert_eq!(shape("pseudohash"), ("hash", 256, 256, 3 * ops));
    assert_eq!(shape("get_random_number"), ("drng", 0, 64, ops));
    // The profile runs as many signs as a timing trial.
    assert_eq!(ops, timed_iterations);
    assert!(ops >= 20, "{ops}");

    // Shares within 10 points of the design: hash 53 %, pseudoXOF 50 %.
    let xof = sign.share_per_function["pseudoXOF"];
    assert!(
        (sign.hash_share - 0.53).abs() <= 0.10,
        "hash share {} over {ops} signs, CPU share {}",
        sign.hash_share,
        cpu_share(&sign)
    );
    assert!((xof - 0.50).abs() <= 0.10, "pseudoXOF share {xof}");
    let hash = sign.share_per_function["pseudohash"];
    assert!(
        hash > 0.0 && hash <= 0.10,
        "pseudohash share {hash}: {:?}",
        sign.shapes
    );
    assert!(sign.drng_share < 0.01, "{}", sign.drng_share);
    // Nested time is not counted twice: the functions' shares add up to
    // the hash and DRNG shares, which leave sign's own loop (47 % by
    // design) its part; an sm3hash counted beside its callers would add
    // another 11 % (23 units per sign).
    let all: f64 = sign.share_per_function.values().sum();
    assert!((all - sign.hash_share - sign.drng_share).abs() < 1e-9);
    assert!(all < 0.63, "helpers take {all} of sign");

    // keygen draws 256 bits once and hashes nothing; verify calls nothing.
    let keygen = profile_record(&p, "fix-96", "PROF", "keygen");
    assert_eq!(
        keygen.calls_per_op.into_iter().collect::<Vec<_>>(),
        [("get_random_number".to_string(), 1.0)]
    );
    assert_eq!(keygen.shapes[0].out_bits, 256);
    assert_eq!(keygen.hash_share, 0.0);
    assert!(keygen.drng_share > 0.0);
    let verify = profile_record(&p, "fix-96", "PROF", "verify");
    assert!(verify.shapes.is_empty() && verify.calls_per_op.is_empty());
    assert_eq!((verify.hash_share, verify.drng_share), (0.0, 0.0));
    assert!(verify.ops > 0 && verify.total_ticks > 0);
}

/// An instance that defines no helper of its own (sign-92, own SHA-256)
/// still gets a profile record per operation, saying so.
#[test]
fn an_instance_without_helpers_still_gets_a_profile_per_operation() {
    let p = TestProject::demo();
    let campaign = measure_campaign(&["sign-92"], &["build", "kat", "time", "profile"], &[], "");
    p.write("campaigns/t.toml", &campaign);
    p.pqbench(&["run", "t"]).expect(0);
    for label in ["LARCH-1", "LARCH-3"] {
        for op in ["keygen", "sign", "verify"] {
            let pr = profile_record(&p, "sign-92", label, op);
            assert!(
                pr.shapes.is_empty() && pr.calls_per_op.is_empty(),
                "{label} {op}"
            );
            assert_eq!((pr.hash_share, pr.drng_share), (0.0, 0.0), "{label} {op}");
        }
    }
}
