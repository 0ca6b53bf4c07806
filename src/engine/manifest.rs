//! Canonical manifests of a stage's inputs, their cache keys, and the
//! human reasons why two manifests differ.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Named inputs of one stage for one instance. Keys look like
/// `source:<path>`, `header:<path>`, `flags`, `compiler`, `host`; the part
/// before `:` groups keys when explaining a change.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub entries: BTreeMap<String, Value>,
}

impl Manifest {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn set(&mut self, key: impl Into<String>, value: impl Serialize) -> &mut Self {
        let value = serde_json::to_value(value).expect("manifest values serialise");
        self.entries.insert(key.into(), value);
        self
    }

    /// The cache key: sha256 of the canonical JSON (keys sorted by the map).
    pub fn key(&self) -> String {
        let text = serde_json::to_vec(&self.entries).expect("manifest serialises");
        crate::fsutil::sha256_hex(&text)
    }

    /// Why `self` (current) differs from `old`, e.g. `sources changed: sign.c`.
    pub(crate) fn reasons(&self, old: &Manifest) -> Vec<String> {
        let mut groups: BTreeMap<(String, &'static str), Vec<String>> = BTreeMap::new();
        let keys = self.entries.keys().chain(old.entries.keys());
        let mut seen = std::collections::BTreeSet::new();
        for key in keys {
            if !seen.insert(key) {
                continue;
            }
            let change = match (self.entries.get(key), old.entries.get(key)) {
                (Some(a), Some(b)) if a == b => continue,
                (Some(_), Some(_)) => "changed",
                (Some(_), None) => "added",
                (None, Some(_)) => "removed",
                (None, None) => continue,
            };
            if key == "host" {
                groups.entry(("host differs".into(), "")).or_default();
                continue;
            }
            let (group, item) = match key.split_once(':') {
                Some((g, item)) => (plural(g), short_name(item)),
                None => (key.clone(), String::new()),
            };
            groups.entry((group, change)).or_default().push(item);
        }
        groups
            .into_iter()
            .map(|((group, change), items)| {
                let items: Vec<String> = items.into_iter().filter(|i| !i.is_empty()).collect();
                if change.is_empty() {
                    group
                } else if items.is_empty() {
                    format!("{group} {change}")
                } else {
                    format!("{group} {change}: {}", items.join(", "))
                }
            })
            .collect()
    }
}

fn plural(group: &str) -> String {
    match group {
        "source" => "sources".into(),
        "header" => "headers".into(),
        "system-header" => "system headers".into(),
        "reference" => "references".into(),
        g => g.to_string(),
    }
}

/// The file name is what a user recognises; keep the path only when the
/// name alone would be ambiguous is not worth the noise here.
fn short_name(item: &str) -> String {
    item.rsplit('/').next().unwrap_or(item).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_name_changed_files_and_settings() {
        let mut a = Manifest::new();
        a.set("source:algorithms/x/sign.c", "aa")
            .set("source:algorithms/x/util.c", "bb")
            .set("flags", vec!["-O2"])
            .set("compiler", "gcc 12");
        let mut b = a.clone();
        b.set("source:algorithms/x/sign.c", "cc")
            .set("flags", vec!["-O3"]);
        assert_ne!(a.key(), b.key());
        assert_eq!(
            b.reasons(&a),
            vec![
                "flags changed".to_string(),
                "sources changed: sign.c".to_string()
            ]
        );
        assert!(a.reasons(&a).is_empty());
        let mut c = a.clone();
        c.entries.remove("source:algorithms/x/util.c");
        assert_eq!(c.reasons(&a), vec!["sources removed: util.c".to_string()]);
    }
}
