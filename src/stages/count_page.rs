//! What the count stage puts on the pages: the instruction-count table at
//! the end of an algorithm page's section 4, its files in the evidence
//! index, and how instructions were counted on the method page.

use anyhow::Result;
use serde::Serialize;

use crate::engine::{EvidenceFile, MethodText, PageSection, Part, Slot};
use crate::format::grouped;
use crate::records::count::{CountRecord, ExactStatus, METHOD_PERF};
use crate::records::dataset::Dataset;

/// The method page's section, shared with the ct stage.
pub(super) const METHOD_TITLE: &str = "Instruction counts and constant-time check";

/// The stage's presenter.
pub(super) struct CountPages;

/// One operation's row of the table.
#[derive(Debug, Clone, Serialize)]
struct CountRow {
    label: String,
    op: String,
    /// Instructions per call (exact; the mean when calls differ).
    per_call: String,
    /// `min – max` when the calls differ, else `all equal`.
    spread: String,
    calls: String,
    method: String,
}

#[derive(Serialize)]
struct CountView {
    rows: Vec<CountRow>,
}

impl PageSection for CountPages {
    fn part(
        &self,
        ds: &Dataset,
        algorithm: &str,
        labels: &[String],
        ops: &[&str],
    ) -> Result<Option<Part>> {
        let rows: Vec<CountRow> = labels
            .iter()
            .flat_map(|l| ops.iter().map(move |op| (l, op)))
            .filter_map(|(l, op)| ds.folder::<CountRecord>().get(algorithm, l, op))
            .map(count_row)
            .collect();
        if rows.is_empty() {
            return Ok(None);
        }
        Part::new(Slot::Performance, "counts", &CountView { rows }).map(Some)
    }

    fn evidence(&self, ds: &Dataset, algorithm: &str, label: &str, op: &str) -> Vec<EvidenceFile> {
        EvidenceFile::of_operation::<CountRecord>(ds, "instruction count", algorithm, label, op)
    }

    fn method(&self, ds: &Dataset) -> Option<MethodText> {
        if ds.folder::<CountRecord>().is_empty() {
            return None;
        }
        Some(MethodText {
            title: METHOD_TITLE,
            bullets: method_bullets(ds),
        })
    }

    fn limitations(&self, ds: &Dataset) -> Vec<String> {
        if ds.folder::<CountRecord>().is_empty() {
            return Vec::new();
        }
        vec!["Instruction counts are not cycles: two builds with the same count can differ in time (cache misses, slow instructions), so counts detect changes of work, not of speed.".into()]
    }

    fn templates(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("counts.md", include_str!("templates/counts.md")),
            ("counts.html", include_str!("templates/counts.html")),
        ]
    }
}

/// Instructions per call: exact when the mean is whole (every call equal,
/// or whole on average); else the mean rounded to a whole instruction and
/// marked `≈`, since a count has no fractions (the spread column gives the
/// range of the calls).
fn per_call_text(total: u64, calls: u64) -> String {
    if calls == 0 {
        return DASH.into();
    }
    if total % calls == 0 {
        grouped(total / calls)
    } else {
        // Rounded half up, in integers: no float on a page.
        let rounded = (u128::from(total) + u128::from(calls) / 2) / u128::from(calls);
        format!("≈ {}", grouped(rounded as u64))
    }
}

const DASH: &str = "–";

fn count_row(r: &CountRecord) -> CountRow {
    let (per_call, spread, calls) = match (&r.instructions, r.status) {
        (Some(i), ExactStatus::Ok) => (
            per_call_text(i.total, i.calls),
            if i.min == i.max {
                "all equal".to_string()
            } else {
                format!("{} – {}", grouped(i.min), grouped(i.max))
            },
            format!("{} (after {} warm-up)", i.calls, r.warmup),
        ),
        _ => (
            format!("{}: {}", r.status, r.detail.as_deref().unwrap_or("")),
            DASH.into(),
            DASH.into(),
        ),
    };
    CountRow {
        label: r.label.clone(),
        op: r.op.clone(),
        per_call,
        spread,
        calls,
        method: r.method.clone().unwrap_or_else(|| DASH.into()),
    }
}

/// How instructions were counted.
fn method_bullets(ds: &Dataset) -> Vec<String> {
    let mut bullets = Vec::new();
    let counted: Vec<&CountRecord> = ds
        .folder::<CountRecord>()
        .values()
        .filter(|r| r.status == ExactStatus::Ok)
        .collect();
    let mut methods: Vec<String> = counted
        .iter()
        .filter_map(|r| {
            Some(format!(
                "{} ({})",
                r.method.as_deref()?,
                r.tool.as_deref().unwrap_or("?")
            ))
        })
        .collect();
    methods.sort();
    methods.dedup();
    let calls: Vec<u64> = counted.iter().map(|r| r.per_call.len() as u64).collect();
    let warm: Vec<u64> = counted.iter().map(|r| u64::from(r.warmup)).collect();
    bullets.push(format!(
        "Instruction counts: {}. Each operation runs in one process: setup, {} warm-up call(s), then {} counted call(s); collection is switched on only around each counted call, so setup and warm-ups are excluded as for timing.",
        if methods.is_empty() { "none counted".to_string() } else { methods.join("; ") },
        range_text(&warm),
        range_text(&calls)
    ));
    bullets.push("Callgrind executes every instruction itself: its counts are exact and repeat from run to run on the same host and library, so `compare` and `reproduce` treat any difference as real. A call's count covers the driver's call into the library too (a few dozen instructions).".into());
    if counted
        .iter()
        .any(|r| r.method.as_deref() == Some(METHOD_PERF))
    {
        bullets.push("The hardware `instructions` event counts user-mode instructions retired by the thread; interrupts can add a few instructions to a call.".into());
    }
    let skipped = ds
        .folder::<CountRecord>()
        .values()
        .filter(|r| r.status == ExactStatus::Skipped)
        .find_map(|r| r.detail.clone());
    if let Some(why) = skipped {
        bullets.push(format!("Not counted on this system: {why}."));
    }
    bullets
}

/// `3` or `2–5`: the range of a figure over the records.
pub(super) fn range_text(v: &[u64]) -> String {
    match (v.iter().min(), v.iter().max()) {
        (Some(a), Some(b)) if a == b => a.to_string(),
        (Some(a), Some(b)) => format!("{a}–{b}"),
        _ => DASH.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_call_counts_are_exact_or_marked_rounded() {
        assert_eq!(per_call_text(300, 3), "100");
        assert_eq!(per_call_text(4370306, 3), "≈ 1,456,769");
        assert_eq!(per_call_text(201, 2), "≈ 101");
        assert_eq!(per_call_text(1, 0), DASH);
        assert_eq!(range_text(&[3, 3]), "3");
        assert_eq!(range_text(&[5, 2, 3]), "2–5");
        assert_eq!(range_text(&[]), DASH);
    }
}
