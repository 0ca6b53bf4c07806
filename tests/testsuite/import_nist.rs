//! Importing a NIST-style submission package (tests/fixtures/import/
//! nist-toy): one folder per parameter set, labels from CRYPTO_ALGNAME, the
//! KAT generator and NIST rng.c left out, the shipped .rsp files copied to
//! kat/<id>/ with a manifest, and a build+kat run that passes.

use crate::common;

use common::TestProject;
use pqbench::config::algorithm::RawAlgorithm;
use pqbench::kat::manifest::{self as katman, Mode};

fn fixture() -> std::path::PathBuf {
    common::repo().join("tests/fixtures/import/nist-toy")
}

#[test]
fn nist_package_imports_builds_and_passes_its_shipped_kats() {
    let p = TestProject::bare();
    let out = p
        .pqbench(&["import", fixture().to_str().unwrap(), "--id", "toy"])
        .expect(0);
    assert!(
        out.stdout
            .contains("2 manifest lines in kat/toy/kat.sha256"),
        "{}",
        out.stdout
    );

    let toml = p.path().join("algorithms/toy.toml");
    let raw = pqbench::config::load::<RawAlgorithm>(&toml).unwrap().value;
    let labels: Vec<&str> = raw
        .parameter_sets
        .iter()
        .map(|s| s.label.get_ref().as_str())
        .collect();
    assert_eq!(labels, ["TOY-1", "TOY-2"]);
    let roots: Vec<&str> = raw
        .parameter_sets
        .iter()
        .map(|s| s.root.as_ref().unwrap().get_ref().as_str())
        .collect();
    assert_eq!(
        roots,
        [
            "toy/Reference_Implementation/toy1",
            "toy/Reference_Implementation/toy2"
        ]
    );
    assert_eq!(raw.parameter_sets[0].kat_records, Some(3));
    let excluded = &raw.implementations[0].exclude;
    assert!(
        excluded.contains(&"PQCgenKAT_sign.c".to_string()),
        "{excluded:?}"
    );
    assert!(excluded.contains(&"rng.c".to_string()), "{excluded:?}");
    let nist = raw.nist.as_ref().unwrap();
    assert_eq!(
        (nist.randombytes.as_str(), nist.namespace.as_str()),
        ("randombytes", "")
    );

    // The sources were copied, the KAT files went to kat/ only.
    assert!(p
        .path()
        .join("algorithms/toy/Reference_Implementation/toy2/sign.c")
        .is_file());
    assert!(!p.path().join("algorithms/toy/KAT").exists());
    let manifest = p.read("kat/toy/kat.sha256");
    for (label, file) in [
        ("TOY-1", "toy1/PQCsignKAT_32.rsp"),
        ("TOY-2", "toy2/PQCsignKAT_48.rsp"),
    ] {
        let bytes = std::fs::read(fixture().join("KAT").join(file)).unwrap();
        let name = file.split('/').nth(1).unwrap();
        let line = format!(
            "{} strict {label}/{name}",
            katman::digest(&bytes, Mode::Strict, None)
        );
        assert!(manifest.contains(&line), "missing {line}:\n{manifest}");
        assert_eq!(
            std::fs::read(p.path().join(format!("kat/toy/{label}/{name}"))).unwrap(),
            bytes
        );
    }

    p.pqbench(&["validate", toml.to_str().unwrap()]).expect(0);
    p.write(
        "campaigns/toy.toml",
        &common::quick_campaign(&["toy"], "stages = [\"build\", \"kat\"]"),
    );
    let run = p.pqbench(&["-q", "run", "toy"]);
    let build = p.json("output/toy/local/build.json");
    for i in build["instances"].as_array().unwrap() {
        assert_eq!(
            i["kat_status"], "PASS",
            "{i}\n{}\n{}",
            run.stdout, run.stderr
        );
    }
    run.expect(0);
}

#[test]
fn a_second_import_conflicts_unless_forced() {
    let p = TestProject::bare();
    let path = fixture();
    let args = ["import", path.to_str().unwrap(), "--id", "toy"];
    p.pqbench(&args).expect(0);
    let out = p.pqbench(&args).expect(2);
    assert!(
        out.stderr.contains("algorithms/toy.toml exists"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("algorithms/toy/Reference_Implementation exists"),
        "{}",
        out.stderr
    );
    let mut forced = args.to_vec();
    forced.push("--force");
    p.pqbench(&forced).expect(0);
}

#[test]
fn an_optimized_implementation_shares_the_package_kats() {
    let p = TestProject::bare();
    let pkg = p.path().join("incoming/pkg");
    common::copy_tree(&fixture(), &pkg);
    common::copy_tree(
        &fixture().join("Reference_Implementation"),
        &pkg.join("Optimized_Implementation"),
    );
    p.pqbench(&["import", pkg.to_str().unwrap(), "--id", "pkg"])
        .expect(0);
    let manifest = p.read("kat/pkg/kat.sha256");
    for label in ["TOY-1", "TOY-2", "TOY-1.optimized", "TOY-2.optimized"] {
        assert!(
            manifest.contains(&format!(" strict {label}/")),
            "{label}:\n{manifest}"
        );
        assert!(p.path().join("kat/pkg").join(label).is_dir(), "{label}");
    }
    let toml = p.path().join("algorithms/pkg.toml");
    let out = p.pqbench(&["validate", toml.to_str().unwrap()]).expect(0);
    assert!(out.stdout.contains("OK (4 instances"), "{}", out.stdout);
    assert!(!out.stdout.contains("warning"), "{}", out.stdout);
}
