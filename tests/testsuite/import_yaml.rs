//! Importing scheme metadata (liboqs-style YAML, PQClean META.yml, liboqs
//! kats.json): size catalog rows, `exact:1` manifest lines that a real run
//! accepts, a draft TOML that parses, and positioned errors for bad YAML.

use crate::common;

use common::TestProject;
use pqbench::config::algorithm::RawAlgorithm;

fn fixture(name: &str) -> String {
    common::repo()
        .join("tests/fixtures/import/yaml")
        .join(name)
        .display()
        .to_string()
}

const LARCH1_SINGLE: &str = "0d212953525c2540fec9e88af1dbdb4aa25a22e2d7e29482dc070b7434ac5ffb";
const LARCH3_SINGLE: &str = "1ed1a125d68d86d58b09d821eba66bb380508fd5704fa51c3971ee448be0a3aa";

#[test]
fn two_schemes_give_catalog_rows_and_digests_that_a_run_accepts() {
    let p = TestProject::demo();
    // Keep the blessed reference files, replace the manifest by the
    // metadata's single-record digests.
    std::fs::remove_file(p.path().join("kat/sign-92/kat.sha256")).unwrap();
    let before = p.read("algorithms/sign-92.toml");
    let out = p
        .pqbench(&[
            "import",
            &fixture("larch.yml"),
            "--id",
            "sign-92",
            "--kats",
            &fixture("kats.json"),
        ])
        .expect(0);
    assert!(
        out.stdout.contains("kept algorithms/sign-92.toml"),
        "{}",
        out.stdout
    );
    assert_eq!(p.read("algorithms/sign-92.toml"), before);

    let csv = p.path().join("algorithms/sizes.csv");
    let catalog = pqbench::sizes::read_catalog(&csv).unwrap();
    let l1 = &catalog[&("sign-92".to_string(), "LARCH-1".to_string())];
    let l3 = &catalog[&("sign-92".to_string(), "LARCH-3".to_string())];
    assert_eq!(
        (l1.public_key, l1.ciphertext, l1.signature),
        (Some(32), None, Some(1104))
    );
    assert_eq!(
        (l3.public_key, l3.signature, l3.basis.as_str()),
        (Some(48), Some(2448), "encoded")
    );

    let manifest = p.read("kat/sign-92/kat.sha256");
    assert!(
        manifest.contains(&format!("{LARCH1_SINGLE} exact:1 LARCH-1/PQCsignKAT.rsp")),
        "{manifest}"
    );
    assert!(
        manifest.contains(&format!("{LARCH3_SINGLE} exact:1 LARCH-3/PQCsignKAT.rsp")),
        "{manifest}"
    );
    assert!(
        manifest.contains("# LARCH-1: liboqs `all` digest"),
        "{manifest}"
    );

    p.write(
        "campaigns/meta.toml",
        &common::quick_campaign(
            &["sign-92"],
            "stages = [\"build\", \"kat\"]\n[sizes]\ncatalog = \"../algorithms/sizes.csv\"",
        ),
    );
    let run = p.pqbench(&["-q", "run", "meta"]);
    let build = p.json("output/meta/local/build.json");
    for i in build["instances"].as_array().unwrap() {
        assert_eq!(
            i["kat_status"], "PASS",
            "{i}\n{}\n{}",
            run.stdout, run.stderr
        );
    }
    run.expect(0);

    // A changed digest is a conflict until forced.
    let kats = p.path().join("kats.json");
    std::fs::write(&kats, format!("{{\"LARCH-1\": \"{}\"}}", "ab".repeat(32))).unwrap();
    let args = [
        "import",
        &fixture("larch.yml"),
        "--id",
        "sign-92",
        "--kats",
        kats.to_str().unwrap(),
    ];
    let out = p.pqbench(&args).expect(2);
    assert!(
        out.stderr
            .contains("the line for LARCH-1 in kat/sign-92/kat.sha256"),
        "{}",
        out.stderr
    );
}

#[test]
fn pqclean_meta_drafts_a_toml_with_cpu_features_and_its_digest() {
    let p = TestProject::bare();
    p.pqbench(&[
        "import",
        &fixture("meta.yml"),
        "--id",
        "larch3",
        "--basis",
        "maximum-variable",
    ])
    .expect(0);
    let toml = p.path().join("algorithms/larch3.toml");
    let raw = pqbench::config::load::<RawAlgorithm>(&toml)
        .unwrap_or_else(|e| panic!("{e}"))
        .value;
    assert_eq!(raw.kind, pqbench::plan::Kind::Sign);
    let imps: Vec<(&str, &Vec<String>)> = raw
        .implementations
        .iter()
        .map(|i| (i.name.get_ref().as_str(), &i.cpu_features))
        .collect();
    assert_eq!(imps[0].0, "clean");
    assert_eq!(
        (imps[1].0, imps[1].1.as_slice()),
        ("avx2", ["avx2".to_string()].as_slice())
    );
    assert!(p.read("algorithms/larch3.toml").contains("# TODO: root:"));
    assert!(p
        .read("kat/larch3/kat.sha256")
        .contains(&format!("{LARCH3_SINGLE} exact:1 LARCH-3/PQCsignKAT.rsp")));
    assert!(p
        .read("algorithms/sizes.csv")
        .contains("larch3;LARCH-3;48;;2448;maximum-variable"));
    // The placeholder roots do not exist: validate says so, with places.
    let v = p.pqbench(&["validate", toml.to_str().unwrap()]).expect(2);
    assert!(v.stdout.contains("source root"), "{}", v.stdout);
    assert!(v.stdout.contains("larch3.toml:"), "{}", v.stdout);
}

#[test]
fn malformed_yaml_is_reported_with_its_line() {
    let p = TestProject::bare();
    let out = p.pqbench(&["import", &fixture("broken.yml")]).expect(2);
    assert!(out.stderr.contains("YAML syntax error"), "{}", out.stderr);
    assert!(out.stderr.contains("broken.yml:6:21"), "{}", out.stderr);
    assert!(
        out.stderr.contains("6 |    length-ciphertext: 768"),
        "{}",
        out.stderr
    );
    assert!(!p.path().join("algorithms/broken.toml").exists());
}
