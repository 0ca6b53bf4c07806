//! Where a stage's settings table went wrong. A stage validates its table
//! as one value (`Stage::check_settings`), and its error seldom names the
//! key (`invalid value: integer 0, expected an integer ≥ 1`), so the key
//! is found by asking the stage again about each key alone: the first
//! whose table of that key alone fails with the same error is the one.
//! Its line comes from the campaign's text, read again with its spans.

use std::path::Path;

use serde_json::{Map, Value};

use crate::config::{campaign::settings_table, Node, Step};
use crate::engine::Registry;
use crate::error::Location;

/// The key of stage `name`'s table that fails alone as the whole table
/// failed (`why`), and where the campaign file writes it.
pub(super) fn culprit(
    registry: &Registry,
    file: &Path,
    name: &str,
    table: &Value,
    why: &str,
) -> Option<(String, Location)> {
    let (key, _) = table.as_object()?.iter().find(|(k, v)| {
        let alone = Value::Object(Map::from_iter([(k.to_string(), (*v).clone())]));
        matches!(registry.check_settings(name, &alone), Some(Err(w)) if w == why)
    })?;
    let text = std::fs::read_to_string(file).ok()?;
    let root = Node::parse(&text).ok()?;
    let table = settings_table(name);
    let path: Vec<Step> = table
        .split('.')
        .chain([key.as_str()])
        .map(Step::Key)
        .collect();
    let span = root.key_span(&path)?;
    Some((key.clone(), Location::from_span(file, &text, span)))
}
