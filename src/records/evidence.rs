//! Evidence drawn from an instance's objects (the survey) and its sizes.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct ObjectEvidence {
    pub reachable_helpers: Vec<HelperUse>,
    pub tables: Vec<TableHit>,
    pub unreachable_tables: Vec<TableHit>,
    pub api_found: Vec<String>,
    pub api_missing: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct HelperUse {
    pub helper: String,
    /// The first API function (in the order given) whose graph reaches it.
    pub reached_from: String,
    /// The object whose section holds the reference.
    pub via_object: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct TableHit {
    pub table: String,
    pub family: String,
    pub object: String,
    /// The function or data symbol covering the match, when one does.
    pub symbol: Option<String>,
}

/// One size of one instance from its three sources.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SizeFigure {
    pub api: Option<u64>,
    pub observed: Option<u64>,
    /// The shortest length returned, for variable-length outputs
    /// (signatures, ciphertexts) when the generator reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_min: Option<u64>,
    pub catalog: Option<u64>,
    /// What the pages show: the catalog where it has a figure (public key,
    /// ciphertext, signature), else the API figure.
    pub shown: Option<u64>,
    pub shown_from: String,
}
