//! What the ct stage puts on the pages: the "Constant-time check" part of
//! an algorithm page (before the evidence index), the summary's
//! constant-time column, its files in the evidence index, and how the
//! check works, what it cost and what it cannot show on the method page.

use anyhow::Result;
use serde::Serialize;

use super::count_page::{range_text, METHOD_TITLE};
use crate::engine::{EvidenceFile, MethodText, PageSection, Part, Slot};
use crate::records::ct::{CtRecord, CtStatus};
use crate::records::dataset::Dataset;

/// The stage's presenter.
pub(super) struct CtPages;

const DASH: &str = "–";

/// One operation's row of the table.
#[derive(Debug, Clone, Serialize)]
struct CtRow {
    label: String,
    op: String,
    status: String,
    secrets: String,
    annotated: String,
    detail: String,
}

/// One site memcheck reported, with its annotation.
#[derive(Debug, Clone, Serialize)]
struct CtSiteRow {
    label: String,
    op: String,
    location: String,
    function: String,
    kinds: String,
    occurrences: u64,
    /// The annotation's reason, or empty.
    reason: String,
    pattern: String,
}

#[derive(Debug, Default, Serialize)]
struct CtView {
    rows: Vec<CtRow>,
    sites: Vec<CtSiteRow>,
    /// e.g. `valgrind-3.19.0 memcheck; library rebuilt with -g`.
    tool: String,
}

impl PageSection for CtPages {
    fn part(
        &self,
        ds: &Dataset,
        algorithm: &str,
        labels: &[String],
        ops: &[&str],
    ) -> Result<Option<Part>> {
        let mut v = CtView::default();
        let mut tools: Vec<String> = Vec::new();
        for label in labels {
            for op in ops {
                let Some(r) = ds.folder::<CtRecord>().get(algorithm, label, op) else {
                    continue;
                };
                tools.extend(r.tool.clone().filter(|t| !tools.contains(t)));
                v.rows.push(ct_row(r, label, op));
                v.sites
                    .extend(r.sites.iter().map(|s| site_row(s, label, op)));
            }
        }
        if v.rows.is_empty() {
            return Ok(None);
        }
        v.tool = tools.join("; ");
        Part::new(Slot::BeforeEvidence, "ct", &v).map(Some)
    }

    fn summary_column(&self) -> Option<&'static str> {
        Some("constant time")
    }

    fn summary_cell(
        &self,
        ds: &Dataset,
        algorithm: &str,
        label: &str,
        ops: &[&str],
    ) -> Option<String> {
        let recs: Vec<&CtRecord> = ops
            .iter()
            .filter_map(|op| ds.folder::<CtRecord>().get(algorithm, label, op))
            .collect();
        (!recs.is_empty()).then(|| summary_text(&recs))
    }

    fn evidence(&self, ds: &Dataset, algorithm: &str, label: &str, op: &str) -> Vec<EvidenceFile> {
        EvidenceFile::of_operation::<CtRecord>(ds, "constant-time check", algorithm, label, op)
    }

    fn method(&self, ds: &Dataset) -> Option<MethodText> {
        if ds.folder::<CtRecord>().is_empty() {
            return None;
        }
        Some(MethodText {
            title: METHOD_TITLE,
            bullets: method_bullets(ds),
        })
    }

    fn limitations(&self, ds: &Dataset) -> Vec<String> {
        if ds.folder::<CtRecord>().is_empty() {
            return Vec::new();
        }
        vec![
            "The constant-time check sees the data flow of the compiled code on this architecture and compiler, with the inputs of this run, not timing itself: variable-time instructions such as division are not flagged, paths these inputs do not take are not seen, and another compiler or flag set can add or remove branches. A clean result is evidence, not proof.".into(),
            "memcheck cannot tell secret data from uninitialised memory: a read of uninitialised memory is reported as a site as well. Randomness drawn without crossing an object boundary (a function calling the generator defined in its own file) is not marked.".into(),
        ]
    }

    fn templates(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("ct.md", include_str!("templates/ct.md")),
            ("ct.html", include_str!("templates/ct.html")),
        ]
    }
}

fn ct_row(r: &CtRecord, label: &str, op: &str) -> CtRow {
    CtRow {
        label: label.to_string(),
        op: op.to_string(),
        status: r.status_text(),
        secrets: if r.secrets.is_empty() {
            DASH.into()
        } else {
            r.secrets.join(", ")
        },
        annotated: if r.sites.is_empty() {
            DASH.into()
        } else {
            format!("{} of {}", r.annotated(), r.sites.len())
        },
        detail: ct_detail(r),
    }
}

fn site_row(s: &crate::records::ct::CtSite, label: &str, op: &str) -> CtSiteRow {
    let mut kinds = s.kinds.join(", ");
    if !s.via.is_empty() {
        kinds = format!("{kinds} (in {})", s.via.join(", "));
    }
    CtSiteRow {
        label: label.to_string(),
        op: op.to_string(),
        location: s.location(),
        function: s.function.clone(),
        kinds,
        occurrences: s.occurrences,
        reason: s
            .annotation
            .as_ref()
            .map(|a| a.reason.clone())
            .unwrap_or_default(),
        pattern: s
            .annotation
            .as_ref()
            .map(|a| a.site.clone())
            .unwrap_or_default(),
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn ct_detail(r: &CtRecord) -> String {
    let mut parts = Vec::new();
    match r.status {
        CtStatus::Error | CtStatus::Skipped | CtStatus::Suspicious => {
            parts.extend(r.detail.clone());
        }
        _ => {
            parts.push(format!("{} call{}", r.calls, plural(r.calls)));
            if let Some(d) = r.random_draws {
                parts.push(format!("{d} draw{} marked", plural(d)));
            }
        }
    }
    if r.other_errors > 0 {
        parts.push(format!(
            "{} other memcheck error(s) in the library",
            r.other_errors
        ));
    }
    parts.join("; ")
}

/// The summary's constant-time cell over one instance's records.
fn summary_text(recs: &[&CtRecord]) -> String {
    let failed: Vec<&str> = recs
        .iter()
        .filter(|r| r.status == CtStatus::Error)
        .map(|r| r.op.as_str())
        .collect();
    if !failed.is_empty() {
        return format!("ct-error ({})", failed.join(", "));
    }
    if recs.iter().all(|r| r.status == CtStatus::Skipped) {
        return "not run".into();
    }
    let sites: usize = recs.iter().map(|r| r.sites.len()).sum();
    let annotated: usize = recs.iter().map(|r| r.annotated()).sum();
    let s = plural(sites as u64);
    match (sites, annotated) {
        (0, _) => "ct-clean".into(),
        (n, 0) => format!("ct-flagged ({n} site{s})"),
        (n, a) => format!("ct-flagged ({n} site{s}, {a} annotated)"),
    }
}

/// How the check works and what it cost.
fn method_bullets(ds: &Dataset) -> Vec<String> {
    let mut bullets = Vec::new();
    let run: Vec<&CtRecord> = ds
        .folder::<CtRecord>()
        .values()
        .filter(|r| matches!(r.status, CtStatus::Clean | CtStatus::Flagged))
        .collect();
    let mut tools: Vec<&str> = run.iter().filter_map(|r| r.tool.as_deref()).collect();
    tools.sort();
    tools.dedup();
    let mut symbols: Vec<&str> = run
        .iter()
        .filter_map(|r| r.random_symbol.as_deref())
        .collect();
    symbols.sort();
    symbols.dedup();
    bullets.push(format!(
        "Constant-time check: {} on each instance rebuilt with its flag profile plus `-g` (the same code, with line tables). Before each checked operation the secret key (signing, decapsulation) is marked undefined, and so is every byte of randomness the submission draws (`{}`, wrapped at link time); public outputs (public key, signature, ciphertext, lengths) are marked defined after it. A key exchange is checked on its whole `exchange`: both parties' secrets come from marked draws, and what each step sends the other party (public keys, messages, lengths) is marked defined as the step returns.",
        if tools.is_empty() { "memcheck".to_string() } else { tools.join(", ") },
        if symbols.is_empty() { "randombytes / get_random_number".to_string() } else { symbols.join("`, `") }
    ));
    bullets.push("memcheck reports every conditional branch (`branch`) and every memory address (`memory index`) computed from undefined data while the operation runs; each report belongs to the innermost line of the instance's own code on its stack (reports only in pqbench's driver or adapter are not the instance's). Sites are deduplicated per operation. Statuses: `ct-clean`, `ct-flagged (N sites)`, `ct-error`; an algorithm's TOML may annotate a site with the reason it is acceptable (e.g. rejection sampling on a value that is public by design), shown beside the site, never hiding it.".into());
    let unchecked: Vec<&str> = ds
        .campaign
        .algorithms
        .iter()
        .filter(|a| !a.kind.ct_checked())
        .map(|a| a.id.as_str())
        .collect();
    if !unchecked.is_empty() {
        bullets.push(format!(
            "Not checked: {} — a hash's message is public input.",
            unchecked.join(", ")
        ));
    }
    if !run.is_empty() {
        let secs: f64 = run.iter().filter_map(|r| r.seconds).sum();
        let calls: Vec<u64> = run.iter().map(|r| r.calls).collect();
        bullets.push(format!(
            "Cost: {} checked operations, {} call(s) each, {} per operation on average under memcheck (start-up and setup included).",
            run.len(),
            range_text(&calls),
            crate::format::duration(secs / run.len() as f64)
        ));
    }
    if let Some(why) = ds
        .folder::<CtRecord>()
        .values()
        .find(|r| r.status == CtStatus::Skipped)
        .and_then(|r| r.detail.clone())
    {
        bullets.push(format!("Not checked on this system: {why}."));
    }
    bullets
}
