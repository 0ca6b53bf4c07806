//! Records of the analysis stages: `profile/<id>/<label>__<op>.json`,
//! `sizes.json` (with the size audit) and `survey.json` (verdict per
//! algorithm with its evidence).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::evidence::ObjectEvidence;
use super::evidence::SizeFigure;
use super::measure::OpStatus;
use super::measure::{OpProfile, Shape};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileRecord {
    pub algorithm: String,
    pub label: String,
    pub op: String,
    pub status: OpStatus,
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
    pub process: Option<super::process::ProcessRecord>,
    /// The campaign that made this profile, when taken from another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_by: Option<String>,
}

impl ProfileRecord {
    pub(crate) fn from_op(
        algorithm: &str,
        label: &str,
        wrapped: &[String],
        p: &OpProfile,
    ) -> ProfileRecord {
        ProfileRecord {
            algorithm: algorithm.into(),
            label: label.into(),
            op: p.op.clone(),
            status: p.status,
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
            measured_by: None,
        }
    }
}

pub(crate) fn profile_path(algorithm: &str, label: &str, op: &str) -> String {
    super::layout::operation_file(super::layout::PROFILE, algorithm, label, op)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SizesRow {
    pub algorithm: String,
    pub label: String,
    pub kind: super::kinds::Kind,
    pub figures: BTreeMap<String, SizeFigure>,
    pub basis: Option<String>,
    pub disagreements: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SizesJson {
    pub catalog: Option<String>,
    /// The KEX size catalog, when the campaign names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kex_catalog: Option<String>,
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

impl super::folder::FolderRecord for ProfileRecord {
    const DIR: &'static str = super::layout::PROFILE;

    fn key(&self) -> super::folder::OpKey {
        (self.algorithm.clone(), self.label.clone(), self.op.clone())
    }
}
