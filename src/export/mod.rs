//! Exporters of the `compare` and `reproduce` reports: one small module per
//! output format behind one trait, after hyperfine's `src/export/`.
//!
//! The library builds report values (`compare::CompareReport`,
//! `reproduce::Reproduction`, `reproduce::report::ReproductionReport`) and
//! prints nothing; an exporter turns one into bytes, and the binary writes
//! them to stdout or a file. Markdown and HTML go through built-in minijinja
//! templates (`templates/`) rendered in the report pages' environment, so
//! HTML auto-escapes every value exactly as the pages do; CSV goes through
//! the `csv` crate and JSON through serde.
//!
//! | format   | compare | reproduce (stdout) | reproduction files |
//! |----------|---------|--------------------|--------------------|
//! | text     |         | yes                |                    |
//! | Markdown | yes     | yes                | `reproduction.md`  |
//! | HTML     | yes     |                    | `reproduction.html`|
//! | CSV      | yes     |                    |                    |
//! | JSON     | yes     | yes                | `reproduction.json`|

pub mod csv;
pub mod html;
pub mod json;
pub mod markdown;
pub mod text;
pub(crate) mod view;

use std::path::Path;

use anyhow::{Context, Result};
use minijinja::Environment;
use serde::Serialize;

use crate::fsutil;
use crate::reproduce::report::{self, ReproductionReport};
use html::Html;
use json::Json;
use markdown::Markdown;

pub use view::counts_text;

/// Turns a report into the bytes of one output format.
pub trait Exporter<R: ?Sized> {
    fn export(&self, report: &R) -> Result<Vec<u8>>;
}

/// The templates of these reports, by name. None of them names a page
/// template, so the pages' `layout.html` is shared and nothing clashes.
const TEMPLATES: &[(&str, &str)] = &[
    ("operations.md", include_str!("templates/operations.md")),
    ("compare.md", include_str!("templates/compare.md")),
    ("reproduction.md", include_str!("templates/reproduction.md")),
    ("operations.html", include_str!("templates/operations.html")),
    ("compare.html", include_str!("templates/compare.html")),
    (
        "reproduction.html",
        include_str!("templates/reproduction.html"),
    ),
];

/// A Markdown table cell: a pipe would split the cell and a newline end the
/// row. Angle brackets are left alone (unlike the pages' `md` filter) so
/// the Markdown reports read as they always have; HTML output is escaped by
/// the environment instead.
fn cell_filter(s: String) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// The report pages' environment (auto-escaping `.html`, strict undefined
/// values, the same whitespace rules and filters) with these templates
/// added. A campaign's template directory does not apply: these reports
/// are not pages of a campaign.
pub fn environment() -> Environment<'static> {
    let mut env = crate::render::environment(None, &[]);
    for (name, source) in TEMPLATES {
        env.add_template(name, source)
            .expect("built-in export templates compile");
    }
    env.add_filter("cell", cell_filter);
    env
}

/// Renders the built-in template `name` with `view`.
fn render<T: Serialize>(name: &str, view: &T) -> Result<Vec<u8>> {
    let env = environment();
    let tmpl = env
        .get_template(name)
        .with_context(|| format!("loading template {name}"))?;
    let text = tmpl
        .render(view)
        .map_err(|e| anyhow::anyhow!("rendering {name}: {e:#}"))?;
    Ok(text.into_bytes())
}

/// Writes `reproduction.{md,html,json}` into `dir`: the reproducing run's
/// record of what it found, beside its lock (`reproduce` calls it through
/// the writer its caller hands over).
pub fn write_reproduction(dir: &Path, r: &ReproductionReport) -> Result<()> {
    let files: [(&str, &dyn Exporter<ReproductionReport>); 3] = [
        (report::MARKDOWN_FILE, &Markdown),
        (report::HTML_FILE, &Html),
        (report::JSON_FILE, &Json),
    ];
    for (name, exporter) in files {
        let path = dir.join(name);
        let bytes = exporter
            .export(r)
            .with_context(|| format!("exporting {}", path.display()))?;
        fsutil::write_atomic(&path, &bytes)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::{default, run, samples};
    use crate::compare::{compare_runs, CompareReport};
    use crate::export::{csv::Csv, html::Html, json::Json, markdown::Markdown};
    use crate::records::testutil::record;

    #[test]
    fn every_template_compiles_and_cells_stay_in_their_row() {
        let env = environment();
        for (name, _) in TEMPLATES {
            env.get_template(name)
                .unwrap_or_else(|e| panic!("{name}: {e:#}"));
        }
        assert_eq!(cell_filter("a|b\nc\r".into()), "a\\|b c ");
    }

    #[test]
    fn outputs_escape_and_carry_every_row() {
        let a = run("h", vec![record("sign", "tsc", &samples(1e5, 3, 20, 1))]);
        let mut b = run("h", vec![record("sign", "tsc", &samples(1e5, 3, 20, 2))]);
        b.info.name = "x|<b>,\"y\"".into();
        let r = compare_runs(&a, &b, default(&a, &b));
        let md = export(&Markdown, &r);
        assert!(
            md.contains("x\\|<b>") && md.contains("| sign-1/L | sign |"),
            "{md}"
        );
        let csv = export(&Csv, &r);
        assert_eq!(csv.lines().count(), 3, "{csv}");
        assert!(csv
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("operation,sign-1/L,sign-1,L,sign,"));
        let json: CompareReport = serde_json::from_str(&export(&Json, &r)).unwrap();
        assert_eq!(json.operations.len(), 1);
        let html = export(&Html, &r);
        assert!(
            html.contains("<td>x|&lt;b&gt;,&quot;y&quot;</td>") && !html.contains("<b>"),
            "{html}"
        );
    }

    fn export(e: &dyn crate::export::Exporter<CompareReport>, r: &CompareReport) -> String {
        String::from_utf8(e.export(r).unwrap()).unwrap()
    }

    #[test]
    fn reproduction_html_escapes_what_runs_and_tomls_wrote() {
        use crate::compare::{compare_runs, Threshold};
        use crate::reproduce::report::build;
        use crate::reproduce::report::tests::{locks, run as reproduction_run};
        let (a, b) = (
            reproduction_run("A", 1000, None),
            reproduction_run("B", 1000, None),
        );
        let timing = compare_runs(&a, &b, Threshold::given(0.1));
        let (la, lb) = locks("lib", ("PASS", "log", "out"));
        let mut r = build(
            &la,
            &lb,
            (&a, &b),
            vec!["sources changed: <b>x.c".into()],
            timing,
            vec![],
        );
        r.instances[0].instance = "<script>alert(1)</script>".into();
        let html = String::from_utf8(Html.export(&r).unwrap()).unwrap();
        assert!(
            !html.contains("<script>") && !html.contains("<b>"),
            "{html}"
        );
        assert!(html.contains("&lt;script&gt;") && html.contains("&lt;b&gt;x.c"));
        let md = String::from_utf8(Markdown.export(&r).unwrap()).unwrap();
        assert!(
            md.contains("sources changed: <b>x.c") && md.contains("| sign-1/L | sign |"),
            "{md}"
        );
    }
}
