//! What the profile stage puts on the pages: the table of helper shares
//! under an algorithm page's "Symmetric primitives" (each operation's
//! share of time in the profiled helpers, by class, and their calls per
//! operation), its files in the evidence index, and what a profile cannot
//! see on the method page.

use anyhow::Result;
use serde::Serialize;

use crate::engine::{EvidenceFile, PageSection, Part, Slot};
use crate::format;
use crate::measure::profile::class_share;
use crate::records::analysis::ProfileRecord;
use crate::records::dataset::Dataset;
use crate::records::settings::ClassDef;

/// The stage's presenter.
pub(super) struct ProfilePages;

const DASH: &str = "–";

/// One profiled operation's row.
#[derive(Debug, Clone, Serialize)]
struct ShareRow {
    label: String,
    op: String,
    /// One share per helper class of `columns`.
    shares: Vec<String>,
    calls: String,
}

#[derive(Serialize)]
struct ShareView {
    /// The implementations the profiles cover.
    build: String,
    /// The helper classes' titles.
    columns: Vec<String>,
    rows: Vec<ShareRow>,
}

impl PageSection for ProfilePages {
    fn part(
        &self,
        ds: &Dataset,
        algorithm: &str,
        labels: &[String],
        ops: &[&str],
    ) -> Result<Option<Part>> {
        let Some(a) = ds.campaign.algorithms.iter().find(|a| a.id == algorithm) else {
            return Ok(None);
        };
        let classes = a.helper_classes();
        let rows: Vec<ShareRow> = labels
            .iter()
            .flat_map(|l| ops.iter().map(move |op| (l, *op)))
            .filter_map(|(l, op)| Some(share_row(l, op, ds.profile(algorithm, l, op)?, &classes)))
            .collect();
        if rows.is_empty() {
            return Ok(None);
        }
        let mut builds: Vec<&str> = labels
            .iter()
            .filter_map(|l| ds.build_record(algorithm, l))
            .map(|b| b.implementation.as_str())
            .collect();
        builds.dedup();
        let view = ShareView {
            build: builds.join(", "),
            columns: classes.iter().map(|c| c.title.clone()).collect(),
            rows,
        };
        Part::new(Slot::Symmetric, "shares", &view).map(Some)
    }

    fn evidence(&self, ds: &Dataset, algorithm: &str, label: &str, op: &str) -> Vec<EvidenceFile> {
        EvidenceFile::of_operation::<ProfileRecord>(ds, "hash profile", algorithm, label, op)
    }

    fn limitations(&self, _: &Dataset) -> Vec<String> {
        vec!["The helper profile catches only calls that cross an object boundary; wrapper overhead is included in the shares.".into()]
    }

    fn templates(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("shares.md", include_str!("templates/shares.md")),
            ("shares.html", include_str!("templates/shares.html")),
        ]
    }
}

/// One row of the helper-share table: the share of each class, and the
/// calls per operation; a failed profile says why in the first column.
fn share_row(label: &str, op: &str, p: &ProfileRecord, classes: &[ClassDef]) -> ShareRow {
    let ok = p.status.is_ok();
    let shares = classes
        .iter()
        .enumerate()
        .map(|(i, c)| match (ok, i) {
            (true, _) => format::percent(class_share(&p.shapes, p.total_ticks, &c.name)),
            (false, 0) => p.status.to_string(),
            (false, _) => DASH.into(),
        })
        .collect();
    let calls = match (ok, classes.is_empty()) {
        (true, _) => calls_text(p),
        (false, false) => p.detail.clone().unwrap_or_default(),
        (false, true) => {
            let detail = p.detail.as_deref().map(|d| format!(": {d}"));
            format!("{}{}", p.status, detail.unwrap_or_default())
        }
    };
    ShareRow {
        label: label.into(),
        op: op.into(),
        shares,
        calls,
    }
}

/// `drng 289, pseudoXOF 349`: the DRNG helpers summed as `drng` first,
/// then every other helper by name.
fn calls_text(p: &ProfileRecord) -> String {
    let drng: Vec<&str> = p
        .shapes
        .iter()
        .filter(|s| s.class.is_drng())
        .map(|s| s.function.as_str())
        .collect();
    let mut parts = Vec::new();
    let drng_calls: f64 = p
        .calls_per_op
        .iter()
        .filter(|(f, _)| drng.contains(&f.as_str()))
        .map(|(_, v)| v)
        .sum();
    if !drng.is_empty() {
        parts.push(format!("drng {}", format::calls_per_op(drng_calls)));
    }
    for (f, v) in &p.calls_per_op {
        if !drng.contains(&f.as_str()) {
            parts.push(format!("{f} {}", format::calls_per_op(*v)));
        }
    }
    parts.join(", ")
}
