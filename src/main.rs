//! The `pqbench` command line: parses arguments and calls the library.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use pqbench::engine::Freshness;
use pqbench::error::{exit, Error};
use pqbench::kat::manifest::Mode;
use pqbench::pipeline::{self, RunOptions};
use pqbench::plan::{self, Project};

#[derive(Parser)]
#[command(
    name = "pqbench",
    version,
    about = "Build, KAT-check, measure and report public-key cryptography submissions"
)]
struct Cli {
    /// Project directory (holding campaigns/, algorithms/, kat/, output/).
    #[arg(short = 'C', long, global = true, default_value = ".")]
    root: PathBuf,
    /// Print only errors and the final summary.
    #[arg(short, long, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a campaign: build, KAT, measure, render; reuse what has not changed.
    Run {
        campaign: String,
        /// Parallel build and KAT jobs (default: the campaign's, else one per core).
        #[arg(short, long)]
        jobs: Option<usize>,
        /// Measure again even when the stored measurement is fresh.
        #[arg(long)]
        remeasure: bool,
        /// Measuring CPU (one shard).
        #[arg(long, conflicts_with = "cpus")]
        cpu: Option<usize>,
        /// Measuring CPUs, one shard each: instances of one algorithm stay on one core.
        #[arg(long, value_delimiter = ',')]
        cpus: Option<Vec<usize>>,
    },
    /// Check whether the host is fixed for measuring (governor, turbo, SMT, clock, counters).
    Host {
        #[arg(long)]
        cpu: Option<usize>,
    },
    /// List every instance and, per stage, `fresh` or `stale: <reason>`.
    Plan { campaign: String },
    /// Print only the stale stages, with reasons.
    Status { campaign: String },
    /// Store the KAT files of the last run as the algorithms' references
    /// (for submissions without KAT files of their own).
    Bless {
        campaign: String,
        /// Digest mode of the manifest lines.
        #[arg(long, default_value = "strict", value_parser = ["strict", "nolen", "exact"])]
        mode: String,
        /// Replace references that the run did not match.
        #[arg(long)]
        force: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match dispatch(&cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    };
    ExitCode::from(code as u8)
}

fn project(cli: &Cli) -> Result<Project, Error> {
    Project::new(&cli.root).map_err(|e| {
        Error::Other(anyhow::anyhow!(
            "project directory {}: {e}",
            cli.root.display()
        ))
    })
}

fn dispatch(cli: &Cli) -> Result<i32, Error> {
    match &cli.command {
        Command::Run {
            campaign,
            jobs,
            remeasure,
            cpu,
            cpus,
        } => {
            let plan = plan::resolve(&project(cli)?, campaign)?;
            let opts = RunOptions {
                quiet: cli.quiet,
                remeasure: *remeasure,
                jobs: *jobs,
                cpus: cpus.clone().or_else(|| cpu.map(|c| vec![c])),
            };
            let summary = pipeline::run(&plan, &opts)?;
            println!(
                "{} stage results reused, {} computed; records in {}",
                summary.reused,
                summary.computed,
                plan.display_path(&plan.output_dir)
            );
            for e in &summary.errors {
                println!("error: {e}");
            }
            for (inst, status) in &summary.failing {
                println!("{inst}: {status}");
            }
            if summary.errors.is_empty() && summary.failing.is_empty() {
                Ok(exit::OK)
            } else {
                Ok(exit::ITEM_FAILURES)
            }
        }
        Command::Host { cpu } => {
            let cpu =
                cpu.unwrap_or_else(|| pqbench::host::allowed_cpus().last().copied().unwrap_or(0));
            let check = pqbench::host::check(cpu);
            if check.problems.is_empty() {
                println!("host ready (CPU {cpu})");
                Ok(exit::OK)
            } else {
                for p in &check.problems {
                    println!("CPU {cpu}: {p}");
                }
                Ok(exit::ITEM_FAILURES)
            }
        }
        Command::Bless {
            campaign,
            mode,
            force,
        } => {
            let plan = plan::resolve(&project(cli)?, campaign)?;
            let mode = match mode.as_str() {
                "nolen" => Mode::Nolen,
                "exact" => Mode::Exact,
                _ => Mode::Strict,
            };
            for line in pqbench::bless::bless(&plan, mode, *force)? {
                println!("{line}");
            }
            Ok(exit::OK)
        }
        Command::Plan { campaign } | Command::Status { campaign } => {
            let only_stale = matches!(cli.command, Command::Status { .. });
            let plan = plan::resolve(&project(cli)?, campaign)?;
            let states = pipeline::states(&plan)?;
            let mut stale = 0;
            for s in &states {
                let text = match &s.freshness {
                    Freshness::Fresh => "fresh".to_string(),
                    Freshness::NotApplicable => "not applicable".to_string(),
                    Freshness::Stale(r) => {
                        stale += 1;
                        format!("stale: {}", r.join("; "))
                    }
                };
                if !only_stale || matches!(s.freshness, Freshness::Stale(_)) {
                    println!("{:<32} {:<8} {text}", s.instance, s.stage.as_str());
                }
            }
            if only_stale && stale == 0 {
                println!("everything is fresh");
            }
            Ok(exit::OK)
        }
    }
}
