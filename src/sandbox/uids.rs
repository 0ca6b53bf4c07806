//! Unprivileged uids for jobs when pqbench runs as root. Each concurrent job
//! gets a uid no other job (of this or another pqbench process) holds, so
//! RLIMIT_NPROC (counted per uid) is a per-job limit and one job cannot
//! signal or ptrace another. A uid is held by an exclusive `flock` on a lock
//! file in a root-only directory, released when the lease is dropped (or the
//! holder dies).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

/// First uid (and gid) handed to jobs; far above any distribution's range
/// for regular or system users, below the 32-bit "nobody" values.
pub(super) const JOB_UID_BASE: u32 = 0x5EB0_0000;
/// How many uids are leased at most at once.
pub(super) const JOB_UID_SLOTS: u32 = 4096;

#[derive(Debug)]
pub(super) struct UidLease {
    pub uid: u32,
    _lock: File,
}

fn lock_dir() -> PathBuf {
    let run = PathBuf::from("/run");
    if run.is_dir() {
        run.join("pqbench-uids")
    } else {
        std::env::temp_dir().join("pqbench-uids-root")
    }
}

/// Leases a free job uid, or None when the lock directory cannot be used
/// or every slot is taken.
pub(super) fn lease() -> Option<UidLease> {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let dir = lock_dir();
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .ok()?;
    // Start at a different slot per pqbench process so concurrent runs
    // rarely contend for the same lock.
    let start = std::process::id()
        .wrapping_mul(97)
        .wrapping_add(NEXT.fetch_add(1, Ordering::Relaxed));
    for i in 0..JOB_UID_SLOTS {
        let slot = start.wrapping_add(i) % JOB_UID_SLOTS;
        let path = dir.join(format!("{slot}.lock"));
        let Ok(file) = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
        else {
            continue;
        };
        if rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_ok() {
            return Some(UidLease {
                uid: JOB_UID_BASE + slot,
                _lock: file,
            });
        }
    }
    None
}
