//! The complete public PQClean tree as crates.io ships it inside
//! `pqcrypto-mlkem` 0.1.1 (fetched by cargo into its registry, never copied
//! here): schemes whose AVX2 code ships assembly and links the 4-way Keccak
//! of `common/keccak4x/`, which no header of theirs names, import with
//! zero edits, build and pass their KATs.

use std::path::PathBuf;
use std::process::Command;

use crate::common::{skip, TestProject};

/// `pqclean/` of the registry package, fetched by cargo when missing;
/// None (the test skipped, or failed under CI) when cargo cannot fetch it.
fn pqclean() -> Option<PathBuf> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "").unwrap();
    std::fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"fetch\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n[dependencies]\npqcrypto-mlkem = \"=0.1.1\"\n",
    )
    .unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let fetched = Command::new(cargo)
        .args(["fetch", "--quiet", "--manifest-path"])
        .arg(dir.path().join("Cargo.toml"))
        .status()
        .is_ok_and(|s| s.success());
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cargo"));
    let found = std::fs::read_dir(home.join("registry/src"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("pqcrypto-mlkem-0.1.1/pqclean"))
        .find(|p| p.join("common").is_dir());
    if found.is_none() {
        let why = if fetched {
            "fetched, but not found"
        } else {
            "cargo fetch failed (no network?)"
        };
        assert!(
            !skip::under_ci(),
            "the PQClean tree of pqcrypto-mlkem 0.1.1: {why}"
        );
        skip::not_applicable(&format!("the PQClean tree of pqcrypto-mlkem 0.1.1: {why}"));
    }
    found
}

fn host_has_avx2() -> bool {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags = info.lines().find(|l| l.starts_with("flags")).unwrap_or("");
    cfg!(target_arch = "x86_64")
        && ["avx2", "bmi2", "popcnt", "aes"]
            .iter()
            .all(|f| flags.split_whitespace().any(|x| x == *f))
}

#[test]
fn avx2_code_with_assembly_and_link_only_keccak4x_passes_its_kat_unedited() {
    let Some(tree) = pqclean() else { return };
    let p = TestProject::bare();
    for scheme in [
        "crypto_kem/ml-kem-768",
        "crypto_sign/sphincs-shake-128f-simple",
    ] {
        let out = p
            .pqbench(&["import", tree.join(scheme).to_str().unwrap()])
            .expect(0);
        assert!(out.stdout.contains("(0 TODO lines)"), "{}", out.stdout);
    }
    let kem = p.read("algorithms/ml-kem-768.toml");
    let avx2 = &kem[kem.find("name = \"avx2\"").unwrap()..];
    assert!(avx2.contains("sources = [\"*.S\", \"*.c\"]"), "{kem}");
    let keccak4x = "pqclean-keccak4x-keccakp-1600-times4-simd256";
    assert!(avx2.contains(keccak4x), "{kem}");
    assert!(p
        .read("algorithms/sphincs-shake-128f-simple.toml")
        .contains(keccak4x));
    // The AArch64 implementation's 2-way Keccak: C beside assembly.
    for c in ["pqclean-keccak2x-fips202x2", "pqclean-keccak2x-feat"] {
        let comp = p.read(&format!("algorithms/components/{c}.toml"));
        assert!(comp.contains("keccak2x/"), "{comp}");
    }
    p.write(
        "campaigns/t.toml",
        "algorithms = [\"ml-kem-768\"]\nstages = [\"build\", \"kat\"]\n\n[host]\nrequire-fixed = false\n",
    );
    let run = p.pqbench(&["run", "t"]);
    if host_has_avx2() {
        run.expect(0);
        let build: serde_json::Value =
            serde_json::from_str(&p.read("output/t/local/build.json")).unwrap();
        let pass = build["instances"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["kat_status"] == "PASS")
            .count();
        assert_eq!(pass, 2, "{build:#}");
    } else {
        skip::not_applicable("no AVX2 here: the avx2 instance is skipped");
    }
}

#[test]
fn hqc_finds_its_kat_rng_in_test_common_and_passes_the_published_digest() {
    // META.yml says `nistkat-rng: hqc`; PQClean keeps that generator as
    // test/common/hqckatrng.c, beside its NIST one, not in the scheme.
    let Some(tree) = pqclean() else { return };
    let p = TestProject::bare();
    let out = p
        .pqbench(&["import", tree.join("crypto_kem/hqc-128").to_str().unwrap()])
        .expect(0);
    assert!(out.stdout.contains("(0 TODO lines)"), "{}", out.stdout);
    let toml = p.read("algorithms/hqc-128.toml");
    assert!(toml.contains("kat-rng = \"submission\""), "{toml}");
    assert!(toml.contains("pqclean/test/common/hqckatrng.c"), "{toml}");
    let manifest = p.read("kat/hqc-128/kat.sha256");
    let meta = std::fs::read_to_string(tree.join("crypto_kem/hqc-128/META.yml")).unwrap();
    let published = meta
        .lines()
        .find_map(|l| l.strip_prefix("nistkat-sha256: "))
        .unwrap()
        .trim();
    assert!(manifest.contains(published), "{manifest}");
    p.write(
        "campaigns/t.toml",
        "algorithms = [\"hqc-128\"]\nstages = [\"build\", \"kat\"]\n\n[host]\nrequire-fixed = false\n",
    );
    p.pqbench(&["run", "t"]).expect(0);
    let build: serde_json::Value =
        serde_json::from_str(&p.read("output/t/local/build.json")).unwrap();
    let statuses: Vec<&str> = build["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["kat_status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["PASS"], "{build:#}");
}
