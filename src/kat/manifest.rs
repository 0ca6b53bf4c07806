//! `kat/<id>/kat.sha256`: one line per reference file,
//! `<sha256> <mode>[:N] <label>/<file>`, and the canonical forms the digest
//! is taken over.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{ConfigError, Location};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// CR and trailing blanks stripped, empty lines dropped, joined by `\n`.
    Strict,
    /// Strict minus every `X_Len = …` line.
    Nolen,
    /// The exact bytes.
    Exact,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Strict => "strict",
            Mode::Nolen => "nolen",
            Mode::Exact => "exact",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub sha256: String,
    pub mode: Mode,
    /// Only the first N records count (header excluded).
    pub records: Option<usize>,
    pub label: String,
    pub file: String,
    /// The line as written, for the KAT log.
    pub line: String,
}

impl Entry {
    /// The mode as written, with its record count: `exact:1`, `strict`.
    pub(crate) fn mode_text(&self) -> String {
        match self.records {
            Some(n) => format!("{}:{n}", self.mode.as_str()),
            None => self.mode.as_str().to_string(),
        }
    }
}

/// Parses a manifest; `#` starts a comment line.
pub fn parse(path: &Path, text: &str) -> Result<Vec<Entry>, ConfigError> {
    let mut out = Vec::new();
    let mut offset = 0;
    for raw in text.split_inclusive('\n') {
        let start = offset;
        offset += raw.len();
        let line = raw.trim_end();
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let err = |msg: &str| {
            ConfigError::new(format!("bad manifest line: {msg}"))
                .at(Location::from_span(path, text, start..start + line.len()))
                .help("write `<sha256> <strict|nolen|exact>[:N] <label>/<file>`")
        };
        let parts: Vec<&str> = line.split_whitespace().collect();
        let [sha, mode, target] = parts[..] else {
            return Err(err("expected three fields"));
        };
        if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(err("the first field must be 64 hex digits"));
        }
        let (mode, records) = match mode.split_once(':') {
            Some((m, n)) => (
                m,
                Some(
                    n.parse::<usize>()
                        .map_err(|_| err("`:N` must be a number"))?,
                ),
            ),
            None => (mode, None),
        };
        let mode = match mode {
            "strict" => Mode::Strict,
            "nolen" => Mode::Nolen,
            "exact" => Mode::Exact,
            _ => return Err(err("mode must be strict, nolen or exact")),
        };
        let Some((label, file)) = target.split_once('/') else {
            return Err(err("the target must be `<label>/<file>`"));
        };
        out.push(Entry {
            sha256: sha.to_ascii_lowercase(),
            mode,
            records,
            label: label.to_string(),
            file: file.to_string(),
            line: line.to_string(),
        });
    }
    Ok(out)
}

/// True for the first line of a record in either KAT format (a hash KAT's
/// records start with `Msg_Len`, the baseline self-check's with `Check`).
pub(crate) fn is_record_start(line: &str) -> bool {
    let l = line.trim_start();
    for key in ["Msg_Len", "Check"] {
        if l.strip_prefix(key)
            .is_some_and(|r| r.trim_start().starts_with('='))
        {
            return true;
        }
    }
    let lower = l.get(..5).map(|s| s.to_ascii_lowercase());
    lower.as_deref() == Some("count") && l[5..].trim_start().starts_with('=')
}

/// The part of a KAT file a digest covers: all of it, or (with `records`)
/// the lines of the first N records without the header and without the
/// empty line that ends the last one.
pub(crate) fn covered(text: &[u8], records: Option<usize>) -> &[u8] {
    let Some(n) = records else { return text };
    let mut starts = Vec::new();
    let mut pos = 0;
    for line in text.split_inclusive(|&b| b == b'\n') {
        if is_record_start(&String::from_utf8_lossy(line)) {
            starts.push(pos);
        }
        pos += line.len();
    }
    let Some(&first) = starts.first() else {
        return &text[..0];
    };
    let end = starts.get(n).copied().unwrap_or(text.len());
    let mut slice = &text[first..end];
    // Drop the empty separator line(s) but keep the last field's newline.
    while slice.ends_with(b"\n\n") || slice.ends_with(b"\n\r\n") {
        let cut = if slice.ends_with(b"\n\r\n") { 2 } else { 1 };
        slice = &slice[..slice.len() - cut];
    }
    slice
}

/// The canonical text a digest is computed over.
pub(crate) fn canonical(text: &[u8], mode: Mode, records: Option<usize>) -> Vec<u8> {
    let part = covered(text, records);
    if mode == Mode::Exact {
        return part.to_vec();
    }
    let text = String::from_utf8_lossy(part);
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.trim_end_matches(['\r', ' ', '\t']))
        .filter(|l| !l.is_empty())
        .filter(|l| mode != Mode::Nolen || !is_len_line(l))
        .collect();
    lines.join("\n").into_bytes()
}

fn is_len_line(line: &str) -> bool {
    line.split_once('=')
        .map(|(k, _)| k.trim_end().ends_with("_Len"))
        .unwrap_or(false)
}

pub fn digest(text: &[u8], mode: Mode, records: Option<usize>) -> String {
    crate::fsutil::sha256_hex(&canonical(text, mode, records))
}

/// Number of records in a KAT file.
pub(crate) fn count_records(text: &[u8]) -> usize {
    String::from_utf8_lossy(text)
        .lines()
        .filter(|l| is_record_start(l))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NIST: &str =
        "# ALG\n\ncount = 0\nseed = AA\npk = 01\n\ncount = 1\nseed = BB\npk = 02\n\n";

    #[test]
    fn manifest_lines_parse_with_modes_and_limits() {
        let sha = "a".repeat(64);
        let text = format!("# comment\n{sha} strict:10 X-1/kat.txt\n{sha} exact Y/f.rsp\n");
        let e = parse(Path::new("m"), &text).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(
            (e[0].mode, e[0].records, e[0].label.as_str()),
            (Mode::Strict, Some(10), "X-1")
        );
        assert_eq!(
            (e[1].mode, e[1].records, e[1].file.as_str()),
            (Mode::Exact, None, "f.rsp")
        );
        let bad = parse(Path::new("m"), &format!("{sha} fuzzy X/f\n")).unwrap_err();
        assert!(bad.to_string().contains("m:1:1"), "{bad}");
    }

    #[test]
    fn record_restriction_drops_header_and_trailing_blank() {
        assert_eq!(
            covered(NIST.as_bytes(), Some(1)),
            b"count = 0\nseed = AA\npk = 01\n"
        );
        assert_eq!(
            covered(NIST.as_bytes(), Some(5)),
            &NIST.as_bytes()[7..NIST.len() - 1]
        );
        assert_eq!(covered(NIST.as_bytes(), None), NIST.as_bytes());
    }

    #[test]
    fn strict_and_nolen_canonicalise() {
        let ngcc = "Count = 0\r\nPK_Len = 1  \r\nPK = 01\r\n\r\n";
        assert_eq!(
            canonical(ngcc.as_bytes(), Mode::Strict, None),
            b"Count = 0\nPK_Len = 1\nPK = 01"
        );
        assert_eq!(
            canonical(ngcc.as_bytes(), Mode::Nolen, None),
            b"Count = 0\nPK = 01"
        );
        assert_eq!(count_records(NIST.as_bytes()), 2);
    }
}
