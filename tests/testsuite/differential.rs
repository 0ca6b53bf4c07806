//! The differential stage: implementations of one parameter set that pass
//! the same KAT are compared on a fresh start, and one overfitted to its
//! KAT file is exposed.

use crate::common;
use common::TestProject;

fn differential_project() -> TestProject {
    let p = TestProject::bare();
    let from = "tests/fixtures/differential";
    p.copy(&format!("{from}/sign-toy"), "algorithms/sign-toy");
    p.copy(&format!("{from}/sign-toy.toml"), "algorithms/sign-toy.toml");
    p.copy(
        &format!("{from}/differential.toml"),
        "campaigns/differential.toml",
    );
    p.copy(&format!("{from}/kat.sha256"), "kat/sign-toy/kat.sha256");
    p
}

const DATASET: &str = "output/differential/local";

#[test]
fn an_implementation_overfitted_to_its_kat_differs_on_a_fresh_start() {
    let p = differential_project();
    let run = p.pqbench(&["run", "differential"]).expect(1);
    let build = p.json(&format!("{DATASET}/build.json"));
    for rec in build["instances"].as_array().unwrap() {
        assert_eq!(rec["kat_status"], "PASS", "{rec}\n{}", run.stdout);
    }

    // The overfitted pair: named, with its start and first differing count.
    let o = p.json(&format!("{DATASET}/differential/sign-toy/TOY-O.json"));
    assert_eq!(o["agree"], false, "{o}");
    assert_eq!(o["first_difference"]["labels"][0], "TOY-O");
    assert_eq!(o["first_difference"]["labels"][1], "TOY-O.avx2");
    // Every fresh message misses the KAT's: the first record differs.
    assert_eq!(o["first_difference"]["count"], 0);
    let start = o["start"].as_str().unwrap();
    assert_eq!(start.len(), 96);
    assert!(
        run.stdout.contains("differential disagreement")
            && run.stdout.contains("TOY-O.avx2")
            && run.stdout.contains(start),
        "{}",
        run.stdout
    );
    // The honest pair agrees, from the same start.
    let h = p.json(&format!("{DATASET}/differential/sign-toy/TOY-H.json"));
    assert_eq!(h["agree"], true, "{h}");
    assert_eq!(h["start"], start);
    assert_eq!(h["files"][0]["sha256"], h["files"][1]["sha256"]);
    assert_eq!(h["files"][0]["record_sha256"].as_array().unwrap().len(), 3);
    // Only a parameter set's first instance holds the record.
    assert!(!p
        .path()
        .join(format!("{DATASET}/differential/sign-toy/TOY-H.copy.json"))
        .exists());

    let page = p.read("output/differential/site/local/sign-toy.md");
    assert!(
        page.contains("## Differential check")
            && page.contains("⚠ TOY-O.avx2 differs from record 0"),
        "{page}"
    );

    // `check` recomputes the verdicts from the digests; an edited digest
    // no longer gives the recorded agreement.
    let ok = p.pqbench(&["check", "output/differential"]);
    assert_eq!(ok.code, 0, "{}\n{}", ok.stdout, ok.stderr);
    assert!(ok.stdout.contains("2 differential checks"), "{}", ok.stdout);
    let rel = format!("{DATASET}/differential/sign-toy/TOY-H.json");
    let mut v = p.json(&rel);
    v["files"][1]["sha256"] = serde_json::json!("00".repeat(32));
    p.write(&rel, &serde_json::to_string_pretty(&v).unwrap());
    let bad = p.pqbench(&["check", "output/differential"]);
    assert_eq!(bad.code, 1, "{}\n{}", bad.stdout, bad.stderr);
    let said = format!("{}{}", bad.stdout, bad.stderr);
    assert!(
        said.contains("differential/sign-toy/TOY-H.json") && said.contains("records agreement"),
        "{said}"
    );
}
