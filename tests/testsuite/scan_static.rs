//! The static scan (stage `scan`) on fixtures built into a campaign beside
//! an honest control (tests/fixtures/scan/tamper.c): each way of reaching
//! outside the measured operation is found with its class and symbol and
//! makes its instance `suspicious`, on the record, in the run's summary
//! and on the pages; an allowance with a reason clears the flag and shows
//! the reason; `check` recomputes the records; a misspelt key of
//! `[stage.scan]` is an error naming the key and its line.

use crate::common;
use common::*;

const ID: &str = "scan-97";

fn project() -> TestProject {
    let p = TestProject::bare();
    p.copy("tests/fixtures/faults/sign-toy", "algorithms/scan");
    p.copy("tests/fixtures/scan", "algorithms/scan-extra");
    std::fs::copy(
        p.path().join("algorithms/scan-extra/tamper.c"),
        p.path().join("algorithms/scan/tamper.c"),
    )
    .unwrap();
    let mut toml = format!(
        "id = \"{ID}\"\nname = \"Scan fixture\"\nkind = \"sign\"\napi = \"ngcc\"\n\
         uses = [\"iccs-standin\"]\n\n[ngcc]\nheaders = [\"api.h\", \"drng.h\"]\n\n\
         [[implementation]]\nname = \"reference\"\nroot = \"scan\"\nsources = [\"toy.c\", \"tamper.c\"]\n"
    );
    for (label, n) in [
        ("SCAN-OK", 0),
        ("SCAN-CTOR", 1),
        ("SCAN-RAW", 2),
        ("SCAN-PROC", 3),
    ] {
        toml += &format!(
            "\n[[parameter-set]]\nlabel = \"{label}\"\ndefines = {{ TOY_FAULT = 0, SCAN_TAMPER = {n} }}\n"
        );
    }
    p.write(&format!("algorithms/{ID}.toml"), &toml);
    p
}

fn campaign(tail: &str) -> String {
    format!(
        "algorithms = [\"{ID}\"]\nflag-profiles = [\"guide\"]\nstages = [\"scan\", \"render\"]\n\n\
         [host]\nrequire-fixed = false\n{tail}"
    )
}

fn findings(p: &TestProject, label: &str) -> (String, Vec<String>) {
    let r = p.json(&format!("output/t/local/scan/{ID}/{label}.json"));
    let list = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{} {} {}",
                f["class"].as_str().unwrap(),
                f["detail"].as_str().unwrap(),
                f["symbol"].as_str().unwrap_or("-")
            )
        })
        .collect();
    (r["status"].as_str().unwrap().to_string(), list)
}

#[test]
fn tampering_is_found_named_and_flagged_and_an_allowance_clears_it() {
    let p = project();
    p.write("campaigns/t.toml", &campaign(""));
    let run = p.pqbench(&["run", "t"]).expect(1);
    assert!(
        run.stdout.contains("scan suspicious") || run.stderr.contains("scan suspicious"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    each_class_is_named(&p);
    pages_flag_the_suspicious(&p);

    // check recomputes the records, and sees a status the findings do
    // not give.
    p.pqbench(&["check", "output/t"]).expect(0);
    let rec = format!("output/t/local/scan/{ID}/SCAN-RAW.json");
    let edited = p.read(&rec).replace("\"suspicious\"", "\"clean\"");
    p.write(&rec, &edited);
    let bad = p.pqbench(&["check", "output/t"]);
    assert_ne!(bad.code, 0);
    assert!(
        bad.stdout
            .contains("status clean but its findings give suspicious"),
        "{}\n{}",
        bad.stdout,
        bad.stderr
    );
    allowances_clear_the_flag(&p);
}

/// The record of each fixture instance: class, detail and symbol.
fn each_class_is_named(p: &TestProject) {
    let (status, found) = findings(p, "SCAN-OK");
    assert_eq!((status.as_str(), found.len()), ("clean", 0), "{found:?}");
    let (status, found) = findings(p, "SCAN-CTOR");
    assert_eq!(status, "suspicious");
    for want in [
        "constructor .init_array scan_grab",
        "call dup2 scan_grab",
        "call pipe scan_grab",
    ] {
        assert!(found.iter().any(|f| f == want), "{want} not in {found:?}");
    }
    let (status, found) = findings(p, "SCAN-RAW");
    assert_eq!(status, "suspicious");
    let raw = if cfg!(target_arch = "aarch64") {
        "syscall svc scan_raw"
    } else {
        "syscall syscall scan_raw"
    };
    assert_eq!(found, [raw]);
    let (status, found) = findings(p, "SCAN-PROC");
    assert_eq!(status, "suspicious");
    assert_eq!(found, ["proc-path /proc/self/mem scan_where"]);
}

/// The algorithm page lists the findings; the control has no row; the
/// summary flags the suspicious rows, not the control's.
fn pages_flag_the_suspicious(p: &TestProject) {
    let md = p.read(&format!("output/t/site/local/{ID}.md"));
    assert!(md.contains("## Static scan\n"), "{md}");
    assert!(
        md.contains(
            "| SCAN-PROC | ⚠ suspicious | proc-path | /proc/self/mem | scan_where | tamper.c | – |"
        ),
        "{md}"
    );
    assert!(!md.contains("| SCAN-OK |"), "{md}");

    // The summary flags the suspicious rows, not the control's.
    let summary = p.read("output/t/site/local/summary.md");
    let row = |label: &str| {
        summary
            .lines()
            .find(|l| l.contains(&format!("| `{label}` |")))
            .unwrap_or_else(|| panic!("no row of {label}:\n{summary}"))
            .to_string()
    };
    for label in ["SCAN-CTOR", "SCAN-RAW", "SCAN-PROC"] {
        assert!(row(label).contains("⚠ suspicious"), "{}", row(label));
        assert!(
            row(label).contains("left out of the chart"),
            "{}",
            row(label)
        );
    }
    assert!(!row("SCAN-OK").contains("suspicious"), "{}", row("SCAN-OK"));
}

fn allowances_clear_the_flag(p: &TestProject) {
    // An allowance with a reason clears the constructor instance; its
    // reason is on the page.
    let allow = "\n[stage.scan]\nallow = [\n  { algorithm = \"scan-97\", finding = \"constructor\", symbol = \"scan_grab\", reason = \"opens its own pipe at load\" },\n  { algorithm = \"scan-97\", finding = \"call\", symbol = \"scan_grab\", reason = \"the constructor's pipe\" },\n]\n";
    p.write("campaigns/t.toml", &campaign(allow));
    p.pqbench(&["run", "t"]).expect(1);
    let (status, _) = findings(p, "SCAN-CTOR");
    assert_eq!(status, "clean");
    let summary = p.read("output/t/site/local/summary.md");
    let ctor = summary
        .lines()
        .find(|l| l.contains("| `SCAN-CTOR` |"))
        .unwrap();
    assert!(!ctor.contains("suspicious"), "{ctor}");
    let md = p.read(&format!("output/t/site/local/{ID}.md"));
    assert!(md.contains("| SCAN-CTOR | allowed | constructor | .init_array | scan_grab | tamper.c | opens its own pipe at load |"), "{md}");
    p.pqbench(&["check", "output/t"]).expect(0);
}

#[test]
fn a_misspelt_or_unreasoned_allowance_is_refused() {
    let p = project();
    // A misspelt key names the key and its line.
    p.write("campaigns/t.toml", &campaign("\n[stage.scan]\nallow = [{ algorithm = \"scan-97\", finding = \"call\", reson = \"x\" }]\n"));
    let err = p.pqbench(&["run", "t"]);
    assert_ne!(err.code, 0);
    let text = format!("{}{}", err.stdout, err.stderr);
    assert!(
        text.contains("[stage.scan]") && text.contains("reson"),
        "{text}"
    );
    // The line of the key at fault (`allow`), not the table's (8).
    assert!(text.contains("t.toml:9:1"), "{text}");
    // An allowance without a reason is refused too.
    p.write("campaigns/t.toml", &campaign("\n[stage.scan]\nallow = [{ algorithm = \"scan-97\", finding = \"call\", reason = \" \" }]\n"));
    let err = p.pqbench(&["run", "t"]);
    assert_ne!(err.code, 0);
    let text = format!("{}{}", err.stdout, err.stderr);
    assert!(text.contains("`reason` is empty"), "{text}");
}
