//! `pqbench completions`: a shell completion script.

use crate::cli::output;
use pqbench::error::{exit, Error};

#[derive(clap::Args)]
pub struct Args {
    /// The shell to write completions for.
    shell: clap_complete::Shell,
}

/// `cmd` is the whole command line's definition (the subcommand table's).
pub fn run(cmd: &mut clap::Command, a: &Args) -> Result<i32, Error> {
    let mut buf = Vec::new();
    clap_complete::generate(a.shell, cmd, "pqbench", &mut buf);
    output::text(&String::from_utf8_lossy(&buf))?;
    Ok(exit::OK)
}
