//! `pqbench bless`: the last run's KAT files as references where there
//! were none.

use super::project;
use crate::cli::global::Global;
use crate::cli::output;
use pqbench::error::{exit, Error};
use pqbench::kat::manifest::Mode;
use pqbench::pipeline;

/// Digest mode of the manifest lines a bless writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DigestMode {
    Strict,
    Nolen,
    Exact,
}

#[derive(clap::Args)]
pub struct Args {
    /// The campaign whose last run wrote the KAT files.
    campaign: String,
    /// The system whose KAT files are stored (default: the first this host runs natively).
    #[arg(long)]
    system: Option<String>,
    /// Digest mode of the manifest lines.
    #[arg(long, value_enum, default_value = "strict")]
    mode: DigestMode,
    /// Replace references that the run did not match.
    #[arg(long)]
    force: bool,
}

pub fn run(cli: &Global, a: &Args) -> Result<i32, Error> {
    let plan = pipeline::resolve_for(&project(cli)?, &a.campaign, a.system.as_deref())?;
    let mode = match a.mode {
        DigestMode::Strict => Mode::Strict,
        DigestMode::Nolen => Mode::Nolen,
        DigestMode::Exact => Mode::Exact,
    };
    let report = pqbench::bless::bless(&plan, mode, a.force)?;
    output::text(
        &report
            .lines
            .iter()
            .map(|l| format!("{l}\n"))
            .collect::<String>(),
    )?;
    // Like a run with failed instances: what could be done was done.
    Ok(if report.refused > 0 {
        exit::ITEM_FAILURES
    } else {
        exit::OK
    })
}
