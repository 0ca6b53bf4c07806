//! Running a system's shards elsewhere: over SSH on a few lab machines, or
//! as a Slurm job array on a cluster. The campaign is split into shards
//! that finish together (`shards`), the project's inputs travel
//! content-addressed (`bundle`, `remote`), each shard runs `pqbench run
//! --local-shard` on the other side (which checks its own host against the
//! system's registration), and the finished shards' datasets are fetched
//! and combined into the system's dataset here (`combine`). A lost shard
//! (dropped connection, cancelled task, time limit) is reported with its
//! instances; the others are kept, and the next run sends only what is
//! missing.

pub mod bundle;
pub(crate) mod combine;
pub(crate) mod remote;
pub mod shards;
mod slurm;
mod ssh;
mod state;

use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use crate::cache::Cache;
use crate::error::Error;
use crate::pipeline::{RunOptions, RunSummary};
use crate::plan::system::Executor;
use crate::plan::Plan;
use crate::progress::Progress;
use remote::Remote;
use shards::Shard;
use state::ExecState;

/// How a shard ended.
#[derive(Debug, Clone)]
pub(crate) enum ShardEnd {
    /// It finished (its items may still have failed); the project-relative
    /// run directory of its own run, from its summary.
    Done(Option<String>),
    /// Still queued or running (a detached Slurm job).
    Pending,
    Lost(String),
}

/// Where shards' files live on the other side, relative to its work dir.
fn shard_dir(plan: &Plan, k: usize) -> String {
    format!("shards/{}/{}/{k}", plan.campaign, plan.system)
}

/// Runs `plan`'s system through its executor; `detach` returns once a
/// Slurm job is submitted.
pub fn run(plan: &Plan, opts: &RunOptions, detach: bool) -> Result<RunSummary, Error> {
    let _lock = crate::pipeline::locks::ProjectLock::acquire(plan, "run")?;
    let progress = Progress::new(opts.quiet);
    let cache = Cache::new(&plan.cache_dir);
    let (remote, default_cost, n): (Box<dyn Remote>, f64, usize) = match &plan.system_spec.executor
    {
        Executor::Local => {
            return Err(anyhow::anyhow!("system {} runs locally", plan.system).into())
        }
        Executor::Ssh(c) => (
            Box::new(remote::Ssh { cfg: c.clone() }),
            c.default_cost_seconds,
            c.shards,
        ),
        Executor::Slurm(c) => (
            Box::new(remote::SharedDir {
                dir: PathBuf::from(&c.shared_dir),
            }),
            c.default_cost_seconds,
            c.shards,
        ),
    };
    let bundle = bundle::bundle(&plan.project_root, &cache)?;
    let mut st = ExecState::load_or_plan(plan, &bundle, default_cost, n)?;
    progress.note(&format!(
        "system {} runs on {} in {} shard(s): {}",
        plan.system,
        remote.describe(),
        st.shards.len(),
        st.shards
            .iter()
            .map(|s| format!(
                "{} instance(s), ~{}",
                s.instances.len(),
                crate::progress::duration_words(s.cost_seconds)
            ))
            .collect::<Vec<_>>()
            .join("; ")
    ));
    let todo: Vec<Shard> = st
        .shards
        .iter()
        .filter(|s| !st.done.contains(&s.index))
        .cloned()
        .collect();
    let mut ends: Vec<(usize, ShardEnd)> = Vec::new();
    if !todo.is_empty() {
        let bin = prepare(plan, remote.as_ref(), &cache, &bundle, &todo, &progress)?;
        ends = match &plan.system_spec.executor {
            Executor::Ssh(c) => ssh::run_shards(plan, c, remote.as_ref(), &bin, &todo, &progress),
            Executor::Slurm(c) => slurm::run_shards(
                plan,
                c,
                remote.as_ref(),
                &bin,
                &todo,
                &mut st,
                detach,
                &progress,
            )?,
            Executor::Local => Vec::new(),
        };
    }
    for (k, end) in &mut ends {
        if let ShardEnd::Done(run_dir) = end {
            match fetch(plan, remote.as_ref(), &st, *k, run_dir.as_deref()) {
                Ok(()) => st.done.push(*k),
                Err(e) => *end = ShardEnd::Lost(format!("fetching its results: {e:#}")),
            }
        }
    }
    st.done.sort_unstable();
    st.done.dedup();
    st.save(plan)?;
    finish(plan, &cache, &st, &ends, remote.as_ref(), &progress)
}

/// `status` of a system whose shards run elsewhere: fresh when every shard
/// finished for the current inputs, else why not (inputs changed, shards
/// missing, a Slurm job still queued).
/// Runs a campaign: here, or through the system's executor when its shards
/// run elsewhere.
pub fn run_campaign(plan: &Plan, opts: &RunOptions) -> Result<RunSummary, Error> {
    if opts.local_shard.is_none() && plan.system_spec.executor != Executor::Local {
        if let Some(c) = crate::stages::registry().children_of(plan).first() {
            return Err(crate::error::ConfigError::new(format!(
                "system `{}` runs its shards elsewhere, and the campaign's further datasets ({c}, …) run only on systems this host runs",
                plan.system
            ))
            .in_file(&plan.campaign_file)
            .help(format!("run the `{}` datasets in a campaign of its own over a local system, or remove [{}] from this one", c.dimension, c.dimension))
            .into());
        }
        return run(plan, opts, opts.detach);
    }
    crate::pipeline::run(plan, opts)
}

/// `plan` and `status` of a campaign: the shards' freshness stands for a
/// system whose shards run elsewhere. `cpus`: the measuring CPUs a run
/// would be given (`None`: its default).
pub fn states(plan: &Plan, cpus: Option<Vec<usize>>) -> Result<crate::pipeline::StatusReport> {
    let shards = if plan.system_spec.executor == Executor::Local {
        None
    } else {
        Some(status(plan)?)
    };
    crate::pipeline::status::states(plan, shards, cpus)
}

pub(crate) fn status(plan: &Plan) -> Result<crate::engine::Freshness> {
    use crate::engine::Freshness;
    let cache = Cache::new(&plan.cache_dir);
    let digest = bundle::bundle(&plan.project_root, &cache)?.digest();
    Ok(match ExecState::load(plan) {
        None => Freshness::Stale(vec!["never run".into()]),
        Some(st) if st.bundle != digest => Freshness::Stale(vec![
            "inputs changed since the last run: its shards run again".into(),
        ]),
        Some(st) if st.done.len() == st.shards.len() => Freshness::Fresh,
        Some(_) => Freshness::Stale(vec![job_status(plan).unwrap_or_default()]),
    })
}

/// What `status` says of a system's executor: the shards finished and a
/// submitted Slurm job's tasks still queued, or None when there is nothing.
pub(crate) fn job_status(plan: &Plan) -> Option<String> {
    let st = ExecState::load(plan)?;
    let done = format!("{} of {} shard(s) finished", st.done.len(), st.shards.len());
    let Some(job) = &st.job else {
        return (st.done.len() < st.shards.len()).then_some(done);
    };
    let Executor::Slurm(cfg) = &plan.system_spec.executor else {
        return Some(done);
    };
    Some(match slurm::queued(cfg, job) {
        Ok(q) if q.is_empty() => format!(
            "{done}; Slurm job {} has ended: run again to merge it",
            job.id
        ),
        Ok(q) => {
            let running = q.iter().filter(|(_, s)| s == "RUNNING").count();
            format!(
                "{done}; Slurm job {}: {running} task(s) running, {} pending",
                job.id,
                q.len() - running
            )
        }
        Err(e) => format!("{done}; Slurm job {}: {e:#}", job.id),
    })
}

/// Copies a finished shard's dataset (and its run's lock) here.
fn fetch(
    plan: &Plan,
    remote: &dyn Remote,
    st: &ExecState,
    k: usize,
    run_dir: Option<&str>,
) -> Result<()> {
    let local = st.shard_data_dir(plan, k);
    let _ = std::fs::remove_dir_all(&local);
    let project = format!("{}/project", shard_dir(plan, k));
    remote.fetch_dir(
        &format!("{project}/output/{}/{}", plan.campaign, plan.system),
        &local,
        &["runs", ".state", ".lock", ".executor"],
    )?;
    if let Some(r) = run_dir {
        let lock = remote.run(&["cat".into(), format!("{project}/{r}/lock.json")])?;
        if lock.code == Some(0) {
            crate::fsutil::write_atomic(
                &local.join(crate::records::layout::LOCK),
                lock.stdout.as_bytes(),
            )?;
        }
    }
    Ok(())
}

/// Sends the inputs and the pqbench binary, and assembles each shard's
/// project on the other side; returns the pqbench to run there.
fn prepare(
    plan: &Plan,
    remote: &dyn Remote,
    cache: &Cache,
    bundle: &bundle::Bundle,
    todo: &[Shard],
    progress: &Progress,
) -> Result<String> {
    let bin = remote_pqbench(plan, remote, cache)?;
    let have = remote.blobs()?;
    let mut missing: Vec<String> = bundle
        .files
        .values()
        .filter(|s| !have.contains(*s))
        .cloned()
        .collect();
    missing.sort();
    missing.dedup();
    if let Some(sha) = bin.1.as_ref().filter(|s| !have.contains(*s)) {
        missing.push(sha.clone());
    }
    progress.note(&format!(
        "sending {} file(s) to {} ({} of the {} input files{})",
        missing.len(),
        remote.describe(),
        bundle.files.values().filter(|s| !have.contains(*s)).count(),
        bundle.files.len(),
        if bin.1.as_ref().is_some_and(|s| !have.contains(s)) {
            ", and pqbench"
        } else {
            ""
        }
    ));
    remote.send_blobs(cache, &missing)?;
    if let Some(sha) = &bin.1 {
        let r = remote.run(&[
            "sh".into(),
            "-c".into(),
            format!("mkdir -p bin && cp -f blobs/{sha} {0}.tmp && chmod 755 {0}.tmp && mv -f {0}.tmp {0}", bin.0),
        ])?;
        if r.code != Some(0) {
            bail!(
                "installing pqbench on {}: {}",
                remote.describe(),
                r.stderr.trim()
            );
        }
    }
    let list = bundle.list();
    for s in todo {
        let dir = shard_dir(plan, s.index);
        remote.put(&format!("{dir}/inputs.list"), list.as_bytes())?;
        remote.put(
            &format!("{dir}/instances"),
            format!("{}\n", s.instances.join("\n")).as_bytes(),
        )?;
        let r = remote.run(&[
            bin.0.clone(),
            "internal".into(),
            "assemble".into(),
            format!("{dir}/inputs.list"),
            "blobs".into(),
            format!("{dir}/project"),
        ])?;
        if r.code != Some(0) {
            bail!(
                "assembling shard {}'s project on {}: {}",
                s.index,
                remote.describe(),
                r.stderr.trim()
            );
        }
    }
    Ok(bin.0)
}

/// The pqbench the other side runs (relative to its work directory, or an
/// installed one) and, when it is a copy of this binary, its blob.
fn remote_pqbench(
    plan: &Plan,
    remote: &dyn Remote,
    cache: &Cache,
) -> Result<(String, Option<String>)> {
    let arch = remote.run(&["uname".into(), "-m".into()])?;
    if arch.code != Some(0) {
        bail!("cannot reach {}: {}", remote.describe(), arch.stderr.trim());
    }
    let theirs = arch.stdout.trim().to_string();
    if arch.code == Some(0) && theirs == std::env::consts::ARCH {
        let exe = std::env::current_exe().context("finding this pqbench")?;
        let sha = cache.put_blob_file(&exe)?;
        return Ok((format!("bin/pqbench-{}", &sha[..16]), Some(sha)));
    }
    let installed = match &plan.system_spec.executor {
        Executor::Ssh(c) => c.pqbench.clone(),
        _ => None,
    }
    .with_context(|| {
        format!(
            "{} is {theirs}, this pqbench is {}: install pqbench there and name it with executor.pqbench",
            remote.describe(),
            std::env::consts::ARCH
        )
    })?;
    let v = remote.run(&[installed.clone(), "--version".into()])?;
    let want = format!("pqbench {}", env!("CARGO_PKG_VERSION"));
    if v.stdout.trim() != want {
        bail!(
            "{installed} on {} is `{}`, this is `{want}`: install the same version",
            remote.describe(),
            v.stdout.trim()
        );
    }
    Ok((installed, None))
}

/// Combines every finished shard, files the run, renders, and reports.
fn finish(
    plan: &Plan,
    cache: &Cache,
    st: &ExecState,
    ends: &[(usize, ShardEnd)],
    remote: &dyn Remote,
    progress: &Progress,
) -> Result<RunSummary, Error> {
    let mut missing = Vec::new();
    let mut pending = Vec::new();
    for s in &st.shards {
        let instances = s.instances.join(", ");
        match ends.iter().find(|(k, _)| *k == s.index).map(|(_, e)| e) {
            Some(ShardEnd::Lost(why)) => missing.push(crate::engine::StageFailure {
                stage: "shard",
                instance: s.index.to_string(),
                message: format!("lost: {why}; its instances: {instances}"),
            }),
            Some(ShardEnd::Pending) => pending.push(format!(
                "shard {} is queued or running (run again to merge it); its instances: {instances}",
                s.index
            )),
            _ => {}
        }
    }
    let mut data = Vec::new();
    for &k in &st.done {
        let d = combine::ShardData::load(k, &st.shard_data_dir(plan, k))?;
        combine::check_host(plan, &d)
            .map_err(|e| Error::Config(crate::error::ConfigError::new(format!("{e:#}"))))?;
        data.push(d);
    }
    let run_dir = if data.is_empty() {
        None
    } else {
        combine::combine(plan, &data)?;
        Some(state::file_combined_run(plan, cache, st, &data, remote)?)
    };
    if let Some(d) = &run_dir {
        progress.note(&format!("run recorded in {}", plan.display_path(d)));
        crate::render::render_campaign(plan, &crate::stages::registry())?;
    }
    Ok(RunSummary::from_dataset(
        plan,
        run_dir.as_deref(),
        missing,
        pending,
    )?)
}
