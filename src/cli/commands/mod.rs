//! One module per subcommand, each with its arguments (`Args`) and the
//! function that turns them into a library call and prints the report it
//! returns. Exit codes come from the reports (items that failed) or from
//! `Error::exit_code` (in `main`). `cli::args::dispatch` names them all.

pub mod bench_checks;
pub mod bench_engine;
pub mod bench_render;
pub mod bench_tree;
pub mod bless;
pub mod check;
pub mod compare;
pub mod completions;
pub mod host;
pub mod import;
pub mod internal;
pub mod merge;
pub mod plan;
pub mod publish;
pub mod render;
pub mod reproduce;
pub mod run;
pub mod validate;

use std::path::{Path, PathBuf};

use super::global::Global;
use pqbench::error::{ConfigError, Error};
use pqbench::plan::Project;

/// Exported reports are text; this only turns the bytes back into a `str`
/// for `output::text`.
fn utf8(bytes: Vec<u8>) -> Result<String, Error> {
    String::from_utf8(bytes).map_err(|e| {
        anyhow::Error::new(e)
            .context("an exported report is not UTF-8")
            .into()
    })
}

/// The lines of a list file (a shard's instances).
fn read_list(path: &Path) -> Result<Vec<String>, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::input(anyhow::Error::new(e).context(format!("reading {}", path.display())))
    })?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect())
}

/// The project directory given with `-C`; a bad one is bad input.
fn project(cli: &Global) -> Result<Project, Error> {
    Project::new(&cli.root).map_err(|e| {
        ConfigError::new(format!("project directory {}: {e}", cli.root.display()))
            .help("give the directory holding campaigns/ and algorithms/ with -C DIR")
            .into()
    })
}

/// A path given on the command line: relative paths are relative to the
/// project directory (`-C`), like every path pqbench reads.
fn in_project(cli: &Global, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        cli.root.join(path)
    }
}
