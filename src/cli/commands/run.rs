//! `pqbench run`: a campaign's stages, here or through its system's executor.

use std::path::PathBuf;

use super::{in_project, project, read_list};
use crate::cli::global::{Format, Global};
use crate::cli::output;
use pqbench::error::Error;
use pqbench::pipeline::{self, RunOptions};

#[derive(clap::Args)]
pub struct Args {
    /// The campaign to run: campaigns/<CAMPAIGN>.toml.
    campaign: String,
    /// Parallel build and KAT jobs (default: the campaign's, else one per core).
    #[arg(short, long)]
    jobs: Option<usize>,
    /// Measure again even when the stored measurement is fresh.
    #[arg(long)]
    remeasure: bool,
    /// Measuring CPU (one shard).
    #[arg(long, conflicts_with = "cpus")]
    cpu: Option<usize>,
    /// Measuring CPUs, one shard each: instances of one algorithm stay on one core.
    #[arg(long, value_delimiter = ',')]
    cpus: Option<Vec<usize>>,
    /// The campaign's system to run (default: the first this host runs natively).
    #[arg(long)]
    system: Option<String>,
    /// Submit the system's Slurm job and return; a later `run` merges it.
    #[arg(long)]
    detach: bool,
    /// Run only the instances listed in FILE here, whatever executor
    /// the system names (how a shard runs where it was sent).
    #[arg(long, value_name = "FILE", hide = true)]
    local_shard: Option<PathBuf>,
    /// Measure only the campaign's deferred instances (`defer`); the
    /// others keep their stored measurements.
    #[arg(long)]
    deferred_only: bool,
    /// Measure the deferred instances on this CPU, beside the others,
    /// instead of after them.
    #[arg(long)]
    deferred_cpu: Option<usize>,
    /// Format of the final summary on stdout.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

pub fn run(cli: &Global, a: &Args) -> Result<i32, Error> {
    let plan = pipeline::resolve_for(&project(cli)?, &a.campaign, a.system.as_deref())?;
    let local_shard = match &a.local_shard {
        Some(f) => Some(read_list(&in_project(cli, f))?),
        None => None,
    };
    let opts = RunOptions {
        quiet: cli.quiet,
        remeasure: a.remeasure,
        jobs: a.jobs,
        cpus: a.cpus.clone().or_else(|| a.cpu.map(|c| vec![c])),
        local_shard,
        detach: a.detach,
        deferred_only: a.deferred_only,
        deferred_cpu: a.deferred_cpu,
    };
    let summary = pqbench::executor::run_campaign(&plan, &opts)?;
    output::report(a.format, &summary, |s| s.report())?;
    Ok(summary.exit_code())
}
