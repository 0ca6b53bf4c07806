//! Reading TOML files into raw structs, with positioned errors.
//!
//! `read` reports every problem of a file at once: bytes that are not UTF-8
//! (with the offset of the first bad byte), a syntax error, and then every
//! unknown key, wrong type and out-of-range value (see `de`). Unknown keys
//! alone do not stop the caller: the value is still returned, so resolution
//! can go on and find the next problems.

pub mod algorithm;
pub mod campaign;
mod de;
pub(crate) mod exact;
pub mod systems;
pub(crate) mod tree;
pub(crate) mod values;

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use toml::Spanned;

use crate::error::{ConfigError, Error, Location};
pub(crate) use tree::{Node, Step};

/// A parsed file together with its text and spans, so later validation can
/// still point at lines.
#[derive(Debug)]
pub struct Loaded<T> {
    pub path: PathBuf,
    pub text: String,
    pub value: T,
    /// Every key and value with its span.
    pub tree: Node,
}

impl<T> Loaded<T> {
    /// An error positioned at a spanned value of this file.
    pub(crate) fn error_at<V>(
        &self,
        spanned: &Spanned<V>,
        message: impl Into<String>,
    ) -> ConfigError {
        self.error_at_span(spanned.span(), message)
    }

    /// An error at a byte span; a default value (empty span at 0) has no
    /// text to point at, so the error names the file only.
    pub(crate) fn error_at_span(
        &self,
        span: Range<usize>,
        message: impl Into<String>,
    ) -> ConfigError {
        let err = ConfigError::new(message);
        if span.is_empty() && span.start == 0 {
            err.in_file(&self.path)
        } else {
            err.at(Location::from_span(&self.path, &self.text, span))
        }
    }

    /// An error at the value found at `path` (the file when it is absent).
    pub(crate) fn error_at_value(&self, path: &[Step], message: impl Into<String>) -> ConfigError {
        let span = self.tree.find(path).map_or(0..0, |n| n.span.clone());
        self.error_at_span(span, message)
    }

    /// An error at the key ending `path` (the file when it is absent).
    pub(crate) fn error_at_key(&self, path: &[Step], message: impl Into<String>) -> ConfigError {
        let span = self.tree.key_span(path).unwrap_or(0..0);
        self.error_at_span(span, message)
    }

    pub(crate) fn error(&self, message: impl Into<String>) -> ConfigError {
        ConfigError::new(message).in_file(&self.path)
    }
}

/// Reads and deserializes a file, adding every problem to `problems`.
/// Returns the value unless a problem other than an unknown key was found.
pub(crate) fn read<T: DeserializeOwned>(
    path: &Path,
    problems: &mut Vec<ConfigError>,
) -> Option<Loaded<T>> {
    let text = match read_text(path) {
        Ok(t) => t,
        Err(e) => {
            problems.push(e);
            return None;
        }
    };
    let (value, tree) = parse_into(path, &text, problems)?;
    Some(Loaded {
        path: path.to_path_buf(),
        text,
        value,
        tree,
    })
}

/// `read` for text already in memory.
pub(crate) fn parse_into<T: DeserializeOwned>(
    path: &Path,
    text: &str,
    problems: &mut Vec<ConfigError>,
) -> Option<(T, Node)> {
    let tree = match Node::parse(text) {
        Ok(t) => t,
        Err(e) => {
            problems.push(syntax_error(path, text, &e));
            return None;
        }
    };
    let outcome = de::from_tree::<T>(&tree);
    for issue in outcome.issues {
        let err = ConfigError::new(issue.message).help(issue.help);
        problems.push(if issue.span == (0..0) {
            err.in_file(path)
        } else {
            err.at(Location::from_span(path, text, issue.span))
        });
    }
    Some((outcome.value?, tree))
}

/// Reads a file that must be entirely right (for callers that cannot use a
/// partly wrong file); every problem is in the error.
pub fn load<T: DeserializeOwned>(path: &Path) -> Result<Loaded<T>, Error> {
    let mut problems = Vec::new();
    match read(path, &mut problems) {
        Some(loaded) if problems.is_empty() => Ok(loaded),
        _ => Err(Error::from(problems)),
    }
}

/// `load` for text already in memory.
pub fn parse<T: DeserializeOwned>(path: &Path, text: &str) -> Result<T, Error> {
    let mut problems = Vec::new();
    match parse_into(path, text, &mut problems) {
        Some((value, _)) if problems.is_empty() => Ok(value),
        _ => Err(Error::from(problems)),
    }
}

fn read_text(path: &Path) -> Result<String, ConfigError> {
    let bytes = std::fs::read(path).map_err(|e| {
        ConfigError::new(format!("cannot read {}: {e}", path.display()))
            .in_file(path)
            .help("check the path and that the file exists")
    })?;
    String::from_utf8(bytes).map_err(|e| not_utf8(path, e.as_bytes(), e.utf8_error()))
}

/// Names the first byte that is not UTF-8, by offset and line/column.
fn not_utf8(path: &Path, bytes: &[u8], e: std::str::Utf8Error) -> ConfigError {
    let at = e.valid_up_to();
    // The text before `at` is valid, so offsets up to it are unchanged.
    let shown = String::from_utf8_lossy(bytes);
    let loc = Location::from_span(path, &shown, at..at);
    ConfigError::new(format!(
        "not UTF-8 text: byte 0x{:02X} at offset {at} (line {}, column {})",
        bytes[at], loc.line, loc.column
    ))
    .at(loc)
    .help("save the file as UTF-8 (TOML files are UTF-8)")
}

fn syntax_error(path: &Path, text: &str, e: &toml_edit::TomlError) -> ConfigError {
    let raw = e.message().trim().replace('\n', "; ");
    let (message, help) = if raw.contains("duplicate key") {
        (raw, "keep only one definition of each key and table")
    } else {
        (
            format!("TOML syntax error: {raw}"),
            "fix the TOML syntax at the marked position",
        )
    };
    let err = ConfigError::new(message).help(help);
    match e.span() {
        Some(span) => err.at(Location::from_span(path, text, span)),
        None => err.in_file(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use algorithm::RawAlgorithm;
    use campaign::RawCampaign;

    fn problems<T: DeserializeOwned>(text: &str) -> (Option<T>, Vec<String>) {
        let mut p = Vec::new();
        let v = parse_into::<T>(Path::new("a.toml"), text, &mut p).map(|(v, _)| v);
        (v, p.iter().map(|e| e.to_string()).collect())
    }

    #[test]
    fn unknown_key_names_key_line_and_alternatives() {
        let text = "id = \"x\"\nname = \"X\"\nkind = \"sign\"\napi = \"ngcc\"\nsourcs = 1\n";
        let (v, p) = problems::<RawAlgorithm>(text);
        assert!(v.is_some(), "unknown keys alone leave a usable value");
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].starts_with("unknown key `sourcs`"), "{}", p[0]);
        assert!(p[0].contains("a.toml:5:1"), "{}", p[0]);
        assert!(
            p[0].contains("help: remove it or use one of: id, name"),
            "{}",
            p[0]
        );
    }

    #[test]
    fn every_unknown_key_and_wrong_value_is_reported_at_once() {
        let text = "algorithms = [\"a\"]\ncolour = 1\n[timing]\ntrials = \"five\"\nwarmup = -1\nbogus = 2\n[kat]\ntimeout-seconds = nan\n[[profile.wrap]]\nsymbol = \"f\"\nclass = \"hash\"\nextra = 1\n";
        let (v, p) = problems::<RawCampaign>(text);
        assert!(v.is_none());
        let all = p.join("\n");
        for want in [
            "unknown key `colour`",
            "a.toml:2:1",
            "unknown key `bogus` in [timing]",
            "`trials` wants an integer ≥ 1, found a string",
            "a.toml:4:10",
            "`warmup` wants a non-negative integer, found `-1`",
            "`timeout-seconds` wants a number of seconds > 0 (at most 10000000), found `nan`",
            "unknown key `extra` in [[profile.wrap]]",
        ] {
            assert!(all.contains(want), "missing {want:?} in\n{all}");
        }
        assert_eq!(p.len(), 6, "{all}");
    }

    #[test]
    fn missing_keys_and_wrong_enums_do_not_hide_later_problems() {
        let text = "id = 1\nkind = \"xof\"\napi = \"ngcc\"\n[[implementation]]\nname = \"r\"\n[[parameter-set]]\nlabel = \"A\"\ndefines = { N = [1] }\n";
        let (_, p) = problems::<RawAlgorithm>(text);
        let all = p.join("\n");
        for want in [
            "`id` wants a string, found an integer",
            "missing key `name`",
            "`kind` wants one of `sign`, `kem`, `kex`, `hash`, found `xof`",
            "missing key `root` in [[implementation]]",
            "a.toml:4:1",
            "`N` wants an integer, a string, or true/false",
        ] {
            assert!(all.contains(want), "missing {want:?} in\n{all}");
        }
    }

    #[test]
    fn bad_bytes_and_syntax_are_located() {
        let mut p = Vec::new();
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("x.toml");
        std::fs::write(&f, b"id = \"a\"\nname = \"\xff\"\n").unwrap();
        assert!(read::<RawAlgorithm>(&f, &mut p).is_none());
        let shown = p[0].to_string();
        assert!(
            shown.contains("byte 0xFF at offset 17 (line 2, column 9)"),
            "{shown}"
        );
        assert!(shown.contains("x.toml:2:9"), "{shown}");
        let (_, p) = problems::<RawAlgorithm>("id = [\"a\"\nname = 3\n");
        assert!(p[0].starts_with("TOML syntax error"), "{}", p[0]);
        assert!(p[0].contains("a.toml:"), "{}", p[0]);
    }
}
