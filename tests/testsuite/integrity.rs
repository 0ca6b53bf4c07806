//! Evidence integrity: a renamed copy of an algorithm gets its own KAT log;
//! a tampered or missing cache entry or library is named by `status` and
//! recomputed; a second run of the same campaign is refused; published
//! files carry no machine path and the usual file mode; a file-size limit
//! ends in one clear error and the next run recovers.

use crate::common;
use common::{files_with_ext, quick_campaign, TestProject};

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// sign-92 (Larch) and `sign-96`, a renamed copy of it: same sources, same
/// references, another id.
fn project_with_copy() -> TestProject {
    let p = TestProject::demo();
    let toml = p
        .read("algorithms/sign-92.toml")
        .replace("id = \"sign-92\"", "id = \"sign-96\"")
        .replace("../kat/sign-92/", "../kat/sign-96/");
    p.write("algorithms/sign-96.toml", &toml);
    common::copy_tree(&p.path().join("kat/sign-92"), &p.path().join("kat/sign-96"));
    p.write(
        "campaigns/t.toml",
        &quick_campaign(
            &["sign-92", "sign-96"],
            "stages = [\"build\", \"kat\", \"time\", \"render\"]",
        ),
    );
    p
}

#[test]
fn a_renamed_copy_gets_its_own_kat_log_and_the_dataset_checks() {
    let p = project_with_copy();
    p.pqbench(&["run", "t"]).expect(0);
    for label in ["LARCH-1", "LARCH-3"] {
        let log = p.read(&format!("output/t/local/kat/sign-96/{label}.log"));
        assert!(log.contains("algorithm = sign-96"), "{log}");
        assert!(
            log.contains(&format!("RESULT sign-96 {label} PASS")),
            "{log}"
        );
        let orig = p.read(&format!("output/t/local/kat/sign-92/{label}.log"));
        assert!(
            orig.contains(&format!("RESULT sign-92 {label} PASS")),
            "{orig}"
        );
    }
    let check = p.pqbench(&["check", "output/t"]).expect(0);
    assert!(
        check.stdout.contains("everything recomputes"),
        "{}",
        check.stdout
    );
}

fn library_blob(p: &TestProject, campaign: &str, id: &str, label: &str) -> PathBuf {
    let build = p.json(&format!("output/{campaign}/local/build.json"));
    let rec = build["instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["algorithm"] == id && r["label"] == label)
        .unwrap()
        .clone();
    let sha = rec["library_sha256"].as_str().unwrap();
    p.path()
        .join("output/.cache/blobs")
        .join(&sha[..2])
        .join(sha)
}

/// The cached time result of `id/label`, found through the state file.
fn time_result(p: &TestProject, campaign: &str, id: &str, label: &str) -> PathBuf {
    let state = p.json(&format!(
        "output/{campaign}/local/.state/time/{id}/{label}.json"
    ));
    let key = state["key"].as_str().unwrap();
    p.path()
        .join("output/.cache/results/time")
        .join(&key[..2])
        .join(format!("{key}.json"))
}

fn stale_lines(p: &TestProject, campaign: &str) -> Vec<String> {
    p.pqbench(&["status", campaign])
        .expect(0)
        .stdout
        .lines()
        .map(String::from)
        .collect()
}

fn flip_byte(path: &Path, at: usize) {
    let mut b = std::fs::read(path).unwrap();
    let i = at.min(b.len() - 1);
    b[i] ^= 0x01;
    std::fs::write(path, b).unwrap();
}

#[test]
fn tampered_or_missing_cache_entries_are_stale_and_recomputed() {
    let p = TestProject::demo();
    p.write(
        "campaigns/t.toml",
        &quick_campaign(&["sign-92"], "stages = [\"build\", \"kat\", \"time\"]"),
    );
    p.pqbench(&["run", "t"]).expect(0);
    assert_eq!(stale_lines(&p, "t"), ["everything is fresh"]);

    // A flipped digit in a stored timing result.
    let result = time_result(&p, "t", "sign-92", "LARCH-1");
    let text = std::fs::read_to_string(&result).unwrap();
    let at = text.find("\"cycles\"").unwrap() + 12;
    flip_byte(&result, at);
    let stale = stale_lines(&p, "t");
    assert!(
        stale.iter().any(|l| l.starts_with("sign-92/LARCH-1")
            && l.contains(" time ")
            && l.contains("stored result corrupt")),
        "{stale:?}"
    );
    assert!(
        !stale.iter().any(|l| l.starts_with("sign-92/LARCH-3")),
        "{stale:?}"
    );
    let again = p.pqbench(&["run", "t"]).expect(0);
    assert!(again.stdout.contains(" 1 computed"), "{}", again.stdout);
    assert_eq!(stale_lines(&p, "t"), ["everything is fresh"]);

    // A flipped byte in a cached library, then a deleted one.
    for damage in ["flip", "delete"] {
        let lib = library_blob(&p, "t", "sign-92", "LARCH-3");
        if damage == "flip" {
            flip_byte(&lib, 4096);
        } else {
            std::fs::remove_file(&lib).unwrap();
        }
        let stale = stale_lines(&p, "t");
        assert!(
            stale.iter().any(|l| l.starts_with("sign-92/LARCH-3")
                && l.contains(" build ")
                && l.contains("missing or damaged")),
            "{damage}: {stale:?}"
        );
        assert!(
            !stale.iter().any(|l| l.starts_with("sign-92/LARCH-1")),
            "{stale:?}"
        );
        let run = p.pqbench(&["run", "t"]).expect(0);
        assert!(
            run.stderr.contains("build    sign-92/LARCH-3"),
            "{}",
            run.stderr
        );
        assert!(lib.is_file(), "{damage}: the library was not rebuilt");
        assert_eq!(stale_lines(&p, "t"), ["everything is fresh"], "{damage}");
    }
}

/// Takes `path` as a pqbench holder would (flock on an open file
/// description, here in the test process, so no scheduling is involved).
fn hold(path: &std::path::Path, exclusive: bool, who: &str) -> std::fs::File {
    use std::io::Write;
    use std::os::unix::io::AsRawFd;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let op = if exclusive {
        libc::LOCK_EX
    } else {
        libc::LOCK_SH
    };
    // SAFETY: flock on a descriptor the test owns.
    assert_eq!(unsafe { libc::flock(f.as_raw_fd(), op | libc::LOCK_NB) }, 0);
    if exclusive {
        f.set_len(0).unwrap();
        write!(f, "4242 {who}").unwrap();
    }
    f
}

#[test]
fn every_command_writing_the_output_is_refused_while_another_holds_it() {
    let p = TestProject::demo();
    p.write(
        "campaigns/t.toml",
        &quick_campaign(&["sign-92"], "stages = [\"build\", \"kat\", \"render\"]"),
    );
    p.pqbench(&["run", "t"]).expect(0);
    let published = tempfile::tempdir().unwrap();
    let dest = published.path().display().to_string();
    let commands: [&[&str]; 5] = [
        &["run", "t"],
        &["merge", "t", "output/t/local"],
        &["bless", "t"],
        &["render", "t"],
        &["publish", "t", &dest],
    ];
    let campaign_lock = hold(&p.path().join("output/t/.lock"), true, "merge");
    for args in commands {
        let r = p.pqbench(args);
        assert_eq!(r.code, 3, "{args:?}: {}\n{}", r.stdout, r.stderr);
        assert!(
            r.stderr
                .contains("another pqbench (PID 4242, merge) is writing output/t;"),
            "{args:?}: {}",
            r.stderr
        );
    }
    drop(campaign_lock);
    // `import` writes algorithms/ and kat/, which every campaign reads:
    // it holds the whole output, and a run waits for nothing but refuses.
    let import_lock = hold(&p.path().join("output/.lock"), true, "import");
    let r = p.pqbench(&["run", "t"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("another pqbench (PID 4242, import) is writing output;"),
        "{}",
        r.stderr
    );
    drop(import_lock);
    let reader = hold(&p.path().join("output/.lock"), false, "run");
    let source = p.path().join("algorithms/sign-92");
    let r = p.pqbench(&["import", source.to_str().unwrap(), "--id", "sign-93"]);
    assert_eq!(r.code, 3, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("is writing output;"), "{}", r.stderr);
    drop(reader);
    // A process forked by a test running beside this one holds a copy of
    // the dropped descriptors until its exec closes them: a refusal in that
    // moment is waited out, any other outcome is final.
    let mut tries = 0;
    let last = loop {
        let r = p.pqbench(&["run", "t"]);
        tries += 1;
        if r.code != 3 || !r.stderr.contains("another pqbench") || tries == 50 {
            break r;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    last.expect(0);

    // A dataset whose run stopped while writing it keeps the marker: no
    // page is made from it and check refuses it, naming the marker.
    p.write("output/t/local/.writing", "");
    for args in [&["render", "t"][..], &["check", "output/t"][..]] {
        let r = p.pqbench(args);
        assert_ne!(r.code, 0, "{args:?}: {}", r.stdout);
        assert!(
            r.stderr.contains("is incomplete") && r.stderr.contains(".writing"),
            "{args:?}: {}",
            r.stderr
        );
    }
    std::fs::remove_file(p.path().join("output/t/local/.writing")).unwrap();
    p.pqbench(&["render", "t"]).expect(0);
}

#[test]
fn published_files_name_no_machine_path_and_are_world_readable() {
    let p = TestProject::demo();
    // An algorithm without references: its NOKAT detail names the manifest.
    let toml = p
        .read("algorithms/sign-92.toml")
        .replace("id = \"sign-92\"", "id = \"sign-97\"")
        .replace("../kat/sign-92/", "../kat/sign-97/");
    p.write("algorithms/sign-97.toml", &toml);
    p.write(
        "campaigns/t.toml",
        &quick_campaign(&["sign-97"], "stages = [\"build\", \"kat\", \"render\"]"),
    );
    let run = p.pqbench(&["run", "t"]).expect(1);
    assert!(run.stdout.contains("pqbench bless t"), "{}", run.stdout);
    let root = p.path().display().to_string();
    let out = p.path().join("output/t");
    let mut files = Vec::new();
    for ext in ["json", "log", "md", "html", "svg"] {
        files.extend(files_with_ext(&out, ext));
    }
    assert!(files.len() > 5);
    for f in files {
        let rel = f.strip_prefix(&out).unwrap().display().to_string();
        if rel.starts_with("local/.state") || rel.starts_with("local/runs") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(!text.contains(&root), "{rel} names {root}");
        let mode = std::fs::metadata(&f).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & 0o044, 0o044, "{rel} has mode {mode:o}");
    }
    let build = p.read("output/t/local/build.json");
    assert!(
        build.contains("no line for LARCH-1 in kat/sign-97/kat.sha256"),
        "{build}"
    );
}

#[test]
fn a_file_size_limit_gives_one_clear_error_and_the_next_run_recovers() {
    let p = TestProject::demo();
    // The support tools are built under the limit too.
    p.without_support_tools();
    p.write(
        "campaigns/t.toml",
        &quick_campaign(&["sign-92"], "stages = [\"build\", \"kat\"]"),
    );
    // 256 KiB: the compiler's output for the support tools still fits (the
    // driver's assembly is about 75 KiB), the KAT files no longer fit in
    // the cache.
    let limited = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -f 512 && exec \"{}\" -C \"{}\" run t",
            env!("CARGO_BIN_EXE_pqbench"),
            p.path().display()
        ))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&limited.stderr);
    assert_ne!(limited.status.code(), Some(0), "{stderr}");
    assert!(
        limited.status.code().is_some(),
        "killed by a signal: {stderr}"
    );
    assert!(stderr.contains("file-size limit"), "{stderr}");
    assert_eq!(stderr.matches("error:").count(), 1, "{stderr}");
    assert_eq!(limited.status.code(), Some(3), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    for f in files_with_ext(&p.path().join("output"), "json") {
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(
            serde_json::from_str::<serde_json::Value>(&text).is_ok(),
            "{} is corrupt",
            f.display()
        );
    }
    p.pqbench(&["run", "t"]).expect(0);
}

/// A compiler given as a wrapper script outside the project (`CC`) is
/// started and confined like a compiler binary, and the run records it.
#[test]
fn a_compiler_wrapper_script_outside_the_project_builds_and_is_recorded() {
    let p = TestProject::demo();
    p.write(
        "campaigns/t.toml",
        &quick_campaign(&["sign-92"], "stages = [\"build\", \"kat\"]"),
    );
    let dir = tempfile::tempdir().unwrap();
    let wrapper = dir.path().join("cc-wrapper.sh");
    std::fs::write(&wrapper, "#!/bin/sh\nexec gcc \"$@\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pqbench"))
        .arg("-C")
        .arg(p.path())
        .args(["run", "t"])
        .env("CC", &wrapper)
        .output()
        .unwrap();
    let run = common::Run::from(out).expect(0);
    assert!(run.stdout.contains("2 PASS"), "{}", run.stdout);
    let build = p.json("output/t/local/build.json");
    assert_eq!(
        build["compiler"]["path"].as_str(),
        Some(wrapper.to_str().unwrap()),
        "{}",
        build["compiler"]
    );
}
