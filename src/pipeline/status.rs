//! `pqbench plan` and `status`: the freshness of every stage of every
//! instance (from the engine, without running anything or compiling the
//! support tools), plus whether the records of the last run are still on
//! disk as that run wrote them.

use anyhow::Result;
use serde::Serialize;

use super::{host_state, RunOptions};
use crate::context::Cx;
use crate::engine::{self, Freshness, Registry, StageState};
use crate::fsutil;
use crate::plan::Plan;
use crate::records::lock::{self, LOCK_FILE};
use crate::toolchain::Compiler;

#[derive(Debug, Clone, Serialize)]
pub struct StatusReport {
    pub campaign: String,
    pub system: String,
    pub rows: Vec<StageState>,
    /// How many rows are stale.
    pub stale: usize,
}

/// Freshness of every selected stage for every instance. `shards`: for a
/// system whose shards run elsewhere, their freshness (known to the
/// executor), which stands for every stage result kept there.
pub fn states(
    plan: &Plan,
    shards: Option<Freshness>,
    cpus: Option<Vec<usize>>,
) -> Result<StatusReport> {
    let compiler = Compiler::for_plan(plan)?;
    states_with(plan, &crate::stages::registry(), compiler, shards, cpus)
}

/// The rows of each further dataset of `plan`, named by it.
fn child_rows(
    plan: &Plan,
    registry: &Registry,
    compiler: &Compiler,
    cpus: &Option<Vec<usize>>,
) -> Result<Vec<StageState>> {
    let mut out = Vec::new();
    for c in registry.child_plans(plan) {
        let rows = match super::children::child_compiler(plan, compiler, &c.plan) {
            Ok(compiler) => states_with(&c.plan, registry, compiler, None, cpus.clone())?.rows,
            Err(e) => vec![StageState {
                instance: "campaign".into(),
                stage: "build",
                freshness: Freshness::Stale(vec![format!("{e:#}")]),
            }],
        };
        out.extend(rows.into_iter().map(|mut r| {
            r.instance = format!("{}: {}", c.child, r.instance);
            r
        }));
    }
    Ok(out)
}

/// [`states`] over a given registry and compiler (tests substitute both):
/// the campaign's own rows, then each further dataset's.
pub fn states_with(
    plan: &Plan,
    registry: &Registry,
    compiler: Compiler,
    shards: Option<Freshness>,
    cpus: Option<Vec<usize>>,
) -> Result<StatusReport> {
    let opts = RunOptions {
        quiet: true,
        cpus,
        ..Default::default()
    };
    let children = child_rows(plan, registry, &compiler, &opts.cpus)?;
    let mut cx = Cx::new(plan, compiler, false, true);
    let host = host_state(plan, &opts);
    cx.host_fingerprint = Some(host.fingerprint);
    // A system whose shards run elsewhere keeps its stage results there:
    // here only the shards' state is known.
    let mut rows = match shards {
        Some(freshness) => vec![StageState {
            instance: "campaign".into(),
            stage: "shards",
            freshness,
        }],
        None => engine::states(&cx, registry, &host.cpus)?,
    };
    if let Some(changed) = records_changed(plan) {
        rows.push(StageState {
            instance: "campaign".into(),
            stage: "records",
            freshness: Freshness::Stale(vec![changed]),
        });
    }
    rows.extend(children);
    let stale = rows
        .iter()
        .filter(|r| matches!(r.freshness, Freshness::Stale(_)))
        .count();
    Ok(StatusReport {
        campaign: plan.campaign.clone(),
        system: plan.system.clone(),
        rows,
        stale,
    })
}

/// Files the last run recorded that are now missing or different.
fn records_changed(plan: &Plan) -> Option<String> {
    let runs = plan.output_dir.join(crate::records::layout::RUNS);
    // The run filed last: run ids sort by their start to the second, and
    // two quick runs can start in the same one.
    let last = crate::fsutil::paths::sorted_entries(&runs)
        .ok()?
        .into_iter()
        .filter_map(|p| {
            let filed = p.join(LOCK_FILE).metadata().ok()?.modified().ok()?;
            Some((filed, p))
        })
        .max()?
        .1;
    let lock = lock::load(&last).ok()?;
    let changed: Vec<&str> = lock
        .files
        .iter()
        .filter(|(rel, sha)| {
            fsutil::sha256_file(&plan.output_dir.join(rel))
                .ok()
                .as_ref()
                != Some(*sha)
        })
        .map(|(rel, _)| rel.as_str())
        .collect();
    (!changed.is_empty()).then(|| {
        let shown: Vec<&str> = changed.iter().take(5).copied().collect();
        let more = changed.len().saturating_sub(shown.len());
        format!(
            "records changed or missing since the last run: {}{}",
            shown.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        )
    })
}
