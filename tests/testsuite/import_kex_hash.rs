//! `pqbench import` of NGCC key-exchange and hash packages
//! (`KEX_AlgorithmInstance.{c,h}`, `CryptHash_AlgorithmInstance.{c,h}`, KAT
//! files under `Test_Vectors/`, the shipped KAT generators) drafts TOMLs
//! that validate, build and pass their KATs.

use crate::common;

use common::TestProject;
use pqbench::config::algorithm::{Kind, RawAlgorithm};

fn import(p: &TestProject, fixture: &str, id: &str) -> RawAlgorithm {
    let src = p.path().join("incoming").join(fixture);
    common::copy_tree(
        &common::repo().join("tests/fixtures/import").join(fixture),
        &src,
    );
    if fixture == "ngcc-hash" {
        // The 2.5 MB KAT_2_12 file of the same algorithm, as blessed for
        // the demo (the fixture keeps only the small KAT_2_23).
        std::fs::copy(
            common::repo().join("kat/hash-95/RILL-256/KAT_2_12_RILL-256.txt"),
            src.join("Test_Vectors/KAT_2_12_RILL-256.txt"),
        )
        .unwrap();
    }
    let out = p
        .pqbench(&["import", src.to_str().unwrap(), "--id", id])
        .expect(0);
    assert!(
        out.stdout
            .contains(&format!("wrote algorithms/{id}.toml (0 TODO lines)")),
        "{}",
        out.stdout
    );
    let toml = p.path().join(format!("algorithms/{id}.toml"));
    p.pqbench(&["validate", toml.to_str().unwrap()]).expect(0);
    pqbench::config::load::<RawAlgorithm>(&toml)
        .unwrap_or_else(|e| panic!("{e}"))
        .value
}

#[test]
fn kex_and_hash_packages_import_validate_and_pass() {
    let p = TestProject::bare();
    let kex = import(&p, "ngcc-kex", "kex-77");
    assert_eq!(kex.kind, Kind::Kex);
    assert_eq!(kex.parameter_sets[0].label.get_ref(), "BROOK-16");
    let text = p.read("algorithms/kex-77.toml");
    assert!(
        text.contains("\"KAT_KEX.c\",  # NGCC KAT generator"),
        "{text}"
    );
    assert!(text.contains("uses = [\"iccs-standin\"]"), "{text}");
    let manifest = p.read("kat/kex-77/kat.sha256");
    assert!(
        manifest.contains(" strict BROOK-16/KAT_KEX_BROOK-16.txt"),
        "{manifest}"
    );

    let hash = import(&p, "ngcc-hash", "hash-78");
    assert_eq!(hash.kind, Kind::Hash);
    assert_eq!(hash.parameter_sets[0].digest_bits, Some(256));
    let text = p.read("algorithms/hash-78.toml");
    assert!(
        text.contains("\"KAT_Hash.c\",  # NGCC KAT generator"),
        "{text}"
    );
    // One manifest line per hash KAT file.
    let manifest = p.read("kat/hash-78/kat.sha256");
    for f in ["KAT_2_12", "KAT_2_23"] {
        assert!(
            manifest.contains(&format!(" strict RILL-256/{f}_RILL-256.txt")),
            "{manifest}"
        );
    }

    p.write(
        "campaigns/imported.toml",
        &common::quick_campaign(
            &["kex-77", "hash-78"],
            "flag-profiles = [\"guide\"]\nstages = [\"build\", \"kat\"]\n[iccs]\nbaseline = false",
        ),
    );
    p.pqbench(&["-q", "run", "imported"]).expect(0);
    let build = p.json("output/imported/local/build.json");
    let got: Vec<(String, String)> = build["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["algorithm"].as_str().unwrap().to_string(),
                i["kat_status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("hash-78".to_string(), "PASS".to_string()),
            ("kex-77".to_string(), "PASS".to_string())
        ]
    );
}
