//! The pages' view of the opt-in `count` and `ct` stages: the
//! instruction-count table of section 4, the "Constant-time check" section,
//! the summary's constant-time column, the method page's section and
//! limitations, and the evidence rows. Everything comes from the records.

use crate::records::count::{CountRecord, ExactStatus, METHOD_PERF};
use crate::records::ct::{CtRecord, CtStatus};

use super::model::{CountRow, CtRow, CtSiteRow, EvidenceRow, ExactView, Link, MethodSection};
use super::rows::DASH;
use crate::records::dataset::Dataset;

/// `1234567` → `1,234,567`.
pub(crate) fn grouped(v: u64) -> String {
    let s = v.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Instructions per call: exact when the mean is whole (every call equal,
/// or whole on average); else the mean rounded to a whole instruction and
/// marked `≈`, since a count has no fractions (the spread column gives the
/// range of the calls).
pub(crate) fn per_call_text(total: u64, calls: u64) -> String {
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

pub(crate) fn view(ds: &Dataset, id: &str, labels: &[String], ops: &[&str]) -> ExactView {
    let mut v = ExactView::default();
    let mut tools: Vec<String> = Vec::new();
    for label in labels {
        for op in ops {
            if let Some(r) = ds.folder::<CountRecord>().get(id, label, op) {
                v.count_rows.push(count_row(r));
            }
            let Some(r) = ds.folder::<CtRecord>().get(id, label, op) else {
                continue;
            };
            tools.extend(r.tool.clone().filter(|t| !tools.contains(t)));
            let annotated = r.annotated();
            v.ct_rows.push(CtRow {
                label: label.clone(),
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
                    format!("{annotated} of {}", r.sites.len())
                },
                detail: ct_detail(r),
            });
            for s in &r.sites {
                let mut kinds = s.kinds.join(", ");
                if !s.via.is_empty() {
                    kinds = format!("{kinds} (in {})", s.via.join(", "));
                }
                v.ct_sites.push(CtSiteRow {
                    label: label.clone(),
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
                });
            }
        }
    }
    if !tools.is_empty() {
        v.ct_tool = tools.join("; ");
    }
    v
}

fn ct_detail(r: &CtRecord) -> String {
    let mut parts = Vec::new();
    match r.status {
        CtStatus::Error | CtStatus::Skipped | CtStatus::Suspicious => {
            parts.extend(r.detail.clone());
        }
        _ => {
            parts.push(format!(
                "{} call{}",
                r.calls,
                if r.calls == 1 { "" } else { "s" }
            ));
            if let Some(d) = r.random_draws {
                parts.push(format!("{d} draw{} marked", if d == 1 { "" } else { "s" }));
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

/// The summary's constant-time cell of one instance, or None without records.
pub(crate) fn summary_cell(ds: &Dataset, id: &str, label: &str, ops: &[&str]) -> Option<String> {
    let recs: Vec<&CtRecord> = ops
        .iter()
        .filter_map(|op| ds.folder::<CtRecord>().get(id, label, op))
        .collect();
    if recs.is_empty() {
        return None;
    }
    let failed: Vec<&str> = recs
        .iter()
        .filter(|r| r.status == CtStatus::Error)
        .map(|r| r.op.as_str())
        .collect();
    if !failed.is_empty() {
        return Some(format!("ct-error ({})", failed.join(", ")));
    }
    if recs.iter().all(|r| r.status == CtStatus::Skipped) {
        return Some("not run".into());
    }
    let sites: usize = recs.iter().map(|r| r.sites.len()).sum();
    let annotated: usize = recs.iter().map(|r| r.annotated()).sum();
    Some(match (sites, annotated) {
        (0, _) => "ct-clean".into(),
        (n, 0) => format!("ct-flagged ({n} site{})", if n == 1 { "" } else { "s" }),
        (n, a) => format!(
            "ct-flagged ({n} site{}, {a} annotated)",
            if n == 1 { "" } else { "s" }
        ),
    })
}

/// Evidence rows of one instance's count and ct records.
pub(crate) fn evidence(ds: &Dataset, id: &str, label: &str, ops: &[&str]) -> Vec<EvidenceRow> {
    let href = |p: &str| format!("../{}/{p}", ds.href);
    let mut out = Vec::new();
    for op in ops {
        if ds.folder::<CountRecord>().contains(id, label, op) {
            let p = crate::records::count::count_path(id, label, op);
            out.push(EvidenceRow {
                label: label.into(),
                item: format!("instruction count {op}"),
                sha256: None,
                file: Link::file(p.clone(), href(&p)),
            });
        }
        if ds.folder::<CtRecord>().contains(id, label, op) {
            let p = crate::records::ct::ct_path(id, label, op);
            out.push(EvidenceRow {
                label: label.into(),
                item: format!("constant-time check {op}"),
                sha256: None,
                file: Link::file(p.clone(), href(&p)),
            });
        }
    }
    out
}

/// The method page's section on both stages (none when neither ran).
pub(crate) fn method_sections(ds: &Dataset) -> Vec<MethodSection> {
    let mut bullets = count_bullets(ds);
    bullets.extend(ct_bullets(ds));
    if bullets.is_empty() {
        return Vec::new();
    }
    vec![MethodSection {
        title: "Instruction counts and constant-time check".into(),
        bullets,
    }]
}

/// How instructions were counted (none without count records).
fn count_bullets(ds: &Dataset) -> Vec<String> {
    if ds.folder::<CountRecord>().is_empty() {
        return Vec::new();
    }
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
    let warm: Vec<u32> = counted.iter().map(|r| r.warmup).collect();
    bullets.push(format!(
        "Instruction counts: {}. Each operation runs in one process: setup, {} warm-up call(s), then {} counted call(s); collection is switched on only around each counted call, so setup and warm-ups are excluded as for timing.",
        if methods.is_empty() { "none counted".to_string() } else { methods.join("; ") },
        range_text(&warm.iter().map(|w| u64::from(*w)).collect::<Vec<_>>()),
        range_text(&calls)
    ));
    bullets.push("Callgrind executes every instruction itself: its counts are exact and repeat from run to run on the same host and library, so `compare` and `reproduce` treat any difference as real. A call's count covers the driver's call into the library too (a few dozen instructions).".into());
    if counted
        .iter()
        .any(|r| r.method.as_deref() == Some(METHOD_PERF))
    {
        bullets.push("The hardware `instructions` event counts user-mode instructions retired by the thread; interrupts can add a few instructions to a call.".into());
    }
    let skipped: Vec<String> = ds
        .folder::<CountRecord>()
        .values()
        .filter(|r| r.status == ExactStatus::Skipped)
        .filter_map(|r| r.detail.clone())
        .collect();
    if let Some(why) = skipped.first() {
        bullets.push(format!("Not counted on this system: {why}."));
    }
    bullets
}

/// How the constant-time check works and what it cost (none without ct
/// records).
fn ct_bullets(ds: &Dataset) -> Vec<String> {
    if ds.folder::<CtRecord>().is_empty() {
        return Vec::new();
    }
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

/// Limitations of both stages, for the method page.
pub(crate) fn limitations(ds: &Dataset) -> Vec<String> {
    let mut out = Vec::new();
    if !ds.folder::<CountRecord>().is_empty() {
        out.push("Instruction counts are not cycles: two builds with the same count can differ in time (cache misses, slow instructions), so counts detect changes of work, not of speed.".into());
    }
    if !ds.folder::<CtRecord>().is_empty() {
        out.push("The constant-time check sees the data flow of the compiled code on this architecture and compiler, with the inputs of this run, not timing itself: variable-time instructions such as division are not flagged, paths these inputs do not take are not seen, and another compiler or flag set can add or remove branches. A clean result is evidence, not proof.".into());
        out.push("memcheck cannot tell secret data from uninitialised memory: a read of uninitialised memory is reported as a site as well. Randomness drawn without crossing an object boundary (a function calling the generator defined in its own file) is not marked.".into());
    }
    out
}

fn range_text(v: &[u64]) -> String {
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
    fn numbers_are_grouped_and_exact() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(1234567), "1,234,567");
        assert_eq!(grouped(123), "123");
        assert_eq!(per_call_text(300, 3), "100");
        assert_eq!(per_call_text(4370306, 3), "≈ 1,456,769");
        assert_eq!(per_call_text(201, 2), "≈ 101");
        assert_eq!(per_call_text(1, 0), DASH);
    }
}
