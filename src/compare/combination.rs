//! `pqbench compare <run> --combination A --against B`: two `[matrix]`
//! combinations of one run, operation by operation (the same instances,
//! built by another compiler or with other flags).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::{choose_threshold, compare_runs, CompareReport, RunData};
use crate::error::Error;
use crate::records::lock;

/// The run directory of combination `name` of the campaign run `run_dir`:
/// the run itself for the primary, else the combination's run its lock
/// names.
fn combination_run(run_dir: &Path, name: &str) -> Result<PathBuf> {
    let l = lock::load(run_dir)?;
    // The run's own copy of `campaign.json` names its combinations.
    let campaign: crate::records::campaign::CampaignRecord =
        crate::fsutil::read_json(&run_dir.join(crate::records::layout::CAMPAIGN))?;
    let primary = campaign
        .matrix
        .iter()
        .find(|c| c.primary)
        .map(|c| c.name.clone());
    if primary.as_deref() == Some(name) {
        return Ok(run_dir.to_path_buf());
    }
    let Some(r) = l.matrix.iter().find(|r| r.combination == name) else {
        let mut known: Vec<String> = primary.into_iter().collect();
        known.extend(l.matrix.iter().map(|r| r.combination.clone()));
        if known.is_empty() {
            bail!(
                "run {} has no [matrix]: it has no combinations to compare",
                l.run_id
            );
        }
        bail!(
            "run {} has no combination `{name}`; it has {}",
            l.run_id,
            known.join(", ")
        );
    };
    crate::render::dataset::safe_component(&r.combination)?;
    crate::render::dataset::safe_component(&r.run_id)?;
    let dataset = run_dir
        .parent()
        .and_then(Path::parent)
        .context("the run directory has no dataset above it")?;
    Ok(dataset
        .join(crate::records::layout::MATRIX)
        .join(&r.combination)
        .join(crate::records::layout::RUNS)
        .join(&r.run_id))
}

/// Compares combination `a` against combination `b` of run `run`: `b` is
/// the baseline (the first run of a comparison), so a ratio below 1 and
/// `faster` mean `a` is faster.
pub fn compare_combinations(
    root: &Path,
    run: &str,
    a: &str,
    b: &str,
    threshold: Option<f64>,
) -> Result<CompareReport, Error> {
    super::check_threshold(threshold)?;
    let load = || -> Result<(RunData, RunData)> {
        let dir = lock::find_run(root, run)?;
        let (da, db) = (combination_run(&dir, a)?, combination_run(&dir, b)?);
        let ra = RunData::load(&da).with_context(|| format!("combination {a}"))?;
        let rb = RunData::load(&db).with_context(|| format!("combination {b}"))?;
        Ok((ra, rb))
    };
    let (ra, rb) = load().map_err(Error::input)?;
    // The baseline first, as in `compare <runA> <runB>`.
    Ok(compare_runs(
        &rb,
        &ra,
        choose_threshold(threshold, &rb, &ra),
    ))
}
