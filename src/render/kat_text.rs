//! What the algorithm page says about KATs, builds and sizes in words,
//! decided from the records so it cannot claim more than they hold: the
//! KAT sentence (actual outcomes, and where each reference came from),
//! the flag profiles in the order they were tried, parameter sets apart
//! from implementations, and variable-length sizes as the maximum with
//! the observed range.

use crate::records::campaign::AlgorithmInfo;
use crate::records::kat::KatStatus as Status;
use crate::records::BuildRecord;
use crate::sizes::SizeFigure;

use super::rows::DASH;

/// The KAT sentence around the manifest path: `lead` comes before
/// "(reference digests in `<manifest>`)", `tail` after it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KatSentence {
    pub lead: String,
    pub tail: String,
}

/// `(label, build record)` of every instance on the page.
pub(crate) fn kat_sentence(insts: &[(&str, Option<&BuildRecord>)]) -> KatSentence {
    let status = |b: Option<&BuildRecord>| b.map(|b| b.kat_status);
    let passed = insts
        .iter()
        .filter(|(_, b)| status(*b) == Some(Status::Pass))
        .count();
    let skipped: Vec<&str> = insts
        .iter()
        .filter(|(_, b)| status(*b) == Some(Status::Skipped))
        .map(|(l, _)| *l)
        .collect();
    let others: Vec<String> = insts
        .iter()
        .filter(|(_, b)| !matches!(status(*b), Some(Status::Pass | Status::Skipped)))
        .map(|(l, b)| format!("{l} {}", super::rows::kat_status_text(*b)))
        .collect();
    // Where the references of the instances that have one came from.
    let mut kinds: Vec<(&str, Vec<&str>)> = Vec::new();
    // The records each published digest covers, for the sentence.
    let mut published_records: Vec<u32> = Vec::new();
    for (label, b) in insts {
        let Some(b) = b else { continue };
        if matches!(
            b.kat_status,
            Status::Nokat | Status::Skipped | Status::Buildfail | Status::NotRun
        ) {
            continue;
        }
        let kind = b.kat_reference.as_deref().unwrap_or("submitted");
        if let Some(n) = b.kat_reference_records.filter(|_| kind == "published") {
            if !published_records.contains(&n) {
                published_records.push(n);
            }
        }
        match kinds.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, v)) => v.push(label),
            None => kinds.push((kind, vec![label])),
        }
    }
    published_records.sort_unstable();
    let published = published_text(&published_records);
    let all_submitted = kinds.iter().all(|(k, _)| *k == "submitted");
    let lead = if others.is_empty() && skipped.len() < insts.len() && all_submitted {
        "Every library reproduced the submitted known-answer tests before it was timed".to_string()
    } else if others.is_empty() && skipped.len() < insts.len() {
        "Every library reproduced its reference known-answer tests before it was timed".to_string()
    } else {
        let n = insts.len() - skipped.len();
        format!(
            "{passed} of {n} {} reproduced {} reference known-answer tests; not {}: {}",
            if n == 1 { "library" } else { "libraries" },
            if n == 1 { "its" } else { "their" },
            if others.len() == 1 {
                "this one"
            } else {
                "these"
            },
            others.join(", ")
        )
    };
    let mut tail = String::new();
    let plain = all_submitted && others.is_empty();
    if !plain && !kinds.is_empty() {
        let several = kinds.len() > 1;
        let parts: Vec<String> = kinds
            .iter()
            .map(|(k, labels)| {
                let what = match *k {
                    "published" => published.as_str(),
                    "blessed" => "blessed from pqbench's own earlier output (a regression check, not an independent reference)",
                    "generated" => "the KAT files the submission's own generator wrote, built by its own build at import",
                    "checked" => "pqbench's own KAT files, accepted at import by the KAT checker the submission's own build made (which rejected a copy with one digit changed)",
                    crate::kat::provenance::BUILT_IN => "the known answers built into pqbench's support code for the ICCS helpers (checked against independent implementations by its test suite)",
                    _ => "the submitted KAT files",
                };
                if several {
                    format!("{what} for {}", labels.join(", "))
                } else {
                    what.to_string()
                }
            })
            .collect();
        tail = format!("; references: {}", parts.join("; "));
    }
    if !skipped.is_empty() {
        tail.push_str(&format!(
            "; not built on this system (written for another architecture, or needing a CPU feature it lacks: each footnote says which): {}",
            skipped.join(", ")
        ));
    }
    tail.push('.');
    KatSentence { lead, tail }
}

/// What the published digests cover: the records of the KAT files they
/// are the digests of, as the KAT stage recorded them (none recorded by
/// an older run).
fn published_text(records: &[u32]) -> String {
    match records {
        [] => "published digests from the scheme's metadata".into(),
        [1] => "published single-record digests from the scheme's metadata".into(),
        [n] => format!("published digests of {n}-record KAT files from the scheme's metadata"),
        _ => {
            let n: Vec<String> = records.iter().map(u32::to_string).collect();
            format!(
                "published digests of KAT files of {} records from the scheme's metadata",
                n.join(" or ")
            )
        }
    }
}

/// The flag profiles in the order they were tried, each with its outcome,
/// and which one the measured library was built with when it was not the
/// last: `guide: MISMATCH → harness-default: PASS`.
pub(crate) fn attempts_text(b: Option<&BuildRecord>) -> String {
    let Some(b) = b else { return DASH.into() };
    let Some(profile) = &b.profile else {
        return "no profile built".into();
    };
    if b.attempts.len() <= 1 {
        return profile.clone();
    }
    let parts: Vec<String> = b
        .attempts
        .iter()
        .map(|t| {
            let outcome = t.kat_status.map_or_else(
                || if t.built { "built" } else { "build failed" }.to_string(),
                |s| s.to_string(),
            );
            format!("{}: {outcome}", t.profile)
        })
        .collect();
    let mut s = parts.join(" → ");
    if b.attempts.last().is_some_and(|t| &t.profile != profile) {
        s.push_str(&format!(" ({profile} used)"));
    }
    s
}

/// The parameter-set labels of an algorithm: instance labels without the
/// `.<implementation>` suffix the other implementations add, in order.
pub(crate) fn parameter_sets(a: &AlgorithmInfo) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for label in &a.labels {
        let base = a
            .implementations
            .iter()
            .skip(1)
            .find_map(|i| label.strip_suffix(&format!(".{i}")))
            .unwrap_or(label);
        if !out.iter().any(|o| o == base) {
            out.push(base.to_string());
        }
    }
    out
}

/// A size cell: the figure shown, and when the library returned shorter
/// lengths too, the observed range: `666 (576–660)`. The flag says the
/// cell needs the page's note on variable lengths.
pub(crate) fn size_cell(f: Option<&SizeFigure>) -> (String, bool) {
    let Some(shown) = f.and_then(|f| f.shown) else {
        return (DASH.to_string(), false);
    };
    let f = f.expect("a shown figure has its record");
    match (f.observed_min, f.observed) {
        (Some(lo), Some(hi)) if lo < shown || hi < shown => {
            let range = if lo == hi {
                lo.to_string()
            } else {
                format!("{lo}–{hi}")
            };
            (format!("{shown} ({range})"), true)
        }
        _ => (shown.to_string(), false),
    }
}

/// The note under the sizes table when a cell shows a range.
pub(crate) const VARIABLE_NOTE: &str = "Variable-length outputs: the figure is the maximum (API or catalog), in parentheses the shortest and longest lengths the library returned in its KAT and timing runs.";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::AttemptRecord;

    fn rec(status: &str, reference: Option<&str>) -> BuildRecord {
        BuildRecord {
            algorithm: "x".into(),
            label: "L".into(),
            implementation: "clean".into(),
            kind: crate::plan::Kind::Sign,
            api: crate::plan::ApiFamily::Nist,
            profile: Some("guide".into()),
            attempts: vec![],
            kat_status: crate::kat::Status::parse(status).expect("a KAT status"),
            kat_detail: None,
            library: None,
            library_sha256: None,
            load_bytes: None,
            kat_log: None,
            kat_log_sha256: None,
            kat_records: 100,
            defines: vec![],
            sources: vec![],
            kat_reference_records: reference.map(|_| 100),
            kat_reference: reference.map(String::from),
        }
    }

    #[test]
    fn the_sentence_follows_outcomes_and_provenance() {
        let pass = rec("PASS", None);
        let s = kat_sentence(&[("A", Some(&pass))]);
        assert_eq!(
            s.lead,
            "Every library reproduced the submitted known-answer tests before it was timed"
        );
        assert_eq!(s.tail, ".");
        let mism = rec("MISMATCH", Some("published"));
        let s = kat_sentence(&[("A", Some(&pass)), ("A.avx2", Some(&mism))]);
        assert_eq!(
            s.lead,
            "1 of 2 libraries reproduced their reference known-answer tests; not this one: A.avx2 MISMATCH"
        );
        assert!(
            s.tail.contains("the submitted KAT files for A"),
            "{}",
            s.tail
        );
        assert!(
            s.tail
                .contains("published digests of 100-record KAT files from the scheme's metadata"),
            "{}",
            s.tail
        );
        let mut single = rec("PASS", Some("published"));
        single.kat_reference_records = Some(1);
        let s = kat_sentence(&[("A", Some(&single))]);
        assert!(
            s.tail.contains("published single-record digests"),
            "{}",
            s.tail
        );
        let s = kat_sentence(&[("A", Some(&single)), ("A.avx2", Some(&mism))]);
        assert!(
            s.tail.contains("KAT files of 1 or 100 records"),
            "{}",
            s.tail
        );
        let blessed = rec("PASS", Some("blessed"));
        let s = kat_sentence(&[("A", Some(&blessed))]);
        assert!(
            s.lead.starts_with("Every library reproduced its reference"),
            "{}",
            s.lead
        );
        assert!(
            s.tail.contains("blessed from pqbench's own earlier output"),
            "{}",
            s.tail
        );
        assert!(!s.lead.contains("submitted"));
    }

    #[test]
    fn attempts_are_listed_in_the_order_tried() {
        let mut b = rec("MISMATCH", None);
        b.attempts = ["guide", "harness-default"]
            .iter()
            .map(|p| AttemptRecord {
                profile: p.to_string(),
                built: true,
                kat_status: Some(crate::kat::Status::Mismatch),
                detail: None,
            })
            .collect();
        assert_eq!(
            attempts_text(Some(&b)),
            "guide: MISMATCH → harness-default: MISMATCH (guide used)"
        );
        b.attempts[1].kat_status = Some(crate::kat::Status::Pass);
        b.profile = Some("harness-default".into());
        assert_eq!(
            attempts_text(Some(&b)),
            "guide: MISMATCH → harness-default: PASS"
        );
    }

    #[test]
    fn variable_lengths_show_the_observed_range() {
        let f = SizeFigure {
            api: Some(666),
            observed: Some(660),
            observed_min: Some(576),
            catalog: None,
            shown: Some(666),
            shown_from: "api".into(),
        };
        assert_eq!(size_cell(Some(&f)), ("666 (576–660)".into(), true));
        let fixed = SizeFigure {
            observed_min: Some(666),
            observed: Some(666),
            ..f
        };
        assert_eq!(size_cell(Some(&fixed)), ("666".into(), false));
    }
}
