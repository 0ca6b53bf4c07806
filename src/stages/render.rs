//! Render stage (once per campaign): the Markdown and HTML pages of every
//! system's dataset of the campaign. Its inputs are the dataset files and
//! the templates; a stored render stands only while every page it wrote is
//! still on disk as written.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::context::Cx;
use crate::engine::{AllResults, CampaignStage, Manifest, Registry};
use crate::fsutil;
use crate::render;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RenderOutput {
    /// Every site file (relative to the site directory) and its sha256.
    pub files: BTreeMap<String, String>,
    pub systems: Vec<String>,
}

pub(crate) struct RenderStage;

impl CampaignStage for RenderStage {
    type Output = RenderOutput;
    const NAME: &'static str = "render";
    const READS: &'static [&'static str] = &[];

    fn manifest(&self, cx: &Cx, _all: &AllResults) -> Result<Option<Manifest>> {
        let plan = cx.plan;
        let campaign_dir = plan
            .site_dir
            .parent()
            .context("the site directory has no parent")?;
        let mut m = Manifest::new();
        for dir in crate::records::dataset::dataset_dirs_in(campaign_dir)? {
            let system = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            for (rel, sha) in dataset_files(cx, &dir)? {
                m.set(format!("record:{system}/{rel}"), sha);
            }
        }
        if let Some(t) = &plan.templates {
            for (rel, sha) in dataset_files(cx, t)? {
                m.set(format!("template:{rel}"), sha);
            }
        }
        m.set("pqbench", crate::STAGE_LOGIC_VERSION);
        Ok(Some(m))
    }

    fn run(&self, cx: &Cx, _all: &AllResults, registry: &Registry) -> Result<RenderOutput> {
        let report = render::render_campaign(cx.plan, registry)?;
        let mut files = BTreeMap::new();
        for rel in render::site_files(&report.site)? {
            files.insert(rel.clone(), fsutil::sha256_file(&report.site.join(&rel))?);
        }
        Ok(RenderOutput {
            files,
            systems: report.systems,
        })
    }

    /// The pages of everything measured so far, the deferred instances
    /// marked preliminary.
    fn before_deferred(&self, cx: &Cx, registry: &Registry) -> Result<()> {
        render::render_campaign(cx.plan, registry).map(drop)
    }

    fn verify(&self, cx: &Cx, out: &RenderOutput) -> Option<String> {
        let site = &cx.plan.site_dir;
        out.files
            .iter()
            .find(|(rel, sha)| fsutil::sha256_file(&site.join(rel)).ok().as_ref() != Some(sha))
            .map(|(rel, _)| format!("page changed or missing: {rel}"))
    }
}

/// Files a page may be derived from, relative to `dir`, with their sha256:
/// everything but the run history, the libraries and engine state.
fn dataset_files(cx: &Cx, dir: &Path) -> Result<Vec<(String, String)>> {
    fn walk(cx: &Cx, root: &Path, dir: &Path, out: &mut Vec<(String, String)>) -> Result<()> {
        for p in crate::fsutil::paths::sorted_entries(dir)? {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            if matches!(name.as_deref(), Some("runs" | "lib" | ".state")) {
                continue;
            }
            if p.is_dir() {
                walk(cx, root, &p, out)?;
            } else if !name.as_deref().unwrap_or("").starts_with(".tmp-") {
                out.push((
                    crate::fsutil::paths::relative(root, &p)?,
                    cx.cache.view().sha256_file(&p)?,
                ));
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    if dir.is_dir() {
        walk(cx, dir, dir, &mut out)?;
    }
    Ok(out)
}
