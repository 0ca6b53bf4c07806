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
    /// Draft algorithms/<id>.toml from a submission directory or scheme
    /// metadata (.yml); also copies KAT files, writes manifests and sizes.
    Import {
        path: PathBuf,
        #[arg(long)]
        id: Option<String>,
        /// API family, when detection is not wanted.
        #[arg(long, value_parser = ["ngcc", "nist"])]
        api: Option<String>,
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
        #[arg(long, default_value = "encoded", value_parser = ["encoded", "maximum-variable", "nominal-variable"])]
        basis: String,
    },
    /// Check an algorithm TOML (paths, sources, API symbols) without building.
    Validate { toml: PathBuf },
    /// Render the campaign's pages from its recorded datasets (every system).
    Render { campaign: String },
    /// Copy a run's evidence into <DIR>/data/<system>/ and render <DIR>/site/.
    Publish {
        campaign: String,
        /// Only this system (default: every system with a dataset).
        #[arg(long)]
        system: Option<String>,
        dir: PathBuf,
        /// Also copy the built libraries (lib/).
        #[arg(long)]
        with_libraries: bool,
    },
    /// Recompute every statistic, share and KAT digest of a published
    /// dataset (or output/<campaign>) and regenerate its pages byte for byte.
    Check { dir: PathBuf },
    /// Re-run a recorded run (run id, run dir or lock.json) in a fresh cache
    /// and compare everything with it; stops first if inputs changed.
    Reproduce {
        run: String,
        /// Reproduce even though inputs differ from the lock.
        #[arg(long)]
        allow_changed: bool,
        /// Noise threshold of the timing comparison (default: from the runs).
        #[arg(long)]
        threshold: Option<f64>,
        #[arg(short, long)]
        jobs: Option<usize>,
    },
    /// Compare the timings of two runs (run ids, run dirs or datasets).
    Compare {
        run_a: String,
        run_b: String,
        /// Relative change below which nothing is called faster or slower
        /// (default: derived from the runs' trial-to-trial dispersion).
        #[arg(long)]
        threshold: Option<f64>,
        #[arg(long, default_value = "md", value_parser = ["md", "json", "csv"])]
        format: String,
        #[arg(long)]
        output: Option<PathBuf>,
        /// Exit 1 when any operation is slower.
        #[arg(long)]
        fail_on_regression: bool,
    },
    /// Time rendering of a synthetic dataset.
    #[command(hide = true)]
    BenchRender {
        #[arg(long, default_value_t = 500)]
        instances: usize,
    },
}

fn main() -> ExitCode {
    // pqbench re-executes itself as the launcher of every sandboxed job.
    if let Some(code) = pqbench::sandbox::jail_entry() {
        std::process::exit(code);
    }
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
            print!("{}", summary.report(&plan));
            Ok(summary.exit_code())
        }
        Command::Host { cpu } => {
            let cpu =
                cpu.unwrap_or_else(|| pqbench::host::allowed_cpus().last().copied().unwrap_or(0));
            let check = pqbench::host::check(cpu);
            for l in pqbench::sandbox::layers().layers {
                let state = if l.active { "active" } else { "missing" };
                println!("isolation: {} {state}: {}", l.name, l.detail);
            }
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
        Command::Render { campaign } => {
            let plan = plan::resolve(&project(cli)?, campaign)?;
            let r = pqbench::render::render_campaign(&plan)?;
            println!(
                "{} pages ({} changed) in {}",
                r.files,
                r.written,
                plan.display_path(&r.site)
            );
            Ok(exit::OK)
        }
        Command::Publish {
            campaign,
            system,
            dir,
            with_libraries,
        } => {
            let plan = plan::resolve(&project(cli)?, campaign)?;
            pqbench::publish::publish(&plan, system.as_deref(), dir, *with_libraries)?;
            println!("published to {}", dir.display());
            Ok(exit::OK)
        }
        Command::Check { dir } => {
            let report = pqbench::check::check_dataset(dir)?;
            println!("{report}");
            Ok(if report.passed() {
                exit::OK
            } else {
                exit::ITEM_FAILURES
            })
        }
        Command::Reproduce {
            run,
            allow_changed,
            threshold,
            jobs,
        } => {
            let opts = pqbench::reproduce::ReproduceOptions {
                allow_changed: *allow_changed,
                quiet: cli.quiet,
                jobs: *jobs,
                threshold: *threshold,
            };
            pqbench::reproduce::cli(&project(cli)?, run, &opts)
        }
        Command::Compare {
            run_a,
            run_b,
            threshold,
            format,
            output,
            fail_on_regression,
        } => {
            let opts = pqbench::compare::CompareOptions {
                threshold: *threshold,
                format: pqbench::compare::render::Format::parse(format)
                    .unwrap_or(pqbench::compare::render::Format::Markdown),
                output: output.clone(),
                fail_on_regression: *fail_on_regression,
            };
            pqbench::compare::cli(&project(cli)?.root, run_a, run_b, &opts)
        }
        Command::BenchRender { instances } => {
            let (took, r) = pqbench::render::bench::run(*instances)?;
            println!(
                "rendered {} files for {instances} instances in {:.3} s",
                r.files,
                took.as_secs_f64()
            );
            Ok(exit::OK)
        }
        Command::Import {
            path,
            id,
            api,
            force,
            kats,
            catalog,
            basis,
        } => {
            let opts = pqbench::import::ImportOptions {
                path: path.clone(),
                id: id.clone(),
                api: api.as_deref().map(|a| match a {
                    "ngcc" => pqbench::plan::ApiFamily::Ngcc,
                    _ => pqbench::plan::ApiFamily::Nist,
                }),
                force: *force,
                kats: kats.clone(),
                catalog: catalog.clone(),
                basis: basis.clone(),
            };
            for line in pqbench::import::import(&cli.root, &opts)?.lines {
                println!("{line}");
            }
            Ok(exit::OK)
        }
        Command::Validate { toml } => {
            let report = pqbench::validate::validate(&cli.root, toml)?;
            print!("{report}");
            Ok(report.exit_code())
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
