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
pub mod view;

use anyhow::{Context, Result};
use minijinja::Environment;
use serde::Serialize;

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
    let mut env = crate::render::environment(None);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_compiles_and_cells_stay_in_their_row() {
        let env = environment();
        for (name, _) in TEMPLATES {
            env.get_template(name)
                .unwrap_or_else(|e| panic!("{name}: {e:#}"));
        }
        assert_eq!(cell_filter("a|b\nc\r".into()), "a\\|b c ");
    }
}
