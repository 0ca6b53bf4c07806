//! Whether a stored stage result can be reused, and why not: shared by the
//! scheduler (which reuses or recomputes) and by `plan`/`status` (which only
//! report). A stage is stale when a stage it depends on is, so one changed
//! source marks everything downstream of its build.

use serde::Serialize;

use super::registry::{store, Decoded, ErasedStage, Registry, StageInfo};
use super::results::{AllResults, Results};
use super::schedule::cpu_assignment;
use super::{state, Job, Manifest, Policy};
use crate::cache::Lookup;
use crate::context::Cx;

/// Freshness of one stage for one instance (or the campaign).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", content = "reasons", rename_all = "kebab-case")]
pub enum Freshness {
    Fresh,
    Stale(Vec<String>),
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
    Usable { decoded: Decoded, sha256: String },
    Stale(Vec<String>),
}

/// Looks up the stored result of `stage` for `unit` under `key`: intact,
/// recorded by this campaign as it is now, with its artifacts present.
pub(crate) fn stored(
    cx: &Cx,
    stage: &dyn ErasedStage,
    unit: &str,
    key: &str,
    m: &Manifest,
) -> Stored {
    let info = stage.info();
    if cx.remeasure && info.policy == Policy::Measuring {
        return Stored::Stale(vec!["--remeasure given".into()]);
    }
    let last = state::read(cx, info.name, unit);
    let (value, sha256) = match cx.cache.lookup(info.name, key) {
        Lookup::Hit { value, sha256 } => (value, sha256),
        Lookup::Missing => return Stored::Stale(state::reasons(last.as_ref(), key, m)),
        Lookup::Corrupt(why) => {
            return Stored::Stale(vec![format!("stored result corrupt: {why}")])
        }
    };
    let recorded = last
        .as_ref()
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
    Stored::Usable { decoded, sha256 }
}

/// Freshness of every selected (instance, stage) without running anything.
pub fn states(cx: &Cx, registry: &Registry, cpus: &[usize]) -> anyhow::Result<Vec<StageState>> {
    let selected = registry.selected(&cx.plan.stages);
    let assignment = cpu_assignment(cx.plan, cpus);
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
            if matches!(f, Freshness::Stale(_)) {
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
            Freshness::Stale(vec!["instance results are stale".into()])
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
    let upstream: Vec<&str> = info.depends_on().filter(|d| stale.contains(d)).collect();
    if !upstream.is_empty() {
        let why = format!("{} stale", upstream.join(", "));
        return Ok((Freshness::Stale(vec![why]), None));
    }
    let Some(m) = stage.manifest(job)? else {
        return Ok((Freshness::NotApplicable, None));
    };
    let key = m.key();
    Ok(match stored(cx, stage, &job.inst.key(), &key, &m) {
        Stored::Usable { decoded, .. } => (Freshness::Fresh, Some(decoded)),
        Stored::Stale(r) => (Freshness::Stale(r), None),
    })
}
