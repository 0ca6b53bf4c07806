//! The run's evidence, written from the stage results once the instance
//! stages are done: each stage publishes its own records and its part of
//! `build.json`, `sizes.json` and `survey.json` (`engine::Publication`);
//! this module gives every instance its build record, copies the library
//! the record names, and writes the shared files. Every file is written
//! atomically; files whose bytes did not change are left alone.

use anyhow::{Context, Result};

use crate::context::Cx;
use crate::engine::{AllResults, Publication, Registry};
use crate::fsutil;
use crate::kat::Status;
use crate::plan::Instance;
use crate::records::{layout, BuildJson, BuildRecord};

/// Writes every record of the run from `all`.
pub(crate) fn write(cx: &Cx, registry: &Registry, all: &AllResults, written: &str) -> Result<()> {
    let plan = cx.plan;
    let selected = registry.selected(&plan.stages);
    let mut p = Publication::new(cx);
    registry.open_publication(&selected, &mut p);
    for inst in &plan.instances {
        p.instances.push(unbuilt(inst));
        registry.publish(&mut p, inst, all.of(&inst.key()))?;
        copy_library(&mut p, inst)?;
    }
    registry.close_publication(&selected, &mut p)?;
    let json = BuildJson {
        campaign: plan.campaign.clone(),
        system: plan.system.clone(),
        written: written.to_string(),
        compiler: cx.compiler.clone(),
        support_version: cx.support_version(),
        flag_profiles: plan.flag_profiles.clone(),
        instances: std::mem::take(&mut p.instances),
    };
    p.write(layout::BUILD, &json)?;
    if let Some(sizes) = &p.sizes {
        p.write(layout::SIZES, sizes)?;
    }
    if let Some(survey) = &p.survey {
        p.write(layout::SURVEY, survey)?;
    }
    Ok(())
}

/// An instance's build record before any stage published: what the plan
/// says of it.
fn unbuilt(inst: &Instance) -> BuildRecord {
    BuildRecord {
        algorithm: inst.algorithm.clone(),
        label: inst.label.clone(),
        implementation: inst.implementation.clone(),
        kind: inst.kind,
        api: inst.api,
        profile: None,
        attempts: Vec::new(),
        kat_status: Status::NotRun,
        kat_detail: None,
        library: None,
        library_sha256: None,
        load_bytes: None,
        kat_log: None,
        kat_log_sha256: None,
        kat_records: inst.kat_records,
        defines: inst.defines.clone(),
        sources: inst.sources.iter().map(|s| s.display.clone()).collect(),
        kat_reference: None,
        kat_reference_records: None,
    }
}

/// Copies the library the instance's build record names into the dataset.
fn copy_library(p: &mut Publication, inst: &Instance) -> Result<()> {
    let rec = p.build()?;
    let Some(sha) = rec.library_sha256.clone() else {
        return Ok(());
    };
    let rel = layout::library(&inst.algorithm, &inst.label);
    rec.library = Some(rel.clone());
    let blob =
        p.cx.cache
            .existing_blob(&sha)
            .context("library missing from the cache")?;
    let dest = p.path(&rel);
    if fsutil::sha256_file(&dest).ok().as_deref() != Some(sha.as_str()) {
        fsutil::copy_atomic(&blob, &dest)?;
    }
    Ok(())
}
