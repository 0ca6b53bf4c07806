//! The command line: the subcommand table as clap derive structs (the
//! global options are `global`'s, each subcommand's arguments live in its
//! module under `commands`) and `dispatch`, the table of contents. Nothing
//! here is seen by the library.

use clap::{Parser, Subcommand};
use pqbench::error::Error;

use super::commands::{self, completions};
use super::global::Global;

#[derive(Parser)]
#[command(
    name = "pqbench",
    version,
    about = "Build, KAT-check, measure and report public-key cryptography submissions"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// Every subcommand; each module of `commands` holds its arguments.
#[derive(Subcommand)]
pub enum Command {
    /// Run a campaign: build, KAT, measure, render; reuse what has not changed.
    Run(commands::run::Args),
    /// Check whether the host is fixed for measuring (governor, turbo, SMT, clock, counters).
    Host(commands::host::Args),
    /// List every instance and, per stage, `fresh` or `stale: <reason>`;
    /// with --nodes/--cores, the expected wall time on that many machines.
    Plan(commands::plan::PlanArgs),
    /// Print only the stale stages, with reasons.
    Status(commands::plan::StatusArgs),
    /// Store the KAT files of the last run as the algorithms' references
    /// (for submissions without KAT files of their own).
    Bless(commands::bless::Args),
    /// Draft algorithms/<id>.toml from a submission directory or scheme
    /// metadata (.yml); also copies KAT files, writes manifests and sizes.
    Import(commands::import::Args),
    /// Check an algorithm TOML (paths, sources, API symbols), compiling and
    /// trial-linking every unit without running anything.
    /// A relative path is taken relative to the project directory (-C).
    Validate(commands::validate::Args),
    /// Render the campaign's pages from its recorded datasets (every system).
    Render(commands::render::Args),
    /// Copy a run's evidence into <DIR>/data/<system>/ and render <DIR>/site/.
    Publish(commands::publish::Args),
    /// Add a dataset produced elsewhere (another machine's
    /// output/<campaign>/<system>/ or a published data/<system>/) as that
    /// system of the campaign, after checking it.
    Merge(commands::merge::Args),
    /// Recompute every statistic, share and KAT digest of a published
    /// dataset (or output/<campaign>) and regenerate its pages byte for byte.
    Check(commands::check::Args),
    /// Re-run a recorded run (run id, run dir or lock.json) in a fresh cache
    /// and compare everything with it; stops first if inputs changed.
    Reproduce(commands::reproduce::Args),
    /// Compare the timings of two runs (run ids, run dirs or datasets).
    Compare(commands::compare::Args),
    /// Time rendering of a synthetic dataset of N instances (a benchmark:
    /// prints how long it took, asserts nothing).
    BenchRender(commands::bench_render::Args),
    /// Time an operation's trials with and without the per-call output
    /// hashes of the replay check (a benchmark: prints figures, asserts
    /// nothing; run the campaign first).
    BenchChecks(commands::bench_checks::Args),
    /// Time the engine on a synthetic project of N instances made from the
    /// demo (cold build, cold build + KAT, warm re-run, status) beside
    /// bare gcc (a benchmark: prints figures, asserts nothing).
    BenchEngine(commands::bench_engine::Args),
    /// Import a whole public tree (PQClean) into a fresh project with no
    /// edit, build it and run its KATs, and print a table per instance
    /// with the wall times (the acceptance command for real trees).
    BenchTree(commands::bench_tree::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(commands::completions::Args),
    /// pqbench's own steps on a machine a shard was sent to.
    #[command(hide = true)]
    Internal(commands::internal::Args),
}

/// Runs the subcommand the command line names: the table of contents.
pub fn dispatch(cli: &Cli) -> Result<i32, Error> {
    let g = &cli.global;
    match &cli.command {
        Command::Run(a) => commands::run::run(g, a),
        Command::Host(a) => commands::host::run(g, a),
        Command::Plan(a) => commands::plan::plan(g, a),
        Command::Status(a) => commands::plan::status(g, a),
        Command::Bless(a) => commands::bless::run(g, a),
        Command::Import(a) => commands::import::run(g, a),
        Command::Validate(a) => commands::validate::run(g, a),
        Command::Render(a) => commands::render::run(g, a),
        Command::Publish(a) => commands::publish::run(g, a),
        Command::Merge(a) => commands::merge::run(g, a),
        Command::Check(a) => commands::check::run(g, a),
        Command::Reproduce(a) => commands::reproduce::run(g, a),
        Command::Compare(a) => commands::compare::run(g, a),
        Command::BenchRender(a) => commands::bench_render::run(g, a),
        Command::BenchChecks(a) => commands::bench_checks::run(g, a),
        Command::BenchEngine(a) => commands::bench_engine::run(g, a),
        Command::BenchTree(a) => commands::bench_tree::run(g, a),
        Command::Completions(a) => {
            completions::run(&mut <Cli as clap::CommandFactory>::command(), a)
        }
        Command::Internal(a) => commands::internal::run(g, a),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every option and argument of every visible subcommand says what it
    /// is in `--help`.
    #[test]
    fn every_argument_has_help_text() {
        let mut missing = Vec::new();
        walk(&super::Cli::command(), "pqbench", &mut missing);
        assert!(missing.is_empty(), "no help text: {missing:#?}");
    }

    fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
        for arg in cmd.get_arguments() {
            let builtin = matches!(arg.get_id().as_str(), "help" | "version");
            if !builtin && !arg.is_hide_set() && arg.get_help().is_none() {
                missing.push(format!("{path} {}", arg.get_id()));
            }
        }
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            walk(sub, &format!("{path} {}", sub.get_name()), missing);
        }
    }
}
