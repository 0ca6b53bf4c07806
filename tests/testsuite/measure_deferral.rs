//! Deferral: a campaign's `defer` patterns name instances measured after
//! every other one (their records start later), `--deferred-only` measures
//! only them and marks what it leaves stale as preliminary, and
//! `--deferred-cpu` gives them a CPU of their own.

use crate::common;
use common::*;

use std::collections::BTreeMap;

const ID: &str = "fix-82";
const OPS: [&str; 3] = ["keygen", "sign", "verify"];

/// SLOW comes first in the plan, so only deferral can move it last.
fn project(defer: &str) -> TestProject {
    let p = TestProject::bare();
    measure_fixture(
        &p,
        ID,
        &[
            ("SLOW", "FIX_WORK = 3"),
            ("A1", "FIX_WORK = 1"),
            ("A2", "FIX_WORK = 2"),
        ],
    );
    let campaign = measure_campaign(&[ID], &["build", "kat", "time", "render"], &[], "");
    p.write("campaigns/t.toml", &format!("{defer}{campaign}"));
    p
}

fn started(p: &TestProject, label: &str) -> Vec<String> {
    OPS.iter()
        .map(|op| {
            op_record(p, "t", ID, label, op)
                .started_utc
                .unwrap_or_else(|| panic!("{label} {op}: no start time"))
        })
        .collect()
}

fn record_bytes(p: &TestProject, label: &str) -> BTreeMap<String, String> {
    OPS.iter()
        .map(|op| {
            let rel = format!("output/t/local/records/{ID}/{label}__{op}.json");
            (op.to_string(), p.read(&rel))
        })
        .collect()
}

#[test]
fn deferred_instances_are_measured_last_and_alone_with_deferred_only() {
    let p = project("defer = [\"fix-82/SLOW\"]\n");
    let run = p.pqbench(&["run", "t"]).expect(1); // NOKAT counts as failing
                                                  // The others were published before the deferred one was measured.
    assert!(
        run.stderr
            .contains("every instance but the 1 deferred one(s) measured"),
        "{}",
        run.stderr
    );
    // UTC stamps in one fixed format compare in time order as strings.
    let slow_first = started(&p, "SLOW").into_iter().min().unwrap();
    let others_last = ["A1", "A2"]
        .iter()
        .flat_map(|l| started(&p, l))
        .max()
        .unwrap();
    assert!(
        slow_first > others_last,
        "SLOW started {slow_first}, others until {others_last}"
    );
    let campaign = p.json("output/t/local/campaign.json");
    assert_eq!(campaign["deferred"], serde_json::json!(["fix-82/SLOW"]));
    assert!(campaign.get("preliminary").is_none(), "{campaign:#}");
    let page = p.read("output/t/site/local/fix-82.md");
    assert!(!page.contains("preliminary"), "{page}");
    let method = p.read("output/t/site/local/method.md");
    assert!(
        method.contains("Deferred instances (`defer`), measured after every other instance"),
        "{method}"
    );

    // Only the deferred instance is measured again.
    let (a1, a2, slow) = (
        record_bytes(&p, "A1"),
        record_bytes(&p, "A2"),
        record_bytes(&p, "SLOW"),
    );
    p.pqbench(&["run", "t", "--deferred-only", "--remeasure"])
        .expect(1);
    assert_eq!(record_bytes(&p, "A1"), a1);
    assert_eq!(record_bytes(&p, "A2"), a2);
    let again = record_bytes(&p, "SLOW");
    for op in OPS {
        assert_ne!(again[op], slow[op], "SLOW {op} not measured again");
    }

    // An instance whose measurement went stale is not measured by
    // --deferred-only: its old figures stay, marked preliminary.
    let toml = p.read("algorithms/fix-82.toml");
    p.write(
        "algorithms/fix-82.toml",
        &toml.replace("FIX_WORK = 1 }", "FIX_WORK = 4 }"),
    );
    let run = p
        .pqbench(&["run", "t", "--deferred-only", "--format", "json"])
        .expect(1);
    let summary: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        summary["not_measured"],
        serde_json::json!(["fix-82/A1"]),
        "{}",
        run.stdout
    );
    assert_eq!(record_bytes(&p, "A1"), a1, "A1's old records stay");
    let campaign = p.json("output/t/local/campaign.json");
    assert_eq!(campaign["preliminary"], serde_json::json!(["fix-82/A1"]));
    let page = p.read("output/t/site/local/fix-82.md");
    let a1_rows: Vec<&str> = page.lines().filter(|l| l.starts_with("| `A1` |")).collect();
    assert!(
        a1_rows
            .iter()
            .any(|l| l.contains("preliminary: not measured by this run")),
        "{page}"
    );
    assert!(page.contains("Preliminary: the figures of `A1`"), "{page}");
    let summary_page = p.read("output/t/site/local/summary.md");
    assert!(
        summary_page.contains("preliminary (not yet measured by this run)"),
        "{summary_page}"
    );
}

#[test]
fn deferral_flags_need_deferred_instances_and_a_cpu_of_their_own() {
    let p = project("");
    let run = p.pqbench(&["run", "t", "--deferred-only"]).expect(2);
    assert!(
        run.stderr
            .contains("--deferred-only: campaign `t` defers no instance"),
        "{}",
        run.stderr
    );
    let p = project("defer = [\"fix-82/SLOW\"]\n");
    let run = p
        .pqbench(&["run", "t", "--cpu", "0", "--deferred-cpu", "0"])
        .expect(2);
    assert!(
        run.stderr
            .contains("--deferred-cpu 0 is also a measuring CPU"),
        "{}",
        run.stderr
    );
    let p = project("defer = [\"fix-82/NONE\", \"(\"]\n");
    let run = p.pqbench(&["plan", "t"]).expect(2);
    assert!(run.stderr.contains("bad `defer` pattern"), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("`defer` pattern `fix-82/NONE` matches no instance"),
        "{}",
        run.stderr
    );
}

#[test]
fn deferred_instances_can_have_a_cpu_of_their_own() {
    let cpus = pqbench::host::allowed_cpus();
    let (Some(&main), Some(&own)) = (cpus.first(), cpus.last()) else {
        return;
    };
    if main == own {
        // One CPU only: nothing to give the deferred instances.
        return;
    }
    let p = project("defer = [\"SLOW\"]\n");
    let (main_s, own_s) = (main.to_string(), own.to_string());
    p.pqbench(&["run", "t", "--cpu", &main_s, "--deferred-cpu", &own_s])
        .expect(1);
    for op in OPS {
        assert_eq!(op_record(&p, "t", ID, "SLOW", op).cpu, Some(own), "{op}");
        for label in ["A1", "A2"] {
            assert_eq!(op_record(&p, "t", ID, label, op).cpu, Some(main), "{op}");
        }
    }
    let campaign = p.json("output/t/local/campaign.json");
    assert_eq!(campaign["cpus"], serde_json::json!([main, own]));
}
