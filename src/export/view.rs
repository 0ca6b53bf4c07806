//! What the Markdown and HTML templates show: the reports' figures already
//! formatted as table cells, so a template only lays them out and escapes
//! them, and both formats say the same thing.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::compare::counts::{CountComparison, CountVerdict};
use crate::compare::{CompareReport, OpComparison, RunInfo, Verdict};
use crate::format;
use crate::reproduce::report::{InstanceCheck, ReproductionReport};
use crate::reproduce::Reproduction;

/// Why a reproduction with changed inputs stopped.
pub(crate) const STOPPED: &str =
    "nothing was run; give --allow-changed to reproduce with the changed inputs";

const NONE: &str = "–";

/// `0.0123`, `4.5e-07`, `<1e-300` for a p that underflowed.
pub(crate) fn p_value(p: f64) -> String {
    if p <= 0.0 {
        "<1e-300".into()
    } else if p < 1e-3 {
        format!("{p:.1e}")
    } else {
        format!("{p:.3}")
    }
}

fn opt_cycles(v: Option<f64>) -> String {
    v.map(format::cycles).unwrap_or_else(|| NONE.into())
}

fn ratio(v: Option<f64>) -> String {
    v.map(|r| format!("{r:.3}")).unwrap_or_else(|| NONE.into())
}

fn interval(ci: Option<(f64, f64)>) -> String {
    ci.map(|(lo, hi)| format!("{lo:.3}–{hi:.3}"))
        .unwrap_or_else(|| NONE.into())
}

/// The verdict as shown in tables, with the reason of an incomparable one.
pub(crate) fn verdict_text(o: &OpComparison) -> String {
    match (&o.verdict, &o.reason) {
        (Verdict::Incomparable, Some(r)) => format!("incomparable ({r})"),
        (v, _) => v.as_str().to_string(),
    }
}

/// `2 within noise, 1 slower`, or `nothing compared`.
pub fn counts_text(c: &BTreeMap<String, usize>) -> String {
    if c.is_empty() {
        return "nothing compared".into();
    }
    c.iter()
        .map(|(k, v)| format!("{v} {k}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A label and a value (a run-table row has two values).
#[derive(Debug, Serialize)]
pub(crate) struct Pair {
    pub key: String,
    pub value: String,
}

#[derive(Debug, Serialize)]
pub(crate) struct RunRow {
    pub key: &'static str,
    pub a: String,
    pub b: String,
}

/// One row of the per-operation table.
#[derive(Debug, Serialize)]
pub(crate) struct OpRow {
    pub instance: String,
    pub op: String,
    pub median_a: String,
    pub median_b: String,
    pub ratio: String,
    pub interval: String,
    pub p: String,
    pub verdict: String,
    /// `faster` or `slower`: shown in bold.
    pub marked: bool,
}

pub(crate) fn op_rows(ops: &[OpComparison]) -> Vec<OpRow> {
    ops.iter()
        .map(|o| OpRow {
            instance: o.instance.clone(),
            op: o.op.clone(),
            median_a: opt_cycles(o.median_a),
            median_b: opt_cycles(o.median_b),
            ratio: ratio(o.ratio),
            interval: interval(o.ci),
            p: o.p_value.map(p_value).unwrap_or_else(|| NONE.into()),
            verdict: verdict_text(o),
            marked: matches!(o.verdict, Verdict::Slower | Verdict::Faster),
        })
        .collect()
}

/// One row of the instruction-count table.
#[derive(Debug, Serialize)]
pub(crate) struct InstrRow {
    pub instance: String,
    pub op: String,
    pub method: String,
    pub a: String,
    pub b: String,
    pub difference: String,
    pub ratio: String,
    pub verdict: String,
    /// A count that changed: shown in bold.
    pub marked: bool,
}

fn per_call(v: Option<f64>) -> String {
    match v {
        Some(x) if x.fract() == 0.0 => format!("{x:.0}"),
        Some(x) => format!("{x:.2}"),
        None => NONE.into(),
    }
}

pub(crate) fn instr_rows(v: &[CountComparison]) -> Vec<InstrRow> {
    v.iter()
        .map(|c| InstrRow {
            instance: c.instance.clone(),
            op: c.op.clone(),
            method: c.method.clone().unwrap_or_else(|| NONE.into()),
            a: per_call(c.per_call_a),
            b: per_call(c.per_call_b),
            difference: c
                .difference
                .map(|d| {
                    if d.fract() == 0.0 {
                        format!("{d:+.0}")
                    } else {
                        format!("{d:+.2}")
                    }
                })
                .unwrap_or_else(|| NONE.into()),
            ratio: c
                .ratio
                .map(|r| format!("{r:.6}"))
                .unwrap_or_else(|| NONE.into()),
            verdict: match (&c.verdict, &c.reason) {
                (CountVerdict::Incomparable, Some(r)) => format!("incomparable ({r})"),
                (v, _) => v.as_str().to_string(),
            },
            marked: matches!(c.verdict, CountVerdict::More | CountVerdict::Fewer),
        })
        .collect()
}

/// `3 identical, 1 more instructions`.
pub(crate) fn instr_counts_text(v: &[CountComparison]) -> String {
    let mut c = BTreeMap::new();
    for x in v {
        *c.entry(x.verdict.as_str().to_string()).or_insert(0) += 1;
    }
    counts_text(&c)
}

#[derive(Debug, Serialize)]
pub(crate) struct GeomeanRow {
    pub algorithm: String,
    pub compared: usize,
    pub ratio: String,
    pub interval: String,
    pub verdict: &'static str,
    pub counts: String,
}

/// `compare.md` / `compare.html`.
#[derive(Debug, Serialize)]
pub(crate) struct CompareView {
    pub runs: Vec<RunRow>,
    pub threshold: String,
    pub rule: String,
    pub operations: Vec<OpRow>,
    pub algorithms: Vec<GeomeanRow>,
    pub total: String,
    pub instructions: Vec<InstrRow>,
    pub instructions_total: String,
}

fn short(fp: &Option<String>) -> String {
    fp.as_deref()
        .map(|f| f.chars().take(12).collect())
        .unwrap_or_else(|| "not recorded".into())
}

fn run_rows(a: &RunInfo, b: &RunInfo) -> Vec<RunRow> {
    let or = |v: &Option<String>| v.clone().unwrap_or_else(|| NONE.into());
    let row = |key, a, b| RunRow { key, a, b };
    vec![
        row("Run", a.name.clone(), b.name.clone()),
        row("Campaign", or(&a.campaign), or(&b.campaign)),
        row("System", or(&a.system), or(&b.system)),
        row("Started (UTC)", or(&a.start_utc), or(&b.start_utc)),
        row(
            "Host fingerprint",
            short(&a.host_fingerprint),
            short(&b.host_fingerprint),
        ),
    ]
}

impl CompareView {
    pub(crate) fn new(r: &CompareReport) -> CompareView {
        CompareView {
            runs: run_rows(&r.a, &r.b),
            threshold: r.threshold.explanation.clone(),
            rule: r.rule.clone(),
            operations: op_rows(&r.operations),
            algorithms: r
                .algorithms
                .iter()
                .map(|g| GeomeanRow {
                    algorithm: g.algorithm.clone(),
                    compared: g.compared,
                    ratio: ratio(g.geomean_ratio),
                    interval: interval(g.ci),
                    verdict: g.verdict.as_str(),
                    counts: counts_text(&g.counts),
                })
                .collect(),
            total: counts_text(&r.counts),
            instructions: instr_rows(&r.instructions),
            instructions_total: instr_counts_text(&r.instructions),
        }
    }
}

#[derive(Debug, Serialize)]
pub(crate) struct InstanceRow {
    pub instance: String,
    pub library: String,
    pub kat: String,
}

/// `reproduction.md` / `reproduction.html`: a reproduction that ran, or one
/// stopped before anything ran (then only the summary).
#[derive(Debug, Serialize)]
pub(crate) struct ReproductionView {
    pub original: String,
    pub summary: Vec<Pair>,
    pub ran: bool,
    pub instances: Vec<InstanceRow>,
    pub rule: String,
    pub operations: Vec<OpRow>,
    pub instructions: Vec<InstrRow>,
    pub stage_errors: Vec<String>,
}

fn pair(key: &str, value: String) -> Pair {
    Pair {
        key: key.into(),
        value,
    }
}

fn hash12(s: &str) -> &str {
    &s[..12.min(s.len())]
}

fn library_text(i: &InstanceCheck) -> String {
    match (&i.library_original, &i.library_reproduced) {
        (Some(a), Some(b)) if a == b => format!("bit-identical ({})", hash12(a)),
        (Some(a), Some(b)) => format!("differs ({} → {})", hash12(a), hash12(b)),
        _ => "missing".into(),
    }
}

fn kat_text(i: &InstanceCheck) -> String {
    let s = |v: &Option<String>| v.clone().unwrap_or_else(|| "none".into());
    match i.kat.as_str() {
        "identical" => format!("identical log ({})", s(&i.kat_status_reproduced)),
        "equivalent" => format!(
            "equivalent ({}; same generated KAT, log differs)",
            s(&i.kat_status_reproduced)
        ),
        other => format!(
            "{other} ({} → {})",
            s(&i.kat_status_original),
            s(&i.kat_status_reproduced)
        ),
    }
}

fn inputs_text(differences: &[String], ran: bool) -> String {
    if differences.is_empty() {
        "identical to the lock".to_string()
    } else if ran {
        format!(
            "changed (reproduced anyway, --allow-changed): {}",
            differences.join("; ")
        )
    } else {
        format!("changed: {}", differences.join("; "))
    }
}

impl ReproductionView {
    pub(crate) fn new(r: &ReproductionReport) -> ReproductionView {
        let result = if r.failures.is_empty() {
            "reproduced".to_string()
        } else {
            format!("NOT reproduced: {}", r.failures.join("; "))
        };
        let fixed = if r.fixed_figures_differing.is_empty() {
            format!("{} identical", r.fixed_figures_identical)
        } else {
            format!(
                "{} identical, differing: {}",
                r.fixed_figures_identical,
                r.fixed_figures_differing.join("; ")
            )
        };
        ReproductionView {
            original: r.original.clone(),
            summary: vec![
                pair("Campaign", format!("{} on {}", r.campaign, r.system)),
                pair("Original run", r.original.clone()),
                pair(
                    "Reproduction",
                    format!("{} (fresh cache: nothing reused)", r.reproduction),
                ),
                pair("Inputs", inputs_text(&r.input_differences, true)),
                pair("Noise threshold", r.timing.threshold.explanation.clone()),
                pair("Timing verdicts", counts_text(&r.timing.counts)),
            ]
            .into_iter()
            .chain((!r.timing.instructions.is_empty()).then(|| {
                pair(
                    "Instruction counts",
                    instr_counts_text(&r.timing.instructions),
                )
            }))
            .chain([
                pair("Fixed figures (lengths, load bytes, stack, heap)", fixed),
                pair("Result", result),
            ])
            .collect(),
            ran: true,
            instances: r
                .instances
                .iter()
                .map(|i| InstanceRow {
                    instance: i.instance.clone(),
                    library: library_text(i),
                    kat: kat_text(i),
                })
                .collect(),
            rule: r.timing.rule.clone(),
            operations: op_rows(&r.timing.operations),
            instructions: instr_rows(&r.timing.instructions),
            stage_errors: r.stage_errors.clone(),
        }
    }

    /// The report of a reproduction, or the summary of one that stopped.
    pub(crate) fn of(r: &Reproduction) -> ReproductionView {
        if let Some(report) = &r.report {
            return ReproductionView::new(report);
        }
        let run = &r.run;
        ReproductionView {
            original: run.run_id.clone(),
            summary: vec![
                pair("Campaign", format!("{} on {}", run.campaign, run.system)),
                pair(
                    "Original run",
                    format!("{} (started {})", run.run_id, run.start_utc),
                ),
                pair("Inputs", inputs_text(&run.input_differences, false)),
                pair("Result", STOPPED.to_string()),
            ],
            ran: false,
            instances: vec![],
            rule: String::new(),
            operations: vec![],
            instructions: vec![],
            stage_errors: vec![],
        }
    }
}
