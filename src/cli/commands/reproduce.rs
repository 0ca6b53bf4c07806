//! `pqbench reproduce`: a recorded run again, compared with what it recorded.

use super::{project, utf8};
use crate::cli::global::Global;
use crate::cli::output;
use pqbench::error::Error;
use pqbench::export::{self, json::Json, markdown::Markdown, text, Exporter};

/// What `reproduce` prints: text for people, the report as Markdown, or JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ReproduceFormat {
    Text,
    Md,
    Json,
}

#[derive(clap::Args)]
pub struct Args {
    /// The run to reproduce: its id or a unique prefix of it (under output/*/*/runs/), its folder, its lock.json, or a dataset folder.
    run: String,
    /// Reproduce even though inputs differ from the lock.
    #[arg(long)]
    allow_changed: bool,
    /// Noise threshold of the timing comparison (default: from the runs).
    #[arg(long)]
    threshold: Option<f64>,
    /// Parallel build and KAT jobs (default: one per core).
    #[arg(short, long)]
    jobs: Option<usize>,
    /// Format of what is printed on stdout (`text` streams: the run and
    /// its inputs before the campaign runs, the outcome after).
    #[arg(long, value_enum, default_value = "text")]
    format: ReproduceFormat,
}

/// In text, the run and its changed inputs are printed before the campaign
/// runs (its progress follows on stderr), the outcome after; Markdown and
/// JSON are one document at the end.
pub fn run(cli: &Global, a: &Args) -> Result<i32, Error> {
    let opts = pqbench::reproduce::ReproduceOptions {
        allow_changed: a.allow_changed,
        quiet: cli.quiet,
        jobs: a.jobs,
        threshold: a.threshold,
    };
    let registry = pqbench::stages::registry();
    let engine = pqbench::reproduce::Reproducer::standard(&registry);
    let prepared = pqbench::reproduce::prepare(&project(cli)?, &a.run, &engine)?;
    if a.format == ReproduceFormat::Text {
        output::text(&text::start(&prepared.start()))?;
    }
    let r = pqbench::reproduce::reproduce(&prepared, &opts, export::write_reproduction, &engine)?;
    match a.format {
        ReproduceFormat::Text => output::text(&text::outcome(&r))?,
        ReproduceFormat::Md => output::text(&utf8(Markdown.export(&r)?)?)?,
        ReproduceFormat::Json => output::text(&utf8(Json.export(&r)?)?)?,
    }
    Ok(r.exit_code)
}
