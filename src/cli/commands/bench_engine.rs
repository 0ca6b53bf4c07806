//! `pqbench bench-engine`: the engine's own cost on a synthetic project of
//! N instances, beside bare gcc (a benchmark: prints figures, asserts
//! nothing).

use super::{in_project, project};
use crate::cli::global::Global;
use crate::cli::output;
use pqbench::error::{exit, ConfigError, Error};
use pqbench::pipeline::bench_engine::{self, EngineBench, Timing};

#[derive(clap::Args)]
pub struct Args {
    /// Instances of the synthetic project (copies of the demo's sign-92
    /// parameter sets, each with a distinct define).
    #[arg(long, default_value_t = 500)]
    instances: usize,
    /// Warm re-runs and `status` calls (the median is printed).
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// Make the project in DIR (which must not exist; relative to the
    /// project directory) and keep it.
    #[arg(long, value_name = "DIR")]
    keep: Option<std::path::PathBuf>,
}

pub fn run(cli: &Global, a: &Args) -> Result<i32, Error> {
    let source = project(cli)?;
    let exe =
        std::env::current_exe().map_err(|e| anyhow::anyhow!("finding the pqbench binary: {e}"))?;
    let temp;
    let keep = a.keep.as_deref().map(|d| in_project(cli, d));
    let work = match &keep {
        Some(dir) if dir.exists() => {
            return Err(
                ConfigError::new(format!("--keep {}: it exists", dir.display()))
                    .help("give a directory that does not exist yet; bench-engine makes it")
                    .into(),
            )
        }
        Some(dir) => dir.clone(),
        None => {
            temp = tempfile::Builder::new()
                .prefix("pqbench-bench-engine-")
                .tempdir()
                .map_err(|e| anyhow::anyhow!("making a temporary directory: {e}"))?;
            temp.path().to_path_buf()
        }
    };
    let note = |s: &str| {
        if !cli.quiet {
            eprintln!("bench-engine: {s}");
        }
    };
    let b = bench_engine::run(&source, &exe, &work, a.instances, a.repeats, &note)?;
    output::text(&report(&b))?;
    Ok(exit::OK)
}

fn report(b: &EngineBench) -> String {
    let line = |what: &str, t: &Timing, extra: &str| {
        format!(
            "  {what:<28} {:>8.2} s  (user {:.1} s, system {:.1} s){extra}\n",
            t.wall, t.user, t.system
        )
    };
    let ratio = |t: &Timing| t.wall / b.bare_gcc.wall.max(1e-9);
    let median = |ts: &[Timing]| {
        let m = EngineBench::median_wall(ts);
        ts.iter().find(|t| t.wall == m).copied().unwrap_or_default()
    };
    let mut s = format!(
        "bench-engine: {} instances (demo sign-92 copies), {} jobs; project {}\n",
        b.instances,
        b.jobs,
        b.project.display()
    );
    s += &line("bare gcc (same flags)", &b.bare_gcc, "");
    s += &line(
        "cold build",
        &b.cold_build,
        &format!("  {:.2}× bare gcc (goal ≤ 1.3×)", ratio(&b.cold_build)),
    );
    s += &line(
        "cold build + KAT",
        &b.cold_build_kat,
        &format!("  {:.2}× bare gcc", ratio(&b.cold_build_kat)),
    );
    s += &line(
        &format!("warm re-run (median of {})", b.warm.len()),
        &median(&b.warm),
        "  (goal ≤ 1.0 s)",
    );
    s += &line(
        &format!("status (median of {})", b.status.len()),
        &median(&b.status),
        "  (goal ≤ 0.5 s)",
    );
    s
}
