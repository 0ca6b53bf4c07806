//! The evidence index of the algorithm page: per instance, its KAT log,
//! its timing records, then operation by operation the files of the stages
//! that present themselves (hash profile, instruction count, constant-time
//! check, in registry order), each linked into the dataset.

use crate::format;
use crate::records::campaign::AlgorithmInfo;

use super::super::model::{EvidenceRow, Link};
use super::super::presenters::{self, Presenters};
use super::super::rows::Inst;
use crate::records::dataset::Dataset;

pub(super) fn index(
    ds: &Dataset,
    a: &AlgorithmInfo,
    insts: &[Inst],
    stages: Presenters,
) -> Vec<EvidenceRow> {
    let ops = a.kind.operations();
    let mut rows = Vec::new();
    for inst in insts {
        rows.extend(kat_log(ds, inst));
        rows.extend(timing(ds, a, inst));
        rows.extend(presenters::evidence(stages, ds, &a.id, inst.label, ops));
    }
    rows
}

/// A record file's row: the link is relative to the dataset.
fn row(
    ds: &Dataset,
    inst: &Inst,
    item: String,
    sha256: Option<String>,
    path: String,
) -> EvidenceRow {
    let href = format!("../{}/{path}", ds.href);
    EvidenceRow {
        label: inst.label.into(),
        item,
        sha256,
        file: Link::file(path, href),
    }
}

fn kat_log(ds: &Dataset, inst: &Inst) -> Option<EvidenceRow> {
    // Never built here: its page says why, and no KAT ran.
    let b = inst
        .build
        .filter(|b| b.kat_status != crate::records::kat::KatStatus::Skipped)?;
    let log = b.kat_log.as_ref()?;
    Some(row(
        ds,
        inst,
        "KAT log".into(),
        b.kat_log_sha256.as_deref().map(format::hex_prefix),
        log.clone(),
    ))
}

fn timing(ds: &Dataset, a: &AlgorithmInfo, inst: &Inst) -> Vec<EvidenceRow> {
    super::timing::timed_records(ds, a, inst.label)
        .into_iter()
        .map(|(op, _)| {
            let p = crate::records::operation::record_path(&a.id, inst.label, op);
            row(ds, inst, format!("timing {op}"), None, p)
        })
        .collect()
}
