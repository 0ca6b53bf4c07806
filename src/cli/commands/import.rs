//! `pqbench import`: an algorithm TOML drafted from a submission, scheme
//! metadata or a public tree.

use std::path::PathBuf;

use crate::cli::global::Global;
use crate::cli::output;
use pqbench::error::{exit, Error};
use pqbench::plan::ApiFamily;

/// The API family, when detection is not wanted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Api {
    Ngcc,
    Nist,
}

/// What the catalog's sizes measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Basis {
    Encoded,
    MaximumVariable,
    NominalVariable,
}

impl Basis {
    fn as_str(self) -> &'static str {
        match self {
            Basis::Encoded => "encoded",
            Basis::MaximumVariable => "maximum-variable",
            Basis::NominalVariable => "nominal-variable",
        }
    }
}

#[derive(clap::Args)]
pub struct Args {
    /// A submission directory, a public tree (PQClean, liboqs) or scheme metadata (.yml).
    path: PathBuf,
    /// The algorithm's id, and the name of algorithms/<ID>.toml (default: from the folder's name).
    #[arg(long)]
    id: Option<String>,
    /// API family, when detection is not wanted.
    #[arg(long, value_enum)]
    api: Option<Api>,
    /// Replace existing files.
    #[arg(long)]
    force: bool,
    /// liboqs-style kats.json with KAT digests (metadata imports).
    #[arg(long)]
    kats: Option<PathBuf>,
    /// Size catalog to write rows into (default algorithms/sizes.csv).
    #[arg(long)]
    catalog: Option<PathBuf>,
    /// Basis of the catalog sizes.
    #[arg(long, value_enum, default_value = "encoded")]
    basis: Basis,
    /// The command that builds the tree's KAT generator, when its build
    /// files do not say (run in a confined copy of the tree; `{a,b,c}`
    /// makes one build per value, e.g. 'make SET={a,b,c} PQCgenKAT_sign').
    #[arg(long, value_name = "COMMAND")]
    build: Option<String>,
}

pub fn run(cli: &Global, a: &Args) -> Result<i32, Error> {
    let opts = pqbench::import::ImportOptions {
        path: a.path.clone(),
        id: a.id.clone(),
        api: a.api.map(|api| match api {
            Api::Ngcc => ApiFamily::Ngcc,
            Api::Nist => ApiFamily::Nist,
        }),
        force: a.force,
        kats: a.kats.clone(),
        catalog: a.catalog.clone(),
        basis: a.basis.as_str().to_string(),
        build: a.build.clone(),
    };
    let report = pqbench::import::import(&cli.root, &opts)?;
    let mut text: String = report.lines.iter().map(|l| format!("{l}\n")).collect();
    text += &validate_drafts(cli, &report.tomls);
    if report.observed {
        text += &prove_draft(cli, &report);
    }
    output::text(&text)?;
    Ok(exit::OK)
}

/// A draft from the tree's own build, built and KAT-checked by pqbench
/// against what the tree's generators wrote: one line per set, and a TODO
/// line in the draft above each set that differs.
fn prove_draft(cli: &Global, report: &pqbench::import::ImportReport) -> String {
    let root = cli.root.canonicalize().unwrap_or_else(|_| cli.root.clone());
    let proof = match pqbench::import::prove(&root, &report.id, &report.checkers) {
        Ok(p) => p,
        Err(e) => {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or_default();
            return format!("proof: not run: {first} (see `pqbench validate`)\n");
        }
    };
    let mut out: String = proof.lines().iter().map(|l| format!("{l}\n")).collect();
    if proof.differing() > 0 {
        match pqbench::import::mark_unproven(&report.toml, &proof) {
            Ok(()) => {
                out += &format!(
                    "{} of {} sets not proven: a TODO line in the draft marks each\n",
                    proof.differing(),
                    proof.sets.len()
                )
            }
            Err(e) => out += &format!("marking the unproven sets: {e}\n"),
        }
    }
    out
}

/// Every drafted TOML checked as `pqbench validate` checks it (compiled
/// and trial-linked), so the import's own account of its drafts (their
/// TODO lines) is never the only word: one line per draft, with the
/// first problem of one that does not validate.
fn validate_drafts(cli: &Global, tomls: &[PathBuf]) -> String {
    let mut out = String::new();
    let root = cli.root.canonicalize().unwrap_or_else(|_| cli.root.clone());
    for t in tomls {
        let shown = t.strip_prefix(&root).unwrap_or(t).display().to_string();
        match pqbench::validate::validate(&cli.root, t) {
            Ok(r) if r.problems.is_empty() => {
                out += &format!("validate {shown}: OK ({} instances)\n", r.instances)
            }
            Ok(r) => {
                let first = r.problems[0].to_string();
                let first = first.lines().next().unwrap_or_default();
                out += &format!(
                    "validate {shown}: {} problem(s), the first: {first}\n  (fix the draft, then run `pqbench validate {shown}`)\n",
                    r.problems.len()
                );
            }
            Err(e) => out += &format!("validate {shown}: {e}\n"),
        }
    }
    out
}
