//! Raw TOML of an algorithm's `[[ct-annotation]]`s (the `count` and `ct`
//! stages read their own tables, `[count]` and `[ct]`).

use serde::Deserialize;
use toml::Spanned;

/// `[[ct-annotation]]` of an algorithm: a flagged site that is expected,
/// with the reason; the page shows the reason beside the site.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawCtAnnotation {
    /// A glob over the site's function name, `file:line` or file (the file
    /// as a project-relative path or its last components, e.g. `wots.c:62`).
    pub site: Spanned<String>,
    pub reason: String,
    /// Regular expression over labels (default: every instance).
    #[serde(default)]
    pub labels: Option<Spanned<String>>,
    /// Operations it applies to (default: all).
    #[serde(default)]
    pub ops: Vec<String>,
}
