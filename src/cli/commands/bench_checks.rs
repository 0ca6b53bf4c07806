//! `pqbench bench-checks`: what the output checks add to a timed call, on
//! an instance the campaign has built (a benchmark: prints figures,
//! asserts nothing).

use super::project;
use crate::cli::global::Global;
use crate::cli::output;
use pqbench::error::{exit, Error};
use pqbench::{pipeline, stages};

#[derive(clap::Args)]
pub struct Args {
    /// The campaign whose built instance is measured.
    campaign: String,
    /// The operation (`keygen`, `enc`, `dec`, `sign`, `verify`, `hash_<n>`); by
    /// default the cheapest checked one the campaign's instances run.
    #[arg(long)]
    op: Option<String>,
    /// Trial pairs, each one trial with the checks and one without.
    #[arg(long, default_value_t = 21)]
    pairs: usize,
    /// Timed calls per trial.
    #[arg(long, default_value_t = 2000)]
    calls: u64,
}

pub fn run(cli: &Global, a: &Args) -> Result<i32, Error> {
    let plan = pipeline::resolve(&project(cli)?, &a.campaign)?;
    let _lock = pipeline::locks::ProjectLock::acquire(&plan, "bench-checks")?;
    let b = stages::bench_checks::run(&plan, a.op.as_deref(), a.pairs, a.calls)?;
    output::text(&format!(
        "{} {}: {} trial pairs of {} calls, median cycles per call\n  \
         with the output checks    {:.0}\n  without the output checks {:.0}\n  \
         difference                {:+.0} cycles per call ({:+.2} %)\n",
        b.instance,
        b.op,
        b.pairs,
        b.calls,
        b.with_checks,
        b.without_checks,
        b.with_checks - b.without_checks,
        b.overhead_percent()
    ))?;
    Ok(exit::OK)
}
