//! `pqbench publish`: a run's evidence as a dataset, with its site.

use std::path::PathBuf;

use super::project;
use crate::cli::args::Cli;
use crate::cli::output;
use pqbench::error::{exit, Error};
use pqbench::pipeline;

#[derive(clap::Args)]
pub struct Args {
    campaign: String,
    /// Only this system (default: every system with a dataset).
    #[arg(long)]
    system: Option<String>,
    dir: PathBuf,
    /// Also copy the built libraries (lib/).
    #[arg(long)]
    with_libraries: bool,
}

pub fn run(cli: &Cli, a: &Args) -> Result<i32, Error> {
    let plan = pipeline::resolve(&project(cli)?, &a.campaign)?;
    pqbench::publish::publish(&plan, a.system.as_deref(), &a.dir, a.with_libraries)?;
    output::text(&format!("published to {}\n", a.dir.display()))?;
    Ok(exit::OK)
}
