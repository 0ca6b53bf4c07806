//! A stage's folder of record files in a dataset (`<folder>/<id>/*.json`)
//! and the typed view a reader gets of it: the dataset's loader knows
//! folders only through this, so a stage's records join a dataset with no
//! edit of the loader.

use std::any::Any;
use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;

use crate::fsutil::paths::sorted_entries;
use crate::fsutil::read_json;

/// (algorithm, label, operation).
pub type OpKey = (String, String, String);

/// A record type a stage publishes in a dataset folder of its own, one
/// file per instance or operation (`<folder>/<id>/<file>.json`).
pub trait FolderRecord: serde::de::DeserializeOwned + Send + Sync + 'static {
    /// Its folder in the dataset (a `records::layout` name).
    const DIR: &'static str;

    /// Where the dataset files it: (algorithm, label, operation), the
    /// operation empty for a record of a whole instance.
    fn key(&self) -> OpKey;
}

/// A stage's record folder as the dataset loader reads it. The registry
/// hands the loader one per stage that publishes records; the loader names
/// no stage.
pub trait RecordFolder: Sync {
    /// Its folder in the dataset (a `records::layout` name).
    fn dir(&self) -> &'static str;

    /// Reads the folder of the dataset at `dataset_dir` (nothing when it
    /// is absent).
    fn load(&self, dataset_dir: &Path) -> Result<Contents>;
}

/// The folder of `T` records.
pub struct FolderOf<T>(PhantomData<fn() -> T>);

impl<T> FolderOf<T> {
    pub const fn new() -> Self {
        FolderOf(PhantomData)
    }
}

impl<T> Default for FolderOf<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: FolderRecord> RecordFolder for FolderOf<T> {
    fn dir(&self) -> &'static str {
        T::DIR
    }

    fn load(&self, dataset_dir: &Path) -> Result<Contents> {
        let map = load_tree(&dataset_dir.join(T::DIR), T::key)?;
        Ok(Contents(Arc::new(map)))
    }
}

/// One loaded record folder (a map from [`OpKey`] to its record type).
#[derive(Clone)]
pub struct Contents(Arc<dyn Any + Send + Sync>);

impl std::fmt::Debug for Contents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Contents")
    }
}

/// The records of one folder of a dataset.
pub struct Folder<'a, T>(Option<&'a BTreeMap<OpKey, T>>);

impl<'a, T: FolderRecord> Folder<'a, T> {
    /// The records of a loaded folder of `T`s (none when it was not
    /// loaded).
    pub(crate) fn of(contents: Option<&'a Contents>) -> Self {
        Folder(contents.and_then(|c| c.0.downcast_ref::<BTreeMap<OpKey, T>>()))
    }
}

impl<'a, T> Folder<'a, T> {
    pub fn get(&self, algorithm: &str, label: &str, op: &str) -> Option<&'a T> {
        self.0?
            .get(&(algorithm.to_string(), label.to_string(), op.to_string()))
    }

    pub fn contains(&self, algorithm: &str, label: &str, op: &str) -> bool {
        self.get(algorithm, label, op).is_some()
    }

    /// Every record with its key, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&'a OpKey, &'a T)> {
        self.0.into_iter().flatten()
    }

    pub fn values(&self) -> impl Iterator<Item = &'a T> {
        self.iter().map(|(_, v)| v)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_none_or(BTreeMap::is_empty)
    }
}

/// Reads every `<dir>/<id>/*.json` (sorted) keyed by `key`.
fn load_tree<T: serde::de::DeserializeOwned>(
    dir: &Path,
    key: impl Fn(&T) -> OpKey,
) -> Result<BTreeMap<OpKey, T>> {
    let mut out = BTreeMap::new();
    if !dir.is_dir() {
        return Ok(out);
    }
    for file in json_files(dir)? {
        let rec: T = read_json(&file)?;
        out.insert(key(&rec), rec);
    }
    Ok(out)
}

/// Every `*.json` one level below `dir`'s subdirectories, sorted.
pub(crate) fn json_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for sub in sorted_entries(dir)? {
        if sub.is_dir() {
            files.extend(
                sorted_entries(&sub)?
                    .into_iter()
                    .filter(|p| p.extension().is_some_and(|e| e == "json")),
            );
        }
    }
    Ok(files)
}
