//! Each fault fixture gets its own status and the campaign still finishes.

use crate::common;
use common::TestProject;

fn fault_project() -> TestProject {
    let p = TestProject::bare();
    p.copy("tests/fixtures/faults/sign-toy", "algorithms/sign-toy");
    p.copy(
        "tests/fixtures/faults/sign-toy.toml",
        "algorithms/sign-toy.toml",
    );
    p.copy("tests/fixtures/faults/faults.toml", "campaigns/faults.toml");
    p.copy(
        "tests/fixtures/faults/kat.sha256",
        "kat/sign-toy/kat.sha256",
    );
    p.copy("tests/fixtures/faults/references", "kat/sign-toy");
    p
}

#[test]
fn every_fault_gets_its_own_status_and_the_campaign_finishes() {
    let p = fault_project();
    let run = p.pqbench(&["run", "faults"]).expect(1);
    let build = p.json("output/faults/local/build.json");
    let status = |label: &str| -> (String, String) {
        let rec = build["instances"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["label"] == label)
            .unwrap_or_else(|| panic!("{label} missing from build.json"));
        (
            rec["kat_status"].as_str().unwrap().to_string(),
            rec["kat_detail"].as_str().unwrap_or("").to_string(),
        )
    };
    let expected = [
        ("TOY-OK", "PASS"),
        ("TOY-NOCOMPILE", "BUILDFAIL"),
        ("TOY-SEGV", "CRASH"),
        ("TOY-HANG", "TIMEOUT"),
        ("TOY-OVERFLOW", "OVERFLOW"),
        ("TOY-WRONGKAT", "MISMATCH"),
        ("TOY-REJECT", "CRYPTOFAIL"),
    ];
    for (label, want) in expected {
        assert_eq!(status(label).0, want, "{label}\n{}", run.stdout);
        let log = p.read(&format!("output/faults/local/kat/sign-toy/{label}.log"));
        assert!(
            log.trim_end()
                .ends_with(&format!("RESULT sign-toy {label} {want}")),
            "{label} log:\n{log}"
        );
    }
    assert!(
        status("TOY-NOCOMPILE").1.contains("toy.c"),
        "the compiler error names the file"
    );
    assert!(status("TOY-SEGV").1.contains("SIGSEGV"));
    assert!(status("TOY-OVERFLOW").1.contains("guard"));
    assert!(status("TOY-REJECT")
        .1
        .contains("rejected the honest signature"));
    // The reference file is present: the first differing record and field.
    let wrong = status("TOY-WRONGKAT").1;
    assert!(wrong.contains("record 0, field Sn"), "{wrong}");
    // Only the healthy instance is timed; the others cost only themselves.
    let rec = p.json("output/faults/local/records/sign-toy/TOY-OK__sign.json");
    assert_eq!(rec["status"], "ok");
    assert!(!p
        .path()
        .join("output/faults/local/records/sign-toy/TOY-SEGV__sign.json")
        .exists());
    // No machine path leaks into the published logs.
    let root = p.path().display().to_string();
    assert!(!p
        .read("output/faults/local/kat/sign-toy/TOY-NOCOMPILE.log")
        .contains(&root));
}

#[test]
fn a_fallback_profile_is_tried_and_both_outcomes_are_recorded() {
    let p = fault_project();
    let campaign = p.read("campaigns/faults.toml").replace(
        "flag-profiles = [\"guide\"]",
        "flag-profiles = [\"guide\", \"harness-default\"]",
    );
    p.write(
        "campaigns/faults.toml",
        &campaign.replace("\"time\", \"memory\"", ""),
    );
    p.write(
        "campaigns/faults.toml",
        &p.read("campaigns/faults.toml")
            .replace("\"kat\", ]", "\"kat\"]"),
    );
    p.pqbench(&["run", "faults"]).expect(1);
    let build = p.json("output/faults/local/build.json");
    let rec = build["instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == "TOY-REJECT")
        .unwrap();
    let attempts = rec["attempts"].as_array().unwrap();
    let profiles: Vec<&str> = attempts
        .iter()
        .map(|a| a["profile"].as_str().unwrap())
        .collect();
    assert_eq!(profiles, ["guide", "harness-default"]);
    assert!(attempts.iter().all(|a| a["kat_status"] == "CRYPTOFAIL"));
}

/// One instance without a reference among failing ones: bless blesses it,
/// names each one it cannot bless, and exits 1.
#[test]
fn bless_blesses_what_it_can_and_names_the_rest() {
    let p = fault_project();
    let campaign = p
        .read("campaigns/faults.toml")
        .replace("\"time\", \"memory\"", "")
        .replace("\"kat\", ]", "\"kat\"]");
    p.write("campaigns/faults.toml", &campaign);
    let manifest = p.read("kat/sign-toy/kat.sha256");
    let without_ok: String = manifest
        .lines()
        .filter(|l| !l.contains("TOY-OK/"))
        .map(|l| format!("{l}\n"))
        .collect();
    p.write("kat/sign-toy/kat.sha256", &without_ok);
    std::fs::remove_dir_all(p.path().join("kat/sign-toy/TOY-OK")).unwrap_or_default();
    p.pqbench(&["run", "faults"]).expect(1);
    let bless = p.pqbench(&["bless", "faults"]);
    assert_eq!(bless.code, 1, "{}\n{}", bless.stdout, bless.stderr);
    for line in [
        "not blessed sign-toy/TOY-NOCOMPILE: its KAT status is BUILDFAIL",
        "not blessed sign-toy/TOY-SEGV: its KAT status is CRASH",
        "not blessed sign-toy/TOY-WRONGKAT: it does not match its reference KAT; pass --force",
    ] {
        assert!(bless.stdout.contains(line), "{line}:\n{}", bless.stdout);
    }
    let blessed = p.read("kat/sign-toy/kat.sha256");
    assert!(
        blessed.contains(" strict TOY-OK/KAT_SIG.txt"),
        "TOY-OK blessed:\n{blessed}"
    );
    p.pqbench(&["run", "faults"]).expect(1);
    let build = p.json("output/faults/local/build.json");
    let ok = build["instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == "TOY-OK")
        .unwrap();
    assert_eq!(ok["kat_status"], "PASS");
}
