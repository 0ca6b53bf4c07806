//! `pqbench publish`: a run's evidence as a dataset, with its site.

use std::path::PathBuf;

use super::project;
use crate::cli::global::Global;
use crate::cli::output;
use pqbench::error::{exit, Error};
use pqbench::pipeline;

#[derive(clap::Args)]
pub struct Args {
    /// The campaign whose last run is published.
    campaign: String,
    /// Only this system (default: every system with a dataset).
    #[arg(long)]
    system: Option<String>,
    /// Where the evidence (data/) and the site (site/) are written.
    dir: PathBuf,
    /// Also copy the built libraries (lib/).
    #[arg(long)]
    with_libraries: bool,
    /// Also keep what the measured processes printed (the records' stdout
    /// and stderr tails: the submission's own output, left out by default).
    #[arg(long)]
    with_output: bool,
}

pub fn run(cli: &Global, a: &Args) -> Result<i32, Error> {
    let plan = pipeline::resolve(&project(cli)?, &a.campaign)?;
    let extras = pqbench::publish::Extras {
        libraries: a.with_libraries,
        output: a.with_output,
    };
    pqbench::publish::publish(
        &pqbench::stages::registry(),
        &plan,
        a.system.as_deref(),
        &a.dir,
        extras,
    )?;
    output::text(&format!("published to {}\n", a.dir.display()))?;
    Ok(exit::OK)
}
