//! `pqbench compare <run> --combination A --against B`: two `[matrix]`
//! combinations of one run, operation by operation (the same instances,
//! built by another compiler or with other flags).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::{choose_threshold, compare_runs, CompareReport, RunData};
use crate::error::Error;
use crate::records::lock;

/// The combinations of one campaign run, read once: the run's lock (the
/// further combinations' runs) and its own copy of `campaign.json` (which
/// one is the primary).
struct RunCombinations {
    run_dir: PathBuf,
    lock: lock::Lock,
    primary: Option<String>,
}

impl RunCombinations {
    fn load(run_dir: PathBuf) -> Result<RunCombinations> {
        let lock = lock::load(&run_dir)?;
        let campaign: crate::records::campaign::CampaignRecord =
            crate::fsutil::read_json(&run_dir.join(crate::records::layout::CAMPAIGN))?;
        let primary = campaign
            .matrix
            .iter()
            .find(|c| c.primary)
            .map(|c| c.name.clone());
        Ok(RunCombinations {
            run_dir,
            lock,
            primary,
        })
    }

    /// The run directory of combination `name`: the run itself for the
    /// primary, else the combination's run the lock names.
    fn dir(&self, name: &str) -> Result<PathBuf> {
        let l = &self.lock;
        if self.primary.as_deref() == Some(name) {
            return Ok(self.run_dir.clone());
        }
        let Some(r) = l.matrix.iter().find(|r| r.combination == name) else {
            let mut known: Vec<String> = self.primary.iter().cloned().collect();
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
        crate::records::dataset::safe_component(&r.combination)?;
        crate::records::dataset::safe_component(&r.run_id)?;
        let dataset = self
            .run_dir
            .parent()
            .and_then(Path::parent)
            .context("the run directory has no dataset above it")?;
        Ok(dataset
            .join(crate::records::layout::MATRIX)
            .join(&r.combination)
            .join(crate::records::layout::RUNS)
            .join(&r.run_id))
    }
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
        let combos = RunCombinations::load(lock::find_run(root, run)?)?;
        let (da, db) = (combos.dir(a)?, combos.dir(b)?);
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
