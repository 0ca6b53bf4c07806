//! One run's view of the files it reads and does not write: each file's
//! digest and each directory's listing are taken once and shared by every
//! unit and instance that names them, instead of once per unit per
//! instance (a warm run of 500 instances stated the same support headers
//! 24,000 times each). A path under a volatile directory (the run's own
//! output) is never remembered, except under the stable directories
//! within it (content-addressed ones, which never change once written),
//! and a missing file is never remembered: it may appear later in the run.
//!
//! The view lasts as long as the cache that holds it, one command: an
//! edit made while a run goes on is seen by the next command, as an edit
//! made while a compiler runs is.
//!
//! Digests are also remembered across commands (the KAT references are
//! hundreds of kilobytes, one per instance; the records a page is derived
//! from are read by every `status`), as git's index does, under the run's
//! output too:
//! a digest is reused while the file's device, inode, size, modification
//! and change times are all the same as when it was read. The change time
//! cannot be set back from user space, so a rewrite that restores the
//! size and modification time is still seen. A file changed within the
//! last two seconds is not remembered (its times may not have ticked yet).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::Context;
use serde::{Deserialize, Serialize};

#[derive(Debug)]
pub(crate) struct FsView {
    volatile: PathBuf,
    stable: Vec<PathBuf>,
    digests: Mutex<HashMap<PathBuf, String>>,
    listings: Mutex<HashMap<PathBuf, Arc<[PathBuf]>>>,
    /// Values computed from the listings of a set of directories.
    of_listings: Mutex<HashMap<Vec<PathBuf>, String>>,
    /// Digests kept across commands, in this file.
    index: PathBuf,
    stamped: Mutex<Option<Stamped>>,
}

/// The digests kept across commands, by path, and whether this command
/// added any.
#[derive(Debug, Default)]
struct Stamped {
    files: HashMap<PathBuf, (Stamp, String)>,
    changed: bool,
}

/// What must be unchanged for a kept digest to stand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl Stamp {
    fn of(m: &std::fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
        Stamp {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime_ns: ns(m.mtime(), m.mtime_nsec()),
            ctime_ns: ns(m.ctime(), m.ctime_nsec()),
        }
    }

    /// Changed less than two seconds ago (or in the future).
    fn recent(&self) -> bool {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i128);
        now - self.mtime_ns.max(self.ctime_ns) < 2_000_000_000
    }
}

impl FsView {
    /// A view that remembers nothing under `volatile` but beneath one of
    /// `stable`, and keeps large files' digests across commands in
    /// `index`.
    pub(crate) fn new(volatile: &Path, stable: &[PathBuf], index: PathBuf) -> FsView {
        FsView {
            volatile: volatile.to_path_buf(),
            stable: stable.to_vec(),
            digests: Mutex::default(),
            listings: Mutex::default(),
            of_listings: Mutex::default(),
            index,
            stamped: Mutex::default(),
        }
    }

    /// The sha256 of a file: from this command's view, else from the
    /// digests kept across commands while its stamp is unchanged, else
    /// read.
    pub(crate) fn sha256_file(&self, p: &Path) -> anyhow::Result<String> {
        if let Some(d) = self.digests.lock().ok().and_then(|m| m.get(p).cloned()) {
            return Ok(d);
        }
        let meta = std::fs::metadata(p).with_context(|| format!("reading {}", p.display()))?;
        if !meta.is_file() {
            anyhow::bail!("{} is not a regular file", p.display());
        }
        let stamp = Stamp::of(&meta);
        let kept = self.with_stamped(|s| {
            s.files
                .get(p)
                .filter(|(st, _)| *st == stamp)
                .map(|(_, d)| d.clone())
        });
        let d = match kept.flatten() {
            Some(d) => d,
            None => {
                let d = super::sha256_file(p)?;
                // Read again after: a file written meanwhile is not kept.
                let after = std::fs::metadata(p).map(|m| Stamp::of(&m)).ok();
                // Kept across commands wherever it is: the stamp is
                // checked on every use, so even the run's own output
                // (records a later stage reads) is read again once changed.
                if after == Some(stamp) && !stamp.recent() {
                    self.with_stamped(|s| {
                        s.files.insert(p.to_path_buf(), (stamp, d.clone()));
                        s.changed = true;
                    });
                }
                d
            }
        };
        if self.remembers(p) {
            if let Ok(mut m) = self.digests.lock() {
                m.insert(p.to_path_buf(), d.clone());
            }
        }
        Ok(d)
    }

    /// `f` over the kept digests, read from the index the first time.
    fn with_stamped<T>(&self, f: impl FnOnce(&mut Stamped) -> T) -> Option<T> {
        let index = &self.index;
        let mut guard = self.stamped.lock().ok()?;
        let s = guard.get_or_insert_with(|| Stamped {
            files: super::read_json::<Vec<(PathBuf, Stamp, String)>>(index)
                .unwrap_or_default()
                .into_iter()
                .map(|(p, st, d)| (p, (st, d)))
                .collect(),
            changed: false,
        });
        Some(f(s))
    }

    fn remembers(&self, p: &Path) -> bool {
        !p.starts_with(&self.volatile) || self.stable.iter().any(|s| p.starts_with(s))
    }

    /// The files under `dir` as `list` finds them the first time.
    pub(crate) fn listing(
        &self,
        dir: &Path,
        list: impl FnOnce(&Path) -> Vec<PathBuf>,
    ) -> Arc<[PathBuf]> {
        if let Some(l) = self.listings.lock().ok().and_then(|m| m.get(dir).cloned()) {
            return l;
        }
        let l: Arc<[PathBuf]> = list(dir).into();
        if self.remembers(dir) {
            if let Ok(mut m) = self.listings.lock() {
                m.insert(dir.to_path_buf(), l.clone());
            }
        }
        l
    }
}

impl FsView {
    /// A value computed from the listings of `dirs` alone, computed once
    /// (unless one of them is not remembered).
    pub(crate) fn of_listings(&self, dirs: &[PathBuf], compute: impl FnOnce() -> String) -> String {
        if let Some(v) = self
            .of_listings
            .lock()
            .ok()
            .and_then(|m| m.get(dirs).cloned())
        {
            return v;
        }
        let v = compute();
        if dirs.iter().all(|d| self.remembers(d)) {
            if let Ok(mut m) = self.of_listings.lock() {
                m.insert(dirs.to_vec(), v.clone());
            }
        }
        v
    }
}

impl Drop for FsView {
    /// Keeps the digests read by this command for the next ones; a file
    /// that cannot be written only costs them a read.
    fn drop(&mut self) {
        let (index, Ok(guard)) = (&self.index, self.stamped.lock()) else {
            return;
        };
        if let Some(s) = guard.as_ref().filter(|s| s.changed) {
            // Files gone since are dropped, so the index does not grow
            // with every tree ever measured.
            let mut all: Vec<(&PathBuf, &Stamp, &String)> = s
                .files
                .iter()
                .filter(|(p, _)| p.exists())
                .map(|(p, (st, d))| (p, st, d))
                .collect();
            all.sort_by(|a, b| a.0.cmp(b.0));
            let _ = super::write_json(index, &all);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn a_file_is_read_once_and_a_missing_one_every_time() {
        let dir = tempfile::tempdir().unwrap();
        let v = FsView::new(&dir.path().join("out"), &[], dir.path().join("i.json"));
        let file = dir.path().join("a.h");
        std::fs::write(&file, b"one").unwrap();
        let first = v.sha256_file(&file).unwrap();
        // Rewritten within the command: the command's view stands.
        std::fs::write(&file, b"two").unwrap();
        assert_eq!(v.sha256_file(&file).unwrap(), first);
        let missing = dir.path().join("b.h");
        assert!(v.sha256_file(&missing).is_err());
        std::fs::write(&missing, b"now").unwrap();
        assert!(v.sha256_file(&missing).is_ok());
        // Not a regular file: refused, never read.
        assert!(v.sha256_file(dir.path()).is_err());
    }

    #[test]
    fn the_runs_own_output_is_read_again_except_its_stable_part() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let (tmp, support) = (out.join("tmp"), out.join("support"));
        std::fs::create_dir_all(&tmp).unwrap();
        std::fs::create_dir_all(&support).unwrap();
        let v = FsView::new(
            &out,
            std::slice::from_ref(&support),
            dir.path().join("i.json"),
        );
        let (gen, sup) = (tmp.join("config.h"), support.join("driver.c"));
        std::fs::write(&gen, b"1").unwrap();
        std::fs::write(&sup, b"1").unwrap();
        v.sha256_file(&gen).unwrap();
        v.sha256_file(&sup).unwrap();
        std::fs::write(&gen, b"2").unwrap();
        std::fs::write(&sup, b"2").unwrap();
        assert_eq!(v.sha256_file(&gen).unwrap(), super::super::sha256_hex(b"2"));
        assert_eq!(v.sha256_file(&sup).unwrap(), super::super::sha256_hex(b"1"));
        let lists = Cell::new(0);
        let list = |d: &Path| {
            lists.set(lists.get() + 1);
            vec![d.join("x.h")]
        };
        assert_eq!(
            &*v.listing(Path::new("/p/inc"), list),
            [PathBuf::from("/p/inc/x.h")]
        );
        v.listing(Path::new("/p/inc"), list);
        v.listing(&tmp, list);
        v.listing(&tmp, list);
        assert_eq!(lists.get(), 3);
    }

    /// Sets a file's modification time an hour into the past (its change
    /// time stays now, so the test also waits out the two seconds).
    fn age(p: &Path) {
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(p)
            .unwrap()
            .set_modified(old)
            .unwrap();
    }

    #[test]
    fn a_kept_digest_stands_until_the_file_changes_even_with_its_old_size_and_time() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("index.json");
        let file = dir.path().join("ref.rsp");
        std::fs::write(&file, b"one").unwrap();
        age(&file);
        // The change time must be two seconds old to be kept.
        std::thread::sleep(std::time::Duration::from_millis(2100));
        let view = || FsView::new(&dir.path().join("out"), &[], index.clone());
        let first = view().sha256_file(&file).unwrap();
        assert_eq!(first, super::super::sha256_hex(b"one"));
        assert!(index.is_file(), "the digest was kept");
        // Kept: a forged entry with the right stamp would be believed, so
        // the index is read, not the file.
        let text = std::fs::read_to_string(&index).unwrap();
        std::fs::write(&index, text.replace(&first, &"f".repeat(64))).unwrap();
        assert_eq!(view().sha256_file(&file).unwrap(), "f".repeat(64));
        // Same size, modification time set back: the change time moved.
        let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
        std::fs::write(&file, b"two").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        assert_eq!(
            view().sha256_file(&file).unwrap(),
            super::super::sha256_hex(b"two")
        );
    }

    #[test]
    fn a_file_changed_in_the_last_two_seconds_is_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("index.json");
        let file = dir.path().join("ref.rsp");
        std::fs::write(&file, b"new").unwrap();
        let v = FsView::new(&dir.path().join("out"), &[], index.clone());
        v.sha256_file(&file).unwrap();
        drop(v);
        assert!(!index.exists());
    }
}
