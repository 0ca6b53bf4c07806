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

/// The package with a Makefile per parameter set whose `CFLAGS` hold code
/// generation flags, warnings, an include path and refused flags (one
/// that keeps temporaries, and three that would run the submission's code
/// in the compiler: a pass plugin, a foreign toolchain, its assembler); the
/// sources compile only with its `-funsigned-char`.
fn package_with_makefiles(p: &TestProject) -> std::path::PathBuf {
    let tree = p.path().join("package");
    common::copy_tree(&fixture(), &tree);
    for set in ["toy1", "toy2"] {
        let dir = tree.join("Reference_Implementation").join(set);
        std::fs::write(
            dir.join("Makefile"),
            "OPT = -O3 -fomit-frame-pointer\nCFLAGS = $(OPT) -Wall -I. \\\n  -funsigned-char -save-temps -march=native \\\n  -fpass-plugin=./p.so --gcc-toolchain=./tc -fno-integrated-as\n\nall:\n\t$(CC) $(CFLAGS) -c sign.c\n",
        )
        .unwrap();
        let sign = dir.join("sign.c");
        let mut text = std::fs::read_to_string(&sign).unwrap();
        text.push_str("\n#ifndef __CHAR_UNSIGNED__\n#error \"built without the Makefile's -funsigned-char\"\n#endif\n");
        std::fs::write(&sign, text).unwrap();
    }
    tree
}

#[test]
fn the_makefile_flags_become_the_submitter_profile_and_a_refused_one_a_todo() {
    let p = TestProject::bare();
    let tree = package_with_makefiles(&p);
    let out = p
        .pqbench(&["import", tree.to_str().unwrap(), "--id", "toy"])
        .expect(0);
    let toml = p.path().join("algorithms/toy.toml");
    let raw = pqbench::config::load::<RawAlgorithm>(&toml).unwrap().value;
    assert_eq!(
        raw.implementations[0].submitter_cflags.as_deref(),
        Some(
            &[
                "-O3",
                "-fomit-frame-pointer",
                "-funsigned-char",
                "-march=native"
            ]
            .map(String::from)[..]
        ),
        "{}",
        p.read("algorithms/toy.toml")
    );
    let text = p.read("algorithms/toy.toml");
    let todo = text
        .lines()
        .find(|l| l.contains("TODO") && l.contains("submitter-cflags"))
        .unwrap_or_else(|| panic!("no TODO line for the refused flag:\n{text}\n{}", out.stdout));
    assert!(
        todo.contains("toy1/Makefile line 2") && todo.contains("`-save-temps`"),
        "{todo}"
    );
    for flag in [
        "-fpass-plugin=./p.so",
        "--gcc-toolchain=./tc",
        "-fno-integrated-as",
    ] {
        assert!(
            text.contains(&format!("`{flag}`")),
            "{flag} not a TODO:\n{text}"
        );
    }

    // Built under the submitter profile the sources compile and pass the
    // shipped KATs, and the lock records each instance's whole flag line.
    p.write(
        "campaigns/sub.toml",
        &common::quick_campaign(
            &["toy"],
            "stages = [\"build\", \"kat\"]\nflag-profiles = [\"submitter\"]",
        ),
    );
    let run = p.pqbench(&["-q", "run", "sub"]);
    let build = p.json("output/sub/local/build.json");
    for i in build["instances"].as_array().unwrap() {
        assert_eq!(i["kat_status"], "PASS", "{i}\n{}", run.stderr);
        assert_eq!(i["profile"], "submitter", "{i}");
    }
    run.expect(0);
    let (lock_file, lock) = common::only_lock(&p.path().join("output/sub/local"));
    // `-march=native` is built as the CPU it stands for here.
    for i in lock["instances"].as_array().unwrap() {
        let cflags: Vec<String> = serde_json::from_value(i["cflags"].clone()).unwrap();
        assert_eq!(
            cflags[..4],
            ["-fPIC", "-O3", "-fomit-frame-pointer", "-funsigned-char"],
            "{i}"
        );
        assert!(cflags[4].starts_with("-march="), "{cflags:?}");
        assert!(!cflags.iter().any(|f| f.ends_with("=native")), "{cflags:?}");
    }
    // The implementation's flags are inputs: a changed one stops a
    // reproduction before anything runs, naming the instance.
    p.write(
        "algorithms/toy.toml",
        &text.replace("\"-O3\", \"-fomit", "\"-O2\", \"-fomit"),
    );
    let out = p.pqbench(&["reproduce", lock_file.to_str().unwrap()]);
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(
        said.contains("flags changed: toy/TOY-1: -O3 → -O2\n"),
        "{said}"
    );
    p.write("algorithms/toy.toml", &text);

    // Under the guide's flags alone the same sources do not build.
    p.write(
        "campaigns/guide.toml",
        &common::quick_campaign(
            &["toy"],
            "stages = [\"build\", \"kat\"]\nflag-profiles = [\"guide\"]",
        ),
    );
    let run = p.pqbench(&["-q", "run", "guide"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("built without the Makefile's -funsigned-char")
            || run
                .stderr
                .contains("built without the Makefile's -funsigned-char"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
}
