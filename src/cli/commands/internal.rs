//! `pqbench internal`: pqbench's own steps on a machine a shard was sent to.

use std::path::PathBuf;

use crate::cli::global::Global;
use crate::cli::output;
use pqbench::error::{exit, Error};

#[derive(clap::Subcommand)]
pub enum Internal {
    /// Builds a project from a `<sha256> <path>` list and a blob directory.
    Assemble {
        list: PathBuf,
        blobs: PathBuf,
        into: PathBuf,
    },
}

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    step: Internal,
}

pub fn run(_: &Global, a: &Args) -> Result<i32, Error> {
    let Internal::Assemble { list, blobs, into } = &a.step;
    let n = pqbench::executor::bundle::assemble(list, blobs, into)?;
    output::text(&format!("{n} files in {}\n", into.display()))?;
    Ok(exit::OK)
}
