//! Shards through Slurm: one job array (`sbatch --array`) over the shards
//! still missing, one CPU per task (Slurm binds each task to its core, and
//! pqbench measures on the CPU it is allowed), every task writing into the
//! directory the nodes share. pqbench follows the job with `squeue` and
//! reads each task's end from the files it leaves (`exit`, `summary.json`);
//! a task that left the queue without them was cancelled, timed out or lost
//! its node (`scontrol` says which while Slurm remembers the job).

use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::remote::{sh_quote, Remote};
use super::shards::Shard;
use super::ssh::{shard_command, summary_run_dir};
use super::state::{ExecState, SlurmJob};
use super::{shard_dir, ShardEnd};
use crate::plan::system::SlurmExecutor;
use crate::plan::Plan;
use crate::progress::Progress;

fn command(cfg: &SlurmExecutor, program: &str) -> Command {
    let mut c = Command::new(program);
    c.envs(&cfg.environment);
    c
}

fn output(mut c: Command, what: &str) -> Result<String> {
    let out = c
        .output()
        .with_context(|| format!("running {what} (is Slurm installed?)"))?;
    if !out.status.success() {
        bail!(
            "{what} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The batch script of the array: task `i` runs shard `tasks[i]`.
fn script(plan: &Plan, remote: &dyn Remote, bin: &str, tasks: &[usize]) -> String {
    let w = remote.work_dir();
    let mut s = String::from("#!/bin/sh\n# pqbench shards, one per array task\n");
    s.push_str(&format!("cd {} || exit 3\n", sh_quote(&w)));
    s.push_str("case \"$SLURM_ARRAY_TASK_ID\" in\n");
    for (i, &k) in tasks.iter().enumerate() {
        let argv: Vec<String> = shard_command(plan, bin, k, None)
            .iter()
            .map(|a| sh_quote(a))
            .collect();
        let dir = sh_quote(&shard_dir(plan, k));
        s.push_str(&format!(
            "{i}) rm -f {dir}/exit; {} > {dir}/summary.json 2> {dir}/stderr.txt; echo $? > {dir}/exit ;;\n",
            argv.join(" ")
        ));
    }
    s.push_str("*) exit 2 ;;\nesac\n");
    s
}

#[allow(clippy::too_many_arguments)]
pub(super) fn run_shards(
    plan: &Plan,
    cfg: &SlurmExecutor,
    remote: &dyn Remote,
    bin: &str,
    todo: &[Shard],
    st: &mut ExecState,
    detach: bool,
    progress: &Progress,
) -> Result<Vec<(usize, ShardEnd)>> {
    // A job already submitted for these inputs is followed, not resubmitted.
    let job = match st
        .job
        .clone()
        .filter(|j| j.tasks.iter().all(|k| todo.iter().any(|s| s.index == *k)))
    {
        Some(j) => {
            progress.note(&format!("following Slurm job {} submitted earlier", j.id));
            j
        }
        None => {
            let tasks: Vec<usize> = todo.iter().map(|s| s.index).collect();
            for &k in &tasks {
                let _ = remote.run(&[
                    "rm".into(),
                    "-f".into(),
                    format!("{}/exit", shard_dir(plan, k)),
                ]);
            }
            let name = format!("jobs/{}-{}.sh", plan.campaign, plan.system);
            remote.put(&name, script(plan, remote, bin, &tasks).as_bytes())?;
            let mut c = command(cfg, "sbatch");
            c.arg("--parsable")
                .arg(format!("--array=0-{}", tasks.len() - 1))
                .arg("--cpus-per-task=1")
                .arg(format!(
                    "--job-name=pqbench-{}-{}",
                    plan.campaign, plan.system
                ))
                .arg(format!("--output={}/jobs/%A_%a.out", remote.work_dir()))
                .arg(format!("--chdir={}", remote.work_dir()));
            if let Some(p) = &cfg.partition {
                c.arg(format!("--partition={p}"));
            }
            if let Some(a) = &cfg.account {
                c.arg(format!("--account={a}"));
            }
            if let Some(t) = &cfg.time_limit {
                c.arg(format!("--time={t}"));
            }
            c.arg(format!("{}/{name}", remote.work_dir()));
            let id = output(c, "sbatch")?
                .trim()
                .split(';')
                .next()
                .unwrap_or("")
                .to_string();
            if id.is_empty() {
                bail!("sbatch printed no job id");
            }
            progress.note(&format!(
                "submitted Slurm job array {id} ({} task(s))",
                tasks.len()
            ));
            let j = SlurmJob { id, tasks };
            st.job = Some(j.clone());
            st.save(plan)?;
            j
        }
    };
    if detach {
        return Ok(job.tasks.iter().map(|&k| (k, ShardEnd::Pending)).collect());
    }
    follow(cfg, &job, progress)?;
    let ends = job
        .tasks
        .iter()
        .enumerate()
        .map(|(i, &k)| (k, task_end(plan, cfg, remote, &job, i, k)))
        .collect();
    st.job = None;
    st.save(plan)?;
    Ok(ends)
}

/// Array tasks still in the queue (pending or running), by task index.
pub(super) fn queued(cfg: &SlurmExecutor, job: &SlurmJob) -> Result<Vec<(usize, String)>> {
    let mut c = command(cfg, "squeue");
    c.args(["-h", "-r", "-j", &job.id, "-o", "%K %T"]);
    let out = output(c, "squeue")?;
    Ok(out
        .lines()
        .filter_map(|l| {
            let (task, state) = l.trim().split_once(' ')?;
            Some((task.parse().ok()?, state.to_string()))
        })
        .collect())
}

/// Waits until every task left the queue, saying how many run.
fn follow(cfg: &SlurmExecutor, job: &SlurmJob, progress: &Progress) -> Result<()> {
    let mut last = String::new();
    loop {
        let q = match queued(cfg, job) {
            Ok(q) => q,
            // A job Slurm no longer knows has left the queue.
            Err(e) if e.to_string().contains("Invalid job id") => Vec::new(),
            Err(e) => return Err(e),
        };
        if q.is_empty() {
            return Ok(());
        }
        let running = q.iter().filter(|(_, s)| s == "RUNNING").count();
        let line = format!(
            "Slurm job {}: {running} running, {} pending, {} finished",
            job.id,
            q.len() - running,
            job.tasks.len() - q.len()
        );
        if line != last {
            progress.note(&line);
            last = line;
        }
        std::thread::sleep(Duration::from_millis(1500));
    }
}

/// How task `i` (shard `k`) ended, from the files it left.
fn task_end(
    plan: &Plan,
    cfg: &SlurmExecutor,
    remote: &dyn Remote,
    job: &SlurmJob,
    i: usize,
    k: usize,
) -> ShardEnd {
    let dir = shard_dir(plan, k);
    let cat = |f: &str| {
        remote
            .run(&["cat".into(), format!("{dir}/{f}")])
            .ok()
            .filter(|r| r.code == Some(0))
            .map(|r| r.stdout)
    };
    match cat("exit").map(|s| s.trim().to_string()) {
        Some(c) if c == "0" || c == "1" => {
            ShardEnd::Done(cat("summary.json").and_then(|s| summary_run_dir(&s)))
        }
        Some(c) => ShardEnd::Lost(format!(
            "task {}_{i} ended with exit {c}: {}",
            job.id,
            cat("stderr.txt").unwrap_or_default().trim()
        )),
        None => ShardEnd::Lost(format!("task {}_{i} {}", job.id, slurm_state(cfg, job, i))),
    }
}

/// What Slurm says of a task that left no exit file.
fn slurm_state(cfg: &SlurmExecutor, job: &SlurmJob, i: usize) -> String {
    let mut c = command(cfg, "scontrol");
    c.args(["show", "job", "-o", &format!("{}_{i}", job.id)]);
    match output(c, "scontrol") {
        Ok(out) => out
            .split_whitespace()
            .find_map(|w| w.strip_prefix("JobState="))
            .map(|s| format!("ended as {s} without finishing"))
            .unwrap_or_else(|| "ended without finishing".into()),
        Err(_) => "ended without finishing (Slurm no longer knows it)".into(),
    }
}
