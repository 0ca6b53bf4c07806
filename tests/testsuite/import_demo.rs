//! `pqbench import` on each demo algorithm's source folder reproduces a
//! TOML that builds and passes its KAT in a build+kat campaign, with the
//! same labels as the hand-written TOML. The demo folders ship no KAT
//! files, so the existing `kat/<id>/` manifest and references are kept.

use crate::common;

use common::TestProject;
use pqbench::config::algorithm::RawAlgorithm;

fn import_and_run(id: &str, labels: &[&str]) -> TestProject {
    let p = TestProject::demo();
    std::fs::remove_file(p.path().join(format!("algorithms/{id}.toml"))).unwrap();
    let src = p.path().join("algorithms").join(id);
    let out = p
        .pqbench(&["import", src.to_str().unwrap(), "--id", id])
        .expect(0);
    assert!(
        out.stdout.contains(&format!("wrote algorithms/{id}.toml")),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(&format!("kept kat/{id}/kat.sha256")),
        "{}",
        out.stdout
    );

    let toml = p.path().join(format!("algorithms/{id}.toml"));
    let raw = pqbench::config::load::<RawAlgorithm>(&toml)
        .unwrap_or_else(|e| panic!("{e}"))
        .value;
    let got: Vec<&str> = raw
        .parameter_sets
        .iter()
        .map(|s| s.label.get_ref().as_str())
        .collect();
    assert_eq!(got, labels, "{}", p.read(&format!("algorithms/{id}.toml")));

    p.pqbench(&["validate", toml.to_str().unwrap()]).expect(0);

    let campaign = format!("import-{id}");
    p.write(
        &format!("campaigns/{campaign}.toml"),
        &common::quick_campaign(&[id], "stages = [\"build\", \"kat\"]"),
    );
    let run = p.pqbench(&["-q", "run", &campaign]);
    let build = p.json(&format!("output/{campaign}/local/build.json"));
    let statuses: Vec<(String, String)> = build["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["label"].as_str().unwrap().to_string(),
                i["kat_status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(statuses.len(), labels.len(), "{statuses:?}");
    assert!(
        statuses.iter().all(|(_, s)| s == "PASS"),
        "{statuses:?}\n{}\n{}",
        run.stdout,
        run.stderr
    );
    run.expect(0);
    p
}

#[test]
fn sign_90_imports_with_its_three_sets_and_the_iccs_standin() {
    let p = import_and_run("sign-90", &["WINTER-128", "WINTER-128R", "WINTER-192"]);
    let t = p.read("algorithms/sign-90.toml");
    assert!(t.contains("uses = [\"iccs-standin\"]"), "{t}");
    assert!(t.contains("official auxfunc.c/drng.c"), "{t}");
    assert!(
        t.contains("defines = { WINTER_N = 16, WINTER_W = 16, WINTER_REJECT = 1 }"),
        "{t}"
    );
}

#[test]
fn kem_91_imports_as_an_ngcc_kem() {
    let p = import_and_run("kem-91", &["PEBBLE-2", "PEBBLE-3"]);
    let t = p.read("algorithms/kem-91.toml");
    assert!(
        t.contains("kind = \"kem\"") && t.contains("headers = [\"api.h\", \"drng.h\"]"),
        "{t}"
    );
}

#[test]
fn sign_92_imports_namespaces_size_t_and_the_randomness_symbol() {
    let p = import_and_run("sign-92", &["LARCH-1", "LARCH-3"]);
    let t = p.read("algorithms/sign-92.toml");
    for want in [
        "api = \"nist\"",
        "randombytes = \"larch_randombytes\"",
        "lengths = \"size-t\"",
        "namespace = \"PQB_LARCH1_\"",
        "namespace = \"PQB_LARCH3_\"",
        "defines = { LARCH_LEVEL = 3 }",
    ] {
        assert!(t.contains(want), "missing {want}:\n{t}");
    }
}

#[test]
fn import_refuses_to_overwrite_without_force() {
    let p = TestProject::demo();
    let src = p.path().join("algorithms/kem-91");
    let before = p.read("algorithms/kem-91.toml");
    let out = p
        .pqbench(&["import", src.to_str().unwrap(), "--id", "kem-91"])
        .expect(2);
    assert!(
        out.stderr.contains("algorithms/kem-91.toml exists"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("--force"), "{}", out.stderr);
    assert_eq!(p.read("algorithms/kem-91.toml"), before);
    p.pqbench(&["import", src.to_str().unwrap(), "--id", "kem-91", "--force"])
        .expect(0);
    assert!(p
        .read("algorithms/kem-91.toml")
        .contains("Drafted by `pqbench import`"));
}
