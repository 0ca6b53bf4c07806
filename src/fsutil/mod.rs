//! File writes that never leave a half-written file behind, and reading
//! trees that come from outside (`foreign`).

pub(crate) mod foreign;
pub(crate) mod paths;
pub(crate) mod scratch;
pub(crate) mod view;

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};

/// The mode a plain `open(O_CREAT, 0666)` would give: 0666 less the umask.
/// Temporary files are created 0600, which would leave published records
/// and pages unreadable to a web server running as another user.
pub(crate) fn file_mode() -> u32 {
    static MODE: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *MODE.get_or_init(|| {
        // Reading the umask through /proc leaves it untouched (umask(2)
        // would have to set it, racing other threads).
        let umask = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("Umask:"))
                    .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
            })
            .unwrap_or(0o022);
        0o666 & !umask
    })
}

/// Gives a freshly written temporary file the usual mode.
pub(crate) fn set_file_mode(file: &std::fs::File) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(std::fs::Permissions::from_mode(file_mode()))
}

/// A write failed for want of space or of a larger file-size limit: no
/// later write of the run can succeed, so the run stops with this error.
#[derive(Debug)]
pub(crate) struct StorageFull(pub &'static str);

impl std::fmt::Display for StorageFull {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for StorageFull {}

/// Says what to do when a write fails for want of space or of a larger
/// file-size limit, instead of a bare OS error.
pub(crate) fn explain_write_error(e: std::io::Error, path: &Path) -> anyhow::Error {
    use std::io::ErrorKind;
    let hint = match (e.kind(), e.raw_os_error()) {
        (ErrorKind::StorageFull, _) | (_, Some(libc::ENOSPC)) => Some(
            "the disk is full: free space and run again (nothing half-written was kept)",
        ),
        (ErrorKind::FileTooLarge, _) | (_, Some(libc::EFBIG)) => Some(
            "the file-size limit (ulimit -f) is too small: raise it and run again (nothing half-written was kept)",
        ),
        (ErrorKind::QuotaExceeded, _) | (_, Some(libc::EDQUOT)) => {
            Some("the disk quota is exhausted: free space and run again")
        }
        _ => None,
    };
    let err = anyhow::Error::new(e).context(format!("writing {}", path.display()));
    match hint {
        Some(h) => err.context(StorageFull(h)),
        None => err,
    }
}

/// Whether `e` (or a cause of it) is a [`StorageFull`] write failure.
pub(crate) fn is_storage_full(e: &anyhow::Error) -> bool {
    // anyhow finds a context value through every layer of context.
    e.downcast_ref::<StorageFull>().is_some()
}

/// Writes `bytes` to `path` through a temporary file in the same directory
/// and a rename, so a reader (or a run killed mid-way) sees the old file or
/// the new one, never a torn one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .with_context(|| format!("{} has no parent directory", path.display()))?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .tempfile_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    tmp.write_all(bytes)
        .and_then(|_| tmp.as_file().sync_data())
        .and_then(|_| set_file_mode(tmp.as_file()))
        .map_err(|e| explain_write_error(e, path))?;
    tmp.persist(path)
        .with_context(|| format!("renaming into {}", path.display()))?;
    Ok(())
}

/// Flushes a directory's entries (a rename into it, the files created in
/// it) to storage, so they outlast a crash of the machine, not only of
/// pqbench.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .with_context(|| format!("flushing {}", dir.display()))
}

/// Serialises `value` as pretty JSON (with a final newline) atomically.
pub(crate) fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<()> {
    let mut text = serde_json::to_vec_pretty(value)?;
    text.push(b'\n');
    write_atomic(path, &text)
}

/// As `write_json`, but a file that already holds exactly these bytes is
/// left alone (no write, no flush): state rewritten unchanged on every
/// warm run cost a flush per result.
pub(crate) fn write_json_if_changed<T: serde::Serialize>(path: &Path, value: &T) -> Result<()> {
    let mut text = serde_json::to_vec_pretty(value)?;
    text.push(b'\n');
    if std::fs::read(path).ok().as_deref() == Some(text.as_slice()) {
        return Ok(());
    }
    write_atomic(path, &text)
}

pub(crate) fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let text = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_slice(&text).with_context(|| format!("parsing {}", path.display()))
}

/// Copies a file atomically (the destination appears complete or not at all).
/// A destination that already holds the same bytes is left alone.
pub(crate) fn copy_atomic(from: &Path, to: &Path) -> Result<()> {
    let bytes = std::fs::read(from).with_context(|| format!("reading {}", from.display()))?;
    if std::fs::read(to).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    write_atomic(to, &bytes)
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

pub(crate) fn sha256_file(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(sha256_hex(&bytes))
}
