//! The analysis stages against fixtures with known answers: the survey
//! verdicts (tests/fixtures/survey) and the size audit (tests/fixtures/sizes).
//! The profile is in analysis_profile.rs.

use crate::common;
use common::*;

use pqbench::records::analysis::{SizesJson, SurveyAlgorithm, SurveyJson};

/// Algorithm TOML of a survey fixture (tests/fixtures/survey).
fn survey_toml(id: &str, sources: &[&str], sets: &[(&str, &str)]) -> String {
    sign_fixture_toml(
        id,
        "survey",
        &["api.h", "drng.h"],
        sources,
        &["iccs-standin"],
        sets,
    )
}

#[test]
fn survey_verdicts_of_designed_fixtures() {
    let p = TestProject::bare();
    p.copy("tests/fixtures/survey", "algorithms/survey");
    let algorithms = [
        (
            "sv-iccs",
            survey_toml(
                "sv-iccs",
                &["survey.c", "aes_unused.c"],
                &[("ICCS", "SURVEY_ICCS = 1")],
            ),
        ),
        (
            "sv-bypass",
            survey_toml(
                "sv-bypass",
                &["survey.c", "keccak.c"],
                &[("OWN", "SURVEY_KECCAK = 1")],
            ),
        ),
        (
            "sv-mixed",
            survey_toml(
                "sv-mixed",
                &["survey.c", "keccak.c"],
                &[("BOTH", "SURVEY_ICCS = 1, SURVEY_KECCAK = 1")],
            ),
        ),
        (
            "sv-instdep",
            survey_toml(
                "sv-instdep",
                &["survey.c", "keccak.c"],
                &[
                    ("ID-OWN", "SURVEY_KECCAK = 1"),
                    ("ID-ICCS", "SURVEY_ICCS = 1"),
                ],
            ),
        ),
    ];
    for (id, toml) in &algorithms {
        p.write(&format!("algorithms/{id}.toml"), toml);
    }
    let ids: Vec<&str> = algorithms.iter().map(|a| a.0).collect();
    p.write(
        "campaigns/t.toml",
        &measure_campaign(&ids, &["build", "kat", "survey"], &[], ""),
    );
    p.pqbench(&["run", "t"]).expect(1);

    // The fixtures are working signatures (the KAT run signs and verifies).
    let build = p.json("output/t/local/build.json");
    for inst in build["instances"].as_array().unwrap() {
        assert_eq!(
            inst["kat_status"], "NOKAT",
            "{}: {}",
            inst["label"], inst["kat_detail"]
        );
    }

    let survey: SurveyJson = serde_json::from_str(&p.read("output/t/local/survey.json")).unwrap();
    let get = |id: &str| -> &SurveyAlgorithm {
        survey
            .algorithms
            .iter()
            .find(|a| a.algorithm == id)
            .unwrap_or_else(|| panic!("{id} not surveyed"))
    };
    let verdicts: Vec<(&str, &str)> = survey
        .algorithms
        .iter()
        .map(|a| (a.algorithm.as_str(), a.verdict.as_str()))
        .collect();
    assert_eq!(verdicts.len(), 4, "{verdicts:?}");
    let keccak = |t: &&pqbench::objscan::TableHit| {
        t.table == "Keccak-f round constants" && t.object == "keccak.c"
    };
    let helpers = |a: &SurveyAlgorithm, i: usize| -> Vec<String> {
        a.instances[i]
            .evidence
            .reachable_helpers
            .iter()
            .map(|h| h.helper.clone())
            .collect()
    };

    // Only the helpers; the AES S-box is in the library but unreachable.
    let iccs = get("sv-iccs");
    assert_eq!(iccs.verdict, "ICCS-only", "{}", iccs.reason);
    let ev = &iccs.instances[0].evidence;
    assert!(ev.tables.is_empty(), "{:?}", ev.tables);
    assert!(
        ev.unreachable_tables
            .iter()
            .any(|t| t.table == "AES S-box" && t.object == "aes_unused.c"),
        "{:?}",
        ev.unreachable_tables
    );
    let xof = ev
        .reachable_helpers
        .iter()
        .find(|h| h.helper == "pseudoXOF")
        .expect("pseudoXOF reached");
    assert_eq!(xof.via_object, "survey.c");
    assert!(helpers(iccs, 0).contains(&"get_random_number".to_string()));
    assert!(
        iccs.reason.contains("unreachable: ") && iccs.reason.contains("AES S-box in aes_unused.c")
    );

    // Its own Keccak, reached from the API; the DRNG alone is no hashing.
    let bypass = get("sv-bypass");
    assert_eq!(bypass.verdict, "bypass", "{}", bypass.reason);
    let ev = &bypass.instances[0].evidence;
    assert!(ev.tables.iter().any(|t| keccak(&t)), "{:?}", ev.tables);
    assert_eq!(helpers(bypass, 0), ["get_random_number"]);
    assert!(
        bypass
            .reason
            .contains("own Keccak-f round constants in keccak.c"),
        "{}",
        bypass.reason
    );

    // Both.
    let mixed = get("sv-mixed");
    assert_eq!(mixed.verdict, "mixed", "{}", mixed.reason);
    let ev = &mixed.instances[0].evidence;
    assert!(ev.tables.iter().any(|t| keccak(&t)));
    assert!(helpers(mixed, 0).contains(&"pseudoXOF".to_string()));

    // Parameter sets that differ: the Keccak set bypasses, the other only
    // uses the helpers (its keccak.c is compiled in but unreachable).
    let dep = get("sv-instdep");
    assert_eq!(dep.verdict, "instance-dependent", "{}", dep.reason);
    let labels: Vec<&str> = dep.instances.iter().map(|i| i.label.as_str()).collect();
    assert_eq!(labels, ["ID-OWN", "ID-ICCS"]);
    assert!(dep.instances[0].evidence.tables.iter().any(|t| keccak(&t)));
    assert!(dep.instances[1].evidence.tables.is_empty());
    assert!(dep.instances[1]
        .evidence
        .unreachable_tables
        .iter()
        .any(|t| keccak(&t)));
    assert!(dep.reason.contains("instance 1: bypass"), "{}", dep.reason);
    assert!(
        dep.reason.contains("instance 2: ICCS-only"),
        "{}",
        dep.reason
    );
}

#[test]
fn size_audit_lists_api_returned_and_catalog_figures_that_disagree() {
    let p = TestProject::bare();
    p.copy("tests/fixtures/sizes", "algorithms/sizes");
    p.copy("tests/fixtures/sizes/sizes.csv", "campaigns/sizes.csv");
    let toml = sign_fixture_toml(
        "sz-93",
        "sizes",
        &["api.h", "drng.h"],
        &["short.c"],
        &["iccs-standin"],
        &[
            ("SZ-SHORT", "SIZES_SN_CAP = 48, SIZES_SN_LEN = 40"),
            ("SZ-EXACT", "SIZES_SN_CAP = 40, SIZES_SN_LEN = 40"),
            ("SZ-VAR", "SIZES_SN_CAP = 48, SIZES_SN_LEN = 40"),
        ],
    );
    p.write("algorithms/sz-93.toml", &toml);
    let campaign = measure_campaign(
        &["sz-93"],
        &["build", "kat", "time", "sizes"],
        &[],
        "[sizes]\ncatalog = \"sizes.csv\"\n",
    );
    p.write("campaigns/t.toml", &campaign);
    p.pqbench(&["run", "t"]).expect(1);

    let sizes: SizesJson = serde_json::from_str(&p.read("output/t/local/sizes.json")).unwrap();
    assert_eq!(sizes.catalog.as_deref(), Some("campaigns/sizes.csv"));
    let row = |label: &str| sizes.instances.iter().find(|r| r.label == label).unwrap();

    // Cap 48, returned 40, catalogued 44 as an encoded (fixed) size.
    let short = row("SZ-SHORT");
    let sig = &short.figures["signature"];
    assert_eq!(
        (sig.api, sig.observed, sig.catalog),
        (Some(48), Some(40), Some(44))
    );
    assert_eq!((sig.shown, sig.shown_from.as_str()), (Some(44), "catalog"));
    assert_eq!(short.basis.as_deref(), Some("encoded"));
    assert_eq!(short.disagreements.len(), 1, "{:?}", short.disagreements);
    let line = &short.disagreements[0];
    assert!(line.starts_with("signature"), "{line}");
    for number in ["48", "40", "44", "encoded"] {
        assert!(line.contains(number), "{line} lacks {number}");
    }
    assert_eq!(line, "signature: API 48, observed 40, catalog 44 (encoded)");
    // The timing run saw the same 40-byte signatures.
    let timed = op_record(&p, "t", "sz-93", "SZ-SHORT", "sign");
    assert_eq!(timed.lengths.get("sig"), Some(&40));

    // All three agree: nothing to report.
    let exact = row("SZ-EXACT");
    let sig = &exact.figures["signature"];
    assert_eq!(
        (sig.api, sig.observed, sig.catalog),
        (Some(40), Some(40), Some(40))
    );
    assert!(exact.disagreements.is_empty(), "{:?}", exact.disagreements);

    // A variable size may be catalogued anywhere up to the cap.
    let var = row("SZ-VAR");
    assert_eq!(var.basis.as_deref(), Some("maximum-variable"));
    assert_eq!(var.figures["signature"].catalog, Some(46));
    assert!(var.disagreements.is_empty(), "{:?}", var.disagreements);

    // Keys agree everywhere (the catalog has the public key only).
    for r in &sizes.instances {
        let pk = &r.figures["public key"];
        assert_eq!(
            (pk.api, pk.observed, pk.catalog),
            (Some(32), Some(32), Some(32)),
            "{}",
            r.label
        );
        let sk = &r.figures["secret key"];
        assert_eq!(
            (sk.api, sk.observed, sk.catalog),
            (Some(64), Some(64), None),
            "{}",
            r.label
        );
    }
}
