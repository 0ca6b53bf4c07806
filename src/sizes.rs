//! Sizes of an instance from three sources — the API figures, the lengths
//! the library actually returned, an external catalog — and the size audit:
//! every disagreement between them.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{ConfigError, Location};

/// One row of the external size catalog.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CatalogEntry {
    pub public_key: Option<u64>,
    pub ciphertext: Option<u64>,
    pub signature: Option<u64>,
    /// `encoded`, `maximum-variable` or `nominal-variable`.
    pub basis: String,
}

/// Reads `ID;Instance;PublicKeyBytes;CiphertextBytes;SignatureBytes;Basis`.
pub fn read_catalog(path: &Path) -> Result<BTreeMap<(String, String), CatalogEntry>, ConfigError> {
    read_semicolon_catalog(
        path,
        "size catalog",
        &[
            "PublicKeyBytes",
            "CiphertextBytes",
            "SignatureBytes",
            "Basis",
        ],
        |line| {
            let basis = line.field(3);
            if !["encoded", "maximum-variable", "nominal-variable"].contains(&basis) {
                return Err(
                    line.error("basis must be encoded, maximum-variable or nominal-variable")
                );
            }
            Ok(CatalogEntry {
                public_key: line.bytes(0)?,
                ciphertext: line.bytes(1)?,
                signature: line.bytes(2)?,
                basis: basis.to_string(),
            })
        },
    )
}

/// One data line of a `;`-separated catalog keyed by `ID;Instance`.
pub(crate) struct CatalogLine<'a> {
    fields: Vec<&'a str>,
    what: &'a str,
    format: &'a str,
    location: Location,
}

impl CatalogLine<'_> {
    /// The `i`-th field after `ID;Instance`, trimmed.
    pub(crate) fn field(&self, i: usize) -> &str {
        self.fields[i + 2]
    }

    /// The `i`-th field as a byte count; an empty cell is `None`.
    pub(crate) fn bytes(&self, i: usize) -> Result<Option<u64>, ConfigError> {
        let s = self.field(i);
        if s.is_empty() {
            return Ok(None);
        }
        s.parse()
            .map(Some)
            .map_err(|_| self.error(&format!("`{s}` is not a byte count")))
    }

    /// An error positioned on this line, with the expected format as help.
    pub(crate) fn error(&self, message: &str) -> ConfigError {
        ConfigError::new(format!("bad {} line: {message}", self.what))
            .at(self.location.clone())
            .help(format!("write `{}`, empty cells allowed", self.format))
    }
}

/// Reads a catalog `ID;Instance;<columns>` (a header line starting `ID;`
/// and `#` comments skipped), each data line turned into a value by `row`.
pub(crate) fn read_semicolon_catalog<V>(
    path: &Path,
    what: &str,
    columns: &[&str],
    mut row: impl FnMut(&CatalogLine) -> Result<V, ConfigError>,
) -> Result<BTreeMap<(String, String), V>, ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError::new(format!("cannot read {what}: {e}")).in_file(path))?;
    let format = format!("ID;Instance;{}", columns.join(";"));
    let mut out = BTreeMap::new();
    let mut offset = 0;
    for (n, raw) in text.split_inclusive('\n').enumerate() {
        let start = offset;
        offset += raw.len();
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') || (n == 0 && l.starts_with("ID;")) {
            continue;
        }
        let lead = raw.len() - raw.trim_start().len();
        let line = CatalogLine {
            fields: l.split(';').map(str::trim).collect(),
            what,
            format: &format,
            location: Location::from_span(path, &text, start + lead..start + lead + l.len()),
        };
        if line.fields.len() != columns.len() + 2 {
            return Err(line.error(&format!(
                "expected {} fields separated by `;`",
                columns.len() + 2
            )));
        }
        let value = row(&line)?;
        out.insert(
            (line.fields[0].to_string(), line.fields[1].to_string()),
            value,
        );
    }
    Ok(out)
}

pub use crate::records::evidence::SizeFigure;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SizesOutput {
    /// `public key`, `secret key`, `signature` | `ciphertext`, `shared secret`.
    pub figures: BTreeMap<String, SizeFigure>,
    pub basis: Option<String>,
    /// One line per disagreement, with the three numbers and the basis.
    pub disagreements: Vec<String>,
}

/// Decides the shown figure of each size and lists disagreements: an
/// observed length above the API cap, or a catalog figure different from
/// the API (encoded basis) or above it (variable bases).
pub(crate) fn combine(
    rows: impl Iterator<Item = (String, Option<u64>, Option<u64>, Option<u64>)>,
    basis: Option<String>,
) -> SizesOutput {
    let mut figures = BTreeMap::new();
    let mut disagreements = Vec::new();
    for (name, api, observed, catalog) in rows {
        let (shown, shown_from) = match (catalog, api) {
            (Some(c), _) => (Some(c), "catalog"),
            (None, Some(a)) => (Some(a), "api"),
            (None, None) => (observed, "observed"),
        };
        let variable = basis.as_deref().is_some_and(|b| b != "encoded");
        let over_cap = matches!((observed, api), (Some(o), Some(a)) if o > a);
        let catalog_off = match (catalog, api) {
            (Some(c), Some(a)) => {
                if variable {
                    c > a
                } else {
                    c != a
                }
            }
            _ => false,
        };
        // A fixed-size figure (encoded) must also equal what was returned.
        let fixed_off = !variable && matches!((catalog, observed), (Some(c), Some(o)) if c != o);
        if over_cap || catalog_off || fixed_off {
            let show = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_else(|| "–".into());
            disagreements.push(format!(
                "{name}: API {}, observed {}, catalog {}{}",
                show(api),
                show(observed),
                show(catalog),
                basis
                    .as_deref()
                    .map(|b| format!(" ({b})"))
                    .unwrap_or_default()
            ));
        }
        figures.insert(
            name,
            SizeFigure {
                api,
                observed,
                observed_min: None,
                catalog,
                shown,
                shown_from: shown_from.into(),
            },
        );
    }
    SizesOutput {
        figures,
        basis,
        disagreements,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disagreements_name_all_three_numbers() {
        let out = combine(
            vec![
                ("public key".to_string(), Some(32), Some(32), Some(32)),
                ("signature".to_string(), Some(1200), Some(1190), Some(1183)),
            ]
            .into_iter(),
            Some("encoded".into()),
        );
        assert_eq!(
            out.disagreements,
            vec!["signature: API 1200, observed 1190, catalog 1183 (encoded)"]
        );
        assert_eq!(out.figures["signature"].shown, Some(1183));
        let ok = combine(
            vec![("signature".to_string(), Some(1200), Some(1190), Some(1150))].into_iter(),
            Some("nominal-variable".into()),
        );
        assert!(ok.disagreements.is_empty());
    }

    #[test]
    fn catalog_lines_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.csv");
        std::fs::write(&p, "ID;Instance;PublicKeyBytes;CiphertextBytes;SignatureBytes;Basis\nsign-1;A-1;32;;64;encoded\n").unwrap();
        let c = read_catalog(&p).unwrap();
        assert_eq!(c[&("sign-1".into(), "A-1".into())].signature, Some(64));
        std::fs::write(&p, "sign-1;A-1;32;x;64;encoded\n").unwrap();
        let e = read_catalog(&p).unwrap_err().to_string();
        assert!(
            e.contains("`x` is not a byte count") && e.contains("c.csv:1:1"),
            "{e}"
        );
    }
}
