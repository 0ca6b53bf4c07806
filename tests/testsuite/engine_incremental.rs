//! The engine reuses what has not changed, says why something is stale,
//! and survives being killed at any moment.

use crate::common;
use common::{files_with_ext, TestProject};

use std::path::Path;
use std::time::Duration;

/// The demo project with its signatures and KEMs only, and lighter timing:
/// the engine's behaviour depends neither on the kinds nor on how many
/// calls a trial makes, and the key exchanges, hash and ICCS baseline
/// (measure_demo covers them and the demo's own timing) would triple the
/// time of the demo runs here.
fn demo_project() -> TestProject {
    let p = TestProject::demo();
    let mut campaign = p.read("campaigns/demo.toml");
    for (from, to) in [
        (
            "algorithms = [\"sign-90\", \"kem-91\", \"sign-92\", \"kex-93\", \"kex-94\", \"hash-95\"]",
            "algorithms = [\"sign-90\", \"kem-91\", \"sign-92\"]",
        ),
        ("trials = 5\n", "trials = 3\n"),
        ("budget-seconds = 2.0\n", "budget-seconds = 0.5\n"),
        ("min-calls = 100\n", "min-calls = 20\n"),
        ("max-iterations = 1000\n", "max-iterations = 200\n"),
    ] {
        assert!(campaign.contains(from), "{from}: {campaign}");
        campaign = campaign.replace(from, to);
    }
    p.write("campaigns/demo.toml", &campaign);
    p
}

/// The (stage, instance) of every `[k/N] <stage> <id>/<label> (…)` progress
/// line: the jobs that computed their result.
fn recomputed(stderr: &str) -> Vec<(String, String)> {
    stderr
        .lines()
        .filter_map(|l| {
            let rest = l.split("] [").nth(1)?;
            let mut w = rest.split(']').nth(1)?.split_whitespace();
            let stage = w.next()?.to_string();
            let item = w.next()?.to_string();
            Some((stage, item))
        })
        .collect()
}

/// Holds the machine-wide measuring lock of every CPU this process may
/// use (waiting while another run measures), as a run measuring on all of
/// them would.
fn hold_every_cpu_lock() -> Vec<std::fs::File> {
    use std::os::fd::AsRawFd;
    let dir = Path::new("/tmp/pqbench-locks");
    pqbench::host::allowed_cpus()
        .into_iter()
        .map(|cpu| {
            let f = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .read(true)
                .write(true)
                .open(dir.join(format!("cpu{cpu}.lock")))
                .unwrap();
            // SAFETY: flock on a descriptor this function owns.
            assert_eq!(unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) }, 0);
            f
        })
        .collect()
}

#[test]
fn demo_passes_then_reuses_everything_then_rebuilds_only_what_changed() {
    let p = demo_project();
    let first = p.pqbench(&["run", "demo"]).expect(0);
    let build = p.json("output/demo/local/build.json");
    let instances = build["instances"].as_array().unwrap();
    assert_eq!(instances.len(), 7);
    for rec in instances {
        assert_eq!(rec["kat_status"], "PASS", "{rec}");
        let log = p.read(&format!(
            "output/demo/local/{}",
            rec["kat_log"].as_str().unwrap()
        ));
        let sha = pqbench::fsutil::sha256_hex(log.as_bytes());
        assert_eq!(rec["kat_log_sha256"], sha.as_str());
    }
    assert!(
        first.stdout.contains("0 stage results reused"),
        "{}",
        first.stdout
    );
    let span =
        |c: &serde_json::Value| (c["measured_from_utc"].clone(), c["measured_to_utc"].clone());
    let measured = span(&p.json("output/demo/local/campaign.json"));
    let drbg = p.json("output/demo/local/campaign.json")["drbg"].clone();
    assert!(drbg.is_object(), "{drbg}");
    assert!(
        measured.0.is_string() && measured.1.is_string(),
        "{measured:?}"
    );
    std::thread::sleep(Duration::from_millis(1100));

    // Nothing changed: nothing is compiled, checked or measured again, and
    // a run that measures nothing waits for no CPU: it finishes while
    // another process holds every CPU's measuring lock.
    let held = hold_every_cpu_lock();
    // Released after a while whatever happens, so that a run that does
    // wait (and says so) ends and fails below instead of hanging.
    let (done, wait) = std::sync::mpsc::channel::<()>();
    let holder = std::thread::spawn(move || {
        let _ = wait.recv_timeout(Duration::from_secs(120));
        drop(held);
    });
    let again = p.pqbench(&["run", "demo"]).expect(0);
    let _ = done.send(());
    holder.join().unwrap();
    assert!(again.stdout.contains(" 0 computed"), "{}", again.stdout);
    assert!(recomputed(&again.stderr).is_empty(), "{}", again.stderr);
    assert!(!again.stderr.contains("waiting"), "{}", again.stderr);
    let status = p.pqbench(&["status", "demo"]).expect(0);
    assert!(
        status.stdout.contains("everything is fresh"),
        "{}",
        status.stdout
    );
    // `status` takes the CPU a run would be given: the one measured on is
    // fresh, another is not.
    let cpu = p.json("output/demo/local/campaign.json")["cpus"][0]
        .as_u64()
        .unwrap() as usize;
    let on = p
        .pqbench(&["status", "demo", "--cpu", &cpu.to_string()])
        .expect(0);
    assert!(on.stdout.contains("everything is fresh"), "{}", on.stdout);
    if let Some(other) = pqbench::host::allowed_cpus()
        .into_iter()
        .find(|&c| c != cpu)
    {
        let off = p
            .pqbench(&["status", "demo", "--cpu", &other.to_string()])
            .expect(0);
        assert!(
            !off.stdout.contains("everything is fresh"),
            "{}",
            off.stdout
        );
    }
    // Reused measurements keep the time they were taken, on the pages too,
    // and the DRBG figure measured beside them.
    let campaign = p.json("output/demo/local/campaign.json");
    assert_eq!(span(&campaign), measured);
    assert_eq!(campaign["drbg"], drbg);
    assert_ne!(campaign["start_utc"], campaign["measured_from_utc"]);
    let page = p.read("output/demo/site/local/sign-90.md");
    let from = measured.0.as_str().unwrap();
    assert!(
        page.contains(&format!("| campaign start / end (UTC) | {from} / ")),
        "{page}"
    );

    // One byte of one source changes (inside a comment).
    let src = p.path().join("algorithms/sign-90/wots.c");
    let mut bytes = std::fs::read(&src).unwrap();
    let at = bytes.windows(2).position(|w| w == b"/*").unwrap() + 3;
    bytes[at] = if bytes[at] == b'x' { b'y' } else { b'x' };
    std::fs::write(&src, bytes).unwrap();

    let status = p.pqbench(&["status", "demo"]).expect(0);
    let stale: Vec<&str> = status
        .stdout
        .lines()
        .filter(|l| !l.starts_with("campaign "))
        .collect();
    assert!(!stale.is_empty());
    assert!(
        status
            .stdout
            .contains("render       waits on instance results: computed again only if"),
        "{}",
        status.stdout
    );
    for line in &stale {
        assert!(
            line.starts_with("sign-90/"),
            "only sign-90 is stale: {line}"
        );
    }
    for label in ["WINTER-128", "WINTER-128R", "WINTER-192"] {
        let build_line = stale
            .iter()
            .find(|l| l.starts_with(&format!("sign-90/{label} ")) && l.contains(" build "))
            .unwrap_or_else(|| panic!("no stale build line for {label}: {}", status.stdout));
        assert!(
            build_line.contains("stale: sources changed: wots.c"),
            "{build_line}"
        );
    }

    let third = p.pqbench(&["run", "demo"]).expect(0);
    let redone = recomputed(&third.stderr);
    let stages: Vec<&str> = redone.iter().map(|(s, _)| s.as_str()).collect();
    assert!(
        stages.contains(&"build") && stages.contains(&"kat"),
        "{redone:?}"
    );
    for (stage, item) in &redone {
        assert!(
            item.starts_with("sign-90/"),
            "{stage} {item} should have been reused"
        );
    }
    assert_eq!(redone.iter().filter(|(s, _)| s == "build").count(), 3);
    assert_eq!(redone.iter().filter(|(s, _)| s == "kat").count(), 3);

    // `status` agreed with what the run then did: every stage it called
    // stale was computed again, and everything computed again was stale or
    // waiting on a stale stage.
    let row = |l: &&str| -> Option<(String, String, bool)> {
        let mut w = l.split_whitespace();
        let (item, stage, state) = (w.next()?, w.next()?, w.next()?);
        Some((stage.to_string(), item.to_string(), state == "stale:"))
    };
    let shown: Vec<(String, String, bool)> = stale.iter().filter_map(row).collect();
    for (stage, item, is_stale) in &shown {
        if *is_stale {
            assert!(
                redone.iter().any(|(s, i)| s == stage && i == item),
                "status called {stage} {item} stale, the run reused it: {redone:?}"
            );
        }
    }
    for (stage, item) in redone.iter().filter(|(s, _)| s != "render") {
        assert!(
            shown.iter().any(|(s, i, _)| s == stage && i == item),
            "the run computed {stage} {item} again, status did not say so: {}",
            status.stdout
        );
    }
    a_run_waits_for_the_machines_cpu_locks_whatever_its_tmpdir(&p);
}

/// A run that measures waits while another process holds every CPU's
/// measuring lock in `/tmp/pqbench-locks`, also when its user's `TMPDIR`
/// points elsewhere: two runs that looked for the locks in different
/// places would measure on one core at once.
fn a_run_waits_for_the_machines_cpu_locks_whatever_its_tmpdir(p: &TestProject) {
    use std::io::BufRead;
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::Builder::new()
        .prefix("pqbench-other-tmpdir-")
        .tempdir()
        .unwrap();
    // Its jobs' scratch folders are made there: their uids pass through.
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let held = hold_every_cpu_lock();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_pqbench"))
        .arg("-C")
        .arg(p.path())
        .args(["run", "demo", "--remeasure"])
        .env("TMPDIR", tmp.path())
        .env_remove("CC")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read until the run says it waits, or ends without having waited.
    let mut seen = Vec::new();
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    for line in stderr.lines().map_while(Result::ok) {
        let waits = line.contains("waiting for it");
        seen.push(line);
        if waits {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    drop(held);
    let wait = seen.iter().find(|l| l.contains("waiting for it"));
    let wait = wait.unwrap_or_else(|| panic!("the run did not wait:\n{}", seen.join("\n")));
    assert!(wait.contains("/tmp/pqbench-locks/cpu"), "{wait}");
}

/// Kills a run with SIGKILL at several moments: no JSON file is ever left
/// torn, and the next run completes.
#[test]
fn a_killed_run_leaves_no_corrupt_json_and_the_next_run_completes() {
    let p = demo_project();
    // The kills land in the first seconds (build, KAT); the run that must
    // complete afterwards needs neither the emulated system nor Valgrind.
    let campaign = p
        .read("campaigns/demo.toml")
        .replace(
            "systems = [\"local\", \"arm_qemu\"]",
            "systems = [\"local\"]",
        )
        .replace(
            "stages = [\"default\", \"count\", \"ct\"]",
            "stages = [\"default\"]",
        );
    assert!(!campaign.contains("arm_qemu") && !campaign.contains("\"ct\""));
    p.write("campaigns/demo.toml", &campaign);
    // A temporary directory of this test's own, so no other test's
    // pqbench clears what the killed runs left before the next run does.
    let tmp = tempfile::Builder::new()
        .prefix("pqbench-killed-tmpdir-")
        .tempdir()
        .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::Permissions::from_mode(0o755);
        std::fs::set_permissions(tmp.path(), mode).unwrap();
    }
    // What a run killed while its jobs ran leaves: its scratch folder,
    // with its lock no longer held.
    let left = tmp.path().join("pqbench-scratch-4194304-killed");
    std::fs::create_dir(&left).unwrap();
    std::fs::write(left.join("lock"), b"").unwrap();
    std::fs::write(left.join("unit.o"), b"a job's object").unwrap();
    let pqbench = |args: &[&str]| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_pqbench"));
        c.arg("-C")
            .arg(p.path())
            .args(args)
            .env("TMPDIR", tmp.path());
        c.env_remove("CC");
        c
    };
    let mut killed = Vec::new();
    for delay_ms in [700u64, 1600, 2600] {
        let mut child = pqbench(&["run", "demo", "-q"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        killed.push(child.id());
        for f in files_with_ext(&p.path().join("output"), "json") {
            let text = std::fs::read_to_string(&f).unwrap();
            if let Err(e) = serde_json::from_str::<serde_json::Value>(&text) {
                panic!(
                    "{} is corrupt after a kill at {delay_ms} ms: {e}",
                    f.display()
                );
            }
        }
    }
    let out = pqbench(&["run", "demo"]).output().unwrap();
    common::Run::from(out).expect(0);
    let build = p.json("output/demo/local/build.json");
    assert!(build["instances"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["kat_status"] == "PASS"));
    // The next run cleared the killed runs' scratch folders, and its own
    // went when it ended: nothing of pqbench's is left in the directory.
    assert!(!left.exists());
    let rest: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(rest.is_empty(), "killed {killed:?}; left: {rest:?}");
}

/// A cold run learns what each unit reads from the compile itself (`-MD`),
/// never from a separate preprocessor run first: with a compiler that
/// refuses to preprocess only (`-M` without `-c`), the run builds and
/// passes, the next run reuses every result, and `status` calls them fresh.
/// Had the first run listed the units with `-M`, the refusal would have
/// keyed its build on the stand-in list, and the second run's key (from the
/// compiler's own list) would differ.
#[test]
fn a_cold_build_learns_its_dependencies_by_compiling_once() {
    let p = TestProject::demo();
    p.write(
        "campaigns/t.toml",
        &common::quick_campaign(&["sign-92"], "stages = [\"build\", \"kat\"]"),
    );
    let dir = tempfile::tempdir().unwrap();
    let wrapper = dir.path().join("cc-no-scan.sh");
    std::fs::write(
        &wrapper,
        "#!/bin/sh\nfor a in \"$@\"; do\n  case \"$a\" in -M) echo 'cc-no-scan: -M refused' >&2; exit 1;; esac\ndone\nexec gcc \"$@\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_pqbench"))
            .arg("-C")
            .arg(p.path())
            .args(args)
            .env("CC", &wrapper)
            .output()
            .unwrap();
        common::Run::from(out)
    };
    let first = run(&["run", "t"]).expect(0);
    assert!(first.stdout.contains("2 PASS"), "{}", first.stdout);
    let again = run(&["run", "t"]).expect(0);
    assert_eq!(recomputed(&again.stderr), Vec::new(), "{}", again.stderr);
    let status = run(&["status", "t"]).expect(0);
    assert!(!status.stdout.contains("stale"), "{}", status.stdout);
}
