//! Whether a stored stage result can be reused, and why not: shared by the
//! scheduler (which reuses or recomputes) and by `plan`/`status` (which only
//! report). A stage whose own inputs changed is stale; one that depends on
//! a stale stage waits: the run computes it again only if that stage's new
//! result differs, which `status` cannot know before the run.

use serde::Serialize;

use super::registry::{store, Decoded, ErasedStage, Registry, StageInfo};
use super::results::{AllResults, Results};
use super::shards::cpu_assignment;
use super::{state, Job, Manifest, Policy};
use crate::cache::Lookup;
use crate::context::Cx;

/// Freshness of one stage for one instance (or the campaign).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", content = "reasons", rename_all = "kebab-case")]
pub enum Freshness {
    Fresh,
    Stale(Vec<String>),
    /// Follows the named stages, which are stale or waiting themselves:
    /// computed again only if their new results differ from the stored
    /// ones (a rebuilt library with the same bytes leaves it as it is), so
    /// `status` cannot know yet whether the next run reuses it.
    Waits(Vec<String>),
    NotApplicable,
}

/// One row of `pqbench plan` / `status`.
#[derive(Debug, Clone, Serialize)]
pub struct StageState {
    /// `<id>/<label>`, or `campaign` for campaign stages.
    pub instance: String,
    pub stage: &'static str,
    #[serde(flatten)]
    pub freshness: Freshness,
}

/// A usable stored result, or the reasons there is none.
pub(crate) enum Stored {
    Usable(Box<Usable>),
    Stale(Vec<String>),
}

/// A stored result a job may use: under which manifest and key it is
/// stored, and who made it when another campaign lent it.
pub(crate) struct Usable {
    pub decoded: Decoded,
    pub sha256: String,
    pub key: String,
    pub manifest: Manifest,
    pub lent_by: Option<String>,
}

/// The stored result `job` may use, given its manifest `m`: a run reuses
/// what its own previous run recorded — its own result when it last made
/// one, else the result a lender (`Stage::lender`) vouches for, else its
/// own stored under `m`. With `remeasure` a measuring stage has none.
pub(crate) fn stored(
    cx: &Cx,
    stage: &dyn ErasedStage,
    job: &Job,
    m: &Manifest,
    remeasure: bool,
) -> anyhow::Result<Stored> {
    let info = stage.info();
    if remeasure && info.policy == Policy::Measuring {
        return Ok(Stored::Stale(vec!["--remeasure given".into()]));
    }
    let unit = job.inst.key();
    let key = m.key();
    let last = state::read(cx, info.name, &unit);
    if last.as_ref().is_none_or(|l| l.key != key) {
        if let Some(lender) = stage.lender(job, m)? {
            if let Some(u) = lent(cx, stage, &unit, &lender) {
                return Ok(Stored::Usable(Box::new(u)));
            }
        }
    }
    Ok(own(cx, stage, &key, m, last.as_ref()))
}

/// The lender's result for `unit`, when the lender recorded it under the
/// lender's manifest and it is intact.
fn lent(cx: &Cx, stage: &dyn ErasedStage, unit: &str, lender: &super::Lender) -> Option<Usable> {
    let name = stage.info().name;
    let key = lender.manifest.key();
    let theirs = state::read_in(&lender.output_dir, name, unit)?;
    let Lookup::Hit { value, sha256 } = cx.cache.lookup(name, &key) else {
        return None;
    };
    if theirs.key != key || theirs.result_sha256.as_deref() != Some(sha256.as_str()) {
        return None;
    }
    let decoded = stage.decode(value).ok()?;
    if decoded
        .artifacts
        .iter()
        .any(|a| cx.cache.existing_blob(a).is_none())
    {
        return None;
    }
    Some(Usable {
        decoded,
        sha256,
        key,
        manifest: lender.manifest.clone(),
        lent_by: Some(lender.owner.clone()),
    })
}

/// This campaign's stored result under `key`: intact, recorded by this
/// campaign as it is now, with its artifacts present.
fn own(
    cx: &Cx,
    stage: &dyn ErasedStage,
    key: &str,
    m: &Manifest,
    last: Option<&state::LastInputs>,
) -> Stored {
    let info = stage.info();
    let (value, sha256) = match cx.cache.lookup(info.name, key) {
        Lookup::Hit { value, sha256 } => (value, sha256),
        Lookup::Missing => return Stored::Stale(state::reasons(last, key, m)),
        Lookup::Corrupt(why) => {
            return Stored::Stale(vec![format!("stored result corrupt: {why}")])
        }
    };
    let recorded = last
        .filter(|l| l.key == key)
        .and_then(|l| l.result_sha256.as_deref());
    if recorded.is_some_and(|r| r != sha256) {
        return Stored::Stale(vec![
            "stored result differs from the one this campaign recorded".into(),
        ]);
    }
    let decoded = match stage.decode(value) {
        Ok(d) => d,
        Err(e) => return Stored::Stale(vec![format!("{e:#}")]),
    };
    if let Some(a) = decoded
        .artifacts
        .iter()
        .find(|a| cx.cache.existing_blob(a).is_none())
    {
        return Stored::Stale(vec![format!(
            "stored artifact {} missing or damaged",
            &a[..a.len().min(12)]
        )]);
    }
    Stored::Usable(Box::new(Usable {
        decoded,
        sha256,
        key: key.to_string(),
        manifest: m.clone(),
        lent_by: None,
    }))
}

/// Freshness of every selected (instance, stage) without running anything.
pub fn states(cx: &Cx, registry: &Registry, cpus: &[usize]) -> anyhow::Result<Vec<StageState>> {
    let selected = registry.selected(&cx.plan.stages);
    let assignment = cpu_assignment(cx.plan, cpus, cx.deferred_cpu);
    let mut rows = Vec::new();
    let mut all = AllResults::default();
    let mut any_stale = false;
    for (inst, cpu) in cx.plan.instances.iter().zip(&assignment) {
        let mut prior = Results::default();
        let mut stale: Vec<&str> = Vec::new();
        for info in selected.iter().filter(|i| i.policy != Policy::Campaign) {
            let stage = registry
                .instance_stage(info.name)
                .expect("selected stages are registered");
            let job = Job {
                cx,
                inst,
                prior: &prior,
                cpu: *cpu,
            };
            let f = instance_freshness(cx, stage, &job, &stale);
            let f = match f {
                Ok((f, Some(decoded))) => {
                    store(&mut prior, *info, decoded.slot);
                    f
                }
                Ok((f, None)) => f,
                Err(e) => Freshness::Stale(vec![format!("{e:#}")]),
            };
            if matches!(f, Freshness::Stale(_) | Freshness::Waits(_)) {
                stale.push(info.name);
                any_stale = true;
            }
            rows.push(StageState {
                instance: inst.key(),
                stage: info.name,
                freshness: f,
            });
        }
        all.instances.insert(inst.key(), prior);
    }
    for info in selected.iter().filter(|i| i.policy == Policy::Campaign) {
        let stage = registry
            .campaign_stage_named(info.name)
            .expect("selected stages are registered");
        let f = if any_stale {
            Freshness::Waits(vec!["instance results".into()])
        } else {
            match stage.manifest(cx, &all)? {
                None => Freshness::NotApplicable,
                Some(m) => {
                    let key = m.key();
                    match cx.cache.lookup(info.name, &key) {
                        Lookup::Hit { value, .. } => match stage.decode(cx, value) {
                            Ok(Ok(_)) => Freshness::Fresh,
                            Ok(Err(why)) => Freshness::Stale(vec![why]),
                            Err(e) => Freshness::Stale(vec![format!("{e:#}")]),
                        },
                        Lookup::Corrupt(why) => {
                            Freshness::Stale(vec![format!("stored result corrupt: {why}")])
                        }
                        Lookup::Missing => {
                            let last = state::read(cx, info.name, "campaign");
                            Freshness::Stale(state::reasons(last.as_ref(), &key, &m))
                        }
                    }
                }
            }
        };
        rows.push(StageState {
            instance: "campaign".into(),
            stage: info.name,
            freshness: f,
        });
    }
    Ok(rows)
}

/// Freshness of one instance stage given which stages before it are stale.
fn instance_freshness(
    cx: &Cx,
    stage: &dyn ErasedStage,
    job: &Job,
    stale: &[&str],
) -> anyhow::Result<(Freshness, Option<Decoded>)> {
    let info: StageInfo = stage.info();
    let upstream: Vec<String> = info
        .depends_on()
        .filter(|d| stale.contains(d))
        .map(String::from)
        .collect();
    if !upstream.is_empty() {
        return Ok((Freshness::Waits(upstream), None));
    }
    let Some(m) = stage.manifest(job)? else {
        return Ok((Freshness::NotApplicable, None));
    };
    Ok(match stored(cx, stage, job, &m, cx.remeasure)? {
        Stored::Usable(u) => (Freshness::Fresh, Some(u.decoded)),
        Stored::Stale(r) => (Freshness::Stale(r), None),
    })
}
