//! The plan as a run's lock records it: machine paths made relative to the
//! project, and the configuration files it was read from with their hashes.

use std::collections::BTreeMap;

use anyhow::Result;
use serde_json::Value;

use super::Plan;
use crate::fsutil;
use crate::records::campaign::{AlgorithmInfo, KnownIssueInfo};

/// The plan as JSON with every path under the project root made relative
/// to it (the root itself becomes `.`), so a lock names no machine paths
/// beyond the tools it used.
pub(crate) fn relative_plan(plan: &Plan) -> Result<Value> {
    let mut v = serde_json::to_value(plan)?;
    let root = plan.project_root.display().to_string();
    strip_root(&mut v, &root);
    Ok(v)
}

fn strip_root(v: &mut Value, root: &str) {
    match v {
        Value::String(s) if s == root => *s = ".".into(),
        Value::String(s) if s.contains(root) => *s = s.replace(&format!("{root}/"), ""),
        Value::Array(items) => items.iter_mut().for_each(|x| strip_root(x, root)),
        Value::Object(map) => map.values_mut().for_each(|x| strip_root(x, root)),
        _ => {}
    }
}

pub(crate) fn config_files(plan: &Plan) -> BTreeMap<String, Option<String>> {
    let mut paths = vec![plan.campaign_file.clone()];
    for a in &plan.algorithms {
        paths.push(plan.project_root.join(&a.toml));
        paths.push(a.kat_manifest.clone());
    }
    paths
        .into_iter()
        .map(|p| (plan.display_path(&p), fsutil::sha256_file(&p).ok()))
        .collect()
}

impl AlgorithmInfo {
    pub(crate) fn from_plan(plan: &Plan, a: &super::Algorithm) -> AlgorithmInfo {
        AlgorithmInfo {
            id: a.id.clone(),
            name: a.name.clone(),
            kind: a.kind,
            api: a.api,
            description: a.description.clone(),
            links: a.links.clone(),
            toml: a.toml.clone(),
            // Pages cite the manifest: only one that exists (the ICCS
            // baseline checks itself and has none; a new algorithm has none
            // until `bless`).
            kat_manifest: if a.kat_manifest.is_file() {
                plan.display_path(&a.kat_manifest)
            } else {
                String::new()
            },
            known_issues: a
                .known_issues
                .iter()
                .map(|k| KnownIssueInfo {
                    labels: k.labels.clone(),
                    action: match k.action {
                        super::IssueAction::Measure => "measure".into(),
                        super::IssueAction::Exclude => "exclude".into(),
                    },
                    cause: k.cause.clone(),
                })
                .collect(),
            survey_note: a.survey_note.clone(),
            implementations: a.implementations.clone(),
            labels: a.labels.clone(),
            profile_wraps: a.profile_wraps.clone(),
            profile_classes: Some(plan.classes_for(&a.id)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_under_the_root_become_relative() {
        let mut v = serde_json::json!({
            "root": "/p/proj",
            "src": ["/p/proj/algorithms/x/a.c", "/usr/include"],
            "flag": "-I/p/proj/algorithms/x",
            "other": "/p/project2/y"
        });
        strip_root(&mut v, "/p/proj");
        assert_eq!(v["root"], ".");
        assert_eq!(v["src"][0], "algorithms/x/a.c");
        assert_eq!(v["src"][1], "/usr/include");
        assert_eq!(v["flag"], "-Ialgorithms/x");
        assert_eq!(v["other"], "/p/project2/y");
    }
}
