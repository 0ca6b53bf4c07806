//! Comparison output: Markdown, JSON, CSV, and HTML tables for the
//! reproduction report. Strings from runs and TOMLs are escaped for each
//! format (pipes in Markdown, quotes in CSV, markup in HTML).

use super::{CompareReport, OpComparison, RunInfo, Verdict};
use crate::format;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Markdown,
    Json,
    Csv,
}

impl Format {
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "md" | "markdown" => Some(Format::Markdown),
            "json" => Some(Format::Json),
            "csv" => Some(Format::Csv),
            _ => None,
        }
    }
}

pub fn render(report: &CompareReport, f: Format) -> String {
    match f {
        Format::Markdown => markdown(report),
        Format::Json => {
            let mut s = serde_json::to_string_pretty(report).expect("report serialises");
            s.push('\n');
            s
        }
        Format::Csv => csv(report),
    }
}

/// `0.0123`, `4.5e-07`, `<1e-300` for a p that underflowed.
pub fn p_value(p: f64) -> String {
    if p <= 0.0 {
        "<1e-300".into()
    } else if p < 1e-3 {
        format!("{p:.1e}")
    } else {
        format!("{p:.3}")
    }
}

fn opt_cycles(v: Option<f64>) -> String {
    v.map(format::cycles).unwrap_or_else(|| "–".into())
}

fn ratio(v: Option<f64>) -> String {
    v.map(|r| format!("{r:.3}")).unwrap_or_else(|| "–".into())
}

fn interval(ci: Option<(f64, f64)>) -> String {
    ci.map(|(lo, hi)| format!("{lo:.3}–{hi:.3}"))
        .unwrap_or_else(|| "–".into())
}

/// The verdict as shown in tables, with the reason of an incomparable one.
pub fn verdict_text(o: &OpComparison) -> String {
    match (&o.verdict, &o.reason) {
        (Verdict::Incomparable, Some(r)) => format!("incomparable ({r})"),
        (v, _) => v.as_str().to_string(),
    }
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn short(fp: &Option<String>) -> String {
    fp.as_deref()
        .map(|f| f.chars().take(12).collect())
        .unwrap_or_else(|| "not recorded".into())
}

fn run_rows(a: &RunInfo, b: &RunInfo) -> Vec<(&'static str, String, String)> {
    let or = |v: &Option<String>| v.clone().unwrap_or_else(|| "–".into());
    vec![
        ("Run", a.name.clone(), b.name.clone()),
        ("Campaign", or(&a.campaign), or(&b.campaign)),
        ("System", or(&a.system), or(&b.system)),
        ("Started (UTC)", or(&a.start_utc), or(&b.start_utc)),
        (
            "Host fingerprint",
            short(&a.host_fingerprint),
            short(&b.host_fingerprint),
        ),
    ]
}

pub fn markdown(r: &CompareReport) -> String {
    let mut s = String::from("# Timing comparison\n\n| | Run A | Run B |\n|---|---|---|\n");
    for (k, a, b) in run_rows(&r.a, &r.b) {
        s.push_str(&format!("| {k} | {} | {} |\n", md_cell(&a), md_cell(&b)));
    }
    s.push_str(&format!(
        "\nNoise threshold t = {}.\n\nRule: {}\n\n",
        r.threshold.explanation, r.rule
    ));
    s.push_str(&operations_markdown(&r.operations));
    s.push_str("\n## Geometric mean per algorithm\n\n");
    s.push_str("| Algorithm | Compared | Geomean ratio | Interval | Verdict | Counts |\n");
    s.push_str("|---|---:|---:|---|---|---|\n");
    for g in &r.algorithms {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            md_cell(&g.algorithm),
            g.compared,
            ratio(g.geomean_ratio),
            interval(g.ci),
            g.verdict.as_str(),
            counts_text(&g.counts)
        ));
    }
    s.push_str(&format!("\nTotal: {}.\n", counts_text(&r.counts)));
    s
}

pub fn counts_text(c: &std::collections::BTreeMap<String, usize>) -> String {
    if c.is_empty() {
        return "nothing compared".into();
    }
    c.iter()
        .map(|(k, v)| format!("{v} {k}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The per-operation table (also used by the reproduction report).
pub fn operations_markdown(ops: &[OpComparison]) -> String {
    let mut s = String::from(
        "| Instance | Operation | Median A | Median B | Ratio | 95 % interval | p | Verdict |\n|---|---|---:|---:|---:|---|---:|---|\n",
    );
    for o in ops {
        let v = verdict_text(o);
        let v = if o.verdict == Verdict::Slower || o.verdict == Verdict::Faster {
            format!("**{v}**")
        } else {
            v
        };
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            md_cell(&o.instance),
            md_cell(&o.op),
            opt_cycles(o.median_a),
            opt_cycles(o.median_b),
            ratio(o.ratio),
            interval(o.ci),
            o.p_value.map(p_value).unwrap_or_else(|| "–".into()),
            md_cell(&v)
        ));
    }
    s
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Shortest exact form; scientific below 1e-4 so tiny p-values stay short.
fn num(v: Option<f64>) -> String {
    match v {
        Some(x) if x != 0.0 && x.abs() < 1e-4 => format!("{x:e}"),
        Some(x) => x.to_string(),
        None => String::new(),
    }
}

/// One row per operation, then one `geomean` row per algorithm.
pub fn csv(r: &CompareReport) -> String {
    let mut s = String::from(
        "kind,instance,algorithm,label,op,basis,median_a,median_b,ratio,ci_low,ci_high,p_value,verdict,reason,threshold\n",
    );
    let t = r.threshold.value.to_string();
    for o in &r.operations {
        let row = [
            "operation".to_string(),
            o.instance.clone(),
            o.algorithm.clone(),
            o.label.clone(),
            o.op.clone(),
            o.basis.clone().unwrap_or_default(),
            num(o.median_a),
            num(o.median_b),
            num(o.ratio),
            num(o.ci.map(|c| c.0)),
            num(o.ci.map(|c| c.1)),
            num(o.p_value),
            o.verdict.as_str().to_string(),
            o.reason.clone().unwrap_or_default(),
            t.clone(),
        ];
        push_row(&mut s, &row);
    }
    for g in &r.algorithms {
        let row = [
            "geomean".to_string(),
            String::new(),
            g.algorithm.clone(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            num(g.geomean_ratio),
            num(g.ci.map(|c| c.0)),
            num(g.ci.map(|c| c.1)),
            String::new(),
            g.verdict.as_str().to_string(),
            String::new(),
            t.clone(),
        ];
        push_row(&mut s, &row);
    }
    s
}

fn push_row(s: &mut String, row: &[String]) {
    let cells: Vec<String> = row.iter().map(|c| csv_field(c)).collect();
    s.push_str(&cells.join(","));
    s.push('\n');
}

/// HTML escaping shared with the report pages.
pub use crate::render::chart::escape as html_escape;

/// The per-operation table as HTML, every string escaped.
pub fn operations_html(ops: &[OpComparison]) -> String {
    let mut s = String::from(
        "<table>\n<tr><th>Instance</th><th>Operation</th><th>Median A</th><th>Median B</th><th>Ratio</th><th>95 % interval</th><th>p</th><th>Verdict</th></tr>\n",
    );
    for o in ops {
        let cells = [
            o.instance.clone(),
            o.op.clone(),
            opt_cycles(o.median_a),
            opt_cycles(o.median_b),
            ratio(o.ratio),
            interval(o.ci),
            o.p_value.map(p_value).unwrap_or_else(|| "–".into()),
            verdict_text(o),
        ];
        s.push_str("<tr>");
        for c in cells {
            s.push_str(&format!("<td>{}</td>", html_escape(&c)));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
    s
}
