//! Advisory locks (flock) that keep runs from disturbing each other: one run
//! per project output at a time, and one measurement per CPU across every
//! pqbench on the machine, as the reference harness's per-CPU lock does.
//! The kernel drops a lock when its holder exits, however it exits.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::plan::Plan;
use crate::progress::Progress;

/// Takes an exclusive lock on `path` without waiting; on success the file
/// holds our PID. Err(Some(pid)) names the holder when it is known.
fn try_lock(path: &Path) -> Result<Result<File, Option<u32>>> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        // Anyone on the machine may take a CPU lock.
        .mode(0o666)
        .open(path)
        .with_context(|| format!("opening the lock file {}", path.display()))?;
    // SAFETY: flock on a descriptor we own.
    let rc = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc != 0 {
        let mut text = String::new();
        let _ = f.read_to_string(&mut text);
        return Ok(Err(text.trim().parse().ok()));
    }
    f.set_len(0)?;
    f.rewind()?;
    write!(f, "{}", std::process::id())?;
    Ok(Ok(f))
}

/// Held for the whole run: a second `pqbench run` of the same campaign and
/// system refuses at once instead of interleaving its records with ours.
pub struct ProjectLock {
    _file: File,
}

impl ProjectLock {
    pub fn acquire(plan: &Plan) -> Result<ProjectLock> {
        let path = plan.output_dir.join(".lock");
        match try_lock(&path)? {
            Ok(f) => Ok(ProjectLock { _file: f }),
            Err(pid) => bail!(
                "another pqbench run{} is writing {}; wait for it to finish (or stop it) and run again",
                pid.map(|p| format!(" (PID {p})")).unwrap_or_default(),
                plan.display_path(&plan.output_dir)
            ),
        }
    }
}

/// Per-CPU locks, taken before the first measurement and held to the end
/// of the run.
#[derive(Default)]
pub struct CpuLocks {
    held: Mutex<Vec<File>>,
}

/// Where CPU locks live: shared by every user and project of the machine.
pub fn cpu_lock_path(cpu: usize) -> PathBuf {
    std::env::temp_dir().join(format!("pqbench-cpu{cpu}.lock"))
}

impl CpuLocks {
    /// Takes the lock of every measuring CPU, waiting (with a message) while
    /// another pqbench measures on one of them.
    pub fn acquire(&self, cpus: &[usize], progress: &Progress) -> Result<()> {
        let mut held = self.held.lock().expect("cpu lock list");
        if !held.is_empty() {
            return Ok(());
        }
        // One global order, so two runs wanting overlapping CPUs never
        // wait for each other in a cycle.
        let mut cpus = cpus.to_vec();
        cpus.sort_unstable();
        cpus.dedup();
        for cpu in cpus {
            let path = cpu_lock_path(cpu);
            let mut told = false;
            let file = loop {
                match try_lock(&path)? {
                    Ok(f) => break f,
                    Err(pid) => {
                        if !told {
                            progress.note(&format!(
                                "CPU {cpu} is measuring for another pqbench{}; waiting for it ({})",
                                pid.map(|p| format!(" (PID {p})")).unwrap_or_default(),
                                path.display()
                            ));
                            told = true;
                        }
                        std::thread::sleep(Duration::from_millis(200));
                    }
                }
            };
            held.push(file);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_names_its_holder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        let first = try_lock(&path).unwrap().expect("first lock");
        // flock locks belong to the open file description: a second open in
        // this process conflicts like another process would.
        match try_lock(&path).unwrap() {
            Err(pid) => assert_eq!(pid, Some(std::process::id())),
            Ok(_) => panic!("second lock granted"),
        }
        drop(first);
        assert!(try_lock(&path).unwrap().is_ok());
    }
}
