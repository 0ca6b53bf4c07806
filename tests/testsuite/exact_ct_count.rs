//! The opt-in `ct` and `count` stages on fixtures with known answers
//! (tests/fixtures/ct, tests/fixtures/measure): a secret table index and a
//! secret loop are flagged at their source lines, a constant-time select
//! over the same data is clean, an annotation's reason reaches the page;
//! instruction counts double with doubled work, repeat exactly from one
//! process to the next, and `compare` reports a single extra instruction.
//! Valgrind is slow: few calls, few instances.

use crate::common;
use common::*;

use pqbench::records::count::CountRecord;
use pqbench::records::ct::{CtRecord, CtStatus};
use pqbench::records::leak::{LeakRecord, LeakStatus};

/// Copies the ct fixture (with the measurement fixtures' DRNG) to
/// `algorithms/ctfix` and writes `algorithms/<id>.toml` over it.
fn ct_fixture(p: &TestProject, id: &str, sets: &[(&str, &str)], extra: &str) {
    p.copy("tests/fixtures/ct", "algorithms/ctfix");
    for f in ["fixdrng.c", "fixdrng.h"] {
        p.copy(
            &format!("tests/fixtures/measure/{f}"),
            &format!("algorithms/ctfix/{f}"),
        );
    }
    let toml = sign_fixture_toml(
        id,
        "ctfix",
        &["api.h", "fixdrng.h"],
        &["ctfix.c", "fixdrng.c"],
        &[],
        sets,
    );
    p.write(&format!("algorithms/{id}.toml"), &(toml + extra));
}

/// The line of ctfix.c whose code carries `/* <marker> */`.
fn marker_line(marker: &str) -> u32 {
    let text = std::fs::read_to_string(repo().join("tests/fixtures/ct/ctfix.c")).unwrap();
    let tag = format!("/* {marker} */");
    let i = text
        .lines()
        .position(|l| l.contains(&tag))
        .unwrap_or_else(|| panic!("{tag} not in ctfix.c"));
    i as u32 + 1
}

fn ct_record(p: &TestProject, id: &str, label: &str, op: &str) -> CtRecord {
    let rel = format!("output/t/local/ct/{id}/{label}__{op}.json");
    serde_json::from_str(&p.read(&rel)).unwrap_or_else(|e| panic!("parsing {rel}: {e}"))
}

fn count_record(p: &TestProject, id: &str, label: &str, op: &str, run: &str) -> CountRecord {
    let rel = match run {
        "" => format!("output/t/local/count/{id}/{label}__{op}.json"),
        r => format!("output/t/local/runs/{r}/count/{id}/{label}__{op}.json"),
    };
    serde_json::from_str(&p.read(&rel)).unwrap_or_else(|e| panic!("parsing {rel}: {e}"))
}

#[test]
fn secret_index_and_branch_are_flagged_at_their_lines_and_a_select_is_clean() {
    let p = TestProject::bare();
    let note = "the loop bound is public by design in this fixture";
    ct_fixture(
        &p,
        "fix-ct",
        &[
            ("LOOKUP", "CT_MODE = 1"),
            ("BRANCH", "CT_MODE = 2"),
            ("SELECT", "CT_MODE = 3"),
            ("NOTED", "CT_MODE = 4"),
        ],
        &format!("\n[[ct-annotation]]\nsite = \"ct_branch*\"\nlabels = \"NOTED\"\nops = [\"sign\"]\nreason = \"{note}\"\n"),
    );
    p.write(
        "campaigns/t.toml",
        &measure_campaign(&["fix-ct"], &["ct", "render"], &[], ""),
    );
    let run = p.pqbench(&["run", "t"]).expect(1); // NOKAT counts as failing
                                                  // The cost of each checked operation is in the run's output.
    assert!(run.stderr.contains("under memcheck in"), "{}", run.stderr);

    let lookup = ct_record(&p, "fix-ct", "LOOKUP", "sign");
    assert_eq!(lookup.status, CtStatus::Flagged, "{lookup:#?}");
    assert_eq!(lookup.status_text(), "ct-flagged (1 site)");
    let s = &lookup.sites[0];
    assert_eq!(
        (s.file.as_deref(), s.line),
        (
            Some("algorithms/ctfix/ctfix.c"),
            Some(marker_line("CT-LOOKUP"))
        ),
        "{s:#?}"
    );
    assert_eq!(s.kinds, ["memory index"]);
    assert_eq!(lookup.secrets, ["secret-key", "randomness"]);

    for label in ["BRANCH", "NOTED"] {
        let r = ct_record(&p, "fix-ct", label, "sign");
        assert_eq!(r.sites.len(), 1, "{label}: {r:#?}");
        let s = &r.sites[0];
        assert_eq!(s.line, Some(marker_line("CT-BRANCH")), "{label}: {s:#?}");
        assert!(s.function.starts_with("ct_branch"), "{s:#?}");
        assert!(s.kinds.contains(&"branch".to_string()), "{s:#?}");
        let reason = s.annotation.as_ref().map(|a| a.reason.as_str());
        assert_eq!(reason, (label == "NOTED").then_some(note), "{label}");
    }

    // The same data in constant time, and the operations without secret
    // branches: clean.
    let select = ct_record(&p, "fix-ct", "SELECT", "sign");
    assert_eq!(select.status, CtStatus::Clean, "{select:#?}");
    assert_eq!(select.status_text(), "ct-clean");
    for label in ["LOOKUP", "BRANCH", "SELECT", "NOTED"] {
        for op in ["keygen", "verify"] {
            let r = ct_record(&p, "fix-ct", label, op);
            assert_eq!(r.status, CtStatus::Clean, "{label} {op}: {r:#?}");
        }
        // keygen's key comes from the DRNG: its draw was marked secret.
        assert_eq!(
            ct_record(&p, "fix-ct", label, "keygen").random_draws,
            Some(1)
        );
    }

    // The page: the section, the statuses, the sites and the reason.
    let page = p.read("output/t/site/local/fix-ct.md");
    assert!(page.contains("## Constant-time check"), "{page}");
    assert!(
        page.contains("ct-flagged (1 site)") && page.contains("ct-clean"),
        "{page}"
    );
    assert!(
        page.contains(&format!(
            "`algorithms/ctfix/ctfix.c:{}`",
            marker_line("CT-LOOKUP")
        )),
        "{page}"
    );
    assert!(page.contains(note), "{page}");
    let html = p.read("output/t/site/local/fix-ct.html");
    assert!(html.contains("Constant-time check") && html.contains(note));
    let summary = p.read("output/t/site/local/summary.md");
    assert!(summary.contains("constant time"), "{summary}");
    let method = p.read("output/t/site/local/method.md");
    assert!(
        method.contains("variable-time instructions such as division are not flagged"),
        "{method}"
    );

    // `check` recomputes the sites from the raw errors; a tampered site is named.
    let ok = p.pqbench(&["check", "output/t"]);
    assert_eq!(ok.code, 0, "{}\n{}", ok.stdout, ok.stderr);
    assert!(ok.stdout.contains("constant-time checks"), "{}", ok.stdout);
    let rel = "output/t/local/ct/fix-ct/LOOKUP__sign.json";
    let mut v = p.json(rel);
    v["sites"][0]["line"] = serde_json::json!(1);
    p.write(rel, &serde_json::to_string_pretty(&v).unwrap());
    let bad = p.pqbench(&["check", "output/t"]);
    assert_eq!(bad.code, 1, "{}\n{}", bad.stdout, bad.stderr);
    assert!(format!("{}{}", bad.stdout, bad.stderr).contains("ct/fix-ct/LOOKUP__sign.json"));
}

#[test]
fn counts_double_with_the_work_repeat_exactly_and_one_instruction_shows() {
    let p = TestProject::bare();
    measure_fixture(
        &p,
        "fix-cm",
        &[("W10", "FIX_WORK = 10"), ("W20", "FIX_WORK = 20")],
    );
    ct_fixture(&p, "fix-cn", &[("N", "CT_MODE = 3, CT_NOPS = 0")], "");
    let tail = "[count]\nmethod = \"callgrind\"\ncalls = 2\n";
    p.write(
        "campaigns/t.toml",
        &measure_campaign(&["fix-cm", "fix-cn"], &["count"], &[], tail),
    );
    p.pqbench(&["run", "t"]).expect(1);
    let runs = |p: &TestProject| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(p.path().join("output/t/local/runs"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.'))
            .collect();
        v.sort();
        v
    };
    let first = runs(&p);
    assert_eq!(first.len(), 1);

    let w10 = count_record(&p, "fix-cm", "W10", "sign", "");
    let w20 = count_record(&p, "fix-cm", "W20", "sign", "");
    assert_eq!(w10.method.as_deref(), Some("callgrind"));
    assert_eq!(w10.per_call.len(), 2);
    let (a, b) = (
        w10.instructions.as_ref().unwrap().per_call,
        w20.instructions.as_ref().unwrap().per_call,
    );
    let ratio = b / a;
    assert!((1.99..=2.01).contains(&ratio), "{b} / {a} = {ratio}");

    // One instruction more, and every operation counted again from scratch.
    ct_fixture(&p, "fix-cn", &[("N", "CT_MODE = 3, CT_NOPS = 1")], "");
    p.pqbench(&["run", "t", "--remeasure"]).expect(1);
    let all = runs(&p);
    assert_eq!(all.len(), 2, "{all:?}");
    let (ra, rb) = (all[0].as_str(), all[1].as_str());
    for label in ["W10", "W20"] {
        for op in ["keygen", "sign", "verify"] {
            let x = count_record(&p, "fix-cm", label, op, ra);
            let y = count_record(&p, "fix-cm", label, op, rb);
            assert_eq!(
                x.per_call, y.per_call,
                "{label} {op}: counts differ between runs"
            );
        }
    }
    let x = count_record(&p, "fix-cn", "N", "sign", ra);
    let y = count_record(&p, "fix-cn", "N", "sign", rb);
    let d: Vec<i64> = x
        .per_call
        .iter()
        .zip(&y.per_call)
        .map(|(a, b)| *b as i64 - *a as i64)
        .collect();
    assert_eq!(d, [1, 1], "{:?} → {:?}", x.per_call, y.per_call);

    let out = p.pqbench(&["compare", ra, rb, "--format", "json"]);
    let r: serde_json::Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", out.stdout, out.stderr));
    let counts = r["instructions"].as_array().expect("instructions compared");
    assert_eq!(counts.len(), 9, "{counts:#?}");
    for c in counts {
        let changed = c["instance"] == "fix-cn/N" && c["op"] == "sign";
        if changed {
            assert_eq!(c["verdict"], "more instructions", "{c:#}");
            assert_eq!(c["difference"].as_f64(), Some(1.0), "{c:#}");
            assert!(c["ratio"].as_f64().unwrap() > 1.0);
        } else {
            assert_eq!(c["verdict"], "identical", "{c:#}");
        }
    }
    let md = p.pqbench(&["compare", ra, rb, "--format", "md"]);
    assert!(
        md.stdout.contains("## Instruction counts") && md.stdout.contains("**more instructions**"),
        "{}",
        md.stdout
    );
    let gate = p.pqbench(&["compare", ra, rb, "--fail-on-regression", "--format", "csv"]);
    assert_eq!(gate.code, 1, "{}\n{}", gate.stdout, gate.stderr);
    assert!(
        gate.stdout.lines().any(|l| l
            .starts_with("instructions,fix-cn/N,fix-cn,N,sign,callgrind,")
            && l.contains("more instructions")),
        "{}",
        gate.stdout
    );
}

#[test]
fn demo_counts_are_reproduced_exactly() {
    let p = TestProject::demo();
    p.write(
        "campaigns/cnt.toml",
        "algorithms = [\"sign-90\", \"kem-91\", \"sign-92\"]\nstages = [\"count\"]\n\n[kat]\ntimeout-seconds = 120\n\n[host]\nrequire-fixed = false\n\n[count]\nmethod = \"callgrind\"\ncalls = 2\n",
    );
    p.pqbench(&["run", "cnt"]).expect(0);
    let runs: Vec<String> = std::fs::read_dir(p.path().join("output/cnt/local/runs"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    assert_eq!(runs.len(), 1);
    // A fresh cache: every library rebuilt, every operation counted anew.
    let out = p.pqbench(&["reproduce", &runs[0], "--format", "json"]);
    let r: serde_json::Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", out.stdout, out.stderr));
    assert_eq!(out.code, 0, "{:#}", r["report"]["failures"]);
    let counts = r["report"]["timing"]["instructions"]
        .as_array()
        .expect("counts compared");
    // 7 instances × 3 operations.
    assert_eq!(counts.len(), 21);
    for c in counts {
        assert_eq!(c["verdict"], "identical", "{c:#}");
    }
}

/// A submission that talks to Valgrind (it marks its secret defined before
/// a secret-indexed lookup, and stops callgrind around its own work) gets
/// `suspicious` count and ct records naming where the request sits, never
/// a forged `clean` or a lowered count; the same code without the requests
/// is checked and counted as usual.
#[test]
fn client_requests_in_a_submission_make_its_count_and_ct_suspicious() {
    if !common::skip::tools_or_skip(&["valgrind"], "apt-get install valgrind") {
        return;
    }
    let p = TestProject::bare();
    ct_fixture(
        &p,
        "fix-vg",
        &[
            ("HIDE", "CT_MODE = 1, CT_HIDE = 1"),
            ("PLAIN", "CT_MODE = 1"),
        ],
        "",
    );
    let tail = "[count]\nmethod = \"callgrind\"\ncalls = 2\n";
    p.write(
        "campaigns/t.toml",
        &measure_campaign(&["fix-vg"], &["count", "ct", "render"], &[], tail),
    );
    p.pqbench(&["run", "t"]).expect(1); // NOKAT counts as failing
    for op in ["keygen", "sign", "verify"] {
        let ct = ct_record(&p, "fix-vg", "HIDE", op);
        assert_eq!(ct.status, CtStatus::Suspicious, "{op}: {ct:#?}");
        let why = ct.detail.as_deref().unwrap_or("");
        assert!(
            why.starts_with("Valgrind client request in sig_sign (ctfix.c)"),
            "{op}: {why}"
        );
        let count = count_record(&p, "fix-vg", "HIDE", op, "");
        assert_eq!(count.status.as_str(), "suspicious", "{op}: {count:#?}");
        assert!(count.instructions.is_none() && count.per_call.is_empty());
    }
    // The control: the lookup is flagged, the count stands.
    let plain = ct_record(&p, "fix-vg", "PLAIN", "sign");
    assert_eq!(plain.status, CtStatus::Flagged, "{plain:#?}");
    let counted = count_record(&p, "fix-vg", "PLAIN", "sign", "");
    assert_eq!(counted.status.as_str(), "ok", "{counted:#?}");
    // The page says so.
    let page = p.read("output/t/site/local/fix-vg.md");
    assert!(page.contains("ct-suspicious"), "{page}");
    assert!(
        page.contains("suspicious: Valgrind client request in sig"),
        "{page}"
    );
}

fn leak_record(p: &TestProject, id: &str, label: &str, op: &str) -> LeakRecord {
    let rel = format!("output/t/local/leak/{id}/{label}__{op}.json");
    serde_json::from_str(&p.read(&rel)).unwrap_or_else(|e| panic!("parsing {rel}: {e}"))
}

/// A submission that runs constant-time code only while Valgrind's preload
/// is in its environment passes memcheck; the timing test outside Valgrind
/// sees its time follow the key, the scan names the probe, and the page
/// says the clean verdict rests on memcheck alone against the timing test.
/// The same code without the probe: clean, and the timing test agrees.
#[test]
fn a_library_constant_time_only_under_valgrind_is_caught_by_the_timing_test() {
    if !common::skip::tools_or_skip(&["valgrind"], "apt-get install valgrind") {
        return;
    }
    let p = TestProject::bare();
    ct_fixture(
        &p,
        "fix-probe",
        &[
            ("SELECT", "CT_MODE = 3"),
            ("PROBE", "CT_MODE = 3, CT_PROBE = 1"),
        ],
        "",
    );
    let tail = "[stage.leak]\ncalls = 4000\n";
    p.write(
        "campaigns/t.toml",
        &measure_campaign(&["fix-probe"], &["scan", "ct", "leak", "render"], &[], tail),
    );
    p.pqbench(&["run", "t"]).expect(1); // NOKAT counts as failing
    for label in ["SELECT", "PROBE"] {
        let ct = ct_record(&p, "fix-probe", label, "sign");
        assert_eq!(ct.status, CtStatus::Clean, "{label}: {ct:#?}");
    }
    let honest = leak_record(&p, "fix-probe", "SELECT", "sign");
    assert_eq!(honest.secret, "secret-key");
    assert!(honest.fixed_cycles.len() >= 50 && honest.random_cycles.len() >= 50);
    assert_ne!(honest.status, LeakStatus::Difference, "{:?}", honest.max_t);
    assert_ne!(honest.status, LeakStatus::Error, "{:?}", honest.detail);
    let probe = leak_record(&p, "fix-probe", "PROBE", "sign");
    assert_eq!(probe.status, LeakStatus::Difference, "{:?}", probe.max_t);
    // verify, the public control, takes the same keys' public part: its
    // time does not follow them.
    let control = leak_record(&p, "fix-probe", "PROBE", "verify");
    assert_eq!(control.secret, "public-key");
    assert_ne!(
        control.status,
        LeakStatus::Difference,
        "{:?}",
        control.max_t
    );
    assert_ne!(control.status, LeakStatus::Error, "{:?}", control.detail);
    let scan = p.read("output/t/local/scan/fix-probe/PROBE.json");
    assert!(scan.contains("env-probe"), "{scan}");
    let page = p.read("output/t/site/local/fix-probe.md");
    assert!(page.contains("## Timing test of the secret key"), "{page}");
    assert!(
        page.contains("⚠ memcheck alone, and the timing test disagrees"),
        "{page}"
    );
    // `check` recomputes the tests from the recorded cycles.
    let check = p.pqbench(&["check", "output/t"]);
    assert_eq!(check.code, 0, "{}\n{}", check.stdout, check.stderr);
}
