//! Key-exchange and hash fault fixtures: each gets its own status (two
//! secrets that differ and a pass that ends the protocol early, or does not
//! end it at its last pass, are CRYPTOFAIL naming the pass and record; a hash wrong at one length is
//! MISMATCH naming its Msg_Len; a CryptHash writing past its digest is
//! OVERFLOW), and the healthy instances are still timed.

use crate::common;
use common::TestProject;

const OUT: &str = "output/faults-kex-hash/local";

fn project() -> TestProject {
    let p = TestProject::bare();
    for d in ["kex-toy", "hash-toy"] {
        p.copy(
            &format!("tests/fixtures/faults/{d}"),
            &format!("algorithms/{d}"),
        );
        p.copy(
            &format!("tests/fixtures/faults/{d}.toml"),
            &format!("algorithms/{d}.toml"),
        );
    }
    p.copy(
        "tests/fixtures/faults/faults-kex-hash.toml",
        "campaigns/faults-kex-hash.toml",
    );
    p
}

fn statuses(p: &TestProject) -> Vec<(String, String, String)> {
    let build = p.json(&format!("{OUT}/build.json"));
    build["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["label"].as_str().unwrap().to_string(),
                r["kat_status"].as_str().unwrap().to_string(),
                r["kat_detail"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn status<'a>(all: &'a [(String, String, String)], label: &str) -> (&'a str, &'a str) {
    let r = all
        .iter()
        .find(|r| r.0 == label)
        .unwrap_or_else(|| panic!("{label} missing: {all:?}"));
    (&r.1, &r.2)
}

/// The references: every hash label expects what the correct toy gives,
/// the KEX the correct toy's file (each fault's own checks decide before
/// any comparison).
fn write_references(p: &TestProject) {
    use pqbench::kat::manifest::{digest, Mode};
    let mut hash = String::new();
    for file in ["KAT_2_12", "KAT_2_23"] {
        let ok = std::fs::read(
            p.path()
                .join(format!("{OUT}/kat/hash-toy/HTOY-OK__{file}.kat")),
        )
        .unwrap();
        for label in ["HTOY-OK", "HTOY-WRONG", "HTOY-OVERFLOW"] {
            let name = format!("{file}_{label}.txt");
            hash += &format!(
                "{} strict {label}/{name}\n",
                digest(&ok, Mode::Strict, None)
            );
            let dest = p.path().join(format!("kat/hash-toy/{label}/{name}"));
            std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
            std::fs::write(dest, &ok).unwrap();
        }
    }
    p.write("kat/hash-toy/kat.sha256", &hash);
    let kex = std::fs::read(p.path().join(format!("{OUT}/kat/kex-toy/KEXTOY-OK.kat"))).unwrap();
    let d = digest(&kex, Mode::Strict, None);
    let lines: String = [
        "KEXTOY-OK",
        "KEXTOY-DISAGREE",
        "KEXTOY-EARLY",
        "KEXTOY-LATE",
    ]
    .iter()
    .map(|l| format!("{d} strict {l}/KAT_KEX_{l}.txt\n"))
    .collect();
    p.write("kat/kex-toy/kat.sha256", &lines);
}

#[test]
fn kex_and_hash_faults_get_their_status_and_the_rest_is_timed() {
    let p = project();
    // First run: no references yet; the faults are found by the generator.
    p.pqbench(&["-q", "run", "faults-kex-hash"]).expect(1);
    let first = statuses(&p);
    assert_eq!(status(&first, "KEXTOY-OK").0, "NOKAT");
    assert_eq!(status(&first, "HTOY-OK").0, "NOKAT");
    write_references(&p);
    let run = p.pqbench(&["run", "faults-kex-hash"]).expect(1);
    let all = statuses(&p);

    let (st, detail) = status(&all, "KEXTOY-DISAGREE");
    assert_eq!(st, "CRYPTOFAIL", "{}", run.stdout);
    assert!(
        detail.contains("shared secrets differ after pass 3 of 3") && detail.contains("record 0"),
        "{detail}"
    );
    let (st, detail) = status(&all, "KEXTOY-EARLY");
    assert_eq!(st, "CRYPTOFAIL");
    assert!(
        detail.contains("pass 2 reported the last pass")
            && detail.contains("kex_get_passes_num() is 3")
            && detail.contains("record 0"),
        "{detail}"
    );
    let (st, detail) = status(&all, "KEXTOY-LATE");
    assert_eq!(st, "CRYPTOFAIL");
    assert!(
        detail.contains("pass 3 of 3 did not report the last pass (returned 0)"),
        "{detail}"
    );
    let (st, detail) = status(&all, "HTOY-WRONG");
    assert_eq!(st, "MISMATCH");
    assert!(
        detail.starts_with("KAT_2_12: Msg_Len = 1000, field Dst"),
        "{detail}"
    );
    let (st, detail) = status(&all, "HTOY-OVERFLOW");
    assert_eq!(st, "OVERFLOW");
    assert!(
        detail.contains("wrote past its 32-byte digest") && detail.contains("Msg_Len = 0"),
        "{detail}"
    );
    for label in ["KEXTOY-OK", "HTOY-OK"] {
        assert_eq!(status(&all, label).0, "PASS", "{label}: {all:?}");
    }
    let log = p.read(&format!("{OUT}/kat/hash-toy/HTOY-WRONG.log"));
    assert!(
        log.contains("file_status = KAT_2_12 MISMATCH")
            && log
                .trim_end()
                .ends_with("RESULT hash-toy HTOY-WRONG MISMATCH"),
        "{log}"
    );

    // The rest of the campaign completed: the healthy instances are timed,
    // the failing ones are not.
    let rec = |label: &str, op: &str| {
        p.path().join(format!(
            "{OUT}/records/{}/{label}__{op}.json",
            if label.starts_with('H') {
                "hash-toy"
            } else {
                "kex-toy"
            }
        ))
    };
    for op in [
        "exchange", "init_a", "init_b", "pass1", "pass2", "pass3", "derive_a", "derive_b",
    ] {
        let r = common::op_record(&p, "faults-kex-hash", "kex-toy", "KEXTOY-OK", op);
        assert_eq!(r.status, "ok", "{op}: {:?}", r.detail);
    }
    for op in pqbench::kinds::HASH_OPERATIONS {
        let r = common::op_record(&p, "faults-kex-hash", "hash-toy", "HTOY-OK", op);
        assert_eq!(r.status, "ok", "{op}: {:?}", r.detail);
    }
    for (label, op) in [
        ("KEXTOY-DISAGREE", "exchange"),
        ("KEXTOY-EARLY", "exchange"),
        ("KEXTOY-LATE", "exchange"),
        ("HTOY-WRONG", "hash_32"),
        ("HTOY-OVERFLOW", "hash_32"),
    ] {
        assert!(!rec(label, op).exists(), "{label} was timed");
    }
}
