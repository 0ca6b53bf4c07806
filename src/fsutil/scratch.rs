//! Scratch folders outside any project (a toolchain job's, the sandbox
//! probe's), made in one folder per pqbench process in the temporary
//! directory: `pqbench-scratch-<pid>-<random>/`. The process keeps the
//! folder's `lock` file locked while it lives and removes the folder when
//! it exits. A process that could not (killed by SIGKILL, or by a
//! terminal's interrupt while its jobs ran) leaves it behind, with its jobs'
//! files in it; the next pqbench to need scratch space removes every such
//! folder of its user whose lock no process holds.

use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use anyhow::{Context, Result};
use rustix::fs::{flock, FlockOperation};

const PREFIX: &str = "pqbench-scratch-";
const LOCK: &str = "lock";

/// This process's folder, its lock held for the process's life.
struct Root {
    path: PathBuf,
    owner: u32,
    _lock: File,
}

static ROOT: OnceLock<Root> = OnceLock::new();

/// A fresh scratch folder named `<prefix><random>` in this process's
/// folder, removed when dropped.
pub(crate) fn folder(prefix: &str) -> Result<tempfile::TempDir> {
    let root = root()?;
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(&root.path)
        .with_context(|| format!("creating a scratch folder in {}", root.path.display()))
}

/// This process's folder, made (after a sweep) by the first caller; a
/// failure is returned to that caller and the next one tries again.
fn root() -> Result<&'static Root> {
    static MAKING: Mutex<()> = Mutex::new(());
    if let Some(root) = ROOT.get() {
        return Ok(root);
    }
    let _making = MAKING.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(root) = ROOT.get() {
        return Ok(root);
    }
    let tmp = std::env::temp_dir();
    sweep(&tmp);
    let made = make_root(&tmp)?;
    // Only this caller (holding MAKING, ROOT still empty) sets it.
    let root = ROOT.get_or_init(|| made);
    // SAFETY: registers a plain function, once; `remove_at_exit` only
    // reads ROOT, which is set by now.
    unsafe {
        libc::atexit(remove_at_exit);
    }
    Ok(root)
}

/// Makes this process's folder under a name no sweep considers, locks
/// it, then gives it its final name: a folder named `pqbench-scratch-*`
/// is locked from the moment it has that name.
fn make_root(tmp: &Path) -> Result<Root> {
    let owner = std::process::id();
    let draft = tempfile::Builder::new()
        .prefix(&format!(".{PREFIX}{owner}-"))
        .tempdir_in(tmp)
        .with_context(|| format!("creating a scratch folder in {}", tmp.display()))?;
    // Jobs run under uids of their own and reach their folders through it.
    std::fs::set_permissions(draft.path(), std::fs::Permissions::from_mode(0o711))?;
    let lock = OpenOptions::new()
        .create_new(true)
        .write(true)
        .mode(0o600)
        .open(draft.path().join(LOCK))?;
    flock(&lock, FlockOperation::NonBlockingLockExclusive)?;
    let name = draft
        .path()
        .file_name()
        .and_then(OsStr::to_str)
        .and_then(|n| n.strip_prefix('.'))
        .context("scratch folder name")?
        .to_string();
    let path = tmp.join(name);
    std::fs::rename(draft.path(), &path)
        .with_context(|| format!("naming the scratch folder {}", path.display()))?;
    // Renamed away: nothing is left at the draft's path to remove.
    let _ = draft.keep();
    Ok(Root {
        path,
        owner,
        _lock: lock,
    })
}

/// Removes the folders in `tmp` that a pqbench process of this user left
/// behind: those whose lock no process holds. Another user's folders, and
/// anything that is not a folder of ours, are left alone.
fn sweep(tmp: &Path) {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    for e in entries.flatten() {
        let dir = e.path();
        let ours = e
            .file_name()
            .to_str()
            .is_some_and(|n| n.starts_with(PREFIX))
            && std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir() && m.uid() == me);
        if ours && abandoned(&dir) {
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

/// Whether the folder's lock can be taken: its process is gone.
fn abandoned(dir: &Path) -> bool {
    let Ok(lock) = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(dir.join(LOCK))
    else {
        return false;
    };
    flock(&lock, FlockOperation::NonBlockingLockExclusive).is_ok()
}

extern "C" fn remove_at_exit() {
    // A forked copy of this process that exits runs this too: only the
    // folder's owner removes it.
    if let Some(root) = ROOT.get() {
        if root.owner == std::process::id() {
            let _ = std::fs::remove_dir_all(&root.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder_in(tmp: &Path, name: &str, locked: bool) -> (PathBuf, Option<File>) {
        let dir = tmp.join(name);
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("unit.o"), b"left behind").unwrap();
        let lock = File::create(dir.join(LOCK)).unwrap();
        let held = locked.then(|| {
            flock(&lock, FlockOperation::NonBlockingLockExclusive).unwrap();
            lock
        });
        (dir, held)
    }

    #[test]
    fn a_folder_whose_lock_no_process_holds_is_removed_and_a_held_one_is_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let (gone, _) = folder_in(tmp.path(), "pqbench-scratch-1-a", false);
        let (kept, _held) = folder_in(tmp.path(), "pqbench-scratch-2-b", true);
        // Not ours by name, or without a lock: never touched.
        let (other, _) = folder_in(tmp.path(), "other-scratch-3-c", false);
        let unlocked = tmp.path().join("pqbench-scratch-4-d");
        std::fs::create_dir(&unlocked).unwrap();
        sweep(tmp.path());
        assert!(!gone.exists());
        assert!(kept.join("unit.o").is_file());
        assert!(other.join("unit.o").is_file());
        assert!(unlocked.is_dir());
    }

    #[test]
    fn another_users_abandoned_folder_is_left_alone() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: giving a folder to another user needs root");
            assert!(std::env::var("CI").map_or(true, |v| v != "true"));
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let (theirs, _) = folder_in(tmp.path(), "pqbench-scratch-5-e", false);
        std::os::unix::fs::chown(&theirs, Some(12345), Some(12345)).unwrap();
        sweep(tmp.path());
        assert!(theirs.join("unit.o").is_file());
    }

    #[test]
    fn a_folder_is_made_in_this_processs_locked_folder() {
        let dir = folder("pqbench-test-").unwrap();
        let root = dir.path().parent().unwrap();
        let name = root.file_name().unwrap().to_str().unwrap();
        assert!(
            name.starts_with(&format!("{PREFIX}{}-", std::process::id())),
            "{name}"
        );
        assert!(!abandoned(root), "this process holds its folder's lock");
        let mode = std::fs::metadata(root).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o711);
    }
}
