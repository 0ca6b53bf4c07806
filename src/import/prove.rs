//! The proof of a draft made from an observed build: pqbench builds the
//! drafted sets with its own flags and adapter and runs its KAT, in a
//! scratch project holding only the draft, its sources and the references
//! the tree's own generators wrote at import. A set is `identical` when
//! pqbench's file equals the generator's; else the first difference and
//! its likely cause are reported, and the draft gets a TODO line there.
//! A tree with checkers and no generator has pqbench's file judged by the
//! set's checker (`checker.rs`); the file it accepts becomes the reference.

use std::path::Path;

use super::checker::{self, Checker, Judgement};
use crate::error::Error;
use crate::fsutil;
use crate::pipeline::RunOptions;
use crate::plan::Project;
use crate::records::kat::KatStatus;

/// What the proof found for one set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// pqbench's KAT file equals the tree's own generator's.
    Identical,
    /// The tree's own checker (this program) accepts pqbench's KAT file
    /// and rejects a changed copy; the file is now the set's reference.
    Checked(String),
    /// Not proven, and why.
    Differs(String),
}

/// What the proof found, per set label.
#[derive(Debug, Clone, Default)]
pub struct Proof {
    pub sets: Vec<(String, Verdict)>,
}

impl Proof {
    pub fn differing(&self) -> usize {
        self.sets
            .iter()
            .filter(|(_, v)| matches!(v, Verdict::Differs(_)))
            .count()
    }

    /// One line per set, for the import's report.
    pub fn lines(&self) -> Vec<String> {
        self.sets
            .iter()
            .map(|(label, v)| match v {
                Verdict::Identical => format!("proof {label}: identical to the tree's own generator"),
                Verdict::Checked(program) => format!(
                    "proof {label}: the tree's own KAT checker {program} accepts pqbench's KAT file (and rejects a changed copy)"
                ),
                // The file reproduced; what failed is the library's use
                // across processes.
                Verdict::Differs(why) if why.starts_with("KAT CROSSFAIL") => format!(
                    "proof {label}: the KAT file is identical to the tree's own generator's, but {why}"
                ),
                Verdict::Differs(why) => format!("proof {label}: differs: {why}"),
            })
            .collect()
    }
}

const CAMPAIGN: &str = "prove";

/// Builds and runs the KAT of algorithm `id` of the project at `root` in a
/// scratch copy, and compares every set with its reference; a set with a
/// checker instead has pqbench's file judged by it, and an accepted file
/// becomes the set's reference.
pub fn prove(root: &Path, id: &str, checkers: &[Checker]) -> Result<Proof, Error> {
    let scratch = tempfile::Builder::new()
        .prefix("pqbench-prove-")
        .tempdir()
        .map_err(|e| anyhow::anyhow!("creating a scratch project: {e}"))?;
    let work = scratch.path();
    let alg = root.join("algorithms");
    fsutil::copy_atomic(
        &alg.join(format!("{id}.toml")),
        &work.join("algorithms").join(format!("{id}.toml")),
    )?;
    // The draft's source roots (a tree imported from under `algorithms/`
    // keeps its folder), shared components and references.
    let draft: crate::config::algorithm::RawAlgorithm =
        crate::config::load(&alg.join(format!("{id}.toml")))?.value;
    let mut dirs = vec![alg.join("components"), root.join("kat").join(id)];
    for imp in &draft.implementations {
        let top = imp.root.get_ref().split('/').next().unwrap_or_default();
        if !top.is_empty() && top != ".." && !dirs.contains(&alg.join(top)) {
            dirs.push(alg.join(top));
        }
    }
    for dir in dirs {
        copy_dir(&dir, &work.join(dir.strip_prefix(root).unwrap_or(&dir)))?;
    }
    fsutil::write_atomic(
        &work.join("campaigns").join(format!("{CAMPAIGN}.toml")),
        format!(
            "algorithms = [\"{id}\"]\nstages = [\"build\", \"kat\"]\n\n[kat]\ntimeout-seconds = 3600\n\n[host]\nrequire-fixed = false\n"
        )
        .as_bytes(),
    )?;
    let project = Project::new(work).map_err(|e| anyhow::anyhow!("{}: {e}", work.display()))?;
    let plan = crate::pipeline::resolve_for(&project, CAMPAIGN, None)?;
    let opts = RunOptions {
        quiet: true,
        ..RunOptions::default()
    };
    let summary = crate::executor::run_campaign(&plan, &opts)?;
    // Identical only on a recorded PASS: a set that failed, was not built
    // here or has no record is not proven.
    let dataset = work
        .join("output")
        .join(CAMPAIGN)
        .join(&plan.system)
        .join(crate::records::layout::BUILD);
    let text = std::fs::read_to_string(&dataset)
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", dataset.display()))?;
    let build: crate::records::BuildJson = serde_json::from_str(&text)
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", dataset.display()))?;
    let kat_dir = dataset
        .parent()
        .map(|d| d.join(crate::records::layout::kat_folder(id)))
        .unwrap_or_default();
    let mut proof = Proof::default();
    let mut checked = Vec::new();
    for inst in plan.instances.iter().filter(|i| i.algorithm == id) {
        let name = format!("{id}/{}", inst.label);
        let record = build
            .instances
            .iter()
            .find(|r| r.algorithm == id && r.label == inst.label);
        let checker = checkers.iter().find(|c| c.label == inst.label);
        let verdict = match (record, checker) {
            (Some(r), Some(c)) if matches!(r.kat_status, KatStatus::Pass | KatStatus::Nokat) => {
                let file = kat_dir.join(format!("{}.rsp", inst.label));
                let rsp = std::fs::read(&file)
                    .map_err(|e| anyhow::anyhow!("reading {}: {e}", file.display()))?;
                match checker::judge(c, &rsp)? {
                    Judgement::Accepted { file } => {
                        // A reference the project already had (and the
                        // file matched) keeps its provenance.
                        if r.kat_status == KatStatus::Nokat {
                            checked.push((inst.label.clone(), file, rsp));
                        }
                        Verdict::Checked(c.program.clone())
                    }
                    Judgement::Rejected(why) => Verdict::Differs(why),
                }
            }
            (Some(r), _) if r.kat_status == KatStatus::Pass => Verdict::Identical,
            (Some(r), _) => Verdict::Differs(
                format!(
                    "KAT {} {}",
                    r.kat_status,
                    r.kat_detail.clone().unwrap_or_default()
                )
                .trim()
                .to_string(),
            ),
            (None, _) => Verdict::Differs(format!(
                "no build record for {name} ({} stage errors)",
                summary.errors.len()
            )),
        };
        proof.sets.push((inst.label.clone(), verdict));
    }
    let command = checkers
        .first()
        .map(|c| c.command.as_str())
        .unwrap_or_default();
    super::record_checked(root, id, draft.api, &checked, command)?;
    Ok(proof)
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), Error> {
    if !from.is_dir() {
        return Ok(());
    }
    let files = fsutil::foreign::regular_files(from, fsutil::foreign::TREE, &|_| false)?;
    for (rel, src) in files {
        fsutil::copy_atomic(&src, &to.join(rel))?;
    }
    Ok(())
}

/// Writes a TODO line above the label of each set that differs, so the
/// draft itself says it is not proven.
pub fn mark_unproven(toml: &Path, proof: &Proof) -> Result<(), Error> {
    if proof.differing() == 0 {
        return Ok(());
    }
    let text =
        std::fs::read_to_string(toml).map_err(|e| anyhow::anyhow!("{}: {e}", toml.display()))?;
    let mut out = String::new();
    for line in text.lines() {
        let label = line
            .strip_prefix("label = ")
            .and_then(|v| toml::from_str::<toml::Table>(&format!("v = {v}")).ok())
            .and_then(|t| t.get("v").and_then(|v| v.as_str()).map(String::from));
        let why = label
            .and_then(|l| proof.sets.iter().find(|(s, _)| *s == l))
            .and_then(|(_, v)| match v {
                Verdict::Differs(why) => Some(why),
                _ => None,
            });
        if let Some(why) = why {
            out.push_str(&format!(
                "# TODO: pqbench's KAT of this set is not proven against the tree's own build: {}\n",
                super::emit::one_line(why)
            ));
        }
        out.push_str(line);
        out.push('\n');
    }
    fsutil::write_atomic(toml, out.as_bytes())?;
    Ok(())
}
