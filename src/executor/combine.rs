//! One system's dataset from its shards' datasets: the per-instance files
//! (operation and profile records, KAT logs and files, libraries) as they
//! are, `build.json` and `sizes.json` as the union in plan order, the
//! survey verdicts recomputed over every instance of an algorithm, and
//! `campaign.json` spanning the shards, with every shard's host fingerprint
//! accepted. A shard whose host the system's registration does not accept
//! is refused.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::fsutil;
use crate::objscan;
use crate::plan::Plan;
use crate::records::analysis::{SizesJson, SurveyAlgorithm, SurveyInstance, SurveyJson};
use crate::records::campaign::CampaignRecord;
use crate::records::BuildJson;

/// A shard's fetched dataset.
pub(crate) struct ShardData {
    pub index: usize,
    pub dir: PathBuf,
    pub campaign: CampaignRecord,
}

impl ShardData {
    pub(crate) fn load(index: usize, dir: &Path) -> Result<ShardData> {
        let campaign = fsutil::read_json(&dir.join(crate::records::layout::CAMPAIGN))
            .with_context(|| format!("shard {index} left no campaign.json"))?;
        Ok(ShardData {
            index,
            dir: dir.to_path_buf(),
            campaign,
        })
    }
}

/// Refuses a shard whose host the system's registration does not list.
pub(crate) fn check_host(plan: &Plan, shard: &ShardData) -> Result<()> {
    let pinned = &plan.system_spec.fingerprints;
    let fp = &shard.campaign.host_fingerprint;
    if !pinned.is_empty() && !pinned.contains(fp) {
        bail!(
            "shard {} ran on host {fp} ({}), which system {} does not register; its results are refused",
            shard.index,
            shard.campaign.environment_start.cpu_model,
            plan.system
        );
    }
    if shard.campaign.system != plan.system || shard.campaign.campaign != plan.campaign {
        bail!(
            "shard {} holds a dataset of {}/{}, not {}/{}",
            shard.index,
            shard.campaign.campaign,
            shard.campaign.system,
            plan.campaign,
            plan.system
        );
    }
    Ok(())
}

/// Writes the combined dataset into `plan.output_dir`.
pub(crate) fn combine(plan: &Plan, shards: &[ShardData]) -> Result<()> {
    crate::pipeline::writing(plan, || combine_into(plan, shards))
}

fn combine_into(plan: &Plan, shards: &[ShardData]) -> Result<()> {
    let out = &plan.output_dir;
    let first = shards.first().context("no shard finished")?;
    // Per-instance files: whatever each shard wrote for its instances.
    let mut trees = crate::stages::registry().record_trees();
    trees.extend([crate::records::layout::KAT, crate::records::layout::LIB]);
    for sub in trees {
        let _ = std::fs::remove_dir_all(out.join(sub));
        for s in shards {
            copy_tree(&s.dir.join(sub), &out.join(sub))?;
        }
    }
    let order: BTreeMap<String, usize> = plan
        .instances
        .iter()
        .enumerate()
        .map(|(i, inst)| (inst.key(), i))
        .collect();
    let rank = |a: &str, l: &str| {
        order
            .get(&format!("{a}/{l}"))
            .copied()
            .unwrap_or(usize::MAX)
    };

    let mut build: BuildJson = fsutil::read_json(&first.dir.join(crate::records::layout::BUILD))?;
    build.instances.clear();
    let mut sizes: Option<SizesJson> = None;
    let mut survey: BTreeMap<String, (Option<String>, Vec<SurveyInstance>)> = BTreeMap::new();
    for s in shards {
        let b: BuildJson = fsutil::read_json(&s.dir.join(crate::records::layout::BUILD))?;
        build.instances.extend(b.instances);
        if let Ok(z) = fsutil::read_json::<SizesJson>(&s.dir.join(crate::records::layout::SIZES)) {
            match &mut sizes {
                Some(all) => all.instances.extend(z.instances),
                None => sizes = Some(z),
            }
        }
        if let Ok(v) = fsutil::read_json::<SurveyJson>(&s.dir.join(crate::records::layout::SURVEY))
        {
            for a in v.algorithms {
                let e = survey.entry(a.algorithm).or_default();
                e.0 = a.note;
                e.1.extend(a.instances);
            }
        }
    }
    build
        .instances
        .sort_by_key(|r| rank(&r.algorithm, &r.label));
    fsutil::write_json(&out.join(crate::records::layout::BUILD), &build)?;
    if let Some(mut z) = sizes {
        z.instances.sort_by_key(|r| rank(&r.algorithm, &r.label));
        fsutil::write_json(&out.join(crate::records::layout::SIZES), &z)?;
    }
    if !survey.is_empty() {
        let algorithms = survey
            .into_iter()
            .map(|(id, (note, mut instances))| {
                instances.sort_by_key(|i| rank(&id, &i.label));
                let ev: Vec<_> = instances.iter().map(|i| i.evidence.clone()).collect();
                let (verdict, reason) = objscan::verdict(&ev);
                SurveyAlgorithm {
                    algorithm: id,
                    verdict,
                    reason,
                    note,
                    instances,
                }
            })
            .collect();
        fsutil::write_json(
            &out.join(crate::records::layout::SURVEY),
            &SurveyJson { algorithms },
        )?;
    }
    fsutil::write_json(
        &out.join(crate::records::layout::CAMPAIGN),
        &campaign_record(shards),
    )
}

/// The first shard's record, spanning every shard.
fn campaign_record(shards: &[ShardData]) -> CampaignRecord {
    let mut c = shards[0].campaign.clone();
    for s in &shards[1..] {
        let o = &s.campaign;
        c.start_utc = c.start_utc.clone().min(o.start_utc.clone());
        c.end_utc = c.end_utc.clone().max(o.end_utc.clone());
        c.measured_from_utc = match (c.measured_from_utc.take(), o.measured_from_utc.clone()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        c.measured_to_utc = match (c.measured_to_utc.take(), o.measured_to_utc.clone()) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        for cpu in &o.cpus {
            if !c.cpus.contains(cpu) {
                c.cpus.push(*cpu);
            }
        }
        c.host_checks.extend(o.host_checks.iter().cloned());
        c.environment_end = o.environment_end.clone();
    }
    let mut fps: Vec<String> = shards
        .iter()
        .map(|s| s.campaign.host_fingerprint.clone())
        .collect();
    fps.sort();
    fps.dedup();
    c.accepted_fingerprints = fps;
    c
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    if !from.is_dir() {
        return Ok(());
    }
    for e in std::fs::read_dir(from)?.flatten() {
        let p = e.path();
        let t = to.join(e.file_name());
        if p.is_dir() {
            copy_tree(&p, &t)?;
        } else {
            fsutil::copy_atomic(&p, &t)?;
        }
    }
    Ok(())
}
