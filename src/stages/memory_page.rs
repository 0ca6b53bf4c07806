//! What the memory stage puts on the pages: section 5 of an algorithm page,
//! the static size and, per timed operation, the process proxies beside
//! the operation's own stack and heap (the figures the time stage's
//! records carry for it).

use anyhow::Result;
use serde::Serialize;

use crate::engine::{PageSection, Part, Slot};
use crate::measure::memory::{faults_beyond, stack_pages_of};
use crate::records::dataset::Dataset;
use crate::records::operation::OperationRecord;

/// The stage's presenter.
pub(super) struct MemoryPages;

const DASH: &str = "–";

/// One operation's row.
#[derive(Debug, Clone, Serialize)]
struct MemRow {
    label: String,
    op: String,
    static_bytes: String,
    baseline_rss: String,
    peak_rss: String,
    stack_bytes: String,
    heap_peak_bytes: String,
}

#[derive(Serialize)]
struct MemoryView {
    /// Empty when nothing was timed: the template says so.
    rows: Vec<MemRow>,
}

impl PageSection for MemoryPages {
    fn part(
        &self,
        ds: &Dataset,
        algorithm: &str,
        labels: &[String],
        ops: &[&str],
    ) -> Result<Option<Part>> {
        let rows = labels
            .iter()
            .flat_map(|l| ops.iter().map(move |op| (l, *op)))
            .filter_map(|(l, op)| Some(mem_row(ds, l, op, ds.record(algorithm, l, op)?)))
            .collect();
        Part::new(Slot::Resources, "memory", &MemoryView { rows }).map(Some)
    }

    fn limitations(&self, _: &Dataset) -> Vec<String> {
        vec!["Static memory (loadable ELF segments) and RSS include the driver and libc: upper-bound proxies, not isolated algorithm memory. Stack high-water and peak heap are measured per operation.".into()]
    }

    fn templates(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("memory.md", include_str!("templates/memory.md")),
            ("memory.html", include_str!("templates/memory.html")),
        ]
    }
}

fn mem_row(ds: &Dataset, label: &str, op: &str, rec: &OperationRecord) -> MemRow {
    let num = |v: Option<u64>| v.map_or(DASH.to_string(), |v| v.to_string());
    let kib = |v: Option<u64>| v.map_or(DASH.to_string(), crate::format::kib);
    let load = rec.memory.as_ref().and_then(|m| m.load_bytes).or(ds
        .build_record(&rec.algorithm, label)
        .and_then(|b| b.load_bytes));
    let mut row = MemRow {
        label: label.into(),
        op: op.into(),
        static_bytes: num(load),
        baseline_rss: DASH.into(),
        peak_rss: DASH.into(),
        stack_bytes: DASH.into(),
        heap_peak_bytes: DASH.into(),
    };
    match &rec.memory {
        Some(m) if m.status.is_ok() => {
            row.baseline_rss = kib(m.baseline_rss_kib);
            row.peak_rss = kib(m.peak_rss_kib);
            // Where the kernel's page view of the stack reaches further
            // than the paint shows, the kernel's figure stands.
            row.stack_bytes = match stack_pages_of(m.stack_bytes, &m.process) {
                Some(p) => format!("{p} (kernel pages; {} painted)", num(m.stack_bytes)),
                None => num(m.stack_bytes),
            };
            // Memory the kernel faulted in beyond what the call explains
            // stands beside the malloc count, which cannot see it.
            let beyond = faults_beyond(load, m.stack_bytes, m.heap_peak_bytes, &m.process);
            row.heap_peak_bytes = match beyond {
                Some(b) => format!(
                    "{} (malloc; {b} more by kernel faults)",
                    num(m.heap_peak_bytes)
                ),
                None => num(m.heap_peak_bytes),
            };
        }
        Some(m) => row.baseline_rss = m.status.to_string(),
        None => row.baseline_rss = "not measured".into(),
    }
    row
}
