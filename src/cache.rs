//! The content-addressed cache under `output/.cache/`: stage results keyed by
//! the hash of their input manifest, and artifacts (libraries, objects, KAT
//! output) stored by the hash of their bytes. Every write is atomic, so a
//! killed run leaves either a complete entry or none, and every read is
//! verified: a result file carries the digest of its value, and an entry
//! that does not match it is reported as corrupt, never reused.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::fsutil;
use crate::fsutil::view::FsView;

#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
    /// The files this command reads, each taken once (shared by clones).
    view: Arc<FsView>,
}

/// What the cache holds for one stage key.
#[derive(Debug)]
pub(crate) enum Lookup<T> {
    Hit {
        value: T,
        sha256: String,
    },
    Missing,
    /// The file exists but is unreadable or does not match its digest.
    Corrupt(String),
}

/// A result file: the value and the sha256 of its canonical JSON.
#[derive(Serialize, Deserialize)]
struct Entry {
    sha256: String,
    value: Value,
}

/// sha256 of a value's canonical (compact, key-sorted) JSON: the digest the
/// lock records for a stage result.
pub(crate) fn value_digest(value: &Value) -> String {
    fsutil::sha256_hex(&serde_json::to_vec(value).expect("JSON values serialise"))
}

impl Cache {
    pub fn new(dir: &Path) -> Cache {
        // The cache is written as the command goes, except the support
        // code, which lives under its content's digest.
        let view = FsView::new(dir, &[dir.join("support")], dir.join("file-digests.json"));
        Cache {
            dir: dir.to_path_buf(),
            view: Arc::new(view),
        }
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// This command's view of the files it reads.
    pub(crate) fn view(&self) -> &FsView {
        &self.view
    }

    fn result_path(&self, stage: &str, key: &str) -> PathBuf {
        self.dir
            .join("results")
            .join(stage)
            .join(&key[..2])
            .join(format!("{key}.json"))
    }

    /// The stored value for `key`, checked against its digest.
    pub(crate) fn lookup(&self, stage: &str, key: &str) -> Lookup<Value> {
        let path = self.result_path(stage, key);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Lookup::Missing,
            Err(e) => return Lookup::Corrupt(format!("unreadable: {e}")),
        };
        let Ok(entry) = serde_json::from_slice::<Entry>(&bytes) else {
            return Lookup::Corrupt("not a result entry".into());
        };
        let sha256 = value_digest(&entry.value);
        if sha256 != entry.sha256 {
            return Lookup::Corrupt("contents do not match their digest".into());
        }
        Lookup::Hit {
            value: entry.value,
            sha256,
        }
    }

    /// Stores a result and returns its digest.
    pub(crate) fn put<T: Serialize>(&self, stage: &str, key: &str, value: &T) -> Result<String> {
        let value = serde_json::to_value(value).context("encoding a stage result")?;
        let sha256 = value_digest(&value);
        let entry = Entry {
            sha256: sha256.clone(),
            value,
        };
        fsutil::write_json(&self.result_path(stage, key), &entry)?;
        Ok(sha256)
    }

    pub(crate) fn object_path(&self, key: &str) -> PathBuf {
        self.dir
            .join("objects")
            .join(&key[..2])
            .join(format!("{key}.o"))
    }

    pub(crate) fn blob_path(&self, sha: &str) -> PathBuf {
        self.dir.join("blobs").join(&sha[..2]).join(sha)
    }

    /// Stores bytes by content and returns their sha256. A blob already
    /// present is rewritten when it no longer holds those bytes.
    pub(crate) fn put_blob(&self, bytes: &[u8]) -> Result<String> {
        let sha = fsutil::sha256_hex(bytes);
        let path = self.blob_path(&sha);
        if fsutil::sha256_file(&path).ok().as_deref() != Some(sha.as_str()) {
            fsutil::write_atomic(&path, bytes)?;
        }
        Ok(sha)
    }

    pub(crate) fn put_blob_file(&self, file: &Path) -> Result<String> {
        let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
        self.put_blob(&bytes)
    }

    /// A blob's path, checking it is still there and intact.
    pub(crate) fn existing_blob(&self, sha: &str) -> Option<PathBuf> {
        let path = self.blob_path(sha);
        let ok = fsutil::sha256_file(&path).ok()? == sha;
        ok.then_some(path)
    }

    /// A scratch directory for one job, removed when dropped.
    pub(crate) fn scratch(&self) -> Result<tempfile::TempDir> {
        let base = self.dir.join("tmp");
        std::fs::create_dir_all(&base).with_context(|| format!("creating {}", base.display()))?;
        tempfile::Builder::new()
            .prefix("job-")
            .tempdir_in(&base)
            .with_context(|| format!("creating a job directory in {}", base.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flipped_byte_makes_an_entry_corrupt_not_a_hit() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let key = "ab".repeat(32);
        let sha = cache
            .put("time", &key, &serde_json::json!({"cycles": 1234}))
            .unwrap();
        match cache.lookup("time", &key) {
            Lookup::Hit { sha256, .. } => assert_eq!(sha256, sha),
            other => panic!("{other:?}"),
        }
        let path = cache.result_path("time", &key);
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replace("1234", "1235");
        std::fs::write(&path, text).unwrap();
        assert!(matches!(cache.lookup("time", &key), Lookup::Corrupt(_)));
        std::fs::write(&path, "{").unwrap();
        assert!(matches!(cache.lookup("time", &key), Lookup::Corrupt(_)));
        std::fs::remove_file(&path).unwrap();
        assert!(matches!(cache.lookup("time", &key), Lookup::Missing));
    }

    #[test]
    fn a_damaged_blob_is_not_existing_and_is_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let sha = cache.put_blob(b"library").unwrap();
        assert!(cache.existing_blob(&sha).is_some());
        std::fs::write(cache.blob_path(&sha), b"librarx").unwrap();
        assert!(cache.existing_blob(&sha).is_none());
        cache.put_blob(b"library").unwrap();
        assert!(cache.existing_blob(&sha).is_some());
    }
}
