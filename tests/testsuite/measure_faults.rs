//! Faults met only when timing (tests/fixtures/measure_faults/faults.c: sign
//! behaves for its first 100 calls in a process, enough for the KAT, then
//! crashes, hangs or allocates without bound) get a status and cost only
//! their own operation: the campaign finishes and the healthy instance
//! beside them has complete records.

use crate::common;
use common::*;

use pqbench::records::operation::OperationRecord;
use pqbench::sandbox::Outcome;

const TIMEOUT: f64 = 5.0;

/// A project with algorithm `flt-94`: OK, CRASH, HANG and BOMB.
fn faults_project() -> TestProject {
    let p = TestProject::bare();
    p.copy("tests/fixtures/measure", "algorithms/faults");
    p.copy(
        "tests/fixtures/measure_faults/faults.c",
        "algorithms/faults/faults.c",
    );
    let sets = [
        ("OK", "FAULT_KIND = 0"),
        ("CRASH", "FAULT_KIND = 1"),
        ("HANG", "FAULT_KIND = 2"),
        ("BOMB", "FAULT_KIND = 3"),
    ];
    let toml = sign_fixture_toml(
        "flt-94",
        "faults",
        &["api.h", "fixdrng.h"],
        &["faults.c", "fixdrng.c"],
        &[],
        &sets,
    );
    p.write("algorithms/flt-94.toml", &toml);
    p
}

fn faults_campaign(stages: &[&str]) -> String {
    measure_campaign(
        &["flt-94"],
        stages,
        &[("timeout-seconds", &TIMEOUT.to_string())],
        "[limits]\nmemory-mib = 512\n",
    )
}

fn sign_of(p: &TestProject, label: &str) -> OperationRecord {
    op_record(p, "t", "flt-94", label, "sign")
}

#[test]
fn crash_hang_and_allocation_bomb_in_timing_get_statuses_and_the_campaign_goes_on() {
    let p = faults_project();
    p.write(
        "campaigns/t.toml",
        &faults_campaign(&["build", "kat", "time", "memory"]),
    );
    let run = p.pqbench(&["run", "t"]);
    // Finished (not stuck, not aborted): exit 1 for the failing instances.
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);

    // The faults are timing-only: every KAT run went through.
    let build = p.json("output/t/local/build.json");
    for inst in build["instances"].as_array().unwrap() {
        assert_eq!(inst["kat_status"], "NOKAT", "{}", inst["label"]);
    }

    // The healthy instance has complete records.
    for op in ["keygen", "sign", "verify"] {
        let r = op_record(&p, "t", "flt-94", "OK", op);
        assert_eq!(r.status, "ok", "{op}: {:?}", r.detail);
        assert_eq!(r.trials.len(), 5, "{op}");
        assert!(r
            .trials
            .iter()
            .all(|t| t.calls > 0 && t.samples.len() as u64 == t.calls));
        assert_statistics_recompute(&r);
        assert!(r.statistics.is_some());
        let m = r.memory.as_ref().expect("memory figures");
        assert_eq!(m.status, "ok");
        assert!(m.stack_bytes.is_some() && m.peak_rss_kib.is_some());
    }

    // SIGSEGV when calibrating sign.
    let crash = sign_of(&p, "CRASH");
    assert_eq!(crash.status, "crash", "{:?}", crash.detail);
    let detail = crash.detail.as_deref().unwrap_or_default();
    assert!(detail.contains("calibration"), "{detail}");
    assert!(detail.contains("SIGSEGV"), "{detail}");
    assert!(matches!(crash.processes[..], [ref c] if c.outcome == Outcome::Signaled(11)));

    // Never returns: killed at the timeout, not much later.
    let hang = sign_of(&p, "HANG");
    assert_eq!(hang.status, "timeout", "{:?}", hang.detail);
    let proc = hang.processes.last().unwrap();
    assert_eq!(proc.outcome, Outcome::TimedOut);
    assert!(
        proc.wall_seconds >= TIMEOUT * 0.9 && proc.wall_seconds < TIMEOUT + 5.0,
        "killed after {} s",
        proc.wall_seconds
    );

    // Allocates until the 512 MiB address-space limit stops it.
    let bomb = sign_of(&p, "BOMB");
    assert!(
        bomb.status == "crash" || bomb.status == "error",
        "{} {:?}",
        bomb.status,
        bomb.detail
    );
    let proc = bomb.processes.last().unwrap();
    assert_ne!(proc.outcome, Outcome::TimedOut);
    assert!(proc.wall_seconds < TIMEOUT, "{}", proc.wall_seconds);

    for r in [&crash, &hang, &bomb] {
        // No figures from a failed operation, and nothing made up.
        assert!(r.trials.is_empty() && r.statistics.is_none(), "{}", r.label);
        assert!(r.plan.is_none(), "{}", r.label);
        // The faulty instances' other operations and their one-call memory
        // runs are unaffected.
        for op in ["keygen", "verify"] {
            let o = op_record(&p, "t", "flt-94", &r.label, op);
            assert_eq!(o.status, "ok", "{} {op}: {:?}", r.label, o.detail);
            assert_statistics_recompute(&o);
        }
        assert_eq!(r.memory.as_ref().unwrap().status, "ok", "{}", r.label);
    }
}

/// With reference KATs that all pass, a measurement failure alone must
/// still make the run exit 1 ("some instances failed (build, KAT,
/// measurement)", src/error.rs `exit::ITEM_FAILURES`).
#[test]
fn a_run_whose_only_failure_is_in_timing_exits_1() {
    let p = faults_project();
    // First the KATs alone, blessed as the references.
    p.write("campaigns/k.toml", &faults_campaign(&["build", "kat"]));
    p.pqbench(&["run", "k"]).expect(1);
    p.pqbench(&["bless", "k"]).expect(0);
    p.write(
        "campaigns/t.toml",
        &faults_campaign(&["build", "kat", "time"]),
    );
    let run = p.pqbench(&["run", "t"]);
    let build = p.json("output/t/local/build.json");
    for inst in build["instances"].as_array().unwrap() {
        assert_eq!(inst["kat_status"], "PASS", "{}", inst["label"]);
    }
    assert_eq!(sign_of(&p, "CRASH").status, "crash");
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
}
