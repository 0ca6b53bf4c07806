//! One function per subcommand: turn arguments into a library call and
//! print the report it returns. Exit codes come from the reports (items
//! that failed) or from `Error::exit_code` (in `main`).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::args::{Cli, Command, CompareFormat, Format, Internal, ReproduceFormat};
use super::output;
use pqbench::compare::CompareReport;
use pqbench::engine::Freshness;
use pqbench::error::{exit, ConfigError, Error};
use pqbench::export::{self, csv::Csv, html::Html, json::Json, markdown::Markdown, text, Exporter};
use pqbench::kat::manifest::Mode;
use pqbench::pipeline::{self, RunOptions, StatusReport};
use pqbench::plan::Project;

pub fn dispatch(cli: &Cli) -> Result<i32, Error> {
    match &cli.command {
        Command::Run {
            campaign,
            jobs,
            remeasure,
            cpu,
            cpus,
            system,
            detach,
            local_shard,
            deferred_only,
            deferred_cpu,
            format,
        } => {
            let plan = pipeline::resolve_for(&project(cli)?, campaign, system.as_deref())?;
            let local_shard = match local_shard {
                Some(f) => Some(read_list(&in_project(cli, f))?),
                None => None,
            };
            let opts = RunOptions {
                quiet: cli.quiet,
                remeasure: *remeasure,
                jobs: *jobs,
                cpus: cpus.clone().or_else(|| cpu.map(|c| vec![c])),
                local_shard,
                detach: *detach,
                deferred_only: *deferred_only,
                deferred_cpu: *deferred_cpu,
            };
            let summary = pqbench::executor::run_campaign(&plan, &opts)?;
            output::report(*format, &summary, |s| s.report())?;
            Ok(summary.exit_code())
        }
        Command::Host { cpu, format } => host(*cpu, *format),
        Command::Plan {
            campaign,
            system,
            nodes: Some(nodes),
            cores: Some(cores),
            format,
        } => {
            let plan = pipeline::resolve_for(&project(cli)?, campaign, system.as_deref())?;
            let default = match &plan.system_spec.executor {
                pqbench::plan::system::Executor::Ssh(c) => c.default_cost_seconds,
                pqbench::plan::system::Executor::Slurm(c) => c.default_cost_seconds,
                pqbench::plan::system::Executor::Local => 60.0,
            };
            let (items, unknown) = pqbench::executor::shards::costed(&plan, default);
            let e = pqbench::executor::shards::estimate(&items, unknown, default, *nodes, *cores);
            output::report(*format, &e, |e| format!("{e}\n"))?;
            Ok(exit::OK)
        }
        Command::Plan {
            campaign,
            system,
            format,
            ..
        } => freshness(cli, campaign, system.as_deref(), *format, false),
        Command::Status {
            campaign,
            system,
            format,
        } => freshness(cli, campaign, system.as_deref(), *format, true),
        Command::Merge {
            campaign,
            dir,
            format,
        } => {
            let plan = pipeline::resolve(&project(cli)?, campaign)?;
            let report = pqbench::merge::merge(&plan, &in_project(cli, dir))?;
            output::report(*format, &report, |r| r.to_string())?;
            Ok(exit::OK)
        }
        Command::Bless {
            campaign,
            system,
            mode,
            force,
        } => {
            let plan = pipeline::resolve_for(&project(cli)?, campaign, system.as_deref())?;
            let mode = match mode.as_str() {
                "nolen" => Mode::Nolen,
                "exact" => Mode::Exact,
                _ => Mode::Strict,
            };
            let lines = pqbench::bless::bless(&plan, mode, *force)?;
            output::text(&lines.iter().map(|l| format!("{l}\n")).collect::<String>())?;
            Ok(exit::OK)
        }
        Command::Render { campaign } => {
            let plan = pipeline::resolve(&project(cli)?, campaign)?;
            let r = pqbench::render::render_campaign(&plan)?;
            output::text(&format!(
                "{} pages ({} changed) in {}\n",
                r.files,
                r.written,
                plan.display_path(&r.site)
            ))?;
            Ok(exit::OK)
        }
        Command::Publish {
            campaign,
            system,
            dir,
            with_libraries,
        } => {
            let plan = pipeline::resolve(&project(cli)?, campaign)?;
            pqbench::publish::publish(&plan, system.as_deref(), dir, *with_libraries)?;
            output::text(&format!("published to {}\n", dir.display()))?;
            Ok(exit::OK)
        }
        Command::Check { dir, format } => {
            let dir = in_project(cli, dir);
            if !dir.exists() {
                let e = std::io::Error::from(std::io::ErrorKind::NotFound);
                return Err(Error::input(
                    anyhow::Error::new(e).context(format!("reading {}", dir.display())),
                ));
            }
            let report = pqbench::check::check_dataset(&dir).map_err(Error::input)?;
            output::report(*format, &report, |r| format!("{r}\n"))?;
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
            format,
        } => {
            let opts = pqbench::reproduce::ReproduceOptions {
                allow_changed: *allow_changed,
                quiet: cli.quiet,
                jobs: *jobs,
                threshold: *threshold,
            };
            reproduce(&project(cli)?, run, &opts, *format)
        }
        Command::Compare {
            run_a,
            run_b,
            threshold,
            format,
            output,
            fail_on_regression,
        } => {
            let report = pqbench::compare::compare(&project(cli)?.root, run_a, run_b, *threshold)?;
            let exporter: &dyn Exporter<CompareReport> = match format {
                CompareFormat::Md => &Markdown,
                CompareFormat::Html => &Html,
                CompareFormat::Csv => &Csv,
                CompareFormat::Json => &Json,
            };
            let bytes = exporter.export(&report)?;
            match output {
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
            Ok(report.exit_code(*fail_on_regression))
        }
        Command::BenchRender { instances } => {
            let (took, r) = pqbench::render::bench::run(*instances)?;
            output::text(&format!(
                "rendered {} files for {instances} instances in {:.3} s\n",
                r.files,
                took.as_secs_f64()
            ))?;
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
            let lines = pqbench::import::import(&cli.root, &opts)?.lines;
            output::text(&lines.iter().map(|l| format!("{l}\n")).collect::<String>())?;
            Ok(exit::OK)
        }
        Command::Validate { toml } => {
            let project = project(cli)?;
            // A relative path is taken from the project directory, once:
            // `validate` joins it to the (canonical) project root.
            let report = pqbench::validate::validate(&project.root, toml)?;
            output::text(&report.to_string())?;
            Ok(report.exit_code())
        }
        Command::Internal {
            step: Internal::Assemble { list, blobs, into },
        } => {
            let n = pqbench::executor::bundle::assemble(list, blobs, into)?;
            output::text(&format!("{n} files in {}\n", into.display()))?;
            Ok(exit::OK)
        }
        Command::Completions { shell } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            let mut buf = Vec::new();
            clap_complete::generate(*shell, &mut cmd, "pqbench", &mut buf);
            output::text(&String::from_utf8_lossy(&buf))?;
            Ok(exit::OK)
        }
    }
}

/// `reproduce`: in text, the run and its changed inputs are printed before
/// the campaign runs (its progress follows on stderr), the outcome after;
/// Markdown and JSON are one document at the end.
fn reproduce(
    project: &Project,
    run: &str,
    opts: &pqbench::reproduce::ReproduceOptions,
    format: ReproduceFormat,
) -> Result<i32, Error> {
    let prepared = pqbench::reproduce::prepare(project, run)?;
    if format == ReproduceFormat::Text {
        output::text(&text::start(&prepared.start()))?;
    }
    let r = pqbench::reproduce::reproduce(&prepared, opts, export::write_reproduction)?;
    match format {
        ReproduceFormat::Text => output::text(&text::outcome(&r))?,
        ReproduceFormat::Md => output::text(&utf8(Markdown.export(&r)?)?)?,
        ReproduceFormat::Json => output::text(&utf8(Json.export(&r)?)?)?,
    }
    Ok(r.exit_code)
}

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
fn project(cli: &Cli) -> Result<Project, Error> {
    Project::new(&cli.root).map_err(|e| {
        ConfigError::new(format!("project directory {}: {e}", cli.root.display()))
            .help("give the directory holding campaigns/ and algorithms/ with -C DIR")
            .into()
    })
}

/// A path given on the command line: relative paths are relative to the
/// project directory (`-C`), like every path pqbench reads.
fn in_project(cli: &Cli, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        cli.root.join(path)
    }
}

#[derive(Serialize)]
struct HostReport {
    cpu: usize,
    ready: bool,
    check: pqbench::host::HostCheck,
    /// The isolation layers submission code runs under on this machine.
    isolation: pqbench::sandbox::LayerReport,
}

fn host(cpu: Option<usize>, format: Format) -> Result<i32, Error> {
    let cpu = cpu.unwrap_or_else(|| pqbench::host::allowed_cpus().last().copied().unwrap_or(0));
    let check = pqbench::host::check(cpu);
    let report = HostReport {
        cpu,
        ready: check.problems.is_empty(),
        check,
        isolation: pqbench::sandbox::layers(),
    };
    output::report(format, &report, |r| {
        let mut s: String = r
            .isolation
            .layers
            .iter()
            .map(|l| {
                let state = if l.active { "active" } else { "missing" };
                format!("isolation: {} {state}: {}\n", l.name, l.detail)
            })
            .collect();
        if r.ready {
            s.push_str(&format!("host ready (CPU {})\n", r.cpu));
        } else {
            for p in &r.check.problems {
                s.push_str(&format!("CPU {}: {p}\n", r.cpu));
            }
        }
        s
    })?;
    Ok(if report.ready {
        exit::OK
    } else {
        exit::ITEM_FAILURES
    })
}

/// `plan` (every row) and `status` (stale rows only).
fn freshness(
    cli: &Cli,
    campaign: &str,
    system: Option<&str>,
    format: Format,
    only_stale: bool,
) -> Result<i32, Error> {
    let plan = pipeline::resolve_for(&project(cli)?, campaign, system)?;
    let mut report = pqbench::executor::states(&plan)?;
    if only_stale {
        report
            .rows
            .retain(|r| matches!(r.freshness, Freshness::Stale(_)));
    }
    output::report(format, &report, |r| freshness_text(r, only_stale))?;
    Ok(exit::OK)
}

fn freshness_text(r: &StatusReport, only_stale: bool) -> String {
    let mut s = String::new();
    for row in &r.rows {
        let text = match &row.freshness {
            Freshness::Fresh => "fresh".to_string(),
            Freshness::NotApplicable => "not applicable".to_string(),
            Freshness::Stale(why) => format!("stale: {}", why.join("; ")),
        };
        s.push_str(&format!("{:<32} {:<12} {text}\n", row.instance, row.stage));
    }
    if only_stale && r.stale == 0 {
        s.push_str("everything is fresh\n");
    }
    s
}
