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

/// The NIST format's start is the master DRBG's entropy input: 0x00..0x2f
/// gives the fixed file byte for byte, and another start gives the seeds an
/// independent CTR_DRBG (the RustCrypto oracle) draws from it.
#[test]
fn a_nist_start_replaces_the_entropy_input_of_the_master_drbg() {
    let p = TestProject::bare();
    p.copy("algorithms/sign-92", "algorithms/sign-92");
    p.copy("algorithms/sign-92.toml", "algorithms/sign-92.toml");
    p.copy("kat/sign-92", "kat/sign-92");
    p.write(
        "campaigns/n.toml",
        "algorithms = [\"sign-92\"]\nflag-profiles = [\"guide\"]\nstages = [\"build\", \"kat\"]\n\n[host]\nrequire-fixed = false\n",
    );
    p.pqbench(&["run", "n"]).expect(0);
    let cache = pqbench::cache::Cache::new(&p.path().join("output/.cache"));
    let cc = pqbench::toolchain::Compiler::detect("gcc").unwrap();
    let runner = pqbench::support::Support::prepare(&cache, &cc)
        .unwrap()
        .kat_runner;
    let lib = p.path().join("output/n/local/lib/sign-92/LARCH-1.so");
    let generate = |start: Option<&[u8; 48]>| -> String {
        let out = p.path().join("fresh.rsp");
        let mut cmd = std::process::Command::new(&runner);
        cmd.arg("--lib")
            .arg(&lib)
            .args(["--format", "nist", "--records", "2"]);
        if let Some(s) = start {
            cmd.args(["--start", &hex::encode(s)]);
        }
        let run = cmd.arg("--out").arg(&out).output().unwrap();
        let said = String::from_utf8_lossy(&run.stdout).to_string();
        assert!(said.contains("status = PASS"), "{said}");
        std::fs::read_to_string(&out).unwrap()
    };
    let fixed = generate(None);
    assert_eq!(generate(Some(&crate::ctr_drbg_oracle::entropy())), fixed);
    let start = [0xABu8; 48];
    let fresh = generate(Some(&start));
    let seed = crate::ctr_drbg_oracle::Drbg::new(&start).generate(48);
    let want = format!("seed = {}", hex::encode_upper(seed));
    assert!(fresh.contains(&want) && !fixed.contains(&want), "{fresh}");
}
