//! The parts of the pages that differ for key exchanges and hashes: the
//! hash performance table (message size, cycles/byte, MB/s), the notes on
//! KEX step timing, the KEX size columns, the hash chart, and the
//! summary's "Key exchange", "Hash functions" and "ICCS hash helpers".

use crate::format;
use crate::kinds::{hash_bytes, is_kex_step, HASH_OPERATIONS};
use crate::kinds::{Kind, PageNotes, Summary};
use crate::plan::iccs::BASELINE_ID;
use crate::records::campaign::AlgorithmInfo;
use crate::records::kat::KatStatus as Status;
use crate::records::operation::OperationRecord;

use super::chart;
use super::chart_lines::{self, Series};
use super::model::*;
use super::presenters::{self, Presenters};
use super::rows::{op_rows, Inst, DASH};
use crate::records::dataset::Dataset;

/// The message sizes the summary shows (32 B, 1 KiB, 64 KiB).
const SUMMARY_SIZES: [u64; 3] = [32, 1024, 65536];

/// `32 B`, `1 KiB`, `64 KiB`.
pub(crate) fn message_size(bytes: u64) -> String {
    if bytes >= 1024 && bytes % 1024 == 0 {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} B")
    }
}

/// Cycles per byte with three significant digits.
pub fn cycles_per_byte(v: f64) -> String {
    format::g(v, 3)
}

/// Megabytes (10^6 bytes) per second with three significant digits.
pub(crate) fn mb_per_s(bytes: u64, seconds: f64) -> String {
    if seconds > 0.0 {
        format::g(bytes as f64 / seconds / 1e6, 3)
    } else {
        DASH.into()
    }
}

/// The category line of section 1.
pub(crate) fn category(kind: Kind) -> &'static str {
    kind.def().category()
}

/// Section 4 of a hash page: one row per (instance, message size).
pub(crate) fn hash_rows(ds: &Dataset, a: &AlgorithmInfo, insts: &[Inst]) -> Vec<HashRow> {
    let mut rows = Vec::new();
    for inst in insts {
        let recs: Vec<(&str, &OperationRecord)> = HASH_OPERATIONS
            .iter()
            .filter_map(|op| ds.record(&a.id, inst.label, op).map(|r| (*op, r)))
            .collect();
        if recs.is_empty() {
            rows.push(HashRow {
                label: inst.label.into(),
                message: DASH.into(),
                mean_cycles: format!("not timed (KAT {})", inst.kat_status()),
                cycles_per_byte: DASH.into(),
                mean_time: DASH.into(),
                mb_per_s: DASH.into(),
                n: DASH.into(),
                notes: String::new(),
            });
        }
        for (op, rec) in recs {
            let bytes = hash_bytes(op).unwrap_or(1);
            let (perf, _) = op_rows(inst, op, rec, "");
            let stats = rec.statistics.as_ref();
            rows.push(HashRow {
                label: inst.label.into(),
                message: message_size(bytes),
                mean_cycles: perf.mean_cycles,
                cycles_per_byte: stats.map_or(DASH.into(), |s| {
                    cycles_per_byte(s.mean_cycles / bytes as f64)
                }),
                mean_time: perf.mean_time,
                mb_per_s: stats.map_or(DASH.into(), |s| mb_per_s(bytes, s.mean_seconds)),
                n: perf.n,
                notes: perf.notes,
            });
        }
    }
    rows
}

/// Median cycles of a record (per-call samples or trial means).
fn median(rec: Option<&OperationRecord>) -> Option<f64> {
    rec?.statistics.as_ref().map(|s| s.median_cycles)
}

/// What a KEX or hash page says below its performance table.
pub(crate) fn notes(ds: &Dataset, a: &AlgorithmInfo) -> Vec<String> {
    match a.kind.def().page_notes() {
        PageNotes::None => Vec::new(),
        PageNotes::Fixed(text) => vec![text.to_string()],
        PageNotes::Steps => step_notes(ds, a),
    }
}

/// How a protocol's steps were timed, and how each instance's step medians
/// add up against its whole exchange.
fn step_notes(ds: &Dataset, a: &AlgorithmInfo) -> Vec<String> {
    let mut out = Vec::new();
    let overheads: Vec<f64> = ds
        .folder::<OperationRecord>()
        .values()
        .filter(|r| r.algorithm == a.id)
        .filter_map(|r| r.step.as_ref()?.counter_overhead_cycles)
        .collect();
    let overhead = if overheads.is_empty() {
        "was not measured".to_string()
    } else {
        format!(
            "is {} cycles per call (median of two back-to-back counter reads, measured in every trial process)",
            format::cycles(crate::stats::median(&overheads))
        )
    };
    out.push(format!(
        "`exchange` is one whole protocol (both initialisations, every pass, both derivations; the secrets' agreement is checked in setup). Each step is timed inside complete protocol runs, the counter read around that one call and the rest of the protocol run untimed, with as many runs per trial as the exchange's plan; the counter's own overhead in every step sample {overhead}."
    ));
    for label in &a.labels {
        let ex = median(ds.record(&a.id, label, "exchange"));
        let steps: Vec<f64> = a
            .kind
            .operations()
            .iter()
            .filter(|op| is_kex_step(op))
            .filter_map(|op| median(ds.record(&a.id, label, op)))
            .collect();
        if let (Some(ex), false) = (ex, steps.is_empty()) {
            let sum: f64 = steps.iter().sum();
            out.push(format!(
                "`{label}`: the step medians add up to {} cycles, the exchange's median is {} ({:+.1} %).",
                format::cycles(sum),
                format::cycles(ex),
                (sum / ex - 1.0) * 100.0
            ));
        }
    }
    out
}

/// Section 6 columns of a KEX: passes, every message any instance sends,
/// the totals, keys and secret.
pub(crate) fn kex_size_columns(ds: &Dataset, a: &AlgorithmInfo) -> Vec<String> {
    let passes = ds
        .sizes
        .iter()
        .flat_map(|s| &s.instances)
        .filter(|r| r.algorithm == a.id)
        .filter_map(|r| r.figures.get("passes")?.shown)
        .max()
        .unwrap_or(0);
    let mut cols = vec!["passes".to_string()];
    cols.extend((1..=passes).map(|k| format!("message {k}")));
    cols.extend(
        [
            "protocol messages",
            "public key A",
            "public key B",
            "bandwidth",
            "secret key",
            "shared secret",
        ]
        .map(String::from),
    );
    cols
}

/// The text above a KEX's size table.
pub(crate) fn kex_sizes_text(catalog: Option<&str>) -> String {
    let base = "Message lengths are those the library returned (the largest over the KAT and timing runs); protocol messages is their sum and bandwidth adds each long-term public key once (0: that party has none); secret key and shared secret are the API caps.";
    match catalog {
        Some(c) => format!(
            "{base} Public keys and protocol-message bytes follow the curated KEX catalog `{c}`."
        ),
        None => base.to_string(),
    }
}

/// A hash page's chart: cycles/byte against message size, log–log, with
/// the ICCS `pseudoXOF` of each width as a dashed baseline.
pub(crate) fn hash_chart(ds: &Dataset, a: &AlgorithmInfo) -> String {
    let mut series: Vec<Series> = a
        .labels
        .iter()
        .filter_map(|l| line(ds, &a.id, l, false))
        .collect();
    if a.id != BASELINE_ID {
        for w in widths(ds, a) {
            series.extend(line(ds, BASELINE_ID, &format!("pseudoXOF-{w}"), true));
        }
    }
    chart_lines::svg(
        &format!("{}: median cycles per byte", a.id),
        "message size",
        "median cycles per byte",
        &series,
    )
}

/// The digest widths of an algorithm's instances, from their sizes.
fn widths(ds: &Dataset, a: &AlgorithmInfo) -> Vec<u64> {
    let mut w: Vec<u64> = a
        .labels
        .iter()
        .filter_map(|l| width(ds, &a.id, l))
        .collect();
    w.sort();
    w.dedup();
    w
}

fn width(ds: &Dataset, id: &str, label: &str) -> Option<u64> {
    ds.sizes
        .as_ref()?
        .instances
        .iter()
        .find(|r| r.algorithm == id && r.label == label)?
        .figures
        .get("digest")?
        .shown
        .map(|b| b * 8)
}

fn line(ds: &Dataset, id: &str, label: &str, dashed: bool) -> Option<Series> {
    let points: Vec<(f64, f64)> = HASH_OPERATIONS
        .iter()
        .filter_map(|op| {
            let bytes = hash_bytes(op)? as f64;
            let s = ds.record(id, label, op)?.statistics.as_ref()?;
            Some((bytes, chart::HEADLINE.of(s).0 / bytes))
        })
        .collect();
    (!points.is_empty()).then(|| Series {
        name: if dashed {
            format!("{label} (ICCS)")
        } else {
            label.to_string()
        },
        points,
        dashed,
    })
}

/// The summary's figure of one message size (the chart's statistic).
fn headline(ds: &Dataset, id: &str, label: &str, bytes: u64) -> Option<f64> {
    ds.record(id, label, &format!("hash_{bytes}"))?
        .statistics
        .as_ref()
        .map(|s| chart::HEADLINE.of(s).0)
}

/// KAT status and known-issue notes of a summary row.
fn row_notes(ds: &Dataset, a: &AlgorithmInfo, label: &str) -> Vec<String> {
    let mut notes = Vec::new();
    let build = ds.build_record(&a.id, label);
    if build.is_none_or(|b| b.kat_status != Status::Pass) {
        notes.push(format!("KAT {}", super::rows::kat_status_text(build)));
    }
    if super::rows::issues_for(a, label)
        .iter()
        .any(|k| k.action == "measure")
    {
        notes.push("⚠ known issue".to_string());
    }
    if ds.suspicious(&a.id, label) {
        notes.push(super::SUSPICIOUS_NOTE.to_string());
    }
    // The same rule as every other table: the mean of a disturbed
    // operation is not to be read as its cost.
    let disturbed: Vec<&str> = a
        .kind
        .operations()
        .iter()
        .copied()
        .filter(|op| {
            ds.record(&a.id, label, op)
                .is_some_and(|r| r.statistics.is_some() && super::rows::disturbance(r).is_some())
        })
        .collect();
    if !disturbed.is_empty() {
        notes.push(format!("⚠ disturbed: {}", disturbed.join(", ")));
    }
    notes
}

/// The method page's bullets on key exchanges and hashes (none when the
/// campaign has neither): each kind's own, in the order of `Kind::ALL`.
pub(crate) fn method_bullets(c: &crate::records::campaign::CampaignRecord) -> Vec<String> {
    let mut out: Vec<String> = Kind::ALL
        .into_iter()
        .filter(|k| c.algorithms.iter().any(|a| a.kind == *k))
        .flat_map(|k| k.def().method_bullets().iter().map(|b| b.to_string()))
        .collect();
    if c.algorithms.iter().any(|a| a.id == BASELINE_ID) {
        out.push("The ICCS helpers (sm3hash 256, pseudohash 512/768/1024, pseudoXOF at every width the hash candidates use) are built from the campaign's ICCS component with pqbench's CryptHash over each, self-checked (sm3hash against GB/T 32905's two published examples, pseudoXOF against KDF-SM3 over that sm3hash) and timed like the candidates, as their baseline.".into());
    }
    out
}

/// An algorithm summarised by message size (a hash).
fn by_size(a: &AlgorithmInfo) -> bool {
    a.kind.def().summary() == Summary::ByMessageSize
}

/// The summary's sections for key exchanges, hash candidates and the ICCS
/// baseline (each only when the dataset has such algorithms).
pub(crate) fn summary_tables(ds: &Dataset, system: &str, stages: Presenters) -> Vec<SummaryTable> {
    let mut out = Vec::new();
    out.extend(kex_table(ds, system, stages));
    out.extend(hash_table(ds, system, false));
    out.extend(hash_table(ds, system, true));
    out
}

fn kex_table(ds: &Dataset, system: &str, stages: Presenters) -> Option<SummaryTable> {
    let mut rows = Vec::new();
    let mut bars = Vec::new();
    for a in ds
        .campaign
        .algorithms
        .iter()
        .filter(|a| a.kind.def().summary() == Summary::Exchange)
    {
        for label in &a.labels {
            let mut notes = row_notes(ds, a, label);
            let cell = match ds.record(&a.id, label, "exchange") {
                None => DASH.to_string(),
                Some(r) => match &r.statistics {
                    None => {
                        notes.push(format!("exchange {}", r.status));
                        r.status.to_string()
                    }
                    Some(s) => {
                        bars.push(chart::Bar::of(
                            chart::HEADLINE,
                            format!("{label} exchange"),
                            s,
                            0,
                        ));
                        match ds
                            .profile(&a.id, label, "exchange")
                            .filter(|p| p.status.is_ok())
                        {
                            Some(p) => format!(
                                "{} ({})",
                                format::cycles(chart::HEADLINE.of(s).0),
                                format::percent(p.hash_share)
                            ),
                            None => format::cycles(chart::HEADLINE.of(s).0),
                        }
                    }
                },
            };
            let bandwidth = ds
                .sizes
                .as_ref()
                .and_then(|s| {
                    s.instances
                        .iter()
                        .find(|r| r.algorithm == a.id && &r.label == label)
                })
                .and_then(|r| r.figures.get("bandwidth")?.shown)
                .map_or(DASH.to_string(), |v| v.to_string());
            rows.push(SummaryRow {
                algorithm: Link::page(a.id.clone(), a.id.clone()),
                name: a.name.clone(),
                label: label.clone(),
                ops: vec![cell],
                sizes: vec![bandwidth],
                notes: notes.join("; "),
                stage_cells: presenters::cells(stages, ds, &a.id, label, &["exchange"]),
                best: super::matrix::best(ds, a, label),
            });
        }
    }
    if rows.is_empty() {
        return None;
    }
    Some(SummaryTable {
        has_matrix: !ds.campaign.matrix.is_empty(),
        kind: "kex".into(),
        heading: "Key exchange".into(),
        ops: vec!["exchange cycles (sym %)".into()],
        size_columns: vec!["transferred bytes".into()],
        stage_columns: presenters::settle_columns(stages, &mut rows),
        rows,
        chart_svg: chart::svg(
            &format!("Key exchange on {system}"),
            chart::HEADLINE,
            &["exchange"],
            &bars,
        ),
        chart_file: "summary-kex.svg".into(),
        note: Some("One whole protocol (both sides, every pass) in median cycles per run, with the share spent in the ICCS hash helpers; transferred bytes are the protocol messages plus each long-term public key once.".into()),
    })
}

fn hash_table(ds: &Dataset, system: &str, baseline: bool) -> Option<SummaryTable> {
    let mut rows = Vec::new();
    let mut series = Vec::new();
    let algs = ds
        .campaign
        .algorithms
        .iter()
        .filter(|a| by_size(a) && (a.id == BASELINE_ID) == baseline);
    for a in algs {
        for label in &a.labels {
            let notes = row_notes(ds, a, label);
            let xof = width(ds, &a.id, label).map(|w| format!("pseudoXOF-{w}"));
            let ops = SUMMARY_SIZES
                .iter()
                .map(|&b| match headline(ds, &a.id, label, b) {
                    None => DASH.to_string(),
                    Some(c) if baseline => format::cycles(c),
                    Some(c) => match xof.as_deref().and_then(|x| headline(ds, BASELINE_ID, x, b)) {
                        Some(base) if base > 0.0 => {
                            format!("{} (×{})", format::cycles(c), format::g(c / base, 3))
                        }
                        _ => format::cycles(c),
                    },
                })
                .collect();
            let cpb = headline(ds, &a.id, label, 65536)
                .map_or(DASH.to_string(), |c| cycles_per_byte(c / 65536.0));
            series.extend(line(ds, &a.id, label, baseline));
            rows.push(SummaryRow {
                algorithm: Link::page(a.id.clone(), a.id.clone()),
                name: a.name.clone(),
                label: label.clone(),
                ops,
                sizes: vec![cpb],
                notes: notes.join("; "),
                stage_cells: Vec::new(),
                best: super::matrix::best(ds, a, label),
            });
        }
    }
    if rows.is_empty() {
        return None;
    }
    if !baseline {
        // The candidates' baseline, dashed: pseudoXOF at each of their widths.
        let mut widths: Vec<u64> = ds
            .campaign
            .algorithms
            .iter()
            .filter(|a| by_size(a) && a.id != BASELINE_ID)
            .flat_map(|a| a.labels.iter().filter_map(|l| width(ds, &a.id, l)))
            .collect();
        widths.sort();
        widths.dedup();
        for w in widths {
            series.extend(line(ds, BASELINE_ID, &format!("pseudoXOF-{w}"), true));
        }
    }
    let (kind, heading, note) = if baseline {
        (
            "iccs",
            "ICCS hash helpers",
            "The ICCS helpers (sm3hash, pseudohash, pseudoXOF) built from the campaign's ICCS component, self-checked against GB/T 32905's published SM3 examples and measured exactly like the hash candidates: their baseline.",
        )
    } else {
        (
            "hash",
            "Hash functions",
            "Median cycles per message of 32 B, 1 KiB and 64 KiB, each with its ratio to the ICCS pseudoXOF of the same digest width (×1 = as fast as the baseline, ×2 = twice its cycles); cycles per byte at 64 KiB. The chart draws that baseline dashed.",
        )
    };
    Some(SummaryTable {
        has_matrix: !ds.campaign.matrix.is_empty(),
        kind: kind.into(),
        heading: heading.into(),
        ops: SUMMARY_SIZES.iter().map(|b| message_size(*b)).collect(),
        size_columns: vec!["cycles/byte at 64 KiB".into()],
        rows,
        stage_columns: Vec::new(),
        chart_svg: chart_lines::svg(
            &format!("{heading} on {system}: median cycles per byte"),
            "message size",
            "median cycles per byte",
            &series,
        ),
        chart_file: format!("summary-{kind}.svg"),
        note: Some(note.into()),
    })
}
