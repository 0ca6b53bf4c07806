//! `pqbench completions`: a shell completion script.

use crate::cli::args::Cli;
use crate::cli::output;
use pqbench::error::{exit, Error};

#[derive(clap::Args)]
pub struct Args {
    /// The shell to write completions for.
    shell: clap_complete::Shell,
}

pub fn run(_: &Cli, a: &Args) -> Result<i32, Error> {
    let mut cmd = <Cli as clap::CommandFactory>::command();
    let mut buf = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "pqbench", &mut buf);
    output::text(&String::from_utf8_lossy(&buf))?;
    Ok(exit::OK)
}
