//! `pqbench bench-tree`: a whole public tree imported unedited and run
//! (build and KAT) in a fresh project, with a table per instance (the
//! acceptance command for real trees: prints figures; its exit code says
//! whether every instance built on the system passed).

use super::in_project;
use crate::cli::global::Global;
use crate::cli::output;
use pqbench::error::{exit, ConfigError, Error};
use pqbench::pipeline::bench_engine::Timing;
use pqbench::pipeline::bench_tree::{self, TreeBench, TreeBenchOptions};

#[derive(clap::Args)]
pub struct Args {
    /// The tree's root (PQClean: the folder holding `crypto_kem/`,
    /// `crypto_sign/` and `common/`).
    tree: std::path::PathBuf,
    /// The system to run on (`campaigns/systems.toml` of the project, when
    /// not `local`).
    #[arg(long, default_value = "local")]
    system: String,
    /// Leave out algorithm ids containing this (repeatable; e.g.
    /// `mceliece`, whose KATs take long).
    #[arg(long, value_name = "PART")]
    exclude: Vec<String>,
    /// Make the project in DIR (which must not exist; relative to the
    /// project directory) and keep it.
    #[arg(long, value_name = "DIR")]
    keep: Option<std::path::PathBuf>,
    /// Run every default stage with modest timing (3 trials of 50 ms,
    /// 2 s budget an operation), not only build and KAT, and report each
    /// stage's wall time, the time stage against its budgets and estimate,
    /// and the operations' outcomes.
    #[arg(long)]
    measure: bool,
}

pub fn run(cli: &Global, a: &Args) -> Result<i32, Error> {
    let exe =
        std::env::current_exe().map_err(|e| anyhow::anyhow!("finding the pqbench binary: {e}"))?;
    let tree = a
        .tree
        .canonicalize()
        .map_err(|e| ConfigError::new(format!("{}: {e}", a.tree.display())))?;
    let systems = cli.root.join("campaigns").join("systems.toml");
    if a.system != "local" && !systems.is_file() {
        return Err(ConfigError::new(format!(
            "--system {}: {} does not exist",
            a.system,
            systems.display()
        ))
        .help("run bench-tree in a project that declares the system (the demo project does)")
        .into());
    }
    let temp;
    let work = match a.keep.as_deref().map(|d| in_project(cli, d)) {
        Some(dir) if dir.exists() => {
            return Err(
                ConfigError::new(format!("--keep {}: it exists", dir.display()))
                    .help("give a directory that does not exist yet; bench-tree makes it")
                    .into(),
            )
        }
        Some(dir) => dir,
        None => {
            temp = tempfile::Builder::new()
                .prefix("pqbench-bench-tree-")
                .tempdir()
                .map_err(|e| anyhow::anyhow!("making a temporary directory: {e}"))?;
            temp.path().to_path_buf()
        }
    };
    let opts = TreeBenchOptions {
        tree,
        system: a.system.clone(),
        exclude: a.exclude.clone(),
        systems_file: systems.is_file().then_some(systems),
        measure: a.measure,
    };
    let note = |s: &str| {
        if !cli.quiet {
            eprintln!("bench-tree: {s}");
        }
    };
    let b = bench_tree::run(&exe, &work, &opts, &note)?;
    output::text(&report(&b, &opts))?;
    Ok(if b.failures() == 0 {
        exit::OK
    } else {
        exit::ITEM_FAILURES
    })
}

fn report(b: &TreeBench, opts: &TreeBenchOptions) -> String {
    let mut s = format!(
        "bench-tree: {} on {}; project {}\n\n",
        opts.tree.display(),
        opts.system,
        b.project.display()
    );
    s += &table(b);
    s += &totals(b);
    let line = |what: &str, t: &Timing| {
        format!(
            "  {what:<34} {:>8.1} s  (user {:.1} s, system {:.1} s)\n",
            t.wall, t.user, t.system
        )
    };
    s += "\nwall time\n";
    s += &line(
        &format!("import + validate ({} drafts)", b.drafted.len()),
        &b.import,
    );
    let stages = if b.measured.is_some() {
        "every default stage"
    } else {
        "build + kat"
    };
    s += &line(
        &format!("run, {stages} ({} instances)", b.rows.len()),
        &b.run,
    );
    s += &line("warm run, nothing changed (median)", &median(&b.warm_run));
    s += &line("status (median)", &median(&b.warm_status));
    if let Some(m) = &b.measured {
        s += &measured(m);
    }
    s
}

/// Each stage's wall time, the time stage against its budgets and its
/// first estimate, and the operations by outcome.
fn measured(m: &pqbench::pipeline::bench_tree_measure::Measured) -> String {
    let mut s = String::from("\nstages (wall time; the plan's estimate where it made one)\n");
    for st in &m.stages {
        let est = st
            .estimated
            .map_or(String::new(), |e| format!("  (estimated {e:.0} s)"));
        s += &format!("  {:<14} {:>8.1} s{est}\n", st.stage, st.seconds);
    }
    if let Some(t) = m.stage("time") {
        let budgets = m.budgets();
        s += &format!(
            "\ntime stage: {:.0} s against {:.0} s of budgets ({} operations): {:.2}×\n",
            t.seconds,
            budgets,
            m.operations.values().sum::<usize>(),
            t.seconds / budgets.max(1e-9)
        );
        if let (Some(first), Some(e)) = (&m.first_estimate, t.estimated) {
            s += &format!(
                "first estimate: about {first} ({e:.0} s); took {:.0} s: {:+.0} %\n",
                t.seconds,
                100.0 * (t.seconds - e) / e.max(1e-9)
            );
        }
        if let Some(eta) = m.minute_eta {
            s += &format!(
                "time left given after the first minute (at {:.0} s): {:.0} s in all; took {:.0} s: {:+.0} %\n",
                eta.at,
                eta.total,
                t.seconds,
                100.0 * (t.seconds - eta.total) / eta.total.max(1e-9)
            );
        }
    }
    let outcomes: Vec<String> = m
        .operations
        .iter()
        .map(|(k, n)| format!("{n} {k}"))
        .collect();
    s += &format!("operations: {}\n", outcomes.join(", "));
    s
}

/// The run of median wall time.
fn median(runs: &[Timing]) -> Timing {
    let mut v = runs.to_vec();
    v.sort_by(|a, b| a.wall.total_cmp(&b.wall));
    v.get(v.len() / 2).cloned().unwrap_or_default()
}

fn table(b: &TreeBench) -> String {
    let name = |r: &bench_tree::TreeRow| format!("{}/{}", r.algorithm, r.label);
    let w = b
        .rows
        .iter()
        .map(|r| name(r).len())
        .max()
        .unwrap_or(8)
        .max(8);
    let mut s = format!(
        "  {:<w$}  {:<10}  {:<10}  detail\n",
        "instance", "KAT", "reference"
    );
    for r in &b.rows {
        let detail = r
            .detail
            .as_deref()
            .unwrap_or("")
            .lines()
            .next()
            .unwrap_or("");
        let detail: String = detail.chars().take(90).collect();
        s += &format!(
            "  {:<w$}  {:<10}  {:<10}  {detail}\n",
            name(r),
            r.status.as_str(),
            r.reference.as_deref().unwrap_or("-"),
        );
    }
    s
}

fn totals(b: &TreeBench) -> String {
    let mut counts = std::collections::BTreeMap::new();
    for r in &b.rows {
        *counts.entry(r.status.as_str()).or_insert(0usize) += 1;
    }
    let counts: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
    let mut s = format!(
        "\n{} instances of {} algorithms: {}\n",
        b.rows.len(),
        b.drafted.len() - b.excluded.len(),
        counts.join(", ")
    );
    if !b.excluded.is_empty() {
        s += &format!("left out (--exclude): {}\n", b.excluded.join(", "));
    }
    if b.draft_problems.is_empty() {
        s += &format!(
            "every one of the {} drafts: 0 TODO lines, validates\n",
            b.drafted.len()
        );
    } else {
        s += "drafts that need a hand:\n";
        for p in &b.draft_problems {
            s += &format!("  {p}\n");
        }
    }
    s
}
