//! Shards over SSH: each shard runs `pqbench run --local-shard` in its own
//! project on the remote machine, pinned to one of the system's measuring
//! CPUs, over its own connection. The remote command dies with the
//! connection (a watchdog ends it when its standard input closes), so a
//! dropped connection never leaves a shard measuring unseen.

use std::io::Read;
use std::process::Stdio;

use super::remote::{sh_quote, Remote};
use super::shards::Shard;
use super::{shard_dir, ShardEnd};
use crate::plan::system::SshExecutor;
use crate::plan::Plan;
use crate::progress::Progress;

/// The `pqbench run` of one shard, as arguments.
pub(super) fn shard_command(plan: &Plan, bin: &str, k: usize, cpu: Option<usize>) -> Vec<String> {
    let dir = shard_dir(plan, k);
    let mut argv = vec![
        bin.to_string(),
        "-C".into(),
        format!("{dir}/project"),
        "run".into(),
        plan.campaign.clone(),
        "--system".into(),
        plan.system.clone(),
        // Relative to the project, as pqbench takes paths given with -C.
        "--local-shard".into(),
        "../instances".into(),
        "-q".into(),
        "--format".into(),
        "json".into(),
    ];
    if let Some(c) = cpu {
        argv.extend(["--cpu".into(), c.to_string()]);
    }
    argv
}

/// The run directory a shard's JSON summary names.
pub(super) fn summary_run_dir(stdout: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(stdout).ok()?;
    v["run_dir"].as_str().map(String::from)
}

pub(super) fn run_shards(
    plan: &Plan,
    cfg: &SshExecutor,
    remote: &dyn Remote,
    bin: &str,
    todo: &[Shard],
    progress: &Progress,
) -> Vec<(usize, ShardEnd)> {
    let cpus = &plan.system_spec.cpus;
    std::thread::scope(|scope| {
        let handles: Vec<_> = todo
            .iter()
            .map(|s| {
                let cpu = (!cpus.is_empty()).then(|| cpus[s.index % cpus.len()]);
                let argv = shard_command(plan, bin, s.index, cpu);
                scope.spawn(move || {
                    progress.note(&format!(
                        "shard {} ({} instance(s)) starts on {}",
                        s.index,
                        s.instances.len(),
                        remote.describe()
                    ));
                    let end = run_one(cfg, remote, &argv);
                    if let ShardEnd::Done(_) = &end {
                        progress.note(&format!("shard {} finished", s.index));
                    }
                    (s.index, end)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or((usize::MAX, ShardEnd::Lost("its thread panicked".into())))
            })
            .collect()
    })
}

/// Runs one shard; exit 0 or 1 (some items failed) is a finished shard.
fn run_one(cfg: &SshExecutor, remote: &dyn Remote, argv: &[String]) -> ShardEnd {
    let line: Vec<String> = argv.iter().map(|a| sh_quote(a)).collect();
    // The watchdog: when the connection (our standard input) closes, the
    // shard is stopped; pqbench's jobs die with it.
    // A background job's input is /dev/null: keep the connection's as fd 3.
    let script = format!(
        "cd {} && exec 3<&0 && {{ {} & p=$!; {{ cat <&3 >/dev/null; kill -TERM $p 2>/dev/null; }} & w=$!; wait $p; rc=$?; kill $w 2>/dev/null; exit $rc; }}",
        sh_quote(&remote.work_dir()),
        line.join(" ")
    );
    let mut c = super::remote::Ssh { cfg: cfg.clone() }.ssh();
    c.arg(script);
    // Our end of its input stays open until it exits.
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match c.spawn() {
        Ok(c) => c,
        Err(e) => return ShardEnd::Lost(format!("cannot start ssh: {e}")),
    };
    let stdin = child.stdin.take();
    let err_pipe = child.stderr.take();
    let err_reader = std::thread::spawn(move || {
        let mut err = String::new();
        if let Some(mut e) = err_pipe {
            let _ = e.read_to_string(&mut err);
        }
        err
    });
    let mut out = String::new();
    if let Some(mut o) = child.stdout.take() {
        let _ = o.read_to_string(&mut out);
    }
    let err = err_reader.join().unwrap_or_default();
    let status = child.wait();
    drop(stdin);
    match status.ok().and_then(|s| s.code()) {
        Some(0) | Some(1) => ShardEnd::Done(summary_run_dir(&out)),
        Some(255) => ShardEnd::Lost(format!(
            "the connection to {} failed or dropped: {}",
            remote.describe(),
            tail(&err)
        )),
        Some(code) => ShardEnd::Lost(format!(
            "pqbench there ended with exit {code}: {}",
            tail(&err)
        )),
        None => ShardEnd::Lost(format!(
            "the ssh connection to {} was killed",
            remote.describe()
        )),
    }
}

fn tail(s: &str) -> String {
    crate::toolchain::tail(s.trim(), 3)
}
