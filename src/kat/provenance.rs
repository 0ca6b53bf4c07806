//! Where a KAT reference came from, so pages never call pqbench's own
//! earlier output "submitted": the KAT files a submission shipped, a
//! digest published in a scheme's metadata, or a run's output recorded by
//! `pqbench bless` (a regression check, not an independent reference).
//!
//! A manifest says it with comment lines `# provenance: <kind> …`, each
//! applying to the lines after it. Before the first one, a manifest
//! written by `pqbench bless` (its header says so) holds blessed lines and
//! any other holds submitted ones.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What the ICCS baseline records instead: it has no manifest, its
/// generator checks itself against answers built into the support code.
pub(crate) const BUILT_IN: &str = "built-in";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Provenance {
    /// KAT files shipped with the submission.
    Submitted,
    /// A digest published in the scheme's metadata (`nistkat-sha256`).
    Published,
    /// pqbench's own output, recorded by `pqbench bless`.
    Blessed,
    /// Written at import by the KAT generator the submission's own build
    /// made.
    Generated,
    /// pqbench's own output, accepted at import by the KAT checker the
    /// submission's own build made (which rejects a changed copy).
    Checked,
}

impl Provenance {
    pub fn as_str(self) -> &'static str {
        match self {
            Provenance::Submitted => "submitted",
            Provenance::Published => "published",
            Provenance::Blessed => "blessed",
            Provenance::Generated => "generated",
            Provenance::Checked => "checked",
        }
    }

    pub fn parse(s: &str) -> Option<Provenance> {
        [
            Provenance::Submitted,
            Provenance::Published,
            Provenance::Blessed,
            Provenance::Generated,
            Provenance::Checked,
        ]
        .into_iter()
        .find(|p| p.as_str() == s)
    }

    /// The comment line that marks the lines after it.
    pub(crate) fn comment(self, detail: &str) -> String {
        if detail.is_empty() {
            format!("# provenance: {}", self.as_str())
        } else {
            format!("# provenance: {} ({detail})", self.as_str())
        }
    }
}

/// The provenance of each label's line in a manifest's text.
pub(crate) fn of_labels(text: &str) -> BTreeMap<String, Provenance> {
    let mut current = if text
        .lines()
        .take_while(|l| l.trim_start().starts_with('#'))
        .any(|l| l.contains("written by pqbench bless"))
    {
        Provenance::Blessed
    } else {
        Provenance::Submitted
    };
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix('#') {
            if let Some(kind) = rest.trim().strip_prefix("provenance:") {
                let word = kind.split_whitespace().next().unwrap_or("");
                if let Some(p) = Provenance::parse(word) {
                    current = p;
                }
            }
            continue;
        }
        if let Some((label, _)) = l.split_whitespace().nth(2).and_then(|t| t.split_once('/')) {
            out.insert(label.to_string(), current);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_mark_the_lines_after_them() {
        let d = "0".repeat(64);
        let text = format!(
            "# KAT manifest of x\n# written by pqbench import from t\n{d} strict A/f\n{}\n{d} exact:1 B/f\n{}\n{d} strict C/f\n",
            Provenance::Published.comment("META.yml nistkat-sha256"),
            Provenance::Blessed.comment("campaign c")
        );
        let m = of_labels(&text);
        assert_eq!(m["A"], Provenance::Submitted);
        assert_eq!(m["B"], Provenance::Published);
        assert_eq!(m["C"], Provenance::Blessed);
        let blessed = format!(
            "# KAT manifest of x\n# written by pqbench bless from campaign demo\n{d} strict A/f\n"
        );
        assert_eq!(of_labels(&blessed)["A"], Provenance::Blessed);
    }
}
