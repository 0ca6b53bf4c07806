//! Shards run elsewhere, against real executors on 127.0.0.1: an OpenSSH
//! server and a one-node Slurm cluster started by the test (see
//! `common::daemons`). The same records as a local run, KAT logs byte for
//! byte; nothing sent or computed again when nothing changed; a lost shard
//! named with its instances and sent again alone; the estimate of `plan
//! --nodes --cores`.

use crate::common;
use common::daemons::{available, Slurm, Sshd};
use common::{files_with_ext, quick_campaign, TestProject};

use std::path::Path;
use std::time::Duration;

/// A project measuring Larch (two instances) on `local` and on `system`
/// (registered by `registry`).
fn project(system: &str, registry: &str) -> TestProject {
    let p = TestProject::demo();
    let systems = p.read("campaigns/systems.toml");
    p.write("campaigns/systems.toml", &format!("{systems}\n{registry}"));
    p.write(
        "campaigns/t.toml",
        &quick_campaign(
            &["sign-92"],
            &format!("systems = [\"local\", \"{system}\"]\nstages = [\"build\", \"kat\", \"time\", \"render\"]"),
        ),
    );
    p
}

fn rel_files(dir: &Path, ext: &str) -> Vec<String> {
    let mut v: Vec<String> = files_with_ext(dir, ext)
        .iter()
        .map(|f| f.strip_prefix(dir).unwrap().display().to_string())
        .collect();
    v.sort();
    v
}

fn latest_lock(p: &TestProject, system: &str) -> serde_json::Value {
    let runs = p.path().join(format!("output/t/{system}/runs"));
    let mut dirs: Vec<_> = std::fs::read_dir(&runs)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.sort();
    serde_json::from_slice(&std::fs::read(dirs.last().unwrap().join("lock.json")).unwrap()).unwrap()
}

#[test]
fn shards_over_ssh_give_the_local_records_and_rerun_nothing() {
    if !available(&["/usr/sbin/sshd", "ssh", "ssh-keygen"]) {
        return;
    }
    let sshd = Sshd::start();
    let work = tempfile::tempdir().unwrap();
    let p = project("x86_ssh", &sshd.system("x86_ssh", work.path(), &[0, 1]));
    p.pqbench(&["run", "t"]).expect(0);
    let run = p.pqbench(&["run", "t", "--system", "x86_ssh"]).expect(0);
    assert!(run.stderr.contains("in 2 shard(s)"), "{}", run.stderr);

    let (local, remote) = (
        p.path().join("output/t/local"),
        p.path().join("output/t/x86_ssh"),
    );
    assert_eq!(
        rel_files(&local.join("records"), "json"),
        rel_files(&remote.join("records"), "json")
    );
    let logs = rel_files(&local.join("kat"), "log");
    assert_eq!(logs.len(), 2);
    for l in &logs {
        assert_eq!(
            std::fs::read(local.join("kat").join(l)).unwrap(),
            std::fs::read(remote.join("kat").join(l)).unwrap(),
            "{l}"
        );
    }
    let lock = latest_lock(&p, "x86_ssh");
    let shards = lock["shards"].as_array().unwrap();
    assert_eq!(shards.len(), 2);
    for s in shards {
        assert!(
            s["ran_on"].as_str().unwrap().starts_with("root@127.0.0.1:"),
            "{s}"
        );
        assert_eq!(s["host_fingerprint"].as_str().unwrap().len(), 64);
    }
    p.pqbench(&["check", "output/t"]).expect(0);

    // Nothing changed: nothing is sent, nothing runs there.
    let again = p.pqbench(&["run", "t", "--system", "x86_ssh"]).expect(0);
    assert!(!again.stderr.contains("sending"), "{}", again.stderr);
    assert!(!again.stderr.contains("starts on"), "{}", again.stderr);
    let status = p.pqbench(&["status", "t", "--system", "x86_ssh"]).expect(0);
    assert!(
        status.stdout.contains("everything is fresh"),
        "{}",
        status.stdout
    );
}

#[test]
fn a_dropped_shard_is_named_and_the_next_run_resumes() {
    if !available(&["/usr/sbin/sshd", "ssh", "ssh-keygen", "pkill"]) {
        return;
    }
    let sshd = Sshd::start();
    let work = tempfile::tempdir().unwrap();
    let p = project("x86_drop", &sshd.system("x86_drop", work.path(), &[1]));
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_pqbench"))
        .arg("-C")
        .arg(p.path())
        .args(["run", "t", "--system", "x86_drop"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Kill the remote pqbench once its shard is running (the system's id
    // is this test's own).
    let mut run = run;
    loop {
        let killed = std::process::Command::new("pkill")
            .args([
                "-f",
                "--",
                "^bin/pqbench-[0-9a-f]+ -C shards/t/x86_drop/0/project run",
            ])
            .status()
            .unwrap();
        if killed.success() {
            break;
        }
        // No clock: the run ending before its shard was seen is the failure.
        let ended = run.try_wait().unwrap();
        assert!(
            ended.is_none(),
            "the run ended ({ended:?}) before its shard started"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = run.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("shard 0: lost: pqbench there ended") && stdout.contains("sign-92/LARCH-1"),
        "{stdout}"
    );
    let again = p.pqbench(&["run", "t", "--system", "x86_drop"]).expect(0);
    assert!(
        again.stdout.contains("KAT: 2 PASS of 2 instances"),
        "{}",
        again.stdout
    );
}

#[test]
fn slurm_array_shards_merge_and_a_cancelled_task_runs_again_alone() {
    if !available(&[
        "munged",
        "slurmctld",
        "slurmd",
        "sbatch",
        "squeue",
        "scancel",
        "ssh-keygen",
    ]) {
        return;
    }
    let slurm = Slurm::start();
    let shared = tempfile::tempdir().unwrap();
    let p = project("x86_slurm", &slurm.system("x86_slurm", shared.path(), 2));
    let run = p.pqbench(&["run", "t", "--system", "x86_slurm"]).expect(0);
    assert!(
        run.stderr.contains("submitted Slurm job array"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("(2 task(s))"), "{}", run.stderr);
    assert!(
        run.stdout.contains("KAT: 2 PASS of 2 instances"),
        "{}",
        run.stdout
    );
    let published = tempfile::tempdir().unwrap();
    let dir = published.path().display().to_string();
    p.pqbench(&["publish", "t", "--system", "x86_slurm", &dir])
        .expect(0);
    p.pqbench(&["check", &dir]).expect(0);

    // New inputs; the second task is cancelled as soon as it is queued.
    let src = p.path().join("algorithms/sign-92");
    let c = files_with_ext(&src, "c").into_iter().next().unwrap();
    let text = std::fs::read_to_string(&c).unwrap();
    std::fs::write(&c, format!("{text}\n/* changed */\n")).unwrap();
    p.pqbench(&["run", "t", "--system", "x86_slurm", "--detach"])
        .expect(0);
    let state = p.json("output/t/x86_slurm/.executor/state.json");
    let job = state["job"]["id"].as_str().unwrap().to_string();
    let cancelled = slurm
        .command("scancel")
        .arg(format!("{job}_1"))
        .status()
        .unwrap();
    assert!(cancelled.success());
    let status = p
        .pqbench(&["status", "t", "--system", "x86_slurm"])
        .expect(0);
    assert!(
        status.stdout.contains(&format!("Slurm job {job}")),
        "{}",
        status.stdout
    );

    let lost = p.pqbench(&["run", "t", "--system", "x86_slurm"]);
    assert_eq!(lost.code, 1, "{}\n{}", lost.stdout, lost.stderr);
    let shard1 = state["shards"][1]["instances"][0]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        lost.stdout.contains("shard 1: lost") && lost.stdout.contains(&shard1),
        "{}",
        lost.stdout
    );
    // The other shard's records are kept.
    let shard0 = state["shards"][0]["instances"][0].as_str().unwrap();
    let (id, label) = shard0.split_once('/').unwrap();
    assert!(p
        .path()
        .join(format!(
            "output/t/x86_slurm/records/{id}/{label}__sign.json"
        ))
        .is_file());

    let resumed = p.pqbench(&["run", "t", "--system", "x86_slurm"]).expect(0);
    assert!(resumed.stderr.contains("(1 task(s))"), "{}", resumed.stderr);
    assert!(
        resumed.stdout.contains("KAT: 2 PASS of 2 instances"),
        "{}",
        resumed.stdout
    );
}

#[test]
fn the_scale_estimate_follows_earlier_costs() {
    let p = TestProject::demo();
    p.write(
        "campaigns/t.toml",
        &quick_campaign(&["sign-92"], "stages = [\"build\", \"kat\", \"time\"]"),
    );
    let never = p
        .pqbench(&["plan", "t", "--nodes", "4", "--cores", "2"])
        .expect(0);
    assert!(
        never
            .stdout
            .contains("2 instances on 4 node(s) × 2 core(s) = 8 shards: about 60 s")
            && never
                .stdout
                .contains("basis: 2 never measured, counted at 60 s"),
        "{}",
        never.stdout
    );
    p.pqbench(&["run", "t"]).expect(0);
    let json = p
        .pqbench(&[
            "plan", "t", "--nodes", "1", "--cores", "1", "--format", "json",
        ])
        .expect(0);
    let e: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    // The run recorded every stage's time for both instances.
    assert_eq!(e["basis"]["unknown"], 0, "{e}");
    assert_eq!(e["basis"]["stage_times"], 2, "{e}");
    // On one core the wall time is the sum of the instances' costs.
    let (total, wall) = (
        e["total_seconds"].as_f64().unwrap(),
        e["wall_seconds"].as_f64().unwrap(),
    );
    assert!(total > 0.0 && (total - wall).abs() < 1e-9, "{e}");
}
