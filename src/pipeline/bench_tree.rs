//! `bench-tree`: a public tree brought in as a new user brings it, with
//! nothing edited: `pqbench import` of the whole tree into a fresh
//! project (which validates every draft), then one campaign over every
//! drafted algorithm, stages `build` and `kat`, on one system. It reports
//! each instance's KAT verdict against the reference the tree publishes
//! (PQClean's `META.yml` digests) and the wall time of each step. The
//! acceptance command for real trees; like the benchmarks it runs the
//! pqbench binary in child processes, and its figures are printed, not
//! asserted.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use anyhow::{bail, Context, Result};

use super::timing::{timed, Timing};
use crate::records::kat::KatStatus;
use crate::records::{layout, BuildJson};

/// The campaign the command writes and runs.
const CAMPAIGN: &str = "tree";

/// What to run: the tree, the system, and the algorithm ids (or parts of
/// them) to leave out of the campaign.
#[derive(Debug, Clone)]
pub struct TreeBenchOptions {
    pub tree: PathBuf,
    pub system: String,
    pub exclude: Vec<String>,
    /// `campaigns/systems.toml` to copy into the project (needed for any
    /// system other than `local`).
    pub systems_file: Option<PathBuf>,
    /// Every default stage with `bench_tree_measure::TIMING`, not only
    /// build and KAT.
    pub measure: bool,
}

/// One instance of the run.
#[derive(Debug, Clone)]
pub struct TreeRow {
    pub algorithm: String,
    pub label: String,
    pub implementation: String,
    pub status: KatStatus,
    /// `published`, `submitted`, ...: what the verdict compared against.
    pub reference: Option<String>,
    pub detail: Option<String>,
}

/// How many warm `run`s and `status`es are timed (their median is the
/// figure).
const WARM: usize = 3;

/// The figures of one run.
#[derive(Debug, Clone)]
pub struct TreeBench {
    /// Every algorithm file import drafted.
    pub drafted: Vec<String>,
    /// Drafted but left out of the campaign.
    pub excluded: Vec<String>,
    /// import's lines about drafts that do not validate or have TODO lines.
    pub draft_problems: Vec<String>,
    pub import: Timing,
    pub run: Timing,
    /// `run` again with nothing changed, and `status`, each a few times:
    /// what a user waits for on a real tree once it has run.
    pub warm_run: Vec<Timing>,
    pub warm_status: Vec<Timing>,
    /// The run's exit code (1 when an instance failed).
    pub run_exit: Option<i32>,
    pub rows: Vec<TreeRow>,
    pub project: PathBuf,
    /// With `measure`: the stages' times and the operations' outcomes.
    pub measured: Option<super::bench_tree_measure::Measured>,
}

impl TreeBench {
    /// Instances whose verdict is neither PASS nor SKIPPED.
    pub fn failures(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| !matches!(r.status, KatStatus::Pass | KatStatus::Skipped))
            .count()
    }
}

/// Runs the acceptance with the pqbench binary `exe` in `work` (a fresh
/// directory).
pub fn run(
    exe: &Path,
    work: &Path,
    opts: &TreeBenchOptions,
    note: &dyn Fn(&str),
) -> Result<TreeBench> {
    std::fs::create_dir_all(work.join("campaigns"))?;
    if let Some(systems) = &opts.systems_file {
        std::fs::copy(systems, work.join("campaigns").join("systems.toml"))
            .with_context(|| format!("copying {}", systems.display()))?;
    }
    note(&format!("import {}", opts.tree.display()));
    let tree = opts.tree.to_string_lossy().into_owned();
    let (import, out) = pqbench(exe, work, &["import", &tree])?;
    if !out.status.success() {
        bail!(
            "pqbench import {tree} failed ({}): {}",
            out.status,
            tail(&out)
        );
    }
    let draft_problems = draft_problems(&String::from_utf8_lossy(&out.stdout));
    let drafted = drafted_ids(work)?;
    let (ids, excluded): (Vec<String>, Vec<String>) = drafted
        .iter()
        .cloned()
        .partition(|id| !opts.exclude.iter().any(|x| id.contains(x.as_str())));
    write_campaign(work, &ids, opts, &tree)?;
    note(&format!(
        "run: {} algorithms on {} ({})",
        ids.len(),
        opts.system,
        if opts.measure {
            "every default stage"
        } else {
            "stages build, kat"
        }
    ));
    let (run, out) = pqbench(exe, work, &["run", CAMPAIGN, "--system", &opts.system])?;
    let dataset = work
        .join("output")
        .join(CAMPAIGN)
        .join(&opts.system)
        .join(layout::BUILD);
    let text = std::fs::read_to_string(&dataset).with_context(|| {
        format!(
            "the run ({}) wrote no {}: {}",
            out.status,
            dataset.display(),
            tail(&out)
        )
    })?;
    let build: BuildJson =
        serde_json::from_str(&text).with_context(|| format!("reading {}", dataset.display()))?;
    let measured = match opts.measure {
        true => Some(super::bench_tree_measure::read(
            &String::from_utf8_lossy(&out.stderr),
            dataset.parent().unwrap_or(work),
        )?),
        false => None,
    };
    note(&format!(
        "warm: {WARM} runs and {WARM} statuses, nothing changed"
    ));
    let mut warm_run = Vec::new();
    let mut warm_status = Vec::new();
    for _ in 0..WARM {
        warm_run.push(pqbench(exe, work, &["run", CAMPAIGN, "--system", &opts.system])?.0);
        warm_status.push(pqbench(exe, work, &["status", CAMPAIGN, "--system", &opts.system])?.0);
    }
    Ok(TreeBench {
        warm_run,
        warm_status,
        drafted,
        excluded,
        draft_problems,
        import,
        run,
        run_exit: out.status.code(),
        rows: build.instances.into_iter().map(row).collect(),
        project: work.to_path_buf(),
        measured,
    })
}

fn row(r: crate::records::BuildRecord) -> TreeRow {
    TreeRow {
        algorithm: r.algorithm,
        label: r.label,
        implementation: r.implementation,
        status: r.kat_status,
        reference: r.kat_reference,
        detail: r.kat_detail,
    }
}

/// `pqbench -C work <args>`, timed, with its output.
fn pqbench(exe: &Path, work: &Path, args: &[&str]) -> Result<(Timing, Output)> {
    let mut output = None;
    let t = timed(|| {
        output = Some(
            Command::new(exe)
                .arg("-C")
                .arg(work)
                .args(args)
                .output()
                .with_context(|| format!("running {}", exe.display()))?,
        );
        Ok(())
    })?;
    Ok((t, output.context("the child left no output")?))
}

/// The last lines of a child's standard error.
fn tail(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    lines[lines.len().saturating_sub(12)..].join("\n")
}

/// import's report lines that say a draft needs a hand: TODO lines, or a
/// validation problem.
fn draft_problems(report: &str) -> Vec<String> {
    report
        .lines()
        .filter(|l| {
            (l.contains("TODO line") && !l.contains("(0 TODO lines)"))
                || (l.starts_with("validate ") && !l.contains(": OK ("))
        })
        .map(str::to_string)
        .collect()
}

/// The algorithm ids import wrote (`algorithms/<id>.toml`), sorted.
fn drafted_ids(work: &Path) -> Result<Vec<String>> {
    let dir = work.join("algorithms");
    let mut ids: Vec<String> = std::fs::read_dir(&dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            name.strip_suffix(".toml").map(str::to_string)
        })
        .collect();
    ids.sort();
    Ok(ids)
}

fn write_campaign(work: &Path, ids: &[String], opts: &TreeBenchOptions, tree: &str) -> Result<()> {
    if ids.is_empty() {
        bail!("import drafted no algorithm from {tree} (or every one was excluded)");
    }
    let list: Vec<String> = ids.iter().map(|i| format!("{i:?}")).collect();
    let (stages, timing) = match opts.measure {
        true => ("\"default\"", super::bench_tree_measure::TIMING),
        false => ("\"build\", \"kat\"", ""),
    };
    let text = format!(
        "description = {desc:?}\nsystems = [{system:?}]\nalgorithms = [{}]\n\
         stages = [{stages}]\n\n[host]\nrequire-fixed = false\n\n{timing}",
        list.join(", "),
        system = opts.system,
        desc = format!("bench-tree: {tree}, imported unedited"),
    );
    let file = work.join("campaigns").join(format!("{CAMPAIGN}.toml"));
    std::fs::write(&file, text).with_context(|| format!("writing {}", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_drafts_that_need_a_hand_are_reported() {
        let report = "wrote algorithms/a.toml (0 TODO lines)\n\
                      wrote algorithms/b.toml (2 TODO lines)\n\
                      validate algorithms/a.toml: OK (2 instances)\n\
                      validate algorithms/b.toml: 1 problem(s), the first: x\n";
        assert_eq!(
            draft_problems(report),
            [
                "wrote algorithms/b.toml (2 TODO lines)",
                "validate algorithms/b.toml: 1 problem(s), the first: x"
            ]
        );
    }
}
