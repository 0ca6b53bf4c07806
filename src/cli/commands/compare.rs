//! `pqbench compare`: the timings of two runs, operation by operation.

use std::path::PathBuf;

use super::{project, utf8};
use crate::cli::args::Cli;
use crate::cli::output;
use pqbench::compare::CompareReport;
use pqbench::error::Error;
use pqbench::export::{self, csv::Csv, html::Html, json::Json, markdown::Markdown, Exporter};

/// The formats of a comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareFormat {
    Md,
    Html,
    Csv,
    Json,
}

#[derive(clap::Args)]
pub struct Args {
    run_a: String,
    run_b: String,
    /// Relative change below which nothing is called faster or slower
    /// (default: derived from the runs' trial-to-trial dispersion).
    #[arg(long)]
    threshold: Option<f64>,
    #[arg(long, value_enum, default_value = "md")]
    format: CompareFormat,
    /// Write the report to this file instead of stdout.
    #[arg(long)]
    output: Option<PathBuf>,
    /// Exit 1 when any operation is slower.
    #[arg(long)]
    fail_on_regression: bool,
}

pub fn run(cli: &Cli, a: &Args) -> Result<i32, Error> {
    let report = pqbench::compare::compare(&project(cli)?.root, &a.run_a, &a.run_b, a.threshold)?;
    let exporter: &dyn Exporter<CompareReport> = match a.format {
        CompareFormat::Md => &Markdown,
        CompareFormat::Html => &Html,
        CompareFormat::Csv => &Csv,
        CompareFormat::Json => &Json,
    };
    let bytes = exporter.export(&report)?;
    match &a.output {
        Some(path) => {
            pqbench::fsutil::write_atomic(path, &bytes)?;
            output::text(&format!(
                "{} ({})\n",
                path.display(),
                export::counts_text(&report.counts)
            ))?;
        }
        None => output::text(&utf8(bytes)?)?,
    }
    Ok(report.exit_code(a.fail_on_regression))
}
