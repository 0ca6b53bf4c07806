//! Typed errors at the library boundary, and the one place that maps them to
//! exit codes.
//!
//! Configuration problems carry a source position and render like a compiler
//! diagnostic: file, line, column, the offending line and a caret, then what
//! to do about it.

use std::fmt;
use std::path::{Path, PathBuf};

/// Exit codes of the `pqbench` binary.
pub mod exit {
    /// Everything ran and every instance passed.
    pub const OK: i32 = 0;
    /// The run finished but some instances failed (build, KAT, measurement),
    /// or a check found differences.
    pub const ITEM_FAILURES: i32 = 1;
    /// The input (TOML, command line, dataset) is wrong; nothing ran.
    pub(crate) const BAD_INPUT: i32 = 2;
    /// An environment or internal failure stopped the run.
    pub(crate) const FAILURE: i32 = 3;
}

/// A position inside a configuration file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub file: PathBuf,
    /// 1-based line and column.
    pub line: usize,
    pub column: usize,
    /// Length of the highlighted span in characters (at least 1).
    pub width: usize,
    /// The text of the line, for the caret display.
    pub text: String,
}

impl Location {
    /// Turns a byte span inside `source` into a line/column location.
    pub(crate) fn from_span(file: &Path, source: &str, span: std::ops::Range<usize>) -> Location {
        let start = span.start.min(source.len());
        let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = source[start..]
            .find('\n')
            .map_or(source.len(), |i| start + i);
        let line = source[..start].matches('\n').count() + 1;
        let column = source[line_start..start].chars().count() + 1;
        let end = span.end.clamp(start, line_end);
        let width = source[start..end].chars().count().max(1);
        Location {
            file: file.to_path_buf(),
            line,
            column,
            width,
            text: source[line_start..line_end]
                .trim_end_matches('\r')
                .to_string(),
        }
    }
}

/// A configuration error: what is wrong, where, and how to fix it.
#[derive(Debug, Clone)]
pub struct ConfigError {
    pub message: String,
    /// The file the error is about, when there is no finer position.
    pub file: Option<Box<PathBuf>>,
    pub location: Option<Box<Location>>,
    pub help: Option<Box<str>>,
}

impl ConfigError {
    pub fn new(message: impl Into<String>) -> Self {
        ConfigError {
            message: message.into(),
            file: None,
            location: None,
            help: None,
        }
    }

    pub(crate) fn in_file(mut self, file: &Path) -> Self {
        self.file = Some(Box::new(file.to_path_buf()));
        self
    }

    pub(crate) fn at(mut self, location: Location) -> Self {
        self.file = Some(Box::new(location.file.clone()));
        self.location = Some(Box::new(location));
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into().into_boxed_str());
        self
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        match (&self.location, &self.file) {
            (Some(loc), _) => {
                let gutter = loc.line.to_string().len();
                write!(
                    f,
                    "\n{:gutter$}--> {}:{}:{}",
                    "",
                    loc.file.display(),
                    loc.line,
                    loc.column
                )?;
                write!(f, "\n{:gutter$} |", "")?;
                write!(f, "\n{} | {}", loc.line, loc.text)?;
                write!(
                    f,
                    "\n{:gutter$} | {}{}",
                    "",
                    " ".repeat(loc.column - 1),
                    "^".repeat(loc.width)
                )?;
            }
            (None, Some(file)) => write!(f, "\n  --> {}", file.display())?,
            (None, None) => {}
        }
        if let Some(help) = &self.help {
            write!(f, "\n  = help: {help}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

/// Errors that cross the library boundary.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Config(#[from] ConfigError),
    /// Several independent configuration errors found in one pass.
    #[error("{}", .0.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n\n"))]
    ConfigMany(Vec<ConfigError>),
    /// Something the user named (a run, a dataset, a file) cannot be found
    /// or read as what it should be: bad input, like a configuration error.
    #[error(transparent)]
    Input(anyhow::Error),
    #[error(transparent)]
    Other(#[from] anyhow::Error),
}

impl Error {
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Config(_) | Error::ConfigMany(_) | Error::Input(_) => exit::BAD_INPUT,
            Error::Other(e) => {
                if e.downcast_ref::<ConfigError>().is_some() {
                    exit::BAD_INPUT
                } else {
                    exit::FAILURE
                }
            }
        }
    }
}

impl Error {
    /// Marks a failure to find or read something the user named.
    pub fn input(e: impl Into<anyhow::Error>) -> Error {
        Error::Input(e.into())
    }
}

/// Several configuration errors found in one pass: one is `Config`, more
/// are `ConfigMany`.
impl From<Vec<ConfigError>> for Error {
    fn from(mut errors: Vec<ConfigError>) -> Error {
        match errors.len() {
            1 => Error::Config(errors.remove(0)),
            0 => Error::Other(anyhow::anyhow!("internal error: an empty list of problems")),
            _ => Error::ConfigMany(errors),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn location_points_at_the_right_line_and_column() {
        let src = "a = 1\nbad-key = 2\n";
        let loc = Location::from_span(Path::new("x.toml"), src, 6..13);
        assert_eq!((loc.line, loc.column, loc.width), (2, 1, 7));
        assert_eq!(loc.text, "bad-key = 2");
        let shown = ConfigError::new("unknown key").at(loc).to_string();
        assert!(shown.contains("--> x.toml:2:1"), "{shown}");
        assert!(shown.contains("2 | bad-key = 2"), "{shown}");
        assert!(shown.contains("  | ^^^^^^^"), "{shown}");
    }
}
