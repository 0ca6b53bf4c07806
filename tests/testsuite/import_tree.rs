//! Real public code with zero hand edits: a public tree (the fixture
//! `tests/fixtures/pubtree`, shaped like the public corpora) is imported,
//! validated and run without touching the drafted files; its own-RNG
//! scheme's `.rsp` equals its classic generator's byte for byte; edits to
//! a non-`.h` include and a header two directories down are noticed and
//! rebuild exactly what they affect; pages tell what happened.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{repo, TestProject};

fn tree() -> std::path::PathBuf {
    repo().join("tests/fixtures/pubtree")
}

/// Whether this host can run the fixture's AVX2 implementations.
fn host_has(features: &[&str]) -> bool {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags: Vec<&str> = info
        .lines()
        .find(|l| l.starts_with("flags"))
        .map(|l| l.split_whitespace().collect())
        .unwrap_or_default();
    cfg!(target_arch = "x86_64") && features.iter().all(|f| flags.contains(f))
}

/// A bare project with the tree imported, and a campaign `t` running
/// `stages` on both schemes. The drafts check one KAT record (what the
/// published digests cover); the campaign asks for 100, so the files can
/// be compared with the classic generator's and the pages show the range
/// of variable lengths.
fn imported(stages: &[&str]) -> TestProject {
    let p = TestProject::bare();
    let out = p.pqbench(&["import", tree().to_str().unwrap()]).expect(0);
    assert!(
        out.stdout
            .contains("wrote algorithms/fixkem.toml (0 TODO lines)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("wrote algorithms/fixsig.toml (0 TODO lines)"),
        "{}",
        out.stdout
    );
    // The drafts' own account is checked as `validate` checks them.
    for id in ["fixkem", "fixsig"] {
        let ok = format!("validate algorithms/{id}.toml: OK (");
        assert!(out.stdout.contains(&ok), "{}", out.stdout);
    }
    let list: Vec<String> = stages.iter().map(|s| format!("\"{s}\"")).collect();
    p.write(
        "campaigns/t.toml",
        &format!(
            "algorithms = [\"fixkem\", \"fixsig\"]\nstages = [{}]\n\n[kat]\ntimeout-seconds = 60\nrecords = 100\n\n[host]\nrequire-fixed = false\n",
            list.join(", ")
        ),
    );
    p
}

fn build_record<'a>(build: &'a serde_json::Value, label: &str) -> &'a serde_json::Value {
    build["instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == label)
        .unwrap_or_else(|| panic!("no record for {label}"))
}

#[test]
fn a_public_tree_imports_validates_and_passes_every_kat_with_zero_edits() {
    let p = imported(&["kat"]);
    let kem = p.read("algorithms/fixkem.toml");
    let sig = p.read("algorithms/fixsig.toml");
    // Per implementation: its namespace, its CPU flags, the common code it
    // includes (the AVX2 helper only where AVX2 is compiled).
    for (text, ns) in [
        (&kem, "PQFIX_FIXKEM_CLEAN_"),
        (&kem, "PQFIX_FIXKEM_AVX2_"),
        (&sig, "PQFIX_FIXSIG_CLEAN_"),
        (&sig, "PQFIX_FIXSIG_AVX2_"),
    ] {
        assert!(
            text.contains(&format!("namespace = \"{ns}\"")),
            "{ns}\n{text}"
        );
    }
    assert!(
        kem.contains("cpu-features = [\"avx2\", \"bmi2\", \"popcnt\"]"),
        "{kem}"
    );
    assert!(kem.contains("uses = [\"pubtree-sha256\"]\n"), "{kem}");
    assert!(
        kem.contains("uses = [\"pubtree-sha256\", \"pubtree-xor256\"]"),
        "{kem}"
    );
    // The link symbol, not the macro name.
    assert!(kem.contains("randombytes = \"PQFIX_randombytes\""), "{kem}");
    // One KAT record: the published digest covers the first.
    for text in [&kem, &sig] {
        assert!(
            text.contains("kat-records = 1  # the reference covers 1 record\n"),
            "{text}"
        );
    }
    // The scheme's own KAT RNG, found from META.yml's nistkat-rng.
    assert!(sig.contains("kat-rng = \"submission\"\nrandombytes-init = \"fixsig_kat_init\"\nrandombytes-init-args = \"entropy\""), "{sig}");
    assert!(sig.contains("\"pubtree-fixsig-sha256ctr\"]"), "{sig}");
    // Another architecture's implementation is drafted with its `arch`:
    // built on systems of that architecture, skipped with the reason here.
    assert!(
        kem.contains("name = \"aarch64\"\nroot = \"pubtree/crypto_kem/fixkem/aarch64\""),
        "{kem}"
    );
    assert!(kem.contains("arch = [\"aarch64\"]"), "{kem}");
    let component = p.read("algorithms/components/pubtree-xor256.toml");
    assert!(
        component.contains("root = \"../pubtree/common\""),
        "{component}"
    );
    assert!(
        component.contains("sources = [\"xor256.c\"]"),
        "{component}"
    );
    // The published digest, for every implementation.
    let m = p.read("kat/fixkem/kat.sha256");
    assert!(m.contains("# provenance: published"), "{m}");
    for label in ["FixKEM-512", "FixKEM-512.avx2"] {
        assert!(
            m.contains(&format!(" exact:1 {label}/PQCkemKAT.rsp")),
            "{m}"
        );
    }

    for id in ["fixkem", "fixsig"] {
        let out = p
            .pqbench(&["validate", &format!("algorithms/{id}.toml")])
            .expect(0);
        assert!(
            out.stdout.contains("every unit compiled and linked"),
            "{}",
            out.stdout
        );
    }

    let avx2 = host_has(&["avx2", "bmi2", "popcnt"]);
    let run = p.pqbench(&["run", "t"]).expect(0);
    let build = p.json("output/t/local/build.json");
    for label in ["FixKEM-512", "FixSig-1"] {
        assert_eq!(build_record(&build, label)["kat_status"], "PASS", "{label}");
    }
    for label in ["FixKEM-512.avx2", "FixSig-1.avx2"] {
        let r = build_record(&build, label);
        if avx2 {
            assert_eq!(r["kat_status"], "PASS", "{label}: {r}");
        } else {
            assert_eq!(r["kat_status"], "SKIPPED", "{label}: {r}");
            let why = r["kat_detail"].as_str().unwrap();
            assert!(why.contains("host CPU lacks required features"), "{why}");
            let id = if label.starts_with("FixKEM") {
                "fixkem"
            } else {
                "fixsig"
            };
            assert!(
                run.stdout.contains(&format!("SKIP {id}/{label}")),
                "{}",
                run.stdout
            );
        }
        let reference = if avx2 {
            serde_json::json!("published")
        } else {
            serde_json::Value::Null
        };
        assert_eq!(r["kat_reference"], reference, "{label}");
    }

    // The own-RNG scheme's whole .rsp is what its classic generator writes.
    let gen = p.path().join("gen");
    std::fs::create_dir_all(&gen).unwrap();
    let t = tree();
    let sig_dir = t.join("crypto_sign/fixsig");
    let status = Command::new("gcc")
        .args(["-std=c99", "-O1", "-Wall", "-Wextra", "-Werror"])
        .arg(format!("-I{}", sig_dir.join("clean").display()))
        .arg(format!("-I{}", t.join("common").display()))
        .arg(format!("-I{}", sig_dir.join("nistkat").display()))
        .arg(sig_dir.join("clean/sign.c"))
        .arg(t.join("common/sha256.c"))
        .arg(sig_dir.join("nistkat/sha256ctr.c"))
        .arg(sig_dir.join("nistkat/PQCgenKAT_sign.c"))
        .arg("-o")
        .arg(gen.join("PQCgenKAT_sign"))
        .status()
        .expect("running gcc");
    assert!(status.success());
    let status = Command::new(gen.join("PQCgenKAT_sign"))
        .arg(gen.join("PQCsignKAT_64.rsp"))
        .status()
        .unwrap();
    assert!(status.success());
    let classic = std::fs::read(gen.join("PQCsignKAT_64.rsp")).unwrap();
    assert_eq!(classic.iter().filter(|&&b| b == b'\n').count(), 2 + 100 * 9);
    let ours = std::fs::read(p.path().join("output/t/local/kat/fixsig/FixSig-1.rsp")).unwrap();
    assert!(
        ours == classic,
        "FixSig-1.rsp differs from the classic generator's"
    );
    if avx2 {
        let ours =
            std::fs::read(p.path().join("output/t/local/kat/fixsig/FixSig-1.avx2.rsp")).unwrap();
        assert!(
            ours == classic,
            "FixSig-1.avx2.rsp differs from the classic generator's"
        );
    }
}

/// Replaces `from` by `to` in a project file (which must contain it).
fn edit(p: &TestProject, rel: &str, from: &str, to: &str) {
    let text = p.read(rel);
    assert!(text.contains(from), "{rel} lacks {from:?}");
    p.write(rel, &text.replacen(from, to, 1));
}

/// The `stale` rows of `status`: (instance, stage, reasons).
fn stale(p: &TestProject) -> Vec<(String, String, String)> {
    let out = p.pqbench(&["status", "t", "--format", "json"]).expect(0);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["instance"].as_str().unwrap().to_string(),
                r["stage"].as_str().unwrap().to_string(),
                r["reasons"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|x| x.as_str().unwrap_or_default())
                            .collect::<Vec<_>>()
                            .join("; ")
                    })
                    .unwrap_or_default(),
            )
        })
        .collect()
}

/// The builds a run computed, from its `[k/N] build <instance>` lines.
fn rebuilt(stderr: &str) -> Vec<String> {
    let mut v: Vec<String> = stderr
        .lines()
        .filter_map(|l| {
            let rest = l.split("] [").nth(1)?;
            let mut w = rest.split(']').nth(1)?.split_whitespace();
            (w.next()? == "build").then(|| w.next().map(String::from))?
        })
        .collect();
    v.sort();
    v
}

#[test]
fn included_files_of_any_extension_and_depth_are_tracked() {
    if !host_has(&["avx2", "bmi2", "popcnt"]) {
        common::skip::not_applicable(
            "the edited include belongs to the AVX2 implementation and this host lacks AVX2",
        );
        return;
    }
    let p = imported(&["build"]);
    p.pqbench(&["run", "t"]).expect(0);
    assert!(stale(&p).is_empty());

    // The non-`.h` include in a subdirectory of the AVX2 implementation.
    let macros = "algorithms/pubtree/crypto_kem/fixkem/avx2/inc/consts.macros";
    edit(&p, macros, "the ring", "the ring (edited)");
    let rows = stale(&p);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].0, "fixkem/FixKEM-512.avx2");
    assert_eq!(rows[0].2, "headers changed: consts.macros");
    let out = p.pqbench(&["run", "t"]).expect(0);
    assert_eq!(
        rebuilt(&out.stderr),
        vec!["fixkem/FixKEM-512.avx2"],
        "{}",
        out.stderr
    );
    let lock = std::fs::read_dir(p.path().join("output/t/local/runs"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("lock.json"))
        .find(|l| l.is_file())
        .unwrap();
    let lock = std::fs::read_to_string(lock).unwrap();
    assert!(
        lock.contains(&format!("\"header:{macros}\"")),
        "the lock lists the .macros file"
    );

    // A header two directories down of the portable signature.
    let shape = "algorithms/pubtree/crypto_sign/fixsig/clean/hdr/deep/shape.h";
    edit(&p, shape, "vary in length", "vary in size");
    let rows = stale(&p);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (rows[0].0.as_str(), rows[0].2.as_str()),
        ("fixsig/FixSig-1", "headers changed: shape.h")
    );
    let out = p.pqbench(&["run", "t"]).expect(0);
    assert_eq!(
        rebuilt(&out.stderr),
        vec!["fixsig/FixSig-1"],
        "{}",
        out.stderr
    );

    // A header added beside the source shadows `common/sha256.h` (quoted
    // includes look in the includer's directory first): no file the
    // compiler read before has changed, yet it would now read another.
    let common = p.read("algorithms/pubtree/common/sha256.h");
    p.write(
        "algorithms/pubtree/crypto_sign/fixsig/clean/sha256.h",
        &format!("/* a local copy */\n{common}"),
    );
    let rows = stale(&p);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].0, "fixsig/FixSig-1");
    assert!(rows[0].2.contains("sha256.h"), "{rows:?}");
    let out = p.pqbench(&["run", "t"]).expect(0);
    assert_eq!(
        rebuilt(&out.stderr),
        vec!["fixsig/FixSig-1"],
        "{}",
        out.stderr
    );
    assert!(stale(&p).is_empty());

    // A build-only campaign whose build fails exits 1, and says why.
    edit(
        &p,
        macros,
        "#define FIXKEM_N 32",
        "#error consts broken\n#define FIXKEM_N 32",
    );
    let out = p.pqbench(&["run", "t"]).expect(1);
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with("FAIL fixkem/FixKEM-512.avx2: BUILDFAIL"))
        .unwrap_or_else(|| panic!("{}", out.stdout));
    assert!(
        line.contains("consts.macros:2:2: error: #error consts broken"),
        "{line}"
    );
    assert!(
        !out.stdout.contains("FAIL fixkem/FixKEM-512:"),
        "{}",
        out.stdout
    );
}

/// The algorithm page of `id`.
fn page(p: &TestProject, id: &str) -> String {
    p.read(&format!("output/t/site/local/{id}.md"))
}

#[test]
fn pages_tell_outcomes_provenance_sets_and_variable_lengths() {
    let p = imported(&["kat", "sizes", "render"]);
    // A wrong published digest for the portable KEM.
    let m = p.read("kat/fixkem/kat.sha256");
    let right = m
        .lines()
        .find(|l| l.ends_with(" FixKEM-512/PQCkemKAT.rsp"))
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let last = if right.ends_with('0') { '1' } else { '0' };
    let wrong = format!("{}{last}", &right[..63]);
    p.write(
        "kat/fixkem/kat.sha256",
        &m.replacen(
            &format!("{right} exact:1 FixKEM-512/"),
            &format!("{wrong} exact:1 FixKEM-512/"),
            1,
        ),
    );
    let out = p.pqbench(&["run", "t"]).expect(1);
    let fail = out
        .stdout
        .lines()
        .find(|l| l.starts_with("FAIL fixkem/FixKEM-512: KAT MISMATCH"))
        .unwrap_or_else(|| panic!("{}", out.stdout));
    assert!(fail.contains(&right) && fail.contains(&wrong), "{fail}");
    assert!(
        fail.contains("(exact:1 FixKEM-512/PQCkemKAT.rsp)"),
        "{fail}"
    );
    let log = p.read("output/t/local/kat/fixkem/FixKEM-512.log");
    assert!(log.contains(&format!("digest = {right} exact:1")), "{log}");
    let kem = page(&p, "fixkem");
    assert!(!kem.contains("Every library reproduced"), "{kem}");
    let n = if host_has(&["avx2", "bmi2", "popcnt"]) {
        2
    } else {
        1
    };
    assert!(
        kem.contains(&format!("{} of {n} libraries reproduced their reference known-answer tests; not this one: FixKEM-512 MISMATCH", n - 1))
            || (n == 1 && kem.contains("0 of 1 library reproduced its reference known-answer tests; not this one: FixKEM-512 MISMATCH")),
        "{kem}"
    );
    assert!(
        kem.contains("published single-record digests from the scheme's metadata"),
        "{kem}"
    );
    assert!(
        kem.contains(&wrong),
        "the MISMATCH footnote gives both digests\n{kem}"
    );
    // Parameter sets and instances apart.
    assert!(kem.contains("- Parameter sets: FixKEM-512\n"), "{kem}");
    assert!(
        kem.contains("- Implementation versions measured: clean, avx2\n"),
        "{kem}"
    );
    // The AArch64 code was drafted for its architecture and skipped here.
    assert!(
        kem.contains("- Not built on this system (see its instances): aarch64\n"),
        "{kem}"
    );
    assert!(
        kem.contains("- Instances (parameter set.implementation): FixKEM-512, FixKEM-512.avx2, FixKEM-512.aarch64\n"),
        "{kem}"
    );

    // Variable-length signatures: the maximum and the observed range.
    let sig = page(&p, "fixsig");
    let row = sig
        .lines()
        .find(|l| l.starts_with("| `FixSig-1` | 32 | 64 | "))
        .unwrap_or_else(|| panic!("{sig}"));
    let cell = row.trim_end_matches(" |").rsplit("| ").next().unwrap();
    let (max, range) = cell.split_once(" (").unwrap_or_else(|| panic!("{cell}"));
    assert_eq!(max, "80");
    let (lo, hi) = range.trim_end_matches(')').split_once('–').unwrap();
    let (lo, hi): (u64, u64) = (lo.parse().unwrap(), hi.parse().unwrap());
    assert!((48..hi).contains(&lo) && hi <= 80, "{cell}");
    assert!(sig.contains("Variable-length outputs:"), "{sig}");

    // Blessing: drop the KEM's references; NOKAT says how to bless; bless
    // touches only the lines it adds.
    p.write("kat/fixkem/kat.sha256", "# KAT manifest of fixkem\n");
    let out = p.pqbench(&["run", "t"]).expect(1);
    assert!(
        out.stdout.contains("FAIL fixkem/FixKEM-512: KAT NOKAT"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("`pqbench bless t`"), "{}", out.stdout);
    let sig_manifest = p.read("kat/fixsig/kat.sha256");
    let blessed = p.pqbench(&["bless", "t"]).expect(0);
    assert!(
        blessed
            .stdout
            .contains("kept fixsig/FixSig-1: it passed against its reference"),
        "{}",
        blessed.stdout
    );
    assert_eq!(
        p.read("kat/fixsig/kat.sha256"),
        sig_manifest,
        "bless rewrote a manifest it had nothing to add to"
    );
    let m = p.read("kat/fixkem/kat.sha256");
    assert!(
        m.starts_with("# KAT manifest of fixkem\n# provenance: blessed"),
        "{m}"
    );
    p.pqbench(&["run", "t"]).expect(0);
    let kem = page(&p, "fixkem");
    assert!(
        kem.contains("blessed from pqbench's own earlier output"),
        "{kem}"
    );
    assert!(!kem.contains("submitted"), "{kem}");
}

#[test]
fn every_init_shape_of_the_submission_rng_compiles_warnings_clean() {
    let support = repo().join("src/support/c");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("api.h"),
        "#define CRYPTO_PUBLICKEYBYTES 1\n#define CRYPTO_SECRETKEYBYTES 1\n#define CRYPTO_BYTES 1\n#define CRYPTO_CIPHERTEXTBYTES 1\n#define CRYPTO_ALGNAME \"x\"\nint crypto_kem_keypair(unsigned char *pk, unsigned char *sk);\nint crypto_kem_enc(unsigned char *ct, unsigned char *ss, const unsigned char *pk);\nint crypto_kem_dec(unsigned char *ss, const unsigned char *ct, const unsigned char *sk);\n",
    )
    .unwrap();
    for shape in [
        "CLASSIC",
        "ENTROPY",
        "ENTROPY_LENGTH",
        "ENTROPY_PERSONALIZATION",
    ] {
        let out = Command::new("gcc")
            .current_dir(dir.path())
            .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-c", "-o", "a.o"])
            .arg(format!("-I{}", Path::new(&support).display()))
            .args(["-I.", "-include", "api.h", "-DPQB_KIND_IS_KEM", "-DPQB_NS="])
            .args(["-DPQB_RANDOMBYTES=randombytes", "-DPQB_SUBMISSION_RNG"])
            .arg("-DPQB_RANDOMBYTES_INIT=my_init")
            .arg(format!("-DPQB_INIT_ARGS_{shape}"))
            .arg(support.join("adapter_nist.c"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{shape}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn an_implementation_the_host_cannot_run_is_skipped_with_its_reason() {
    if host_has(&["amx_tile"]) {
        common::skip::not_applicable("this host has AMX, the feature the test pretends it lacks");
        return;
    }
    let p = imported(&["kat"]);
    edit(
        &p,
        "algorithms/fixkem.toml",
        "cpu-features = [\"avx2\", \"bmi2\", \"popcnt\"]",
        "cpu-features = [\"avx2\", \"amx-tile\"]",
    );
    p.write(
        "campaigns/k.toml",
        "algorithms = [\"fixkem\"]\nstages = [\"kat\"]\n\n[host]\nrequire-fixed = false\n",
    );
    let out = p.pqbench(&["run", "k"]).expect(0);
    assert!(
        out.stdout.contains("SKIP fixkem/FixKEM-512.avx2: not built on this host (host CPU lacks required features: amx-tile)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("KAT: 1 PASS, 2 SKIPPED of 3 instances"),
        "{}",
        out.stdout
    );
    let build = p.json("output/k/local/build.json");
    assert_eq!(
        build_record(&build, "FixKEM-512.avx2")["kat_status"],
        "SKIPPED"
    );
}

#[test]
fn validate_compiles_components_with_the_flags_of_the_implementation_using_them() {
    let p = TestProject::bare();
    p.pqbench(&["import", tree().join("crypto_kem/fixkem").to_str().unwrap()])
        .expect(0);
    // The AVX2 helper handed to the portable implementation, whose flags
    // have no -mavx2: `validate` says so before any run.
    edit(
        &p,
        "algorithms/fixkem.toml",
        "uses = [\"pubtree-sha256\"]\n",
        "uses = [\"pubtree-sha256\", \"pubtree-xor256\"]\n",
    );
    let out = p.pqbench(&["validate", "algorithms/fixkem.toml"]).expect(2);
    let s = &out.stdout;
    assert!(
        s.contains("error: FixKEM-512: unit algorithms/pubtree/common/xor256.c does not compile:"),
        "{s}"
    );
    assert!(s.contains("target specific option mismatch"), "{s}");
    assert!(!s.contains("FixKEM-512.avx2:"), "{s}");
}

#[test]
fn a_link_in_a_tree_is_an_error_naming_it_and_nothing_is_imported() {
    let p = TestProject::bare();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("secret"), "pqb-import-secret").unwrap();
    for (name, target) in [
        // A file of the evaluator's, and a folder holding it.
        (
            "crypto_kem/fixkem/clean/notes.h",
            home.path().join("secret"),
        ),
        ("crypto_kem/fixkem/clean/keys", home.path().to_path_buf()),
        // A link back up the tree: walking it would never end.
        (
            "crypto_kem/fixkem/clean/loop",
            std::path::PathBuf::from("../../.."),
        ),
    ] {
        let copy = p.path().join("copy");
        let _ = std::fs::remove_dir_all(&copy);
        common::copy_tree(&tree(), &copy);
        std::os::unix::fs::symlink(&target, copy.join(name)).unwrap();
        let run = p.pqbench(&["import", copy.to_str().unwrap()]);
        assert_eq!(run.code, 2, "{name}: {}\n{}", run.stdout, run.stderr);
        assert!(
            run.stderr
                .contains(&format!("copy/{name} is a symbolic link")),
            "{name}: {}",
            run.stderr
        );
        assert!(
            !p.path().join("algorithms/fixkem.toml").exists(),
            "{name}: something was written"
        );
    }
    std::fs::remove_dir_all(p.path().join("copy")).unwrap();
    // What the links pointed at is as it was.
    assert_eq!(
        std::fs::read_to_string(home.path().join("secret")).unwrap(),
        "pqb-import-secret"
    );
    for f in common::all_files(p.path()) {
        let bytes = std::fs::read(&f).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains("pqb-import-secret"),
            "{}",
            f.display()
        );
    }
}

/// The AArch64 implementation is drafted for its architecture, not
/// commented out: on the emulated AArch64 system the same drafts build it
/// with the cross compiler (NEON intrinsics, no `-m` option for `asimd`)
/// and it passes its published digest, while the AVX2 one is skipped
/// there with its reason.
#[test]
fn the_aarch64_draft_passes_on_the_emulated_system_unedited() {
    if !common::skip::tools_or_skip(
        &["aarch64-linux-gnu-gcc", "qemu-aarch64"],
        "apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user",
    ) {
        return;
    }
    let p = imported(&["build", "kat"]);
    p.write(
        "campaigns/systems.toml",
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns/systems.toml"),
        )
        .unwrap(),
    );
    let campaign = p.read("campaigns/t.toml");
    p.write(
        "campaigns/t.toml",
        &format!("systems = [\"local\", \"arm_qemu\"]\n{campaign}"),
    );
    let kem = p.read("algorithms/fixkem.toml");
    assert!(!kem.contains("asimd"), "{kem}");
    let out = p.pqbench(&["run", "t", "--system", "arm_qemu"]).expect(0);
    let build = p.json("output/t/arm_qemu/build.json");
    assert_eq!(
        build_record(&build, "FixKEM-512.aarch64")["kat_status"],
        "PASS",
        "{}",
        out.stdout
    );
    assert_eq!(build_record(&build, "FixKEM-512")["kat_status"], "PASS");
    let avx2 = build_record(&build, "FixKEM-512.avx2");
    assert_eq!(avx2["kat_status"], "SKIPPED", "{avx2}");
    assert!(
        avx2["kat_detail"]
            .as_str()
            .is_some_and(|d| d.contains("written for x86_64")),
        "{avx2}"
    );
}

/// Two schemes whose META.yml give them one name (PQClean's
/// `mceliece348864` and `mceliece348864f`) are drafted with their ids
/// added, so their pages do not read alike, and labelled by their ids, so
/// a campaign's instance labels stay unique; the import says why.
#[test]
fn schemes_sharing_a_metadata_name_are_drafted_apart() {
    let work = tempfile::tempdir().unwrap();
    let copy = work.path().join("pubtree");
    common::copy_tree(&tree(), &copy);
    common::copy_tree(
        &copy.join("crypto_kem/fixkem"),
        &copy.join("crypto_kem/fixkemf"),
    );
    let p = TestProject::bare();
    let out = p.pqbench(&["import", copy.to_str().unwrap()]).expect(0);
    let name = |id: &str| {
        let text = p.read(&format!("algorithms/{id}.toml"));
        text.lines()
            .find_map(|l| l.strip_prefix("name = "))
            .unwrap()
            .to_string()
    };
    assert_eq!(name("fixkem"), "\"FixKEM-512 (fixkem)\"", "{}", out.stdout);
    assert_eq!(name("fixkemf"), "\"FixKEM-512 (fixkemf)\"");
    assert_eq!(name("fixsig"), "\"FixSig-1\"");
    let label = |id: &str| {
        let text = p.read(&format!("algorithms/{id}.toml"));
        text.lines()
            .find_map(|l| l.strip_prefix("label = "))
            .unwrap()
            .to_string()
    };
    assert_eq!(label("fixkem"), "\"fixkem\"");
    assert_eq!(label("fixkemf"), "\"fixkemf\"");
    assert_eq!(label("fixsig"), "\"FixSig-1\"");
    // Both run in one campaign, their KATs against the published digest.
    p.write(
        "campaigns/t.toml",
        "algorithms = [\"fixkem\", \"fixkemf\"]\nstages = [\"build\", \"kat\"]\n\n[host]\nrequire-fixed = false\n",
    );
    let run = p.pqbench(&["run", "t"]);
    assert!(
        !run.stdout.contains("MISMATCH") && !run.stdout.contains("NOKAT"),
        "{}",
        run.stdout
    );
    assert!(
        out.stdout
            .contains("note: META.yml names fixkem, fixkemf alike"),
        "{}",
        out.stdout
    );
}

/// `bench-tree`, the acceptance command for real trees, on the fixture
/// tree: a fresh project, the import validated, one row per instance with
/// its verdict against the published digest, and the exit code saying all
/// passed.
#[test]
fn bench_tree_runs_a_whole_tree_unedited_and_tabulates_it() {
    let p = TestProject::bare();
    let out = p
        .pqbench(&[
            "bench-tree",
            tree().to_str().unwrap(),
            "--keep",
            "bt",
            "--exclude",
            "fixsig",
        ])
        .expect(0);
    let row = |instance: &str| {
        out.stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(instance))
            .unwrap_or_else(|| panic!("{instance}\n{}", out.stdout))
            .split_whitespace()
            .skip(1)
            .take(2)
            .collect::<Vec<_>>()
    };
    assert_eq!(row("fixkem/FixKEM-512"), ["PASS", "published"]);
    let aarch64 = if cfg!(target_arch = "aarch64") {
        "PASS"
    } else {
        "SKIPPED"
    };
    assert_eq!(row("fixkem/FixKEM-512.aarch64")[0], aarch64);
    assert!(
        out.stdout.contains("left out (--exclude): fixsig"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("every one of the 2 drafts: 0 TODO lines, validates"),
        "{}",
        out.stdout
    );
    // The project is kept, with the campaign it ran.
    let campaign = p.read("bt/campaigns/tree.toml");
    assert!(campaign.contains("algorithms = [\"fixkem\"]"), "{campaign}");
    assert!(p.path().join("bt/output/tree/local/build.json").is_file());
}
