//! Reading TOML files into raw structs, with positioned errors.

pub mod algorithm;
pub mod campaign;

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use toml::Spanned;

use crate::error::{ConfigError, Location};

/// A parsed file together with its text, so later validation can still
/// point at lines.
#[derive(Debug)]
pub struct Loaded<T> {
    pub path: PathBuf,
    pub text: String,
    pub value: T,
}

impl<T> Loaded<T> {
    /// An error positioned at a spanned value of this file.
    pub fn error_at<V>(&self, spanned: &Spanned<V>, message: impl Into<String>) -> ConfigError {
        let span = spanned.span();
        let err = ConfigError::new(message);
        if span.is_empty() && span.start == 0 {
            // A default value: there is no text to point at.
            err.in_file(&self.path)
        } else {
            err.at(Location::from_span(&self.path, &self.text, span))
        }
    }

    pub fn error(&self, message: impl Into<String>) -> ConfigError {
        ConfigError::new(message).in_file(&self.path)
    }
}

/// Reads and parses a TOML file, turning syntax and schema errors into one
/// positioned error with a hint.
pub fn load<T: DeserializeOwned>(path: &Path) -> Result<Loaded<T>, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        ConfigError::new(format!("cannot read {}: {e}", path.display()))
            .in_file(path)
            .help("check the path and that the file exists")
    })?;
    let value = parse(path, &text)?;
    Ok(Loaded {
        path: path.to_path_buf(),
        text,
        value,
    })
}

pub fn parse<T: DeserializeOwned>(path: &Path, text: &str) -> Result<T, ConfigError> {
    toml::from_str(text).map_err(|e| toml_error(path, text, &e))
}

fn toml_error(path: &Path, text: &str, e: &toml::de::Error) -> ConfigError {
    let raw = e.message().trim().to_string();
    let (message, help) = explain(&raw);
    let err = ConfigError::new(message);
    let err = match e.span() {
        Some(span) => err.at(Location::from_span(path, text, span)),
        None => err.in_file(path),
    };
    match help {
        Some(h) => err.help(h),
        None => err,
    }
}

/// Rewords serde/toml messages into what a user should do.
fn explain(raw: &str) -> (String, Option<String>) {
    if let Some(rest) = raw.strip_prefix("unknown field ") {
        let (field, expected) = rest.split_once(", expected ").unwrap_or((rest, ""));
        let message = format!("unknown key {field}");
        let help = if expected.is_empty() {
            "remove the key".to_string()
        } else {
            format!(
                "remove it or use one of: {}",
                expected.trim_start_matches("one of ")
            )
        };
        return (message, Some(help));
    }
    if let Some(rest) = raw.strip_prefix("missing field ") {
        return (
            format!("missing key {rest}"),
            Some(format!("add {rest} to this table")),
        );
    }
    if raw.starts_with("invalid type") {
        return (
            raw.to_string(),
            Some("change the value to the expected type".into()),
        );
    }
    if raw.starts_with("unknown variant") {
        return (raw.to_string(), Some("use one of the listed values".into()));
    }
    if raw.contains("duplicate key") {
        return (
            raw.to_string(),
            Some("keep only one definition of the key".into()),
        );
    }
    (
        format!("TOML syntax error: {raw}"),
        Some("fix the TOML syntax at the marked position".into()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use algorithm::RawAlgorithm;

    #[test]
    fn unknown_key_names_key_line_and_alternatives() {
        let text = "id = \"x\"\nname = \"X\"\nkind = \"sign\"\napi = \"ngcc\"\nsourcs = 1\n";
        let e = parse::<RawAlgorithm>(Path::new("a.toml"), text).unwrap_err();
        let shown = e.to_string();
        assert!(shown.starts_with("unknown key `sourcs`"), "{shown}");
        assert!(shown.contains("a.toml:5:1"), "{shown}");
        assert!(shown.contains("help: remove it or use one of"), "{shown}");
    }
}
