//! The records of the opt-in `count` and `ct` stages:
//! `count/<id>/<label>__<op>.json` as counted, and
//! `ct/<id>/<label>__<op>.json` with the algorithm's annotations that apply
//! to the instance and the sites derived with them (so an edited annotation
//! changes the records and pages without checking again).

use anyhow::Result;

use crate::context::Cx;
use crate::engine::AllResults;
use crate::fsutil;
use crate::records::count::count_path;
use crate::records::ct::{ct_path, CtRecord};
use crate::stages::count::CountStage;
use crate::stages::ct::CtStage;

pub fn write(cx: &Cx, all: &AllResults) -> Result<()> {
    let plan = cx.plan;
    for inst in &plan.instances {
        let r = all.of(&inst.key());
        if let Some(c) = r.get::<CountStage>() {
            for rec in &c.ops {
                let path = plan
                    .output_dir
                    .join(count_path(&rec.algorithm, &rec.label, &rec.op));
                fsutil::write_json(&path, rec)?;
            }
        }
        if let Some(c) = r.get::<CtStage>() {
            let annotations: Vec<_> = plan
                .algorithm(&inst.algorithm)
                .map(|a| {
                    a.ct_annotations
                        .iter()
                        .filter(|n| n.applies_to(&inst.label))
                        .cloned()
                        .collect()
                })
                .unwrap_or_default();
            for rec in &c.ops {
                let rec = annotated(rec, &annotations);
                let path = plan
                    .output_dir
                    .join(ct_path(&rec.algorithm, &rec.label, &rec.op));
                fsutil::write_json(&path, &rec)?;
            }
        }
    }
    Ok(())
}

/// The record with `annotations` and everything derived from its errors.
pub fn annotated(rec: &CtRecord, annotations: &[crate::plan::exact::CtAnnotation]) -> CtRecord {
    let mut rec = rec.clone();
    rec.annotations = annotations.to_vec();
    let (status, sites, other) = rec.recomputed();
    rec.status = status;
    rec.sites = sites;
    rec.other_errors = other;
    rec
}
