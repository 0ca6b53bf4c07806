//! The content-addressed cache under `output/.cache/`: stage results keyed by
//! the hash of their input manifest, and artifacts (libraries, KAT output)
//! stored by the hash of their bytes. Every write is atomic, so a killed run
//! leaves either a complete entry or none.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{de::DeserializeOwned, Serialize};

use crate::fsutil;

#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    pub fn new(dir: &Path) -> Cache {
        Cache {
            dir: dir.to_path_buf(),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn result_path(&self, stage: &str, key: &str) -> PathBuf {
        self.dir
            .join("results")
            .join(stage)
            .join(&key[..2])
            .join(format!("{key}.json"))
    }

    /// A stored result; an unreadable entry (e.g. from an older pqbench) is
    /// treated as missing, never as an error.
    pub fn get<T: DeserializeOwned>(&self, stage: &str, key: &str) -> Option<T> {
        fsutil::read_json(&self.result_path(stage, key)).ok()
    }

    pub fn put<T: Serialize>(&self, stage: &str, key: &str, value: &T) -> Result<()> {
        fsutil::write_json(&self.result_path(stage, key), value)
    }

    pub fn object_path(&self, key: &str) -> PathBuf {
        self.dir
            .join("objects")
            .join(&key[..2])
            .join(format!("{key}.o"))
    }

    pub fn blob_path(&self, sha: &str) -> PathBuf {
        self.dir.join("blobs").join(&sha[..2]).join(sha)
    }

    /// Stores bytes by content and returns their sha256.
    pub fn put_blob(&self, bytes: &[u8]) -> Result<String> {
        let sha = fsutil::sha256_hex(bytes);
        let path = self.blob_path(&sha);
        if !path.is_file() {
            fsutil::write_atomic(&path, bytes)?;
        }
        Ok(sha)
    }

    pub fn put_blob_file(&self, file: &Path) -> Result<String> {
        let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
        self.put_blob(&bytes)
    }

    /// A blob's path, checking it is still there and intact.
    pub fn existing_blob(&self, sha: &str) -> Option<PathBuf> {
        let path = self.blob_path(sha);
        let ok = fsutil::sha256_file(&path).ok()? == sha;
        ok.then_some(path)
    }

    /// A scratch directory for one job, removed when dropped.
    pub fn scratch(&self) -> Result<tempfile::TempDir> {
        let base = self.dir.join("tmp");
        std::fs::create_dir_all(&base)?;
        Ok(tempfile::Builder::new().prefix("job-").tempdir_in(base)?)
    }
}
