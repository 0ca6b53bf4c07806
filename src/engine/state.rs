//! What this campaign last computed or reused per (stage, instance): the
//! key, the manifest (to explain a change) and the digest of the result.
//! Kept under the campaign's own output directory, so a result another
//! campaign stored under the same key is never taken for this one's.

use std::path::PathBuf;

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
}

fn path(cx: &Cx, stage: &str, unit: &str) -> PathBuf {
    // Labels may contain dots (`X-44.avx2`): append, never set_extension.
    cx.plan
        .output_dir
        .join(".state")
        .join(stage)
        .join(format!("{unit}.json"))
}

pub(crate) fn read(cx: &Cx, stage: &str, unit: &str) -> Option<LastInputs> {
    fsutil::read_json(&path(cx, stage, unit)).ok()
}

pub(crate) fn write(cx: &Cx, stage: &str, unit: &str, last: &LastInputs) -> anyhow::Result<()> {
    fsutil::write_json(&path(cx, stage, unit), last)
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
