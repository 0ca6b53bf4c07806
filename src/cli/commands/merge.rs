//! `pqbench merge`: another machine's dataset as a system of the campaign.

use std::path::PathBuf;

use super::{in_project, project};
use crate::cli::global::{Format, Global};
use crate::cli::output;
use pqbench::error::{exit, Error};
use pqbench::pipeline;

#[derive(clap::Args)]
pub struct Args {
    /// The campaign the dataset belongs to.
    campaign: String,
    /// A system's dataset brought from another machine (its output/<campaign>/<system>/ folder).
    dir: PathBuf,
    /// Format of the report on stdout.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

pub fn run(cli: &Global, a: &Args) -> Result<i32, Error> {
    let plan = pipeline::resolve(&project(cli)?, &a.campaign)?;
    let report = pqbench::merge::merge(
        &pqbench::stages::registry(),
        &plan,
        &in_project(cli, &a.dir),
    )?;
    output::report(a.format, &report, |r| r.to_string())?;
    Ok(exit::OK)
}
