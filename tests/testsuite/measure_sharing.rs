//! Measurements belong to the campaign that made them: another campaign's
//! `--remeasure` of the same instance leaves a campaign's records byte for
//! byte, and a campaign takes another's measurements only when it says so
//! (`reuse-measurements-from`), its pages saying where they came from.

use crate::common;
use common::*;

use std::collections::BTreeMap;

use pqbench::stats::Trial;

/// Every timing record of `campaign`, path → bytes.
fn records(p: &TestProject, campaign: &str) -> BTreeMap<String, Vec<u8>> {
    let dir = p.path().join(format!("output/{campaign}/local/records"));
    files_with_ext(&dir, "json")
        .into_iter()
        .map(|f| {
            let rel = f.strip_prefix(&dir).unwrap().display().to_string();
            (rel, std::fs::read(&f).unwrap())
        })
        .collect()
}

fn trials(p: &TestProject, campaign: &str, op: &str) -> Vec<Trial> {
    op_record(p, campaign, "fix-80", "S1", op).trials
}

fn project() -> TestProject {
    let p = TestProject::bare();
    measure_fixture(&p, "fix-80", &[("S1", "FIX_WORK = 2")]);
    let stages = ["build", "kat", "time", "render"];
    for name in ["a", "b"] {
        p.write(
            &format!("campaigns/{name}.toml"),
            &measure_campaign(&["fix-80"], &stages, &[], ""),
        );
    }
    p.write(
        "campaigns/c.toml",
        &format!(
            "reuse-measurements-from = \"b\"\n{}",
            measure_campaign(&["fix-80"], &stages, &[], "")
        ),
    );
    p
}

#[test]
fn another_campaigns_remeasure_leaves_a_campaigns_records_alone() {
    let p = project();
    p.pqbench(&["run", "a"]).expect(1); // NOKAT counts as failing
    let before = records(&p, "a");
    assert_eq!(before.len(), 3, "{:?}", before.keys());

    p.pqbench(&["run", "b", "--remeasure"]).expect(1);
    let run = p.pqbench(&["run", "a", "--format", "json"]).expect(1);
    let summary: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(summary["computed"], 0, "{}", run.stdout);
    assert_eq!(records(&p, "a"), before, "a's records changed");
    // ...and a knows its measurements are still its own.
    let status = p.pqbench(&["status", "a", "--format", "json"]).expect(0);
    let status: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(status["stale"], 0, "{status:#}");
    let record = op_record(&p, "a", "fix-80", "S1", "sign");
    assert_eq!(record.measured_by, None);
}

#[test]
fn a_campaign_takes_anothers_measurements_only_when_it_says_so() {
    let p = project();
    p.pqbench(&["run", "b"]).expect(1);
    let run = p.pqbench(&["run", "c", "--format", "json"]).expect(1);
    let summary: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(summary["computed"].as_u64(), Some(0), "{}", run.stdout);
    for op in ["keygen", "sign", "verify"] {
        assert_eq!(trials(&p, "c", op), trials(&p, "b", op), "{op}");
        let r = op_record(&p, "c", "fix-80", "S1", op);
        assert_eq!(r.measured_by.as_deref(), Some("b/local"), "{op}");
    }
    // The page and the lock say where they came from.
    let page = p.read("output/c/site/local/fix-80.md");
    assert!(page.contains("taken from campaign b/local"), "{page}");
    assert!(
        page.contains("because this campaign reuses its measurements"),
        "{page}"
    );
    let locks = files_with_ext(&p.path().join("output/c/local/runs"), "json");
    let lock = locks
        .iter()
        .find(|f| f.ends_with("lock.json"))
        .expect("c's lock");
    let lock = std::fs::read_to_string(lock).unwrap();
    assert!(lock.contains("\"lent_by\": \"b/local\""), "{lock}");

    // b measures again: c, sharing b's measurements, follows.
    p.pqbench(&["run", "b", "--remeasure"]).expect(1);
    p.pqbench(&["run", "c"]).expect(1);
    assert_eq!(trials(&p, "c", "sign"), trials(&p, "b", "sign"));

    // c measures itself: its own results, b's untouched, and they stay
    // c's own on the next run.
    let b_before = records(&p, "b");
    p.pqbench(&["run", "c", "--remeasure"]).expect(1);
    let own = op_record(&p, "c", "fix-80", "S1", "sign");
    assert_eq!(own.measured_by, None);
    assert_eq!(records(&p, "b"), b_before, "b's records changed");
    let c_before = records(&p, "c");
    p.pqbench(&["run", "c"]).expect(1);
    assert_eq!(records(&p, "c"), c_before);
    assert!(!p
        .read("output/c/site/local/fix-80.md")
        .contains("taken from campaign"));
}

#[test]
fn reuse_names_another_campaign_of_the_same_system() {
    let p = project();
    let cases = [
        (
            "reuse-measurements-from = \"c\"\n",
            "cannot take measurements from itself",
        ),
        (
            "reuse-measurements-from = \"zz\"\n",
            "no campaign named `zz`",
        ),
        (
            "reuse-measurements-from = \"../b\"\n",
            "campaign name `../b`",
        ),
    ];
    for (line, want) in cases {
        p.write(
            "campaigns/c.toml",
            &format!(
                "{line}{}",
                measure_campaign(&["fix-80"], &["build"], &[], "")
            ),
        );
        let run = p.pqbench(&["plan", "c"]).expect(2);
        assert!(run.stderr.contains(want), "{}", run.stderr);
        assert!(run.stderr.contains("c.toml:1:"), "{}", run.stderr);
    }
    p.write(
        "campaigns/b.toml",
        &format!(
            "system = \"x86_9\"\n{}",
            measure_campaign(&["fix-80"], &["build"], &[], "")
        ),
    );
    p.write(
        "campaigns/c.toml",
        &format!(
            "reuse-measurements-from = \"b\"\n{}",
            measure_campaign(&["fix-80"], &["build"], &[], "")
        ),
    );
    let run = p.pqbench(&["plan", "c"]).expect(2);
    assert!(
        run.stderr
            .contains("campaign `b` runs on system `x86_9`, this one on `local`"),
        "{}",
        run.stderr
    );
}
