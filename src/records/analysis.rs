//! Records of the analysis stages: `profile/<id>/<label>__<op>.json`,
//! `sizes.json` (with the size audit) and `survey.json` (verdict per
//! algorithm with its evidence).

use std::collections::BTreeMap;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::engine::Cx;
use crate::fsutil;
use crate::objscan::{self, ObjectEvidence};
use crate::stages::profile::{OpProfile, Shape};
use crate::stages::sizes::SizeFigure;
use crate::stages::InstanceResults;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileRecord {
    pub algorithm: String,
    pub label: String,
    pub op: String,
    pub status: String,
    pub detail: Option<String>,
    pub wrapped: Vec<String>,
    pub ops: u64,
    pub total_ticks: u64,
    pub tick_hz: Option<f64>,
    pub shapes: Vec<Shape>,
    /// Derived from `shapes`; `pqbench check` recomputes them.
    pub hash_share: f64,
    pub drng_share: f64,
    pub share_per_function: BTreeMap<String, f64>,
    pub calls_per_op: BTreeMap<String, f64>,
    pub process: Option<crate::measure::driver::ProcessRecord>,
}

impl ProfileRecord {
    pub fn from_op(
        algorithm: &str,
        label: &str,
        wrapped: &[String],
        p: &OpProfile,
    ) -> ProfileRecord {
        ProfileRecord {
            algorithm: algorithm.into(),
            label: label.into(),
            op: p.op.clone(),
            status: p.status.clone(),
            detail: p.detail.clone(),
            wrapped: wrapped.to_vec(),
            ops: p.ops,
            total_ticks: p.total_ticks,
            tick_hz: p.tick_hz,
            shapes: p.shapes.clone(),
            hash_share: p.hash_share(),
            drng_share: p.drng_share(),
            share_per_function: p.share_per_function(),
            calls_per_op: p.calls_per_op(),
            process: p.process.clone(),
        }
    }
}

pub fn profile_path(algorithm: &str, label: &str, op: &str) -> String {
    format!("profile/{algorithm}/{label}__{op}.json")
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SizesRow {
    pub algorithm: String,
    pub label: String,
    pub kind: String,
    pub figures: BTreeMap<String, SizeFigure>,
    pub basis: Option<String>,
    pub disagreements: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SizesJson {
    pub catalog: Option<String>,
    pub instances: Vec<SizesRow>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SurveyInstance {
    pub label: String,
    pub objects: Vec<String>,
    pub evidence: ObjectEvidence,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SurveyAlgorithm {
    pub algorithm: String,
    pub verdict: String,
    pub reason: String,
    pub note: Option<String>,
    pub instances: Vec<SurveyInstance>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SurveyJson {
    pub algorithms: Vec<SurveyAlgorithm>,
}

/// Writes the profile, sizes and survey records present in `results`.
pub fn write_analysis_records(cx: &Cx, results: &BTreeMap<String, InstanceResults>) -> Result<()> {
    let plan = cx.plan;
    let mut sizes = SizesJson {
        catalog: plan.sizes_catalog.as_ref().map(|p| plan.display_path(p)),
        instances: Vec::new(),
    };
    let mut survey: BTreeMap<String, Vec<SurveyInstance>> = BTreeMap::new();
    for inst in &plan.instances {
        let r = &results[&inst.key()];
        if let Some(p) = &r.profile {
            for op in &p.ops {
                let rec = ProfileRecord::from_op(&inst.algorithm, &inst.label, &p.wrapped, op);
                fsutil::write_json(
                    &plan
                        .output_dir
                        .join(profile_path(&inst.algorithm, &inst.label, &op.op)),
                    &rec,
                )?;
            }
        }
        if let Some(s) = &r.sizes {
            sizes.instances.push(SizesRow {
                algorithm: inst.algorithm.clone(),
                label: inst.label.clone(),
                kind: inst.kind.as_str().into(),
                figures: s.figures.clone(),
                basis: s.basis.clone(),
                disagreements: s.disagreements.clone(),
            });
        }
        if let Some(s) = &r.survey {
            survey
                .entry(inst.algorithm.clone())
                .or_default()
                .push(SurveyInstance {
                    label: inst.label.clone(),
                    objects: s.objects.clone(),
                    evidence: s.evidence.clone(),
                });
        }
    }
    if plan.runs(crate::plan::StageName::Sizes) {
        fsutil::write_json(&plan.output_dir.join("sizes.json"), &sizes)?;
    }
    if plan.runs(crate::plan::StageName::Survey) {
        let algorithms = survey
            .into_iter()
            .map(|(id, instances)| {
                let ev: Vec<ObjectEvidence> =
                    instances.iter().map(|i| i.evidence.clone()).collect();
                let (verdict, reason) = objscan::verdict(&ev);
                SurveyAlgorithm {
                    note: plan.algorithm(&id).and_then(|a| a.survey_note.clone()),
                    algorithm: id,
                    verdict,
                    reason,
                    instances,
                }
            })
            .collect();
        fsutil::write_json(
            &plan.output_dir.join("survey.json"),
            &SurveyJson { algorithms },
        )?;
    }
    Ok(())
}
