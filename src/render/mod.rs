//! Report pages: one data model (`model`) built from the datasets of a
//! campaign, rendered through minijinja templates into Markdown and HTML.
//!
//! Site layout (under `output/<campaign>/site/`, or `<dir>/site/` when
//! published):
//!
//! ```text
//! index.{md,html}              every system, algorithm, summary and method page
//! survey.{md,html}             symmetric-primitive survey, all systems
//! sizes.{md,html}              size audit, all systems
//! <system>/summary.{md,html}   one table per kind, charts summary-<kind>.svg
//! <system>/method.{md,html}    how this system's run measured
//! <system>/<id>.{md,html}      the algorithm page, chart <id>.svg
//! ```
//!
//! The site directory belongs to the renderer: `.md`, `.html` and `.svg`
//! files a render does not produce (pages of a removed algorithm) are
//! deleted, unchanged files are not rewritten.
//!
//! Templates are built in (`templates/`) and a campaign's
//! `[render] templates = "dir"` replaces any of them by file name. `.html`
//! templates auto-escape every value; Markdown templates escape table
//! breakers and raw HTML with the `md` filter. Rendering is a pure function
//! of the records and templates, so `pqbench check` can demand identical
//! bytes: no clock, no hash-map order, no host lookups.

pub mod algorithm;
pub mod bench;
pub(crate) mod chart;
pub(crate) mod chart_lines;
pub(crate) mod kat_text;
pub mod kinds;
pub(crate) mod links;
pub(crate) mod matrix;
pub(crate) mod model;
pub(crate) mod presenters;
pub(crate) mod rows;
pub(crate) mod site;
pub mod synth;
pub(crate) mod system;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use minijinja::{AutoEscape, Environment, UndefinedBehavior};
use serde::Serialize;

pub use crate::engine::PageSection;

/// The flag of a suspicious instance's summary row (see `records::scan`).
pub(crate) const SUSPICIOUS_NOTE: &str =
    "⚠ suspicious: the static scan found what the campaign does not allow (see its page)";
use crate::engine::Registry;
use crate::records::dataset::{self, Dataset};
pub use links::check_links;
pub(crate) use site::{anchor, crumb, kind_function, Systems};

/// The built-in templates, by the name a user directory overrides.
pub(crate) const BUILTIN_TEMPLATES: &[(&str, &str)] = &[
    ("macros.md", include_str!("templates/macros.md")),
    ("algorithm.md", include_str!("templates/algorithm.md")),
    ("summary.md", include_str!("templates/summary.md")),
    ("method.md", include_str!("templates/method.md")),
    ("survey.md", include_str!("templates/survey.md")),
    ("sizes.md", include_str!("templates/sizes.md")),
    ("index.md", include_str!("templates/index.md")),
    ("layout.html", include_str!("templates/layout.html")),
    ("macros.html", include_str!("templates/macros.html")),
    ("algorithm.html", include_str!("templates/algorithm.html")),
    ("summary.html", include_str!("templates/summary.html")),
    ("method.html", include_str!("templates/method.html")),
    ("survey.html", include_str!("templates/survey.html")),
    ("sizes.html", include_str!("templates/sizes.html")),
    ("index.html", include_str!("templates/index.html")),
];

/// What a render did.
#[derive(Debug, Clone, Serialize)]
pub struct RenderReport {
    pub site: PathBuf,
    pub systems: Vec<String>,
    /// Files the site consists of.
    pub files: usize,
    /// Files whose content changed (written).
    pub written: usize,
    /// Stale generated files removed.
    pub removed: usize,
}

/// Escapes text for Markdown: pipes would split table cells, angle
/// brackets would pass raw HTML through, newlines would end a row.
fn md_filter(s: String) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Text that comes from outside pqbench (compiler and tool messages, a
/// submission's words, known-issue causes): every character that could
/// open Markdown structure inside a line is escaped, so the text shows as
/// typed and no emphasis, code span, link, image or entity comes alive.
/// Characters that are structure only beside others stay as they are: `(`
/// without a `[` before it, and `_` inside a word (CommonMark never reads
/// an intraword `_` as emphasis, so `sig_sign` keeps its spelling).
fn text_filter(s: String) -> String {
    let chars: Vec<char> = md_filter(s).chars().collect();
    let word = |i: Option<&char>| i.is_some_and(|c| c.is_alphanumeric());
    let mut out = String::with_capacity(chars.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        let escape = match c {
            '\\' => chars.get(i + 1) != Some(&'|'), // md_filter's `\|`
            '`' | '*' | '[' | ']' | '~' => true,
            '&' => !matches!(chars.get(i + 1..i + 4), Some(['l' | 'g', 't', ';'])),
            '_' => !(i > 0 && word(chars.get(i - 1)) && word(chars.get(i + 1))),
            _ => false,
        };
        if escape {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A Markdown code span that survives backticks and pipes in its content.
fn code_filter(s: String) -> String {
    let body = s.replace(['\n', '\r'], " ").replace('|', "\\|");
    let fence = if body.contains('`') { "``" } else { "`" };
    let pad = if body.starts_with('`') || body.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{body}{pad}{fence}")
}

/// pqbench's own prose for an HTML page: HTML-escaped, with the Markdown
/// code spans it is written with (`` `compare` ``) as `<code>` elements, so
/// no literal backtick reaches the page. An unpaired backtick stays as it
/// is.
fn inline_filter(s: String) -> minijinja::Value {
    let parts: Vec<&str> = s.split('`').collect();
    let paired = parts.len() % 2 == 1;
    let mut out = String::with_capacity(s.len() + 16);
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let escaped = chart::escape(part);
        if i % 2 == 1 && (paired || !last) {
            out.push_str(&format!("<code>{escaped}</code>"));
        } else {
            if i % 2 == 1 {
                out.push('`');
            }
            out.push_str(&escaped);
        }
    }
    minijinja::Value::from_safe_string(out)
}

/// A Markdown link destination: characters that end or split it are
/// percent-encoded (HTML attributes are escaped by minijinja instead).
fn url_filter(s: String) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            ' ' => out.push_str("%20"),
            '(' => out.push_str("%28"),
            ')' => out.push_str("%29"),
            '<' => out.push_str("%3C"),
            '>' => out.push_str("%3E"),
            c => out.push(c),
        }
    }
    out
}

/// The template environment: a user directory first, then the built-ins
/// and those of the stages' presenters `stages`.
pub fn environment(templates: Option<&Path>, stages: &[&dyn PageSection]) -> Environment<'static> {
    let mut env = Environment::new();
    let dir = templates.map(Path::to_path_buf);
    let builtins: Vec<(&'static str, &'static str)> = BUILTIN_TEMPLATES
        .iter()
        .copied()
        .chain(stages.iter().flat_map(|s| s.templates().iter().copied()))
        .collect();
    env.set_loader(move |name| {
        // Names come from our templates, but a user template could ask for
        // `../x`: only plain file names are looked up.
        if name.contains(['/', '\\']) || name.starts_with('.') {
            return Ok(None);
        }
        if let Some(path) = dir.as_ref().map(|d| d.join(name)).filter(|p| p.is_file()) {
            return std::fs::read_to_string(&path).map(Some).map_err(|e| {
                minijinja::Error::new(
                    minijinja::ErrorKind::InvalidOperation,
                    format!("reading template {}: {e}", path.display()),
                )
            });
        }
        Ok(builtins
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| t.to_string()))
    });
    env.set_auto_escape_callback(|name| {
        if name.ends_with(".html") {
            AutoEscape::Html
        } else {
            AutoEscape::None
        }
    });
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_keep_trailing_newline(true);
    env.add_filter("md", md_filter);
    env.add_filter("code", code_filter);
    env.add_filter("text", text_filter);
    env.add_filter("inline", inline_filter);
    env.add_filter("url", url_filter);
    env
}

fn render_one<T: Serialize>(env: &Environment, name: &str, page: &T) -> Result<Vec<u8>> {
    let tmpl = env
        .get_template(name)
        .with_context(|| format!("loading template {name}"))?;
    let text = tmpl
        .render(page)
        .map_err(|e| anyhow::anyhow!("rendering {name}: {e:#}"))?;
    Ok(text.into_bytes())
}

/// Every file of the site, keyed by its `/`-separated path in the site.
pub fn render_files(
    datasets: &[Dataset],
    templates: Option<&Path>,
    stages: &Registry,
) -> Result<BTreeMap<String, Vec<u8>>> {
    let presenters = stages.page_sections();
    let env = environment(templates, &presenters);
    let sorted = canonical_order(datasets);
    let site = site::build(&sorted, &presenters)?;
    let mut files = BTreeMap::new();
    for ext in ["md", "html"] {
        let mut put = |path: String, name: &str, bytes: Result<Vec<u8>>| -> Result<()> {
            files.insert(
                format!("{path}.{ext}"),
                bytes.with_context(|| format!("page {path}.{ext} ({name})"))?,
            );
            Ok(())
        };
        let t = |base: &str| format!("{base}.{ext}");
        put(
            "index".into(),
            "index",
            render_one(&env, &t("index"), &site.index),
        )?;
        put(
            "survey".into(),
            "survey",
            render_one(&env, &t("survey"), &site.survey),
        )?;
        put(
            "sizes".into(),
            "sizes",
            render_one(&env, &t("sizes"), &site.sizes),
        )?;
        for s in &site.systems {
            let dir = &s.system;
            put(
                format!("{dir}/summary"),
                "summary",
                render_one(&env, &t("summary"), &s.summary),
            )?;
            put(
                format!("{dir}/method"),
                "method",
                render_one(&env, &t("method"), &s.method),
            )?;
            for a in &s.algorithms {
                put(
                    format!("{dir}/{}", a.id),
                    "algorithm",
                    render_one(&env, &t("algorithm"), a),
                )?;
            }
        }
    }
    for s in &site.systems {
        for a in &s.algorithms {
            files.insert(
                format!("{}/{}", s.system, a.chart_file),
                a.chart_svg.clone().into_bytes(),
            );
        }
        for k in &s.summary.tables {
            files.insert(
                format!("{}/{}", s.system, k.chart_file),
                k.chart_svg.clone().into_bytes(),
            );
        }
    }
    Ok(files)
}

/// Generated files are these kinds; only they are pruned when stale.
pub(crate) fn is_generated(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e == "md" || e == "html" || e == "svg")
}

/// Every generated-kind file under `dir`, as `/`-separated relative paths.
pub(crate) fn site_files(dir: &Path) -> Result<Vec<String>> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) -> Result<()> {
        for p in crate::fsutil::paths::sorted_entries(dir)? {
            if p.is_dir() {
                walk(root, &p, out)?;
            } else if is_generated(&p) {
                out.push(crate::fsutil::paths::relative(root, &p)?);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    if dir.is_dir() {
        walk(dir, dir, &mut out)?;
    }
    Ok(out)
}

/// Temporary file and rename, so a reader or a killed run never sees a torn
/// page; unlike records no fsync: pages are derived and re-rendered at will,
/// and syncing hundreds of them dominated the render time.
fn write_page(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let dir = path.parent().context("page path without a directory")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .tempfile_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    tmp.write_all(bytes)
        .and_then(|_| crate::fsutil::set_file_mode(tmp.as_file()))
        .map_err(|e| crate::fsutil::explain_write_error(e, path))?;
    tmp.persist(path)
        .with_context(|| format!("renaming into {}", path.display()))?;
    Ok(())
}

/// Writes `files` into `site`: unchanged files are left alone (no churn),
/// changed ones replaced atomically, stale generated files removed.
pub(crate) fn write_site(site: &Path, files: &BTreeMap<String, Vec<u8>>) -> Result<(usize, usize)> {
    let mut written = 0;
    for (rel, bytes) in files {
        let path = site.join(rel);
        if std::fs::read(&path).ok().as_deref() != Some(bytes.as_slice()) {
            write_page(&path, bytes)?;
            written += 1;
        }
    }
    let mut removed = 0;
    for rel in site_files(site)? {
        if !files.contains_key(&rel) {
            let p = site.join(&rel);
            std::fs::remove_file(&p).with_context(|| format!("removing stale {}", p.display()))?;
            removed += 1;
        }
    }
    Ok((written, removed))
}

/// Loads datasets with the record folders of `stages`, computing each
/// one's location relative to `site`.
pub fn load_datasets(datasets: &[PathBuf], site: &Path, stages: &Registry) -> Result<Vec<Dataset>> {
    let folders = stages.folders();
    datasets
        .iter()
        .map(|d| Dataset::load(d, crate::fsutil::paths::relative(site, d)?, &folders))
        .collect()
}

/// The campaign's systems in the order its records list them (systems the
/// list does not name follow, by name), whatever order they were found in.
fn canonical_order(datasets: &[Dataset]) -> Vec<Dataset> {
    let order: Vec<String> = datasets
        .iter()
        .map(|d| d.campaign.systems.clone())
        .find(|s| !s.is_empty())
        .unwrap_or_default();
    let rank = |d: &Dataset| {
        order
            .iter()
            .position(|s| s == d.system())
            .unwrap_or(order.len())
    };
    let mut sorted: Vec<Dataset> = datasets.to_vec();
    sorted.sort_by(|a, b| rank(a).cmp(&rank(b)).then(a.system().cmp(b.system())));
    sorted
}

/// Renders the given datasets (one per system) into `site`.
pub fn render_dataset_dirs(
    datasets: &[PathBuf],
    site: &Path,
    templates: Option<&Path>,
    stages: &Registry,
) -> Result<RenderReport> {
    let loaded = load_datasets(datasets, site, stages)?;
    let files = render_files(&loaded, templates, stages)?;
    let (written, removed) = write_site(site, &files)?;
    Ok(RenderReport {
        site: site.to_path_buf(),
        systems: loaded.iter().map(|d| d.system().to_string()).collect(),
        files: files.len(),
        written,
        removed,
    })
}

/// Renders every system's dataset of the plan's campaign (the sibling
/// directories of the site holding a `campaign.json`) into `plan.site_dir`.
pub fn render_campaign(plan: &crate::plan::Plan, stages: &Registry) -> Result<RenderReport> {
    let campaign_dir = plan
        .site_dir
        .parent()
        .context("the site directory has no parent")?;
    let datasets = dataset::dataset_dirs_in(campaign_dir)?;
    render_dataset_dirs(&datasets, &plan.site_dir, plan.templates.as_deref(), stages)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_filters_neutralise_structure() {
        assert_eq!(md_filter("a|b <i>\nc".into()), "a\\|b &lt;i&gt; c");
        assert_eq!(
            text_filter("**b** [x](javascript:alert(1)) `c` a|b <i> sig_sign _e_".into()),
            "\\*\\*b\\*\\* \\[x\\](javascript:alert(1)) \\`c\\` a\\|b &lt;i&gt; sig_sign \\_e\\_"
        );
        assert_eq!(text_filter("a & b \\ c".into()), "a \\& b \\\\ c");
        assert_eq!(
            inline_filter("run `compare` & <b>".into()).to_string(),
            "run <code>compare</code> &amp; &lt;b&gt;"
        );
        assert_eq!(inline_filter("a `b".into()).to_string(), "a `b");
        assert_eq!(code_filter("X-1".into()), "`X-1`");
        assert_eq!(code_filter("a`b".into()), "``a`b``");
        assert_eq!(code_filter("`a".into()), "`` `a ``");
    }

    #[test]
    fn every_builtin_template_compiles() {
        let env = environment(None, &[]);
        for (name, _) in BUILTIN_TEMPLATES {
            env.get_template(name)
                .unwrap_or_else(|e| panic!("{name}: {e:#}"));
        }
    }
}
