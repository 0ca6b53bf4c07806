//! The one data model behind every page, Markdown and HTML alike.
//!
//! Every figure is formatted here (with `crate::format`), so the two output
//! formats cannot disagree and templates only arrange text. Strings stay
//! raw: the Markdown templates pass them through the `md`/`code` filters,
//! the HTML templates through minijinja's auto-escaping.

use serde::Serialize;

/// A hyperlink, or plain text when `href` is `None`.
///
/// `page` links name a generated page without its extension: each format's
/// `a` macro appends `.md` or `.html` (then `#fragment`), so one model
/// serves both formats.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Link {
    pub text: String,
    pub href: Option<String>,
    pub page: bool,
    pub fragment: Option<String>,
    /// The text came from outside pqbench (an algorithm TOML's `links`):
    /// the Markdown pages show it inert, every Markdown character escaped.
    pub foreign: bool,
    /// The host of a foreign web link whose text names an address or a
    /// host of its own, shown beside it on the Markdown pages, so the text
    /// cannot pass for another target.
    pub host: Option<String>,
}

impl Link {
    pub(crate) fn text(text: impl Into<String>) -> Link {
        Link {
            text: text.into(),
            href: None,
            page: false,
            fragment: None,
            foreign: false,
            host: None,
        }
    }

    /// A link from outside pqbench (an algorithm TOML's `links`): a web
    /// link (http or https) to `url`, shown with its host, else the text
    /// alone, never followed.
    pub(crate) fn foreign(text: impl Into<String>, url: &str) -> Link {
        let text = text.into();
        let host = web_host(url);
        let href = host.as_ref().map(|_| url.to_string());
        // "NICCS page" needs no host beside it; "https://good.example"
        // over a link to another host does.
        let shown = host.filter(|h| names_an_address(&text) && !text.contains(h.as_str()));
        Link {
            text,
            href,
            page: false,
            fragment: None,
            foreign: true,
            host: shown,
        }
    }

    /// A link to a generated page (`href` without extension).
    pub(crate) fn page(text: impl Into<String>, href: impl Into<String>) -> Link {
        Link {
            text: text.into(),
            href: Some(href.into()),
            page: true,
            fragment: None,
            foreign: false,
            host: None,
        }
    }

    /// A link to a file that keeps its name in both formats.
    pub(crate) fn file(text: impl Into<String>, href: impl Into<String>) -> Link {
        Link {
            text: text.into(),
            href: Some(href.into()),
            page: false,
            fragment: None,
            foreign: false,
            host: None,
        }
    }

    pub(crate) fn with_fragment(mut self, fragment: impl Into<String>) -> Link {
        self.fragment = Some(fragment.into());
        self
    }
}

/// Whether link text reads as an address: a scheme, or a word with a dot
/// between letters (`example.org`, `www.x.y`).
fn names_an_address(text: &str) -> bool {
    text.contains("://")
        || text.split_whitespace().any(|w| {
            let parts: Vec<&str> = w
                .trim_matches(|c: char| !c.is_alphanumeric())
                .split('.')
                .collect();
            parts.len() >= 2
                && parts
                    .iter()
                    .all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '-'))
                && parts
                    .last()
                    .is_some_and(|t| t.chars().all(char::is_alphabetic))
        })
}

/// The host of an `http://` or `https://` address with one, else None
/// (any other scheme, a relative path).
fn web_host(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    if !matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https") {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    (!host.is_empty() && !host.contains(char::is_whitespace)).then(|| host.to_string())
}

/// `Performance measurements › <system> › <here> · system: <system> · <others>`.
#[derive(Debug, Clone, Serialize)]
pub struct Crumb {
    pub root: Link,
    pub system: Link,
    /// The last step (algorithm id, `summary`, `method`); None on system-less pages.
    pub here: Option<String>,
    /// Every system of the campaign, the current one as plain text.
    pub systems: Vec<Link>,
}

/// A `label: value, value` bullet of section 1.
#[derive(Debug, Clone, Serialize)]
pub struct Bullet {
    pub label: String,
    pub items: Vec<Link>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Row2 {
    pub item: String,
    pub value: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Footnote {
    pub n: usize,
    pub text: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct KatRow {
    pub label: String,
    pub flags: String,
    pub status: String,
    /// Footnote numbers.
    pub notes: Vec<usize>,
}

/// A row of the reference's performance table; failed or untimed
/// operations carry their status in `mean_cycles` and `–` elsewhere.
#[derive(Debug, Clone, Serialize)]
pub struct PerfRow {
    pub label: String,
    pub op: String,
    pub mean_cycles: String,
    pub mean_time: String,
    pub ops_per_sec: String,
    pub median_trial: String,
    pub n: String,
    /// The headline figure (`chart::HEADLINE`) and its 95 % interval,
    /// after the reference's columns.
    pub median_cycles: String,
    pub ci_median: String,
    /// ⚠ marks, footnote references and measurement remarks.
    pub notes: String,
}

/// A row of a hash page's performance table: one message size.
#[derive(Debug, Clone, Serialize)]
pub struct HashRow {
    pub label: String,
    /// `32 B`, `1 KiB`, ...
    pub message: String,
    pub mean_cycles: String,
    pub cycles_per_byte: String,
    pub mean_time: String,
    /// 10^6 bytes per second of mean time.
    pub mb_per_s: String,
    pub n: String,
    pub notes: String,
}

/// The figures beyond the reference, from the same statistics.
#[derive(Debug, Clone, Serialize)]
pub struct DistRow {
    pub label: String,
    pub op: String,
    /// `calls` (per-call samples) or `trials` (per-trial means).
    pub basis: String,
    pub p5_p95: String,
    pub cv: String,
    pub outliers: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct CellsRow {
    pub label: String,
    pub cells: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SurveyLine {
    pub verdict: Link,
    pub note: Option<String>,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct EvidenceRow {
    pub label: String,
    pub item: String,
    /// Abbreviated digest shown after the item (KAT logs).
    pub sha256: Option<String>,
    pub file: Link,
}

/// `site/<system>/<id>.{md,html}`.
#[derive(Debug, Clone, Serialize)]
pub struct AlgorithmPage {
    pub system: String,
    /// Set when the measuring host was not fixed: said in the first lines.
    pub unfixed: Option<String>,
    pub id: String,
    pub name: String,
    pub description: String,
    pub crumb: Crumb,
    pub title: String,
    pub basic: Vec<Bullet>,
    pub environment: Vec<Row2>,
    pub kat_manifest: String,
    /// The KAT sentence before and after "(reference digests in …)".
    pub kat_sentence: (String, String),
    /// Said under the sizes table when a cell shows an observed range.
    pub size_note: Option<String>,
    pub kat_rows: Vec<KatRow>,
    pub footnotes: Vec<Footnote>,
    pub perf_rows: Vec<PerfRow>,
    pub perf_has_notes: bool,
    /// Hash algorithms: section 4 by message size (replaces `perf_rows`).
    pub hash_rows: Vec<HashRow>,
    /// KEX and hash: how the operations were timed (below section 4).
    pub kind_notes: Vec<String>,
    /// Section 6 (not for hash algorithms).
    pub show_sizes: bool,
    /// KEX: the text above the size table.
    pub sizes_text: Option<String>,
    /// The symmetric-primitive section (not for hash algorithms).
    pub show_symmetric: bool,
    pub warnings: Vec<String>,
    /// The campaigns whose measurements this page shows
    /// (`reuse-measurements-from`), when any.
    pub measured_by: Vec<String>,
    /// Instances whose figures are not yet this run's measurements.
    pub preliminary: Vec<String>,
    pub dist_rows: Vec<DistRow>,
    pub chart_svg: String,
    pub chart_file: String,
    pub size_columns: Vec<String>,
    pub size_rows: Vec<CellsRow>,
    pub sizes_catalog: Option<String>,
    pub size_audit: Link,
    pub survey: Option<SurveyLine>,
    /// The dataset directory the evidence paths are relative to.
    pub dataset: String,
    /// Set for an emulated system: why there are no figures.
    pub functional_only: Option<String>,
    pub evidence: Vec<EvidenceRow>,
    /// The stages' own parts of the page, each placed by its slot and
    /// rendered by its own template (`engine::Part`).
    pub parts: Vec<crate::engine::Part>,
    /// Sections of stages that add their own (`engine::PageSection`).
    pub sections: Vec<crate::engine::Section>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct SummaryRow {
    pub algorithm: Link,
    pub name: String,
    pub label: String,
    /// Mean cycles per operation with the hash share: `8.65 M (0.0%)`.
    pub ops: Vec<String>,
    pub sizes: Vec<String>,
    pub notes: String,
    /// The stages' cells (the constant-time check…), one per column of
    /// `SummaryTable::stage_columns`.
    pub stage_cells: Vec<String>,
    /// The fastest `[matrix]` combination and its ratio to the primary
    /// (empty without a matrix).
    pub best: String,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct SummaryTable {
    pub kind: String,
    pub heading: String,
    pub ops: Vec<String>,
    pub size_columns: Vec<String>,
    pub rows: Vec<SummaryRow>,
    /// The columns stages add ("constant time" when the `ct` stage ran).
    pub stage_columns: Vec<String>,
    /// A "best combination" column (the campaign has a `[matrix]`).
    pub has_matrix: bool,
    pub chart_svg: String,
    pub chart_file: String,
    /// What the table's cells are, when they are not the usual figures.
    pub note: Option<String>,
}

/// `site/<system>/summary.{md,html}`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SummaryPage {
    pub system: String,
    /// Set for an emulated system: why there are no figures.
    pub functional_only: Option<String>,
    /// Set when the measuring host was not fixed: said in the first lines.
    pub unfixed: Option<String>,
    pub crumb: Crumb,
    pub title: String,
    /// The helper classes whose share is in parentheses (every class but
    /// the DRNG's), by title.
    pub share_classes: String,
    pub method: Link,
    pub tables: Vec<SummaryTable>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct MethodSection {
    pub title: String,
    pub bullets: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct FlagRow {
    pub name: String,
    pub cflags: String,
    pub ldflags: String,
}

/// `site/<system>/method.{md,html}`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct MethodPage {
    pub system: String,
    pub crumb: Crumb,
    pub title: String,
    pub sections: Vec<MethodSection>,
    pub flag_profiles: Vec<FlagRow>,
    pub limitations: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct SurveyRow {
    pub anchor: String,
    pub algorithm: Link,
    pub name: String,
    pub verdict: String,
    pub note: Option<String>,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct SurveySystem {
    pub system: String,
    pub rows: Vec<SurveyRow>,
}

/// `site/survey.{md,html}`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SurveyPage {
    pub campaign: String,
    pub root: Link,
    pub systems: Vec<SurveySystem>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct SizeAuditRow {
    pub system: String,
    pub algorithm: Link,
    pub label: String,
    pub item: String,
    pub api: String,
    pub observed: String,
    pub catalog: String,
    pub basis: String,
}

/// `site/sizes.{md,html}`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SizesPage {
    pub campaign: String,
    pub root: Link,
    /// `system: catalog` for each system that used one.
    pub catalogs: Vec<Row2>,
    pub rows: Vec<SizeAuditRow>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct IndexAlgorithm {
    pub link: Link,
    pub name: String,
    pub kind: String,
    pub instances: usize,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct IndexSystem {
    pub system: String,
    /// The system's summary, named by the system.
    pub link: Link,
    /// Set for an emulated system.
    pub emulated: bool,
    pub title: String,
    pub start_utc: String,
    pub end_utc: String,
    pub summary: Link,
    pub method: Link,
    pub algorithms: Vec<IndexAlgorithm>,
}

/// `site/index.{md,html}`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct IndexPage {
    pub campaign: String,
    pub description: String,
    pub survey: Link,
    pub sizes: Link,
    pub systems: Vec<IndexSystem>,
}

/// Every page of one system.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SystemPages {
    pub system: String,
    pub summary: SummaryPage,
    pub method: MethodPage,
    pub algorithms: Vec<AlgorithmPage>,
}

/// The whole site.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Site {
    pub index: IndexPage,
    pub survey: SurveyPage,
    pub sizes: SizesPage,
    pub systems: Vec<SystemPages>,
}
