//! The run's evidence, written from the stage results once the instance
//! stages are done: `build.json`, the KAT logs and files, one record per
//! measured operation and profile, `sizes.json` and `survey.json`, and the
//! measured libraries. Every file is written atomically; files whose bytes
//! did not change are left alone.

use std::collections::BTreeMap;

use anyhow::{Context, Result};

use crate::context::Cx;
use crate::engine::{AllResults, Stage};
use crate::fsutil;
use crate::kat::{KatAttempt, Status};
use crate::objscan::{self, ObjectEvidence};
use crate::plan::{ApiFamily, Instance};
use crate::records::analysis::{
    profile_path, ProfileRecord, SizesJson, SizesRow, SurveyAlgorithm, SurveyInstance, SurveyJson,
};
use crate::records::operation::{record_path, MemoryFigures, OperationRecord};
use crate::records::{AttemptRecord, BuildJson, BuildRecord};
use crate::stages::build::BuildStage;
use crate::stages::kat::KatStage;
use crate::stages::memory::MemoryStage;
use crate::stages::profile::ProfileStage;
use crate::stages::sizes::SizesStage;
use crate::stages::survey::SurveyStage;
use crate::stages::time::TimeStage;

/// Writes every record of the run from `all`.
pub fn write(cx: &Cx, all: &AllResults, started: &str) -> Result<()> {
    write_build_json(cx, all, started)?;
    write_operation_records(cx, all)?;
    super::exact::write(cx, all)?;
    write_analysis_records(cx, all)
}

/// Whether the campaign ran `stage` (selected or required).
fn ran(cx: &Cx, stage: &str) -> bool {
    crate::stages::registry()
        .selected(&cx.plan.stages)
        .iter()
        .any(|s| s.name == stage)
}

/// Copies the chosen attempt's log and KAT file into the run's evidence
/// (from the cache, so a reused result still gets its files).
fn write_kat_evidence(cx: &Cx, inst: &Instance, a: &KatAttempt) -> Result<()> {
    let dir = cx
        .plan
        .output_dir
        .join(crate::records::layout::kat_folder(&inst.algorithm));
    let log = cx
        .cache
        .existing_blob(&a.log_sha256)
        .context("KAT log missing from the cache")?;
    fsutil::copy_atomic(&log, &dir.join(format!("{}.log", inst.label)))?;
    if let Some(sha) = &a.output_sha256 {
        let ext = match inst.api {
            ApiFamily::Nist => "rsp",
            ApiFamily::Ngcc => "kat",
        };
        if let Some(p) = cx.cache.existing_blob(sha) {
            fsutil::copy_atomic(&p, &dir.join(format!("{}.{ext}", inst.label)))?;
        }
    }
    // A hash instance's KAT files, one each: `<label>__<file>.kat`.
    for f in &a.files {
        if let Some(p) = f
            .output_sha256
            .as_ref()
            .and_then(|s| cx.cache.existing_blob(s))
        {
            fsutil::copy_atomic(&p, &dir.join(format!("{}__{}.kat", inst.label, f.file)))?;
        }
    }
    Ok(())
}

fn write_build_json(cx: &Cx, all: &AllResults, written: &str) -> Result<()> {
    let plan = cx.plan;
    let mut instances = Vec::new();
    for inst in &plan.instances {
        let r = all.of(&inst.key());
        let mut rec = BuildRecord {
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
        };
        if let Some(b) = r.get::<BuildStage>() {
            rec.attempts = b
                .attempts
                .iter()
                .map(|a| AttemptRecord {
                    profile: a.profile.clone(),
                    built: a.ok,
                    kat_status: None,
                    detail: (!a.ok).then(|| crate::toolchain::diag::detail(&a.log)),
                })
                .collect();
            if let Some(a) = b.built() {
                rec.profile = Some(a.profile.clone());
                rec.library_sha256 = a.library_sha256.clone();
                rec.load_bytes = a.load_bytes;
            }
        }
        if let Some(k) = r.get::<KatStage>() {
            for a in &k.attempts {
                match rec.attempts.iter_mut().find(|x| x.profile == a.profile) {
                    Some(x) => {
                        x.kat_status = Some(a.status);
                        x.detail = a.detail.clone().or(x.detail.take());
                    }
                    None => rec.attempts.push(AttemptRecord {
                        profile: a.profile.clone(),
                        built: a.library_sha256.is_some(),
                        kat_status: Some(a.status),
                        detail: a.detail.clone(),
                    }),
                }
            }
            let f = k.final_attempt();
            rec.profile = Some(f.profile.clone());
            rec.kat_status = f.status;
            rec.kat_detail = f.detail.clone();
            rec.kat_reference = f.reference.clone();
            rec.library_sha256 = f.library_sha256.clone();
            rec.load_bytes = f.load_bytes;
            write_kat_evidence(cx, inst, f)?;
            rec.kat_log = Some(crate::records::layout::kat_log(
                &inst.algorithm,
                &inst.label,
            ));
            rec.kat_log_sha256 = Some(f.log_sha256.clone());
        }
        if let Some(sha) = &rec.library_sha256 {
            let rel = crate::records::layout::library(&inst.algorithm, &inst.label);
            let blob = cx
                .cache
                .existing_blob(sha)
                .context("library missing from the cache")?;
            let dest = plan.output_dir.join(&rel);
            if fsutil::sha256_file(&dest).ok().as_deref() != Some(sha.as_str()) {
                fsutil::copy_atomic(&blob, &dest)?;
            }
            rec.library = Some(rel);
        }
        instances.push(rec);
    }
    let json = BuildJson {
        campaign: plan.campaign.clone(),
        system: plan.system.clone(),
        written: written.to_string(),
        compiler: cx.compiler.clone(),
        support_version: cx.support_version(),
        flag_profiles: plan.flag_profiles.clone(),
        instances,
    };
    fsutil::write_json(&plan.output_dir.join(crate::records::layout::BUILD), &json)
}

/// The campaign whose result of `stage` this run took, if it took one.
fn lent_by(r: &crate::engine::Results, stage: &str) -> Option<String> {
    r.keys().get(stage).and_then(|k| k.lent_by.clone())
}

/// Writes one record per measured operation (atomically, one file each).
fn write_operation_records(cx: &Cx, all: &AllResults) -> Result<()> {
    for inst in &cx.plan.instances {
        let r = all.of(&inst.key());
        let Some(time) = r.get::<TimeStage>() else {
            continue;
        };
        let alg = cx.plan.algorithm(&inst.algorithm);
        let issues: Vec<String> = alg
            .map(|a| {
                a.issues_for(&inst.label)
                    .iter()
                    .map(|k| k.cause.clone())
                    .collect()
            })
            .unwrap_or_default();
        for t in &time.ops {
            let memory = r.get::<MemoryStage>().and_then(|m| {
                m.ops.iter().find(|o| o.op == t.op).map(|o| MemoryFigures {
                    status: o.status,
                    detail: o.detail.clone(),
                    load_bytes: m.load_bytes,
                    baseline_rss_kib: o.baseline_rss_kib,
                    peak_rss_kib: o.peak_rss_kib,
                    stack_bytes: o.stack_bytes,
                    heap_peak_bytes: o.heap_peak_bytes,
                    heap_allocs: o.heap_allocs,
                    process: o.process.clone(),
                    measured_by: lent_by(r, MemoryStage::NAME),
                })
            });
            let rec = OperationRecord {
                algorithm: inst.algorithm.clone(),
                label: inst.label.clone(),
                op: t.op.clone(),
                started_utc: t.started_utc.clone(),
                kat_status: r
                    .get::<KatStage>()
                    .map(|k| k.status().to_string())
                    .unwrap_or_default(),
                known_issues: issues.clone(),
                status: t.status,
                detail: t.detail.clone(),
                cpu: time.cpu,
                host_fingerprint: time.host_fingerprint.clone(),
                counter: t.counter.clone(),
                counter_hz: t.counter_hz,
                calibration: t.calibration.clone(),
                plan: t.plan.clone(),
                trials_wanted: t.trials_wanted,
                warmup: t.warmup,
                processes: t.processes.clone(),
                trials: t.trials.clone(),
                repeated_trials: t.repeated_trials,
                sign_failures_retried: t.sign_retries,
                setup_sign_failures_retried: t.setup_sign_retries,
                verify_rejects: t.verify_rejects,
                lengths: t.lengths.clone(),
                memory,
                statistics: t.summary.clone(),
                measured_by: lent_by(r, TimeStage::NAME),
                step: t.step.clone(),
            };
            let path = cx
                .plan
                .output_dir
                .join(record_path(&inst.algorithm, &inst.label, &t.op));
            fsutil::write_json(&path, &rec)?;
        }
    }
    Ok(())
}

/// Writes the profile, sizes and survey records present in `results`.
fn write_analysis_records(cx: &Cx, all: &AllResults) -> Result<()> {
    let plan = cx.plan;
    let mut sizes = SizesJson {
        catalog: plan.sizes_catalog.as_ref().map(|p| plan.display_path(p)),
        kex_catalog: plan.kex_catalog.as_ref().map(|p| plan.display_path(p)),
        instances: Vec::new(),
    };
    let mut survey: BTreeMap<String, Vec<SurveyInstance>> = BTreeMap::new();
    for inst in &plan.instances {
        let r = all.of(&inst.key());
        if let Some(p) = r.get::<ProfileStage>() {
            for op in &p.ops {
                let mut rec = ProfileRecord::from_op(&inst.algorithm, &inst.label, &p.wrapped, op);
                rec.measured_by = lent_by(r, ProfileStage::NAME);
                fsutil::write_json(
                    &plan
                        .output_dir
                        .join(profile_path(&inst.algorithm, &inst.label, &op.op)),
                    &rec,
                )?;
            }
        }
        if let Some(s) = r.get::<SizesStage>() {
            sizes.instances.push(SizesRow {
                algorithm: inst.algorithm.clone(),
                label: inst.label.clone(),
                kind: inst.kind,
                figures: s.figures.clone(),
                basis: s.basis.clone(),
                disagreements: s.disagreements.clone(),
            });
        }
        if let Some(s) = r.get::<SurveyStage>() {
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
    if ran(cx, SizesStage::NAME) {
        fsutil::write_json(&plan.output_dir.join(crate::records::layout::SIZES), &sizes)?;
    }
    if ran(cx, SurveyStage::NAME) {
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
            &plan.output_dir.join(crate::records::layout::SURVEY),
            &SurveyJson { algorithms },
        )?;
    }
    Ok(())
}
