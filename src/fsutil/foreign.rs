//! Trees that come from outside (another machine's dataset, a public tree):
//! walked without following a link, bounded in depth, entries and file
//! size, and copied from descriptors opened with `O_NOFOLLOW`, so nothing
//! they contain can make pqbench read a file elsewhere or walk forever.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// How much of a foreign tree pqbench reads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Folders below the root.
    pub depth: usize,
    /// Files and folders in all.
    pub entries: usize,
    /// Bytes of any one file.
    pub file_bytes: u64,
}

/// A dataset: records and KAT files are small, a library or a hash KAT
/// file is at most a few hundred MiB.
pub(crate) const DATASET: Limits = Limits {
    depth: 8,
    entries: 500_000,
    file_bytes: 1 << 30,
};

/// A source tree to import: a public collection of schemes (thousands of
/// files, a few folders deep) whose largest files are KAT responses of
/// schemes with megabyte keys.
pub(crate) const TREE: Limits = Limits {
    depth: 24,
    entries: 500_000,
    file_bytes: 1 << 30,
};

/// Every regular file under `root`, by path relative to it (`/`-separated,
/// sorted), leaving out entries whose name `skip` matches. A symbolic link,
/// or anything but a regular file or a folder, is an error naming it; so is
/// a tree beyond `limits`.
pub(crate) fn regular_files(
    root: &Path,
    limits: Limits,
    skip: &dyn Fn(&str) -> bool,
) -> Result<BTreeMap<String, PathBuf>> {
    let meta =
        std::fs::symlink_metadata(root).with_context(|| format!("reading {}", root.display()))?;
    if !meta.file_type().is_dir() {
        bail!(
            "{} is not a folder (pqbench follows no link)",
            root.display()
        );
    }
    let mut out = BTreeMap::new();
    let mut entries = 0;
    walk(root, root, 0, limits, skip, &mut entries, &mut out)?;
    Ok(out)
}

fn walk(
    root: &Path,
    dir: &Path,
    depth: usize,
    limits: Limits,
    skip: &dyn Fn(&str) -> bool,
    entries: &mut usize,
    out: &mut BTreeMap<String, PathBuf>,
) -> Result<()> {
    if depth > limits.depth {
        bail!(
            "{} is more than {} folders deep",
            dir.display(),
            limits.depth
        );
    }
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<std::io::Result<_>>()?;
    names.sort();
    for name in names {
        let text = name.to_string_lossy();
        if skip(&text) {
            continue;
        }
        *entries += 1;
        if *entries > limits.entries {
            bail!(
                "{} holds more than {} entries",
                root.display(),
                limits.entries
            );
        }
        let path = dir.join(&name);
        let kind = std::fs::symlink_metadata(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let ft = kind.file_type();
        if ft.is_symlink() {
            bail!(
                "{} is a symbolic link; pqbench follows none in a dataset or tree it is given",
                path.display()
            );
        } else if ft.is_dir() {
            walk(root, &path, depth + 1, limits, skip, entries, out)?;
        } else if ft.is_file() {
            if kind.len() > limits.file_bytes {
                bail!(
                    "{} has {} bytes, more than the {} a file may have here",
                    path.display(),
                    kind.len(),
                    limits.file_bytes
                );
            }
            let rel = path
                .strip_prefix(root)
                .expect("walked under the root")
                .to_string_lossy()
                .into_owned();
            out.insert(rel, path);
        } else {
            bail!("{} is not a regular file or a folder", path.display());
        }
    }
    Ok(())
}

/// Reads a regular file through a descriptor opened without following a
/// link, at most `max` bytes (checked on the open file, before reading).
pub(crate) fn read_regular(path: &Path, max: u64) -> Result<Vec<u8>> {
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .with_context(|| format!("reading {} (no link is followed)", path.display()))?;
    let meta = f.metadata()?;
    if !meta.file_type().is_file() {
        bail!("{} is not a regular file", path.display());
    }
    if meta.len() > max {
        bail!(
            "{} has {} bytes, more than the {max} a file may have here",
            path.display(),
            meta.len()
        );
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    f.by_ref().take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        bail!("{} grew beyond {max} bytes while read", path.display());
    }
    Ok(bytes)
}

/// Copies a foreign regular file into place atomically (see `read_regular`).
pub(crate) fn copy_regular(from: &Path, to: &Path, max: u64) -> Result<()> {
    let bytes = read_regular(from, max)?;
    if std::fs::read(to).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    super::write_atomic(to, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits {
            depth: 3,
            entries: 100,
            file_bytes: 1000,
        }
    }

    #[test]
    fn links_are_errors_naming_them_and_never_followed() {
        let d = tempfile::tempdir().unwrap();
        let secret = tempfile::tempdir().unwrap();
        std::fs::write(secret.path().join("secret"), "private").unwrap();
        std::fs::create_dir_all(d.path().join("records/a")).unwrap();
        std::fs::write(d.path().join("records/a/x.json"), "{}").unwrap();
        std::os::unix::fs::symlink(
            secret.path().join("secret"),
            d.path().join("records/a/notes.txt"),
        )
        .unwrap();
        let err = regular_files(d.path(), limits(), &|_| false).unwrap_err();
        assert!(
            format!("{err}").contains("records/a/notes.txt is a symbolic link"),
            "{err}"
        );
        let err = read_regular(&d.path().join("records/a/notes.txt"), 1000).unwrap_err();
        assert!(
            format!("{err:#}").contains("no link is followed"),
            "{err:#}"
        );
        // A link back up the tree is refused too, at once.
        std::fs::remove_file(d.path().join("records/a/notes.txt")).unwrap();
        std::os::unix::fs::symlink(d.path(), d.path().join("records/a/up")).unwrap();
        assert!(regular_files(d.path(), limits(), &|_| false).is_err());
    }

    #[test]
    fn depth_entries_and_size_are_bounded() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("a/b/c/d/e")).unwrap();
        let err = regular_files(d.path(), limits(), &|_| false).unwrap_err();
        assert!(format!("{err}").contains("folders deep"), "{err}");
        let d = tempfile::tempdir().unwrap();
        let big = d.path().join("big");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(2 << 30)
            .unwrap();
        let err = regular_files(d.path(), limits(), &|_| false).unwrap_err();
        assert!(format!("{err}").contains("more than the 1000"), "{err}");
        assert!(read_regular(&big, 1000).is_err());
        let d = tempfile::tempdir().unwrap();
        for i in 0..101 {
            std::fs::write(d.path().join(format!("f{i}")), "").unwrap();
        }
        let err = regular_files(d.path(), limits(), &|_| false).unwrap_err();
        assert!(format!("{err}").contains("more than 100 entries"), "{err}");
    }

    #[test]
    fn skipped_names_and_relative_paths() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("kat/x")).unwrap();
        std::fs::write(d.path().join("kat/x/L.log"), "log").unwrap();
        std::fs::write(d.path().join(".tmp-1"), "").unwrap();
        let files = regular_files(d.path(), limits(), &|n| n.starts_with('.')).unwrap();
        assert_eq!(files.keys().collect::<Vec<_>>(), ["kat/x/L.log"]);
    }
}
