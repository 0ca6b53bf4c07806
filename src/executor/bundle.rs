//! The inputs a shard needs — the project's `campaigns/`, `algorithms/`
//! and `kat/` trees — as content-addressed files: a list of `<sha256>
//! <path>` lines whose blobs sit in the local cache, and the code that
//! assembles a project from such a list on the other side.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};

use crate::cache::Cache;
use crate::fsutil;

/// The trees a run reads its inputs from.
pub(crate) const TREES: [&str; 3] = ["campaigns", "algorithms", "kat"];

#[derive(Debug, Clone)]
pub(crate) struct Bundle {
    /// Project-relative path → sha256.
    pub files: BTreeMap<String, String>,
}

impl Bundle {
    /// The `<sha256> <path>` list, one line per file.
    pub(crate) fn list(&self) -> String {
        self.files
            .iter()
            .map(|(p, s)| format!("{s} {p}\n"))
            .collect()
    }

    /// Identifies the inputs: equal digests, equal projects.
    pub(crate) fn digest(&self) -> String {
        fsutil::sha256_hex(self.list().as_bytes())
    }
}

/// Every file of the input trees, stored in `cache` as blobs.
pub(crate) fn bundle(root: &Path, cache: &Cache) -> Result<Bundle> {
    fn walk(
        root: &Path,
        dir: &Path,
        cache: &Cache,
        out: &mut BTreeMap<String, String>,
    ) -> Result<()> {
        for p in crate::fsutil::paths::sorted_entries(dir)? {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            if name.as_deref().is_some_and(|n| n.starts_with(".tmp-")) {
                continue;
            }
            if p.is_dir() {
                walk(root, &p, cache, out)?;
            } else if p.is_file() {
                let rel = crate::fsutil::paths::relative(root, &p)?;
                out.insert(rel, cache.put_blob_file(&p)?);
            }
        }
        Ok(())
    }
    let mut files = BTreeMap::new();
    for t in TREES {
        let d = root.join(t);
        if d.is_dir() {
            walk(root, &d, cache, &mut files)?;
        }
    }
    Ok(Bundle { files })
}

/// Builds (or brings up to date) the project `into` from the list `list`
/// with blobs from `blobs`: every listed file linked or copied in, every
/// other file of the input trees removed; `output/` is left alone, so the
/// project's cache makes an unchanged shard cheap to run again.
pub fn assemble(list: &Path, blobs: &Path, into: &Path) -> Result<usize> {
    let text =
        std::fs::read_to_string(list).with_context(|| format!("reading {}", list.display()))?;
    let mut wanted = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let Some((sha, rel)) = line.split_once(' ') else {
            bail!("{}:{}: not `<sha256> <path>`", list.display(), n + 1);
        };
        let safe = !rel.starts_with('/')
            && rel.split('/').all(|c| !c.is_empty() && c != "..")
            && TREES.iter().any(|t| rel.starts_with(&format!("{t}/")));
        if sha.len() != 64 || !safe {
            bail!("{}:{}: refusing `{line}`", list.display(), n + 1);
        }
        wanted.insert(rel.to_string(), sha.to_string());
    }
    for (rel, sha) in &wanted {
        let from = blobs.join(sha);
        let to = into.join(rel);
        if fsutil::sha256_file(&to).ok().as_deref() == Some(sha.as_str()) {
            continue;
        }
        if fsutil::sha256_file(&from).ok().as_deref() != Some(sha.as_str()) {
            bail!(
                "blob {sha} of {rel} is missing or damaged in {}",
                blobs.display()
            );
        }
        if let Some(dir) = to.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let _ = std::fs::remove_file(&to);
        if std::fs::hard_link(&from, &to).is_err() {
            fsutil::copy_atomic(&from, &to)?;
        }
    }
    // Files the list no longer names (deleted sources) must go.
    for t in TREES {
        remove_unlisted(into, &into.join(t), &wanted)?;
    }
    Ok(wanted.len())
}

fn remove_unlisted(root: &Path, dir: &Path, wanted: &BTreeMap<String, String>) -> Result<()> {
    if !dir.is_dir() {
        return Ok(());
    }
    for p in crate::fsutil::paths::sorted_entries(dir)? {
        if p.is_dir() {
            remove_unlisted(root, &p, wanted)?;
        } else if !wanted.contains_key(&crate::fsutil::paths::relative(root, &p)?) {
            std::fs::remove_file(&p)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_round_trips_through_its_list_and_blobs() {
        let src = tempfile::tempdir().unwrap();
        let cache_dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(cache_dir.path());
        for (p, t) in [
            ("campaigns/c.toml", "a"),
            ("algorithms/x/sign.c", "b"),
            ("kat/x/kat.sha256", "c"),
            ("output/ignored.json", "d"),
        ] {
            let f = src.path().join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, t).unwrap();
        }
        let b = bundle(src.path(), &cache).unwrap();
        assert_eq!(b.files.len(), 3);
        let dst = tempfile::tempdir().unwrap();
        let list = dst.path().join("list");
        std::fs::write(&list, b.list()).unwrap();
        let blobs = cache_dir.path().join("flat");
        std::fs::create_dir_all(&blobs).unwrap();
        for sha in b.files.values() {
            std::fs::copy(cache.blob_path(sha), blobs.join(sha)).unwrap();
        }
        let into = dst.path().join("project");
        std::fs::create_dir_all(into.join("algorithms/old")).unwrap();
        std::fs::write(into.join("algorithms/old/gone.c"), "x").unwrap();
        assert_eq!(assemble(&list, &blobs, &into).unwrap(), 3);
        assert_eq!(
            std::fs::read_to_string(into.join("algorithms/x/sign.c")).unwrap(),
            "b"
        );
        assert!(!into.join("algorithms/old/gone.c").exists());
        // A list naming a path outside the trees is refused.
        std::fs::write(&list, format!("{} ../etc/passwd\n", "0".repeat(64))).unwrap();
        assert!(assemble(&list, &blobs, &into).is_err());
    }
}
