//! CSV of a comparison: one `operation` row per operation, one
//! `instructions` row per counted operation (basis = the counting method,
//! medians = instructions per call), then one `geomean` row per algorithm,
//! under one header. Quoting is the `csv`
//! crate's (only where needed: a delimiter, quote or line break).

use anyhow::{Context, Result};
use serde::Serialize;

use super::Exporter;
use crate::compare::CompareReport;

#[derive(Debug, Clone, Copy, Default)]
pub struct Csv;

/// The header, written even when there are no rows; `Row`'s fields in order.
const HEADER: [&str; 15] = [
    "kind",
    "instance",
    "algorithm",
    "label",
    "op",
    "basis",
    "median_a",
    "median_b",
    "ratio",
    "ci_low",
    "ci_high",
    "p_value",
    "verdict",
    "reason",
    "threshold",
];

/// One line, in `HEADER` order. Numbers are strings so they keep their
/// shortest exact form (see `num`).
#[derive(Debug, Default, Serialize)]
struct Row<'a> {
    kind: &'a str,
    instance: &'a str,
    algorithm: &'a str,
    label: &'a str,
    op: &'a str,
    basis: &'a str,
    median_a: String,
    median_b: String,
    ratio: String,
    ci_low: String,
    ci_high: String,
    p_value: String,
    verdict: &'a str,
    reason: &'a str,
    threshold: String,
}

/// Shortest exact form; scientific below 1e-4 so tiny p-values stay short;
/// empty when absent.
fn num(v: Option<f64>) -> String {
    match v {
        Some(x) if x != 0.0 && x.abs() < 1e-4 => format!("{x:e}"),
        Some(x) => x.to_string(),
        None => String::new(),
    }
}

impl Exporter<CompareReport> for Csv {
    fn export(&self, r: &CompareReport) -> Result<Vec<u8>> {
        let threshold = r.threshold.value.to_string();
        // The serde header would be left out when nothing was compared.
        let mut w = ::csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(Vec::new());
        w.write_record(HEADER).context("writing the CSV header")?;
        for o in &r.operations {
            w.serialize(Row {
                kind: "operation",
                instance: &o.instance,
                algorithm: &o.algorithm,
                label: &o.label,
                op: &o.op,
                basis: o.basis.as_deref().unwrap_or_default(),
                median_a: num(o.median_a),
                median_b: num(o.median_b),
                ratio: num(o.ratio),
                ci_low: num(o.ci.map(|c| c.0)),
                ci_high: num(o.ci.map(|c| c.1)),
                p_value: num(o.p_value),
                verdict: o.verdict.as_str(),
                reason: o.reason.as_deref().unwrap_or_default(),
                threshold: threshold.clone(),
            })
            .context("writing a CSV row")?;
        }
        for c in &r.instructions {
            w.serialize(Row {
                kind: "instructions",
                instance: &c.instance,
                algorithm: &c.algorithm,
                label: &c.label,
                op: &c.op,
                basis: c.method.as_deref().unwrap_or_default(),
                median_a: num(c.per_call_a),
                median_b: num(c.per_call_b),
                ratio: num(c.ratio),
                verdict: c.verdict.as_str(),
                reason: c.reason.as_deref().unwrap_or_default(),
                ..Row::default()
            })
            .context("writing a CSV row")?;
        }
        for g in &r.algorithms {
            w.serialize(Row {
                kind: "geomean",
                algorithm: &g.algorithm,
                ratio: num(g.geomean_ratio),
                ci_low: num(g.ci.map(|c| c.0)),
                ci_high: num(g.ci.map(|c| c.1)),
                verdict: g.verdict.as_str(),
                threshold: threshold.clone(),
                ..Row::default()
            })
            .context("writing a CSV row")?;
        }
        w.into_inner().context("finishing the CSV")
    }
}
