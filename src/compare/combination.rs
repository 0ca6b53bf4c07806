//! `pqbench compare <run> --combination A --against B`: two datasets of
//! one run, operation by operation: two `[matrix]` combinations (the same
//! instances, built by another compiler or with other flags), or any two
//! further datasets of another dimension, or one of them against the
//! run's own.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::{choose_threshold, compare_runs, CompareReport, RunData};
use crate::error::Error;
use crate::records::lock;

/// The datasets of one campaign run, read once: the run's own name among
/// them (its copy of `campaign.json` says which matrix combination is the
/// primary) and the further datasets' runs its lock names.
struct RunCombinations {
    run_dir: PathBuf,
    run_id: String,
    primary: Option<String>,
    children: Vec<lock::ChildRun>,
}

impl RunCombinations {
    fn load(run_dir: PathBuf) -> Result<RunCombinations> {
        let lock = lock::load(&run_dir)?;
        let campaign: crate::records::campaign::CampaignRecord =
            crate::fsutil::read_json(&run_dir.join(crate::records::layout::CAMPAIGN))?;
        Ok(RunCombinations {
            children: lock.child_runs(&run_dir)?,
            primary: campaign.own_name().map(str::to_string),
            run_id: lock.run_id,
            run_dir,
        })
    }

    /// The run directory of dataset `name`: the run itself for the
    /// primary, else the further dataset's run the lock names (by its
    /// name, or `<dimension>/<name>` where two dimensions share a name).
    fn dir(&self, name: &str) -> Result<PathBuf> {
        if self.primary.as_deref() == Some(name) {
            return Ok(self.run_dir.clone());
        }
        let qualified = |r: &lock::ChildRun| format!("{}/{}", r.child.dimension, r.child.name);
        let found: Vec<&lock::ChildRun> = self
            .children
            .iter()
            .filter(|r| r.child.name == name || qualified(r) == name)
            .collect();
        if let [r] = found.as_slice() {
            return Ok(r.dir.clone());
        }
        let mut known: Vec<String> = self.primary.iter().cloned().collect();
        known.extend(self.children.iter().map(|r| r.child.name.clone()));
        if known.is_empty() {
            bail!(
                "run {} made no further dataset ([matrix] or another dimension): it has nothing to compare",
                self.run_id
            );
        }
        let why = match found.len() {
            0 => "has no dataset",
            _ => "has more than one dataset named",
        };
        bail!(
            "run {} {why} `{name}`; it has {}",
            self.run_id,
            known.join(", ")
        );
    }
}

/// Compares dataset `a` against dataset `b` of run `run`: `b` is
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
