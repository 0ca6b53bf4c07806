//! Several systems: an emulated AArch64 system builds and KAT-checks what
//! the native one does, byte for byte, and times nothing; code written for
//! AArch64 only is skipped natively; a native system registered for
//! another architecture is refused; a second machine's dataset merges (and
//! one from another host is refused) into one site that `check` passes.
//!
//! The emulated tests need `gcc-aarch64-linux-gnu` and `qemu-user`
//! (`.ci/run` installs them). Without them they say so and pass, unless
//! `PQB_REQUIRE_CROSS=1`, as in CI, makes their absence a failure.

use std::path::Path;

use crate::common;
use common::{files_with_ext, quick_campaign, TestProject};

fn cross_tools() -> bool {
    common::skip::tools_or_skip(
        &["aarch64-linux-gnu-gcc", "qemu-aarch64"],
        "apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user",
    )
}

fn kat_files(p: &TestProject, campaign: &str, system: &str) -> Vec<(String, Vec<u8>)> {
    let dir = p.path().join(format!("output/{campaign}/{system}/kat"));
    let mut out: Vec<(String, Vec<u8>)> = ["rsp", "kat"]
        .iter()
        .flat_map(|e| files_with_ext(&dir, e))
        .map(|f| {
            let rel = f.strip_prefix(&dir).unwrap().display().to_string();
            (rel, std::fs::read(&f).unwrap())
        })
        .collect();
    out.sort();
    out
}

#[test]
fn the_emulated_demo_reproduces_the_native_kat_files_and_times_nothing() {
    if !cross_tools() {
        return;
    }
    let p = TestProject::demo();
    // The native side only needs its KAT files: the same algorithms in a
    // campaign of build and KAT stages only.
    let demo: String = p
        .read("campaigns/demo.toml")
        .lines()
        .filter(|l| !l.starts_with("stages"))
        .map(|l| format!("{l}\n"))
        .collect();
    p.write(
        "campaigns/native.toml",
        &format!("stages = [\"build\", \"kat\"]\n{demo}"),
    );
    p.pqbench(&["run", "native"]).expect(0);
    let arm = p
        .pqbench(&["run", "demo", "--system", "arm_qemu"])
        .expect(0);
    assert!(
        arm.stdout.contains("KAT: 17 PASS of 17 instances"),
        "{}",
        arm.stdout
    );
    let (local, emulated) = (
        kat_files(&p, "native", "local"),
        kat_files(&p, "demo", "arm_qemu"),
    );
    // One file per signature/KEM/KEX instance, one per hash KAT file.
    assert_eq!(local.len(), 19);
    assert_eq!(local, emulated, "KAT files differ between the systems");
    let build = p.json("output/demo/arm_qemu/build.json");
    assert!(build["compiler"]["target"]
        .as_str()
        .unwrap()
        .starts_with("aarch64"));
    // Every operation ran under the emulator and none has a figure.
    let records = files_with_ext(&p.path().join("output/demo/arm_qemu/records"), "json");
    assert_eq!(records.len(), 100);
    for f in records {
        let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
        assert_eq!(r["status"], "emulated", "{}", f.display());
        assert!(r["trials"].as_array().unwrap().is_empty());
        assert!(r["statistics"].is_null());
    }
    // Valgrind cannot run under the emulator: counts and the constant-time
    // check are skipped, with the reason, in the records and on the pages.
    // Counts cover every timed operation but a KEX's steps; the
    // constant-time check covers those of signatures, KEMs and KEXs.
    for (tree, expected) in [("count", 87), ("ct", 23)] {
        let files = files_with_ext(
            &p.path().join(format!("output/demo/arm_qemu/{tree}")),
            "json",
        );
        assert_eq!(files.len(), expected, "{tree}");
        for f in files {
            let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
            assert_eq!(r["status"], "skipped", "{}", f.display());
            let why = r["detail"].as_str().unwrap_or_default();
            assert!(why.contains("Valgrind cannot run there"), "{why}");
        }
    }
    let method = p.read("output/demo/site/arm_qemu/method.md");
    assert!(method.contains("Not checked on this system"), "{method}");
    let summary = p.read("output/demo/site/arm_qemu/summary.md");
    assert!(summary.contains("Functional check only."), "{summary}");
    assert!(!summary.contains(".svg"), "{summary}");
    let page = p.read("output/demo/site/arm_qemu/sign-90.md");
    assert!(page.contains("Functional check only."), "{page}");
    let index = p.read("output/demo/site/index.md");
    assert!(
        index.contains("[arm_qemu](arm_qemu/summary.md) (emulated: functional check only)"),
        "{index}"
    );
    // Published, the emulated system's dataset re-derives its pages.
    let published = tempfile::tempdir().unwrap();
    let dest = published.path().join("dataset");
    p.pqbench(&["publish", "demo", dest.to_str().unwrap()])
        .expect(0);
    let check = p.pqbench(&["check", dest.to_str().unwrap()]);
    assert_eq!(check.code, 0, "{}\n{}", check.stdout, check.stderr);
    assert!(dest.join("data/arm_qemu/build.json").is_file());
}

#[test]
fn aarch64_only_code_is_checked_when_emulated_and_skipped_natively() {
    if !cross_tools() {
        return;
    }
    let p = TestProject::demo();
    p.copy("tests/fixtures/neon", "algorithms");
    p.write(
        "campaigns/t.toml",
        &quick_campaign(&["sign-95"], "systems = [\"local\", \"arm_qemu\"]\nstages = [\"build\", \"kat\", \"time\", \"render\"]")
            ,
    );
    // No references yet: record the portable build's KAT as the reference,
    // and the same digest for the NEON implementation of the same set.
    p.pqbench(&["run", "t"]).expect(1);
    p.pqbench(&["bless", "t"]).expect(0);
    let manifest = p.read("kat/sign-95/kat.sha256");
    let line = manifest
        .lines()
        .find(|l| l.contains("NEON-1/"))
        .unwrap_or_else(|| panic!("{manifest}"))
        .to_string();
    p.write(
        "kat/sign-95/kat.sha256",
        &format!("{manifest}{}\n", line.replace("NEON-1/", "NEON-1.neon/")),
    );

    let native = p.pqbench(&["run", "t"]).expect(0);
    let build = p.json("output/t/local/build.json");
    let neon = build["instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == "NEON-1.neon")
        .unwrap()
        .clone();
    assert_eq!(neon["kat_status"], "SKIPPED", "{neon}");
    assert!(
        neon["kat_detail"]
            .as_str()
            .unwrap()
            .contains("written for aarch64; this system builds for x86_64"),
        "{neon}"
    );
    assert!(
        native.stdout.contains("1 PASS") && native.stdout.contains("1 SKIPPED"),
        "{}",
        native.stdout
    );

    let arm = p.pqbench(&["run", "t", "--system", "arm_qemu"]).expect(0);
    assert!(
        arm.stdout.contains("KAT: 2 PASS of 2 instances"),
        "{}",
        arm.stdout
    );
    let kat = kat_files(&p, "t", "arm_qemu");
    assert_eq!(kat.len(), 2);
    assert_eq!(kat[0].1, kat[1].1, "the NEON and portable KAT files differ");
    assert_eq!(kat_files(&p, "t", "local")[0].1, kat[0].1);
}

/// Two native systems on this one host (different measuring CPUs stand in
/// for a second machine), and an AArch64 machine registered natively.
const REGISTRY: &str = r#"
[[system]]
id = "x86_1"
arch = "x86_64"
cpus = [0]

[[system]]
id = "x86_2"
arch = "x86_64"
cpus = [1]

[[system]]
id = "arm_1"
arch = "aarch64"
description = "A real AArch64 machine"
"#;

fn two_system_project() -> TestProject {
    let p = TestProject::demo();
    p.write("campaigns/systems.toml", REGISTRY);
    p.write(
        "campaigns/t.toml",
        &quick_campaign(
            &["sign-92"],
            "systems = [\"x86_1\", \"x86_2\", \"arm_1\"]\nstages = [\"build\", \"kat\", \"time\", \"sizes\", \"survey\", \"render\"]",
        ),
    );
    p
}

#[test]
fn a_native_system_of_another_architecture_is_refused() {
    if std::env::consts::ARCH != "x86_64" {
        common::skip::not_applicable("the registry of this test describes an x86-64 host");
        return;
    }
    let p = two_system_project();
    let run = p.pqbench(&["run", "t", "--system", "arm_1"]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(
            "system arm_1 is registered as a native aarch64 machine, but this host is x86_64"
        ),
        "{}",
        run.stderr
    );
    assert!(!p.path().join("output/t/arm_1").exists());
}

/// `merge` killed with SIGKILL at moments spread over one uninterrupted
/// merge's length: whatever the moment, the system has no dataset or the
/// whole one, byte for byte, and it checks. (The moments only spread the
/// tries; nothing asserted depends on where they fall.)
fn merge_killed_at_any_moment_leaves_nothing_or_everything(p: &TestProject, theirs: &Path) {
    let dest = p.path().join("output/t/x86_2");
    let spawn = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_pqbench"))
            .arg("-C")
            .arg(p.path())
            .args(["merge", "t"])
            .arg(theirs)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    let started = std::time::Instant::now();
    assert!(spawn().wait().unwrap().success());
    let whole = started.elapsed();
    let expected = common::all_files(theirs)
        .into_iter()
        .map(|f| f.strip_prefix(theirs).unwrap().to_path_buf())
        .filter(|rel| {
            !rel.starts_with("runs")
                && !rel
                    .components()
                    .any(|c| c.as_os_str().to_string_lossy().starts_with('.'))
        })
        .collect::<std::collections::BTreeSet<_>>();
    for k in 0..10u32 {
        std::fs::remove_dir_all(&dest).unwrap_or_default();
        let mut child = spawn();
        std::thread::sleep(
            whole * k / 10 + std::time::Duration::from_micros(rand::random::<u64>() % 5000),
        );
        let _ = child.kill();
        let _ = child.wait();
        if !dest.exists() {
            continue; // the state before the merge
        }
        let got = common::all_files(&dest)
            .into_iter()
            .map(|f| f.strip_prefix(&dest).unwrap().to_path_buf())
            .collect::<std::collections::BTreeSet<_>>();
        assert_eq!(got, expected, "try {k}: a partial dataset");
        for rel in &got {
            assert_eq!(
                std::fs::read(dest.join(rel)).unwrap(),
                std::fs::read(theirs.join(rel)).unwrap(),
                "try {k}: {}",
                rel.display()
            );
        }
        let mut report = pqbench::check::CheckReport::default();
        let registry = pqbench::stages::registry();
        pqbench::check::check_system_dataset(&dest, "x86_2", &registry, &mut report).unwrap();
        assert!(report.passed(), "try {k}: {:?}", report.problems);
    }
    std::fs::remove_dir_all(&dest).unwrap_or_default();
}

#[test]
fn a_second_machines_dataset_merges_and_another_hosts_is_refused() {
    if std::env::consts::ARCH != "x86_64" {
        common::skip::not_applicable("the registry of this test describes an x86-64 host");
        return;
    }
    let a = two_system_project();
    let b = two_system_project();
    a.pqbench(&["run", "t"]).expect(0); // the first system this host runs: x86_1
    b.pqbench(&["run", "t", "--system", "x86_2"]).expect(0);
    let theirs = b.path().join("output/t/x86_2");

    // Records claiming another host are refused, naming the record.
    let c = two_system_project();
    common::copy_tree(&theirs, &c.path().join("foreign"));
    let rec = c.path().join("foreign/records/sign-92/LARCH-1__sign.json");
    let text = std::fs::read_to_string(&rec).unwrap();
    let fp = b.json("output/t/x86_2/campaign.json")["host_fingerprint"]
        .as_str()
        .unwrap()
        .to_string();
    std::fs::write(&rec, text.replace(&fp, &"f".repeat(64))).unwrap();
    let refused = a.pqbench(&[
        "merge",
        "t",
        &c.path().join("foreign").display().to_string(),
    ]);
    assert_eq!(refused.code, 2, "{}\n{}", refused.stdout, refused.stderr);
    assert!(
        refused.stderr.contains("LARCH-1__sign.json") && refused.stderr.contains("does not accept"),
        "{}",
        refused.stderr
    );

    merge_killed_at_any_moment_leaves_nothing_or_everything(&a, &theirs);
    let merged = a
        .pqbench(&["merge", "t", &theirs.display().to_string()])
        .expect(0);
    assert!(
        merged.stdout.contains("system x86_2: merged"),
        "{}",
        merged.stdout
    );
    let again = a
        .pqbench(&["merge", "t", &theirs.display().to_string()])
        .expect(0);
    assert!(again.stdout.contains("already merged"), "{}", again.stdout);

    let site = a.path().join("output/t/site");
    let index = a.read("output/t/site/index.md");
    assert!(
        index.contains("Systems: [x86_1](x86_1/summary.md) · [x86_2](x86_2/summary.md)"),
        "{index}"
    );
    let page = a.read("output/t/site/x86_2/sign-92.md");
    assert!(
        page.contains("system: x86_2 · [x86_1](../x86_1/sign-92.md)"),
        "{page}"
    );
    assert!(site.join("x86_1/sign-92.md").is_file());
    // The survey is the first system's only.
    let survey = a.read("output/t/site/survey.md");
    assert!(
        survey.contains("x86_1") && !survey.contains("x86_2/"),
        "{survey}"
    );

    let published = tempfile::tempdir().unwrap();
    let dir = published.path().display().to_string();
    a.pqbench(&["publish", "t", &dir]).expect(0);
    let check = a.pqbench(&["check", &dir]).expect(0);
    assert!(check.stdout.contains("x86_1, x86_2"), "{}", check.stdout);

    // A different dataset for a system that has one is refused.
    let rec = theirs.join("records/sign-92/LARCH-3__keygen.json");
    let text = std::fs::read_to_string(&rec).unwrap();
    std::fs::write(&rec, text.replacen("\"warmup\"", "\"warmup\" ", 1)).unwrap();
    let conflict = a.pqbench(&["merge", "t", &theirs.display().to_string()]);
    assert_eq!(conflict.code, 2, "{}", conflict.stderr);
    assert!(
        conflict.stderr.contains("already has a different dataset"),
        "{}",
        conflict.stderr
    );
}

/// Code written for another architecture is not built here whatever it
/// holds: its files are not part of its key on this system, so editing
/// them leaves it fresh (and no command rescans NEON code on x86-64),
/// while the portable instance still follows its own files.
#[test]
fn code_for_another_architecture_is_not_read_where_it_is_skipped() {
    if std::env::consts::ARCH != "x86_64" {
        return;
    }
    let p = TestProject::demo();
    p.copy("tests/fixtures/neon", "algorithms");
    p.write(
        "campaigns/t.toml",
        &quick_campaign(&["sign-95"], "stages = [\"build\", \"kat\"]"),
    );
    // No reference: the portable KAT is NOKAT, the NEON one SKIPPED.
    let out = p.pqbench(&["run", "t"]).expect(1);
    assert!(out.stdout.contains("1 SKIPPED"), "{}", out.stdout);
    let neon = p.read("algorithms/sign-neon/mix_neon.c");
    p.write(
        "algorithms/sign-neon/mix_neon.c",
        &format!("{neon}\n/* edited */\n"),
    );
    let status = p.pqbench(&["status", "t"]).expect(0);
    assert!(
        status.stdout.contains("everything is fresh"),
        "{}",
        status.stdout
    );
    let sign = p.read("algorithms/sign-neon/sign.c");
    p.write(
        "algorithms/sign-neon/sign.c",
        &format!("{sign}\n/* edited */\n"),
    );
    let status = p.pqbench(&["status", "t"]).expect(0);
    assert!(status.stdout.contains("NEON-1"), "{}", status.stdout);
    assert!(!status.stdout.contains("NEON-1.neon"), "{}", status.stdout);
}
