//! `pqbench plan` (every stage of every instance, or the estimate on N
//! nodes) and `pqbench status` (the stale stages only).

use super::project;
use crate::cli::global::{Format, Global};
use crate::cli::output;
use pqbench::engine::Freshness;
use pqbench::error::{exit, Error};
use pqbench::pipeline::{self, StatusReport};
use pqbench::plan::system::Executor;

#[derive(clap::Args)]
pub struct PlanArgs {
    /// The campaign: campaigns/<CAMPAIGN>.toml.
    campaign: String,
    /// The campaign's system (default: the first this host runs natively).
    #[arg(long)]
    system: Option<String>,
    /// Estimate the campaign on N nodes (from earlier runs' stage times).
    #[arg(long, requires = "cores")]
    nodes: Option<usize>,
    /// Measuring cores per node for the estimate.
    #[arg(long, requires = "nodes")]
    cores: Option<usize>,
    #[command(flatten)]
    cpus: CpuArgs,
    /// Format of the listing on stdout.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

#[derive(clap::Args)]
pub struct StatusArgs {
    /// The campaign: campaigns/<CAMPAIGN>.toml.
    campaign: String,
    /// The campaign's system (default: the first this host runs natively).
    #[arg(long)]
    system: Option<String>,
    #[command(flatten)]
    cpus: CpuArgs,
    /// Format of the listing on stdout.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

/// The measuring CPUs a `run` would be given: the timings measured on
/// them are fresh, those of other CPUs are not.
#[derive(clap::Args)]
pub struct CpuArgs {
    /// Measuring CPU, as `run --cpu` gives it.
    #[arg(long, conflicts_with = "cpus")]
    cpu: Option<usize>,
    /// Measuring CPUs, as `run --cpus` gives them.
    #[arg(long, value_delimiter = ',')]
    cpus: Option<Vec<usize>>,
}

impl CpuArgs {
    fn chosen(&self) -> Option<Vec<usize>> {
        self.cpus.clone().or_else(|| self.cpu.map(|c| vec![c]))
    }
}

pub fn plan(cli: &Global, a: &PlanArgs) -> Result<i32, Error> {
    let (Some(nodes), Some(cores)) = (a.nodes, a.cores) else {
        return freshness(
            cli,
            &a.campaign,
            a.system.as_deref(),
            &a.cpus,
            a.format,
            false,
        );
    };
    let plan = pipeline::resolve_for(&project(cli)?, &a.campaign, a.system.as_deref())?;
    pipeline::check_stage_names(&plan, &pqbench::stages::registry())?;
    let default = match &plan.system_spec.executor {
        Executor::Ssh(c) => c.default_cost_seconds,
        Executor::Slurm(c) => c.default_cost_seconds,
        Executor::Local => 60.0,
    };
    let (items, basis) = pqbench::executor::shards::costed(&plan, default);
    let e = pqbench::executor::shards::estimate(&items, basis, default, nodes, cores);
    output::report(a.format, &e, |e| format!("{e}\n"))?;
    Ok(exit::OK)
}

pub fn status(cli: &Global, a: &StatusArgs) -> Result<i32, Error> {
    freshness(
        cli,
        &a.campaign,
        a.system.as_deref(),
        &a.cpus,
        a.format,
        true,
    )
}

fn freshness(
    cli: &Global,
    campaign: &str,
    system: Option<&str>,
    cpus: &CpuArgs,
    format: Format,
    only_stale: bool,
) -> Result<i32, Error> {
    let plan = pipeline::resolve_for(&project(cli)?, campaign, system)?;
    // What `run` would refuse is refused here too, before any stage row.
    pipeline::check_stage_names(&plan, &pqbench::stages::registry())?;
    let mut report = pqbench::executor::states(&plan, cpus.chosen())?;
    if only_stale {
        report
            .rows
            .retain(|r| matches!(r.freshness, Freshness::Stale(_) | Freshness::Waits(_)));
    }
    output::report(format, &report, |r| text(r, only_stale))?;
    Ok(exit::OK)
}

fn text(r: &StatusReport, only_stale: bool) -> String {
    let mut s = String::new();
    for row in &r.rows {
        let text = match &row.freshness {
            Freshness::Fresh => "fresh".to_string(),
            Freshness::NotApplicable => "not applicable".to_string(),
            Freshness::Stale(why) => format!("stale: {}", why.join("; ")),
            Freshness::Waits(on) => format!(
                "waits on {}: computed again only if its new result differs",
                on.join(", ")
            ),
        };
        s.push_str(&format!("{:<32} {:<12} {text}\n", row.instance, row.stage));
    }
    if only_stale && r.stale == 0 {
        s.push_str("everything is fresh\n");
    }
    s
}
