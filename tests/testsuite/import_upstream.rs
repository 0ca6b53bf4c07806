//! Importing upstream layouts as they ship. An upstream project's `ref/`
//! folder (tests/fixtures/import/upstream-ref): parameter sets chosen by a
//! `params.h` macro and named by the `CRYPTO_ALGNAME` of each branch, the
//! FIPS 204 context API; import observes its own Makefile, which links one
//! generator per set, and keeps what each writes as the set's reference.
//! The KAT files pqbench writes are compared byte for byte with what the
//! project's own generator (built by its own Makefile, on OpenSSL's AES)
//! writes. A CMake project with one folder per variant beside shared code
//! (tests/fixtures/import/variant-folders): the variants are the folders
//! with an `api.h`, not every folder with C code, and each passes the KAT
//! file the project ships.

use std::process::Command;

use crate::common;

use common::skip;
use common::TestProject;

fn fixture() -> std::path::PathBuf {
    common::repo().join("tests/fixtures/import/upstream-ref")
}

fn variant_fixture() -> std::path::PathBuf {
    common::repo().join("tests/fixtures/import/variant-folders")
}

/// The sets and the secret-key sizes that name the generator's files.
const SETS: [(&str, i64, usize); 3] = [("ParToy2", 2, 32), ("ParToy3", 3, 48), ("ParToy5", 5, 64)];

#[test]
fn a_ref_folder_imports_unedited_and_its_kat_files_equal_its_own_generators() {
    if !skip::tools_or_skip(
        &["make", "/usr/include/openssl/evp.h"],
        "apt-get install make libssl-dev",
    ) {
        return;
    }
    let p = TestProject::bare();
    let ref_dir = fixture().join("ref");
    let out = p
        .pqbench(&["import", ref_dir.to_str().unwrap(), "--id", "partoy"])
        .expect(0);
    assert!(out.stdout.contains("(0 TODO lines)"), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("validate algorithms/partoy.toml: OK (3 instances)"),
        "{}",
        out.stdout
    );
    // Its Makefile names the generator: import runs that build and the
    // three generators it links are the three sets.
    assert!(
        out.stdout
            .contains("observed `make`: 3 KAT generator(s) built and run"),
        "{}",
        out.stdout
    );
    let raw = pqbench::config::load::<pqbench::config::algorithm::RawAlgorithm>(
        &p.path().join("algorithms/partoy.toml"),
    )
    .unwrap()
    .value;
    let sets: Vec<(String, Option<i64>)> = raw
        .parameter_sets
        .iter()
        .map(|s| {
            let mode = match s.defines.get("PARTOY_MODE") {
                Some(pqbench::config::algorithm::DefineValue::Int(n)) => Some(*n),
                _ => None,
            };
            (s.label.get_ref().clone(), mode)
        })
        .collect();
    let want: Vec<(String, Option<i64>)> = SETS
        .iter()
        .map(|(l, m, _)| (l.to_string(), Some(*m)))
        .collect();
    assert_eq!(sets, want);
    // What the build compiled into the generators, less the generator and
    // NIST's DRBG: the system's randombytes.c was never part of it.
    let sources: Vec<&String> = raw.implementations[0]
        .sources
        .iter()
        .map(|s| s.get_ref())
        .collect();
    assert_eq!(sources, ["sign.c"]);
    let toml = p.read("algorithms/partoy.toml");
    assert!(
        toml.contains("signature-api = \"fips204-context\""),
        "{toml}"
    );
    let manifest = p.read("kat/partoy/kat.sha256");
    assert!(manifest.contains("# provenance: generated"), "{manifest}");

    p.write(
        "campaigns/t.toml",
        "algorithms = [\"partoy\"]\nstages = [\"build\", \"kat\"]\n\n[kat]\ntimeout-seconds = 60\n\n[host]\nrequire-fixed = false\n",
    );
    // The references are what the tree's own generators wrote at import.
    let out = p.pqbench(&["run", "t"]).expect(0);
    assert!(out.stdout.contains("KAT: 3 PASS of 3"), "{}", out.stdout);
    // And independently of import: the generators built here by the
    // Makefile write the same bytes as pqbench.
    generator_outputs_match(&p);
}

/// Builds the project's generator for each mode with its own Makefile in
/// a copy of the tree, runs it, and compares its file with pqbench's.
fn generator_outputs_match(p: &TestProject) {
    let work = tempfile::tempdir().unwrap();
    common::copy_tree(&fixture().join("ref"), &work.path().join("ref"));
    let ref_dir = work.path().join("ref");
    let made = Command::new("make")
        .arg("-s")
        .arg("CC=gcc")
        .current_dir(&ref_dir)
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    for (label, mode, sk) in SETS {
        let run_dir = work.path().join(label);
        std::fs::create_dir(&run_dir).unwrap();
        let gen = ref_dir.join(format!("nistkat/PQCgenKAT_sign_mode{mode}"));
        let st = Command::new(&gen).current_dir(&run_dir).status().unwrap();
        assert!(st.success(), "{}: {st}", gen.display());
        let theirs = std::fs::read(run_dir.join(format!("PQCsignKAT_{sk}.rsp"))).unwrap();
        let ours = std::fs::read(
            p.path()
                .join(format!("output/t/local/kat/partoy/{label}.rsp")),
        )
        .unwrap();
        assert!(
            theirs == ours,
            "{label}: pqbench's KAT file differs from the generator's\n{}",
            first_difference(&ours, &theirs)
        );
        assert!(ours.starts_with(format!("# {label}\n\ncount = 0\n").as_bytes()));
        assert_eq!(count_records(&ours), 100, "{label}");
    }
}

fn count_records(rsp: &[u8]) -> usize {
    String::from_utf8_lossy(rsp)
        .lines()
        .filter(|l| l.starts_with("count = "))
        .count()
}

fn first_difference(a: &[u8], b: &[u8]) -> String {
    let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
    a.lines()
        .zip(b.lines())
        .enumerate()
        .find(|(_, (x, y))| x != y)
        .map_or_else(
            || "one is a prefix of the other".into(),
            |(n, (x, y))| format!("line {}: pqbench `{x}`, generator `{y}`", n + 1),
        )
}

#[test]
fn a_variant_per_folder_project_drafts_its_variants_and_passes_its_shipped_kats() {
    let p = TestProject::bare();
    let out = p
        .pqbench(&[
            "import",
            variant_fixture().to_str().unwrap(),
            "--id",
            "vtoy",
        ])
        .expect(0);
    for want in [
        "(0 TODO lines)",
        "4 manifest lines in kat/vtoy/kat.sha256",
        "validate algorithms/vtoy.toml: OK (4 instances)",
    ] {
        assert!(out.stdout.contains(want), "{want}\n{}", out.stdout);
    }
    let raw = pqbench::config::load::<pqbench::config::algorithm::RawAlgorithm>(
        &p.path().join("algorithms/vtoy.toml"),
    )
    .unwrap()
    .value;
    let imp = &raw.implementations[0];
    let strs = |v: &[toml::Spanned<String>]| -> Vec<String> {
        v.iter().map(|s| s.get_ref().clone()).collect()
    };
    assert_eq!(strs(&imp.sources), ["src/*.c"]);
    assert_eq!(strs(&imp.include_dirs), ["include"]);
    assert_eq!(imp.exclude, ["randombytes.c"]);
    let sets: Vec<(String, Vec<String>, Vec<String>)> = raw
        .parameter_sets
        .iter()
        .map(|s| {
            (
                s.label.get_ref().clone(),
                strs(s.sources.as_deref().unwrap_or_default()),
                strs(s.include_dirs.as_deref().unwrap_or_default()),
            )
        })
        .collect();
    let want: Vec<(String, Vec<String>, Vec<String>)> = ["128", "192", "256", "512"]
        .iter()
        .map(|n| {
            (
                format!("VTOY-{n}"),
                vec!["src/*.c".to_string(), format!("src/vtoy-{n}/*.c")],
                vec![format!("src/vtoy-{n}")],
            )
        })
        .collect();
    assert_eq!(sets, want);
    let toml = p.read("algorithms/vtoy.toml");
    // The optional NEON backend is named, not taken for the whole code.
    assert!(toml.contains("# src/neon/ is not drafted"), "{toml}");
    assert!(!toml.contains("builds only on aarch64"), "{toml}");
    assert!(toml.contains("kind = \"kem\""), "{toml}");

    p.write(
        "campaigns/t.toml",
        "algorithms = [\"vtoy\"]\nstages = [\"build\", \"kat\"]\n\n[kat]\ntimeout-seconds = 60\n\n[host]\nrequire-fixed = false\n",
    );
    let out = p.pqbench(&["run", "t"]).expect(0);
    assert!(out.stdout.contains("KAT: 4 PASS of 4"), "{}", out.stdout);
}
