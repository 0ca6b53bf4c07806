//! Public trees as crates.io ships them, fetched by cargo into its
//! registry, never copied here:
//!
//! * the complete PQClean tree inside `pqcrypto-mlkem` 0.1.1: schemes whose
//!   AVX2 code ships assembly and links the 4-way Keccak of
//!   `common/keccak4x/`, which no header of theirs names, import with zero
//!   edits, build and pass their KATs; so do HQC-128 (its KAT RNG kept in
//!   `test/common/`), Falcon-512 and ML-DSA-44 (clean and AVX2);
//! * liboqs 0.13.0 inside `oqs-sys` 0.11.0: its upstream-derived ML-DSA-44
//!   reference and AVX2 code, on the FIPS 204 context-string API, pass
//!   liboqs's own KAT digest from a short hand-written TOML, with no edit;
//!   so do its mlkem-native ML-KEM-768 C and x86_64 (assembly) folders.

use std::path::PathBuf;
use std::process::Command;

use crate::common::{self, skip, TestProject};

/// `<package>/<inner>` of registry package `package` (`name-version`),
/// fetched by cargo when missing through a throwaway manifest depending
/// on `dependency` (`name = "=version"`); None (the test skipped, or
/// failed under CI) when cargo cannot fetch it.
fn registry_tree(package: &str, dependency: &str, inner: &str) -> Option<PathBuf> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "").unwrap();
    std::fs::write(
        dir.path().join("Cargo.toml"),
        format!("[package]\nname = \"fetch\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n[dependencies]\n{dependency}\n"),
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
        .map(|e| e.path().join(package).join(inner))
        .find(|p| p.is_dir());
    if found.is_none() {
        let why = if fetched {
            "fetched, but not found"
        } else {
            "cargo fetch failed (no network?)"
        };
        let what = format!("the tree {inner} of {package}: {why}");
        assert!(!skip::under_ci(), "{what}");
        skip::not_applicable(&what);
    }
    found
}

/// `pqclean/` of the registry package.
fn pqclean() -> Option<PathBuf> {
    registry_tree(
        "pqcrypto-mlkem-0.1.1",
        "pqcrypto-mlkem = \"=0.1.1\"",
        "pqclean",
    )
    .filter(|p| p.join("common").is_dir())
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

/// PQClean's AArch64 SPHINCS+-shake keeps its 2-way Keccak as assembly in
/// the syntax of Apple's assembler (`ld1.2d`, `eor3.16b`), which GNU as
/// rejects. On the emulated AArch64 system, whose registry entry has clang
/// assemble plain `.s` files, the unedited draft builds and passes the
/// published digest, and the run records which assembler did it.
#[test]
fn aarch64_assembly_in_apples_syntax_passes_on_the_emulated_system_unedited() {
    let Some(tree) = pqclean() else { return };
    if !skip::tools_or_skip(
        &["aarch64-linux-gnu-gcc", "qemu-aarch64", "clang"],
        "apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user clang",
    ) {
        return;
    }
    let scheme = tree.join("crypto_sign/sphincs-shake-128f-simple");
    assert!(scheme.join("aarch64/f1600x2.s").is_file());
    let p = TestProject::bare();
    p.pqbench(&["import", scheme.to_str().unwrap()]).expect(0);
    p.write(
        "campaigns/systems.toml",
        &std::fs::read_to_string(common::repo().join("campaigns/systems.toml")).unwrap(),
    );
    p.write(
        "campaigns/t.toml",
        "algorithms = [\"sphincs-shake-128f-simple\"]\nsystems = [\"local\", \"arm_qemu\"]\nstages = [\"build\", \"kat\"]\n\n[host]\nrequire-fixed = false\n",
    );
    let out = p.pqbench(&["run", "t", "--system", "arm_qemu"]).expect(0);
    let build = p.json("output/t/arm_qemu/build.json");
    let status = |label: &str| {
        build["instances"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["label"] == label)
            .map(|i| i["kat_status"].as_str().unwrap().to_string())
    };
    let aarch64 = "SPHINCS+-shake-128f-simple.aarch64";
    assert_eq!(
        status(aarch64).as_deref(),
        Some("PASS"),
        "{}{build:#}",
        out.stdout
    );
    assert_eq!(
        status("SPHINCS+-shake-128f-simple").as_deref(),
        Some("PASS")
    );
    let campaign = p.json("output/t/arm_qemu/campaign.json");
    let assembler = &campaign["compiler"]["assembler"];
    assert_eq!(assembler["command"][0], "clang", "{campaign:#}");
    assert!(assembler["version"].as_str().unwrap().contains("clang"));
    // The local system names no assembler and records none.
    p.pqbench(&["run", "t", "--system", "local"]);
    let local = p.json("output/t/local/campaign.json");
    assert!(local["compiler"].get("assembler").is_none(), "{local:#}");
}

/// Falcon (floating-point code, an AVX2 variant) and ML-DSA (whose api.h
/// maps the classic signature API onto its `_ctx` functions with function-
/// like macros): every x86-64 instance of
/// both passes its published digest as drafted; the AArch64 ones are
/// drafted for their architecture and skipped here.
#[test]
fn falcon_and_ml_dsa_pass_their_published_digests_unedited() {
    let Some(tree) = pqclean() else { return };
    let p = TestProject::bare();
    for scheme in ["crypto_sign/falcon-512", "crypto_sign/ml-dsa-44"] {
        let out = p
            .pqbench(&["import", tree.join(scheme).to_str().unwrap()])
            .expect(0);
        assert!(out.stdout.contains("(0 TODO lines)"), "{}", out.stdout);
        assert!(out.stdout.contains(": OK ("), "{}", out.stdout);
    }
    p.write(
        "campaigns/t.toml",
        "algorithms = [\"falcon-512\", \"ml-dsa-44\"]\nstages = [\"build\", \"kat\"]\n\n[host]\nrequire-fixed = false\n",
    );
    p.pqbench(&["run", "t"]).expect(0);
    let build: serde_json::Value =
        serde_json::from_str(&p.read("output/t/local/build.json")).unwrap();
    let mut got: Vec<(String, String)> = build["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            let label = i["label"].as_str().unwrap().to_string();
            (label, i["kat_status"].as_str().unwrap().to_string())
        })
        .collect();
    got.sort();
    let avx2 = if host_has_avx2() { "PASS" } else { "SKIPPED" };
    let want: Vec<(String, String)> = [
        ("Falcon-512", "PASS"),
        ("Falcon-512.aarch64", "SKIPPED"),
        ("Falcon-512.avx2", avx2),
        ("ML-DSA-44", "PASS"),
        ("ML-DSA-44.aarch64", "SKIPPED"),
        ("ML-DSA-44.avx2", avx2),
    ]
    .iter()
    .map(|(l, s)| (l.to_string(), s.to_string()))
    .collect();
    if cfg!(target_arch = "x86_64") {
        assert_eq!(got, want, "{build:#}");
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

/// `liboqs/` of the registry package `oqs-sys` 0.11.0 (liboqs 0.13.0).
fn liboqs() -> Option<PathBuf> {
    registry_tree(
        "oqs-sys-0.11.0+liboqs-0.13.0",
        "oqs-sys = \"=0.11.0\"",
        "liboqs",
    )
    .filter(|p| p.join("tests/KATs/sig/kats.json").is_file())
}

/// The liboqs folders of ML-DSA-44's reference and AVX2 code, relative
/// to `src/`.
const MLDSA44: [&str; 2] = [
    "sig/ml_dsa/pqcrystals-dilithium-standard_ml-dsa-44_ref",
    "sig/ml_dsa/pqcrystals-dilithium-standard_ml-dsa-44_avx2",
];

/// The algorithm file of ML-DSA-44's reference and AVX2 code as liboqs
/// 0.13.0 ships them (docs/src/import.md shows it). The folder's `api.h` still declares
/// the pre-standard `pqcrystals_dilithium2_ref_*` names; `sign.h` maps
/// `crypto_sign*` to the functions `sign.c` defines. Its SHA-3 and
/// `<oqs/...>` headers are liboqs's: `pqclean_shims/fips202.h` maps
/// `shake256` to `OQS_SHA3_shake256` (`common/sha3/`, plain 64-bit
/// Keccak), `randombytes.h` maps `randombytes` to `OQS_randombytes`, which
/// pqbench's adapter defines (the NIST KAT DRBG liboqs's KAT test uses).
/// The AVX2 code adds the 4-way SHAKE (`fips202x4.h`: `common/sha3/
/// sha3x4.c` over the serial times-4 Keccak, and the shim's
/// `fips202x4.c` for its `absorb_once`) and its assembly.
const MLDSA44_TOML: &str = r#"id = "ml-dsa-44"
name = "ML-DSA-44 (liboqs 0.13.0)"
kind = "sign"
api = "nist"

[nist]
header = "sign.h"
randombytes = "OQS_randombytes"
lengths = "size-t"
signature-api = "fips204-context"

[[implementation]]
name = "ref"
root = "liboqs"
sources = [
  "src/sig/ml_dsa/pqcrystals-dilithium-standard_ml-dsa-44_ref/*.c",
  "src/common/common.c",
  "src/common/sha3/sha3.c",
  "src/common/sha3/xkcp_sha3.c",
  "src/common/sha3/xkcp_low/KeccakP-1600/plain-64bits/KeccakP-1600-opt64.c",
]
include-dirs = [
  "src/sig/ml_dsa/pqcrystals-dilithium-standard_ml-dsa-44_ref",
  "src/common/pqclean_shims",
  "src/common/sha3/xkcp_low/KeccakP-1600/plain-64bits",
  "build/include",
]
defines = { DILITHIUM_MODE = 2 }

[[implementation]]
name = "avx2"
root = "liboqs"
sources = [
  "src/sig/ml_dsa/pqcrystals-dilithium-standard_ml-dsa-44_avx2/*.c",
  "src/sig/ml_dsa/pqcrystals-dilithium-standard_ml-dsa-44_avx2/*.S",
  "src/common/common.c",
  "src/common/sha3/sha3.c",
  "src/common/sha3/xkcp_sha3.c",
  "src/common/sha3/sha3x4.c",
  "src/common/sha3/xkcp_sha3x4.c",
  "src/common/pqclean_shims/fips202x4.c",
  "src/common/sha3/xkcp_low/KeccakP-1600/plain-64bits/KeccakP-1600-opt64.c",
  "src/common/sha3/xkcp_low/KeccakP-1600times4/serial/KeccakP-1600-times4-on1.c",
]
include-dirs = [
  "src/sig/ml_dsa/pqcrystals-dilithium-standard_ml-dsa-44_avx2",
  "src/common/pqclean_shims",
  "src/common/sha3/xkcp_low/KeccakP-1600/plain-64bits",
  "build/include",
]
defines = { DILITHIUM_MODE = 2 }
cpu-features = ["avx2", "popcnt"]
arch = ["x86_64"]

[[parameter-set]]
label = "ML-DSA-44"
"#;

/// A project holding liboqs's `common/` and `folders` (relative to its
/// `src/`) under `algorithms/liboqs/`, with the headers liboqs's own
/// configure step writes (`<oqs/oqs.h>`, the generated `oqsconfig.h`) in
/// its `build/include/`; nothing of liboqs is built.
fn liboqs_project(liboqs: &std::path::Path, folders: &[&str], minimal: &str) -> TestProject {
    let p = TestProject::bare();
    let root = p.path().join("algorithms/liboqs");
    for dir in folders.iter().chain(&["common"]) {
        let dir = format!("src/{dir}");
        common::copy_tree(&liboqs.join(&dir), &root.join(&dir));
    }
    let status = Command::new("cmake")
        .arg("-S")
        .arg(liboqs)
        .arg("-B")
        .arg(root.join("build"))
        .arg(format!("-DOQS_MINIMAL_BUILD={minimal}"))
        .args([
            "-DOQS_USE_OPENSSL=OFF",
            "-DOQS_DIST_BUILD=OFF",
            "-DOQS_OPT_TARGET=generic",
            "-DOQS_BUILD_ONLY_LIB=ON",
        ])
        .stdout(std::process::Stdio::null())
        .status()
        .expect("running cmake");
    assert!(status.success(), "liboqs's configure step failed");
    p
}

/// The digest liboqs publishes for `name` (`all`: its 100-record KAT) in
/// `tests/KATs/<kind>/kats.json` (`kind`: `sig` or `kem`).
fn liboqs_kat_digest(liboqs: &std::path::Path, kind: &str, name: &str) -> String {
    let text =
        std::fs::read_to_string(liboqs.join(format!("tests/KATs/{kind}/kats.json"))).unwrap();
    let kats: serde_json::Value = serde_json::from_str(&text).unwrap();
    kats[name]["all"].as_str().unwrap().to_string()
}

/// liboqs's `kat_sig` prints the NIST generator's records without its
/// header line and without the last record's empty line, and hashes that:
/// exactly what a manifest line in mode `exact:100` digests.
#[test]
fn liboqs_ml_dsa_44_ref_and_avx2_on_the_context_api_pass_liboqs_kat_digest() {
    let Some(liboqs) = liboqs() else { return };
    if !skip::tools_or_skip(&["cmake"], "apt-get install cmake") {
        return;
    }
    let p = liboqs_project(&liboqs, &MLDSA44, "SIG_ml_dsa_44");
    p.write("algorithms/ml-dsa-44.toml", MLDSA44_TOML);
    let digest = liboqs_kat_digest(&liboqs, "sig", "ML-DSA-44");
    p.write(
        "kat/ml-dsa-44/kat.sha256",
        &format!(
            "# provenance: published\n# liboqs 0.13.0 tests/KATs/sig/kats.json, ML-DSA-44 \"all\"\n{digest} exact:100 ML-DSA-44/PQCsignKAT.rsp\n{digest} exact:100 ML-DSA-44.avx2/PQCsignKAT.rsp\n"
        ),
    );
    p.write(
        "campaigns/t.toml",
        &common::quick_campaign(&["ml-dsa-44"], "stages = [\"build\", \"kat\"]"),
    );
    // import drafts the binding of the bare folder (not its liboqs
    // headers and sources): sign.h, size_t lengths, the context API.
    let folder = liboqs.join("src").join(MLDSA44[0]);
    p.pqbench(&["import", folder.to_str().unwrap(), "--id", "draft"])
        .expect(0);
    let draft = p.read("algorithms/draft.toml");
    for line in [
        "header = \"sign.h\"",
        "lengths = \"size-t\"",
        "signature-api = \"fips204-context\"",
    ] {
        assert!(draft.contains(line), "{line} missing:\n{draft}");
    }
    // Its API symbols are found behind sign.h's renaming macros.
    p.pqbench(&["validate", "algorithms/ml-dsa-44.toml"])
        .expect(0);
    let run = p.pqbench(&["-q", "run", "t"]);
    let build = p.json("output/t/local/build.json");
    let status = |label: &str| {
        let inst = build["instances"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["label"] == label)
            .unwrap_or_else(|| panic!("no {label} in {build:#}"));
        (
            inst["kat_status"].as_str().unwrap().to_string(),
            inst.to_string(),
        )
    };
    let avx2 = host_has_avx2();
    for (label, runs) in [("ML-DSA-44", true), ("ML-DSA-44.avx2", avx2)] {
        let (got, inst) = status(label);
        let want = if runs { "PASS" } else { "SKIPPED" };
        assert_eq!(got, want, "{inst}\n{}\n{}", run.stdout, run.stderr);
    }
    run.expect(0);
    // The same digest taken here over the generated files, as kat_sig
    // prints them: no header, no empty line after the last record.
    let labels: &[&str] = if avx2 {
        &["ML-DSA-44", "ML-DSA-44.avx2"]
    } else {
        skip::not_applicable("no AVX2 here: the avx2 instance is skipped");
        &["ML-DSA-44"]
    };
    for label in labels {
        let rsp = p.read(&format!("output/t/local/kat/ml-dsa-44/{label}.rsp"));
        // The header names CRYPTO_ALGNAME, the same for both.
        let body = rsp
            .strip_prefix("# ML-DSA-44\n\n")
            .and_then(|b| b.strip_suffix('\n'))
            .expect("the NIST layout");
        assert_eq!(body.matches("count = ").count(), 100);
        use sha2::Digest;
        assert_eq!(
            hex::encode(sha2::Sha256::digest(body.as_bytes())),
            digest,
            "{label}"
        );
    }
}

/// The liboqs folders of ML-KEM-768's mlkem-native C and x86_64 code,
/// relative to `src/`.
const MLKEM768: [&str; 2] = [
    "kem/ml_kem/mlkem-native_ml-kem-768_ref",
    "kem/ml_kem/mlkem-native_ml-kem-768_x86_64",
];

/// The algorithm file of mlkem-native's ML-KEM-768 as liboqs 0.13.0 ships
/// it (docs/src/import.md shows it). liboqs's `src/kem/ml_kem/
/// CMakeLists.txt` compiles each folder with `MLKEM_K=3` and a config file
/// of its `integration/liboqs/`, which sets the symbol prefix and, for
/// x86_64, the native arithmetic backend. `mlkem/mlkem_native.h` maps
/// `crypto_kem_*` to the prefixed functions and defines the plain
/// `CRYPTO_*BYTES` sizes, not `CRYPTO_ALGNAME` (given on the command line:
/// it only names the `.rsp` header). SHA-3 goes through the
/// `pqclean_shims` to `OQS_SHA3_*`, the 4-way SHAKE too (the matrix is
/// sampled four rows at a time even in the C code); `randombytes` is
/// `OQS_randombytes`, which pqbench's adapter defines.
const MLKEM768_TOML: &str = r#"id = "ml-kem-768"
name = "ML-KEM-768 (liboqs 0.13.0, mlkem-native)"
kind = "kem"
api = "nist"

[nist]
header = "mlkem/mlkem_native.h"
randombytes = "OQS_randombytes"

[[implementation]]
name = "ref"
root = "liboqs"
sources = [
  "src/kem/ml_kem/mlkem-native_ml-kem-768_ref/mlkem/*.c",
  "src/common/common.c",
  "src/common/sha3/sha3.c",
  "src/common/sha3/xkcp_sha3.c",
  "src/common/sha3/sha3x4.c",
  "src/common/sha3/xkcp_sha3x4.c",
  "src/common/pqclean_shims/fips202.c",
  "src/common/pqclean_shims/fips202x4.c",
  "src/common/sha3/xkcp_low/KeccakP-1600/plain-64bits/KeccakP-1600-opt64.c",
  "src/common/sha3/xkcp_low/KeccakP-1600times4/serial/KeccakP-1600-times4-on1.c",
]
include-dirs = [
  "src/kem/ml_kem/mlkem-native_ml-kem-768_ref",
  "src/common/pqclean_shims",
  "src/common/sha3/xkcp_low/KeccakP-1600/plain-64bits",
  "build/include",
]
defines = { MLKEM_K = 3, MLK_CONFIG_FILE = '"../integration/liboqs/config_c.h"', CRYPTO_ALGNAME = '"ML-KEM-768"' }

[[implementation]]
name = "x86_64"
root = "liboqs"
sources = [
  "src/kem/ml_kem/mlkem-native_ml-kem-768_x86_64/mlkem/*.c",
  "src/kem/ml_kem/mlkem-native_ml-kem-768_x86_64/mlkem/native/x86_64/src/*.c",
  "src/kem/ml_kem/mlkem-native_ml-kem-768_x86_64/mlkem/native/x86_64/src/*.S",
  "src/common/common.c",
  "src/common/sha3/sha3.c",
  "src/common/sha3/xkcp_sha3.c",
  "src/common/sha3/sha3x4.c",
  "src/common/sha3/xkcp_sha3x4.c",
  "src/common/pqclean_shims/fips202.c",
  "src/common/pqclean_shims/fips202x4.c",
  "src/common/sha3/xkcp_low/KeccakP-1600/avx2/KeccakP-1600-AVX2.S",
  "src/common/sha3/xkcp_low/KeccakP-1600times4/avx2/KeccakP-1600-times4-SIMD256.c",
]
include-dirs = [
  "src/kem/ml_kem/mlkem-native_ml-kem-768_x86_64",
  "src/common/pqclean_shims",
  "src/common/sha3/xkcp_low/KeccakP-1600/avx2",
  "src/common/sha3/xkcp_low/KeccakP-1600times4/avx2",
  "build/include",
]
defines = { MLKEM_K = 3, MLK_CONFIG_FILE = '"../integration/liboqs/config_x86_64.h"', CRYPTO_ALGNAME = '"ML-KEM-768"' }
cpu-features = ["avx2", "bmi2", "popcnt"]
arch = ["x86_64"]

[[parameter-set]]
label = "ML-KEM-768"
"#;

/// liboqs's `kat_kem` for ML-KEM draws from the NIST KAT DRBG, calls the
/// randomised `keypair` and `enc`, and hashes the records as `kat_sig`
/// does: `exact:100`. The x86_64 library must hold the AVX2 arithmetic (its
/// assembly linked, not the C fallback).
#[test]
fn liboqs_mlkem_native_ml_kem_768_c_and_x86_64_pass_liboqs_kat_digest() {
    let Some(liboqs) = liboqs() else { return };
    if !skip::tools_or_skip(&["cmake"], "apt-get install cmake") {
        return;
    }
    let p = liboqs_project(&liboqs, &MLKEM768, "KEM_ml_kem_768");
    p.write("algorithms/ml-kem-768.toml", MLKEM768_TOML);
    let digest = liboqs_kat_digest(&liboqs, "kem", "ML-KEM-768");
    p.write(
        "kat/ml-kem-768/kat.sha256",
        &format!(
            "# provenance: published\n# liboqs 0.13.0 tests/KATs/kem/kats.json, ML-KEM-768 \"all\"\n{digest} exact:100 ML-KEM-768/PQCkemKAT.rsp\n{digest} exact:100 ML-KEM-768.x86_64/PQCkemKAT.rsp\n"
        ),
    );
    p.write(
        "campaigns/t.toml",
        &common::quick_campaign(&["ml-kem-768"], "stages = [\"build\", \"kat\"]"),
    );
    p.pqbench(&["validate", "algorithms/ml-kem-768.toml"])
        .expect(0);
    let run = p.pqbench(&["-q", "run", "t"]);
    let build = p.json("output/t/local/build.json");
    let avx2 = host_has_avx2();
    for (label, runs) in [("ML-KEM-768", true), ("ML-KEM-768.x86_64", avx2)] {
        let inst = build["instances"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["label"] == label)
            .unwrap_or_else(|| panic!("no {label} in {build:#}"));
        let want = if runs { "PASS" } else { "SKIPPED" };
        assert_eq!(
            inst["kat_status"], want,
            "{inst}\n{}\n{}",
            run.stdout, run.stderr
        );
    }
    run.expect(0);
    if !avx2 {
        skip::not_applicable("no AVX2 here: the x86_64 instance is skipped");
        return;
    }
    let lib = |label: &str| -> Vec<u8> {
        let inst = build["instances"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["label"] == label)
            .unwrap();
        let sha = inst["library_sha256"].as_str().expect("a built library");
        // The cache keeps each library as a blob named by its sha256.
        let blob = p
            .path()
            .join("output/.cache/blobs")
            .join(&sha[..2])
            .join(sha);
        std::fs::read(&blob).unwrap_or_else(|e| panic!("{label}: {}: {e}", blob.display()))
    };
    let has = |bytes: &[u8], name: &str| bytes.windows(name.len()).any(|w| w == name.as_bytes());
    assert!(has(&lib("ML-KEM-768.x86_64"), "_ntt_avx2"));
    assert!(!has(&lib("ML-KEM-768"), "_ntt_avx2"));
    // SHA-3 as liboqs's own build has it on an AVX2 host: its AVX2 Keccak
    // and 4-way Keccak, not the portable ones.
    let sources = |label: &str| -> String {
        build["instances"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["label"] == label)
            .unwrap()["sources"]
            .to_string()
    };
    let x86 = sources("ML-KEM-768.x86_64");
    assert!(
        x86.contains("KeccakP-1600-AVX2.S") && x86.contains("KeccakP-1600-times4-SIMD256.c"),
        "{x86}"
    );
    assert!(
        !x86.contains("plain-64bits") && !x86.contains("times4-on1"),
        "{x86}"
    );
    assert!(sources("ML-KEM-768").contains("KeccakP-1600-opt64.c"));
}

/// NIST-API code calls no ICCS helper: the draft wraps what it does call,
/// the tree's shared SHA-3/SHAKE functions (also behind the scheme's own
/// macros, `hash_h` → `sha3_256`) and its randomness, so the profile
/// shows their shares.
#[test]
fn ml_kem_and_ml_dsa_drafts_profile_their_sha3_and_randomness() {
    let Some(tree) = pqclean() else { return };
    let p = TestProject::bare();
    for scheme in ["crypto_kem/ml-kem-512", "crypto_sign/ml-dsa-44"] {
        p.pqbench(&["import", tree.join(scheme).to_str().unwrap()])
            .expect(0);
    }
    let kem = p.read("algorithms/ml-kem-512.toml");
    for want in [
        "symbol = \"{randombytes}\"\nclass = \"drng\"",
        "symbol = \"sha3_256\"\nclass = \"hash\"",
        "symbol = \"shake128_absorb\"\nclass = \"xof\"",
        "hash = \"SHA-2/SHA-3\"",
    ] {
        assert!(kem.contains(want), "{want}\n{kem}");
    }
    p.write(
        "campaigns/t.toml",
        "algorithms = [\"ml-kem-512\", \"ml-dsa-44\"]\nstages = [\"build\", \"kat\", \"time\", \"profile\"]\n\n[timing]\ntrials = 3\nwarmup = 1\ntrial-seconds = 0.01\nbudget-seconds = 0.5\n\n[host]\nrequire-fixed = false\n",
    );
    p.pqbench(&["run", "t"]).expect(0);
    let share = |alg: &str, label: &str, op: &str, class: &str| -> f64 {
        let rec: serde_json::Value = serde_json::from_str(
            &p.read(&format!("output/t/local/profile/{alg}/{label}__{op}.json")),
        )
        .unwrap();
        rec["shapes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["class"] == class)
            .map(|s| s["ticks"].as_f64().unwrap())
            .sum::<f64>()
            / rec["total_ticks"].as_f64().unwrap()
    };
    assert!(share("ml-kem-512", "ML-KEM-512", "keygen", "hash") > 0.0);
    assert!(share("ml-kem-512", "ML-KEM-512", "keygen", "xof") > 0.0);
    assert!(share("ml-kem-512", "ML-KEM-512", "keygen", "drng") > 0.0);
    assert!(share("ml-dsa-44", "ML-DSA-44", "sign", "xof") > 0.0);
    assert!(share("ml-dsa-44", "ML-DSA-44", "keygen", "drng") > 0.0);
}
