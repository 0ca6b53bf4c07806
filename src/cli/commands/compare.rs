//! `pqbench compare`: the timings of two runs, operation by operation.

use std::path::PathBuf;

use super::{project, utf8};
use crate::cli::global::Global;
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
    /// A run (its id or directory); with --combination, the run whose
    /// datasets (matrix combinations, or other further datasets) are
    /// compared.
    run_a: String,
    /// The run compared with the first.
    #[arg(
        required_unless_present = "combination",
        conflicts_with = "combination"
    )]
    run_b: Option<String>,
    /// A `[matrix]` combination of the run (`<compiler>.<profile>`), or
    /// another further dataset of it (`<name>` or `<dimension>/<name>`),
    /// compared with the one --against names.
    #[arg(long, requires = "against")]
    combination: Option<String>,
    /// The dataset --combination is compared against (the baseline).
    #[arg(long, requires = "combination")]
    against: Option<String>,
    /// Relative change below which nothing is called faster or slower
    /// (default: derived from the runs' trial-to-trial dispersion).
    #[arg(long)]
    threshold: Option<f64>,
    /// Format of the report.
    #[arg(long, value_enum, default_value = "md")]
    format: CompareFormat,
    /// Write the report to this file instead of stdout.
    #[arg(long)]
    output: Option<PathBuf>,
    /// Exit 1 when any operation is slower.
    #[arg(long)]
    fail_on_regression: bool,
}

pub fn run(cli: &Global, a: &Args) -> Result<i32, Error> {
    let root = project(cli)?.root;
    let report = match (&a.combination, &a.against, &a.run_b) {
        (Some(c), Some(against), _) => {
            pqbench::compare::compare_combinations(&root, &a.run_a, c, against, a.threshold)?
        }
        (_, _, Some(b)) => pqbench::compare::compare(&root, &a.run_a, b, a.threshold)?,
        _ => {
            return Err(
                pqbench::error::ConfigError::new("compare needs a second run")
                    .help("give two runs, or one run with --combination A --against B")
                    .into(),
            )
        }
    };
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
