//! What this campaign last computed or reused per (stage, instance): the
//! key, the manifest (to explain a change) and the digest of the result.
//! Kept under the campaign's own output directory, so a result another
//! campaign stored under the same key is never taken for this one's; a
//! campaign that explicitly reuses another's results reads that one's.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Manifest;
use crate::context::Cx;
use crate::fsutil;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct LastInputs {
    pub key: String,
    pub manifest: Manifest,
    #[serde(default)]
    pub result_sha256: Option<String>,
    /// Wall seconds the result took to compute, carried over when it is
    /// reused: what `plan --nodes` calibrates its estimate from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
}

fn path(output_dir: &Path, stage: &str, unit: &str) -> PathBuf {
    // Labels may contain dots (`X-44.avx2`): append, never set_extension.
    output_dir
        .join(".state")
        .join(stage)
        .join(format!("{unit}.json"))
}

pub(crate) fn read(cx: &Cx, stage: &str, unit: &str) -> Option<LastInputs> {
    read_in(&cx.plan.output_dir, stage, unit)
}

/// What the campaign whose output directory is `output_dir` last recorded.
pub(crate) fn read_in(output_dir: &Path, stage: &str, unit: &str) -> Option<LastInputs> {
    fsutil::read_json(&path(output_dir, stage, unit)).ok()
}

pub(crate) fn write(cx: &Cx, stage: &str, unit: &str, last: &LastInputs) -> anyhow::Result<()> {
    fsutil::write_json_if_changed(&path(&cx.plan.output_dir, stage, unit), last)
}

/// The recorded wall seconds of every stage computed for `unit` in the
/// campaign whose output directory is `output_dir`, by stage; stages with
/// no recorded time are left out.
pub(crate) fn recorded_seconds(output_dir: &Path, unit: &str) -> Vec<(String, f64)> {
    let Ok(stages) = std::fs::read_dir(output_dir.join(".state")) else {
        return Vec::new();
    };
    let mut out: Vec<(String, f64)> = stages
        .flatten()
        .filter_map(|e| {
            let stage = e.file_name().to_string_lossy().into_owned();
            let secs = read_in(output_dir, &stage, unit)?.seconds?;
            Some((stage, secs))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Why a stage with manifest `m` (key `key`) has no usable stored result.
pub(crate) fn reasons(last: Option<&LastInputs>, key: &str, m: &Manifest) -> Vec<String> {
    match last {
        Some(l) if l.key == key => vec!["stored result missing".into()],
        Some(l) => {
            let r = m.reasons(&l.manifest);
            if r.is_empty() {
                vec!["inputs changed".into()]
            } else {
                r
            }
        }
        None => vec!["never run".into()],
    }
}
