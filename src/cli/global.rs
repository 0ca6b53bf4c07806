//! What every subcommand may read besides its own arguments: the global
//! options and the report format. A leaf: the subcommand table (`args`)
//! names the subcommands, and they name only this.

use std::path::PathBuf;

use clap::ValueEnum;

/// The options every subcommand accepts (`-C`, `--quiet`).
#[derive(clap::Args)]
pub struct Global {
    /// Project directory (holding campaigns/, algorithms/, kat/, output/).
    #[arg(short = 'C', long, global = true, default_value = ".")]
    pub root: PathBuf,
    /// Print only errors and the final summary.
    #[arg(short, long, global = true)]
    pub quiet: bool,
}

/// Output of the commands that report: text for people, JSON for tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}
