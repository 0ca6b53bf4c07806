//! Printing what a command returns: text for people, or one JSON document
//! for tools. A closed stdout (`pqbench plan demo | head -1`) ends the
//! process quietly with success, as for any Unix filter.

use std::io::Write;

use serde::Serialize;

use super::global::Format;
use pqbench::error::Error;

/// Writes `text` to stdout.
pub fn text(text: &str) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    let r = out.write_all(text.as_bytes()).and_then(|_| out.flush());
    match r {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => Err(anyhow::Error::new(e).context("writing to stdout").into()),
    }
}

/// Writes `value` as text (via `show`) or as pretty JSON.
pub fn report<T: Serialize>(
    format: Format,
    value: &T,
    show: impl FnOnce(&T) -> String,
) -> Result<(), Error> {
    match format {
        Format::Text => text(&show(value)),
        Format::Json => {
            let mut s = serde_json::to_string_pretty(value).map_err(anyhow::Error::from)?;
            s.push('\n');
            text(&s)
        }
    }
}
