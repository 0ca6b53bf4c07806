//! Raw TOML of the exact-count and constant-time stages: the campaign's
//! `[count]` and `[ct]` tables and an algorithm's `[[ct-annotation]]`s.

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::values;

/// `[count]`: instructions per call, counted by callgrind or the hardware
/// `instructions` event (stage `count`, opt-in through `stages`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawCount {
    /// Counted calls per operation (after the warm-ups).
    #[serde(default, deserialize_with = "values::count_u32")]
    pub calls: Option<u32>,
    /// Uncounted calls first (lazy binding, first-touch effects).
    pub warmup: Option<u32>,
    /// `auto` (hardware counter where the host has it, else callgrind),
    /// `callgrind` or `perf`.
    pub method: Option<CountMethod>,
    /// Timeout of one counting process, seconds.
    #[serde(default, deserialize_with = "values::seconds")]
    pub timeout_seconds: Option<f64>,
}

/// `[ct]`: the constant-time check under memcheck (stage `ct`, opt-in).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawCt {
    /// Checked calls per operation.
    #[serde(default, deserialize_with = "values::count_u32")]
    pub calls: Option<u32>,
    /// Timeout of one memcheck process, seconds.
    #[serde(default, deserialize_with = "values::seconds")]
    pub timeout_seconds: Option<f64>,
}

/// How instructions are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CountMethod {
    /// The hardware counter where the host has it, else callgrind.
    #[default]
    Auto,
    /// Valgrind's callgrind: exact, on any host Valgrind runs on.
    Callgrind,
    /// The user-mode hardware `instructions` event (perf_event_open).
    Perf,
}

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
