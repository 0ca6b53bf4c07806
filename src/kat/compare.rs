//! Line-by-line comparison of a generated KAT file with a reference file,
//! reporting the first differing record and field.

use super::manifest::{canonical, is_record_start, Mode};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Difference {
    /// Record number (the `count` value as written), or None in the header.
    pub record: Option<String>,
    pub field: String,
    pub ours: String,
    pub reference: String,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Clipped by characters: a reference may hold any UTF-8.
        let clip = |s: &str| {
            if s.chars().count() > 48 {
                format!("{}…", s.chars().take(48).collect::<String>())
            } else {
                s.to_string()
            }
        };
        match &self.record {
            Some(r) => write!(f, "record {r}, field {}", self.field)?,
            None => write!(f, "header, field {}", self.field)?,
        }
        write!(
            f,
            ": generated `{}`, reference `{}`",
            clip(&self.ours),
            clip(&self.reference)
        )
    }
}

/// The first difference between the canonical forms of two KAT files
/// (exact mode compares strict lines: a byte-level difference that only
/// concerns whitespace is still reported by the digest).
pub(crate) fn first_difference(
    ours: &[u8],
    reference: &[u8],
    mode: Mode,
    records: Option<usize>,
) -> Option<Difference> {
    let mode = if mode == Mode::Exact {
        Mode::Strict
    } else {
        mode
    };
    let a = String::from_utf8_lossy(&canonical(ours, mode, records)).into_owned();
    let b = String::from_utf8_lossy(&canonical(reference, mode, records)).into_owned();
    let (mut la, mut lb) = (a.lines(), b.lines());
    let mut record = None;
    loop {
        let (x, y) = (la.next(), lb.next());
        if let Some(line) = y.or(x) {
            if is_record_start(line) {
                record = line.split_once('=').map(|(_, v)| v.trim().to_string());
            }
        }
        match (x, y) {
            (None, None) => return None,
            (Some(x), Some(y)) if x == y => continue,
            (x, y) => {
                let field = y
                    .or(x)
                    .and_then(|l| l.split_once('=').map(|(k, _)| k.trim().to_string()))
                    .unwrap_or_else(|| "(line)".into());
                return Some(Difference {
                    record,
                    field,
                    ours: x.map(value_of).unwrap_or_else(|| "(missing)".into()),
                    reference: y.map(value_of).unwrap_or_else(|| "(missing)".into()),
                });
            }
        }
    }
}

fn value_of(line: &str) -> String {
    line.split_once('=')
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_else(|| line.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_record_and_field() {
        let a = b"count = 0\npk = 01\nsk = 02\n\ncount = 1\npk = 03\nsk = 04\n\n";
        let b = b"count = 0\npk = 01\nsk = 02\n\ncount = 1\npk = 03\nsk = 05\n\n";
        let d = first_difference(a, b, Mode::Strict, None).unwrap();
        assert_eq!(d.record.as_deref(), Some("1"));
        assert_eq!(d.field, "sk");
        assert_eq!((d.ours.as_str(), d.reference.as_str()), ("04", "05"));
        assert!(first_difference(a, a, Mode::Exact, None).is_none());
        // A non-ASCII reference value is a difference, never a panic.
        let odd =
            "count = 0\npk = 01\nsk = ééééééééééééééééééééééééééééééééééééééééééééééééééé\n\n";
        let d = first_difference(a, odd.as_bytes(), Mode::Strict, None).unwrap();
        assert!(d.to_string().contains("ééé"), "{d}");
        let short = b"count = 0\npk = 01\nsk = 02\n\n";
        let d = first_difference(short, a, Mode::Strict, None).unwrap();
        assert_eq!(
            (d.record.as_deref(), d.ours.as_str()),
            (Some("1"), "(missing)")
        );
    }
}
