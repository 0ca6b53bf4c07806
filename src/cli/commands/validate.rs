//! `pqbench validate`: an algorithm TOML checked, compiled and trial-linked.

use std::path::PathBuf;

use super::project;
use crate::cli::global::Global;
use crate::cli::output;
use pqbench::error::Error;

#[derive(clap::Args)]
pub struct Args {
    /// The algorithm TOML to check (algorithms/<id>.toml).
    toml: PathBuf,
}

pub fn run(cli: &Global, a: &Args) -> Result<i32, Error> {
    let project = project(cli)?;
    // A relative path is taken from the project directory, once:
    // `validate` joins it to the (canonical) project root.
    let report = pqbench::validate::validate(&project.root, &a.toml)?;
    output::text(&report.to_string())?;
    Ok(report.exit_code())
}
