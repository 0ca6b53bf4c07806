//! `pqbench reproduce` on a fresh run of demo algorithms: every library
//! bit-identical, every KAT log identical, every operation compared, the
//! exit code and the report following the timing verdicts (that they come
//! out within noise is a statistical check of its own).

use crate::common::temp_project as project;

use project::{text, TempProject};
use serde_json::Value;

/// A demo run and its reproduction on a fresh cache, with everything that
/// must hold whatever the host's noise: the project and the report.
fn run_and_reproduce() -> (TempProject, Value) {
    let p = TempProject::demo(&["sign-90", "sign-92"]);
    let run = p.pqbench(&["run", "repro"]);
    assert!(run.status.success(), "{}", text(&run));
    let runs = p.runs("repro");
    assert_eq!(runs.len(), 1, "one run directory per run");
    let original = p.run_dir("repro", &runs[0]);

    // The lock names no machine path of the project, and its stage keys
    // are the engine's own.
    let lock_text = std::fs::read_to_string(original.join("lock.json")).unwrap();
    let root = p.root().canonicalize().unwrap();
    assert!(!lock_text.contains(root.to_str().unwrap()), "{lock_text}");
    let lock: Value = serde_json::from_str(&lock_text).unwrap();
    assert_eq!(lock["run_id"].as_str(), Some(runs[0].as_str()));
    let instances = lock["instances"].as_array().unwrap();
    assert_eq!(instances.len(), 5);
    for i in instances {
        let (alg, label) = (
            i["algorithm"].as_str().unwrap(),
            i["label"].as_str().unwrap(),
        );
        for stage in ["build", "kat", "time", "memory"] {
            let state: Value = serde_json::from_str(&p.read(&format!(
                "output/repro/local/.state/{stage}/{alg}/{label}.json"
            )))
            .unwrap();
            assert_eq!(
                i["stages"][stage]["key"], state["key"],
                "{alg}/{label} {stage}"
            );
            assert!(i["stages"][stage]["result_sha256"].is_string());
        }
        assert!(i["inputs"]
            .as_object()
            .unwrap()
            .keys()
            .any(|k| k.starts_with("source:algorithms/")));
    }
    for (file, sha) in lock["files"].as_object().unwrap() {
        let bytes = std::fs::read(original.join(file)).unwrap();
        assert_eq!(&pqbench::fsutil::sha256_hex(&bytes), sha, "{file}");
    }
    assert!(original
        .join("records/sign-92/LARCH-1__sign.json")
        .is_file());
    assert!(original.join("kat/sign-90/WINTER-128.log").is_file());

    let out = p.pqbench(&["reproduce", &runs[0]]);
    let shown = text(&out);
    assert!(shown.contains("inputs: identical to the lock"), "{shown}");
    let runs = p.runs("repro");
    assert_eq!(runs.len(), 2, "{shown}");
    let new = p.run_dir("repro", &runs[1]);
    let new_lock: Value =
        serde_json::from_str(&std::fs::read_to_string(new.join("lock.json")).unwrap()).unwrap();
    assert_eq!(new_lock["reproduces"], lock["run_id"]);
    assert_eq!(new_lock["fresh_cache"], true);
    assert_eq!(new_lock["plan"]["cache_dir"], "output/.cache");

    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(new.join("reproduction.json")).unwrap())
            .unwrap();
    let checks = report["instances"].as_array().unwrap();
    assert_eq!(checks.len(), 5);
    for c in checks {
        assert_eq!(c["library"], "bit-identical", "{c}");
        assert_eq!(c["kat"], "identical", "{c}");
    }
    assert!(report["fixed_figures_identical"].as_u64().unwrap() > 0);
    assert_eq!(report["fixed_figures_differing"], serde_json::json!([]));
    let md = std::fs::read_to_string(new.join("reproduction.md")).unwrap();
    let html = std::fs::read_to_string(new.join("reproduction.html")).unwrap();
    let ops = report["timing"]["operations"].as_array().unwrap();
    assert_eq!(ops.len(), 15, "every operation of every instance");
    for o in ops {
        let v = o["verdict"].as_str().unwrap();
        assert!(["within noise", "slower", "faster"].contains(&v), "{o}");
        let row = format!(
            "| {} | {} |",
            o["instance"].as_str().unwrap(),
            o["op"].as_str().unwrap()
        );
        assert!(md.contains(&row), "{row} missing from\n{md}");
        assert!(html.contains(&format!("<td>{}</td>", o["op"].as_str().unwrap())));
    }
    // Whether the timings came out within noise is a statistical outcome
    // (`statistical_an_unchanged_demo_run_reproduces_its_timings`); what
    // must hold either way is that the exit code and the report follow
    // the verdicts: a `slower` operation is not reproduced, a `faster` one
    // is reported and does not fail the reproduction.
    let slower: Vec<&Value> = ops.iter().filter(|o| o["verdict"] == "slower").collect();
    let code = i64::from(out.status.code().unwrap_or(-1));
    assert_eq!(report["exit_code"].as_i64(), Some(code), "{shown}");
    assert_eq!(code == 0, slower.is_empty(), "{shown}\n{md}");
    for o in &slower {
        let (instance, op) = (o["instance"].as_str().unwrap(), o["op"].as_str().unwrap());
        let named = format!("{instance} {op}");
        assert!(
            md.contains("NOT reproduced") && md.contains(&named),
            "{named}\n{md}"
        );
    }
    assert!(html.starts_with("<!DOCTYPE html>") && !html.contains("<script"));
    (p, report)
}

#[test]
fn a_fresh_demo_run_reproduces_bit_for_bit() {
    run_and_reproduce();
}

/// Nothing changed between the two runs, so a `slower` or `faster` here is
/// noise the threshold is meant to absorb: reported in full if it happens.
#[test]
#[ignore = "statistical: tests/README.md, `-- --ignored statistical_`"]
fn statistical_an_unchanged_demo_run_reproduces_its_timings() {
    let (_project, report) = run_and_reproduce();
    let moved: Vec<&Value> = report["timing"]["operations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["verdict"] != "within noise")
        .collect();
    assert!(moved.is_empty(), "{moved:#?}");
}
