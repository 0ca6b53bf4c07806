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
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::plan::Plan;
use crate::progress::Progress;

/// Opens a lock file without following a link and without creating over
/// anything but nothing: an existing file is opened as it is (no `O_CREAT`,
/// which a sticky shared directory refuses for another user's file), a
/// missing one is created exclusively and given mode 0666 by `fchmod`
/// (whatever the umask), so every user may take the lock after us.
fn open_lock_file(path: &Path) -> Result<File> {
    let open = |create: bool| {
        let mut o = OpenOptions::new();
        o.read(true).write(true).custom_flags(libc::O_NOFOLLOW);
        if create {
            o.create_new(true).mode(0o666);
        }
        o.open(path)
    };
    let f = match open(false) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => match open(true) {
            Ok(f) => {
                use std::os::unix::fs::PermissionsExt;
                f.set_permissions(std::fs::Permissions::from_mode(0o666))?;
                f
            }
            // Created by someone else in between: open theirs.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => open(false)?,
            Err(e) => return Err(e.into()),
        },
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => bail!(
            "the lock file {} is a symbolic link; remove it (pqbench never follows one)",
            path.display()
        ),
        Err(e) => return Err(e.into()),
    };
    if !f.metadata()?.file_type().is_file() {
        bail!(
            "the lock file {} is not a regular file; remove it",
            path.display()
        );
    }
    Ok(f)
}

/// How a lock is held: alone, or beside other shared holders.
#[derive(Clone, Copy)]
enum Hold {
    Exclusive,
    Shared,
}

/// Takes a lock on `path` without waiting; an exclusive holder writes
/// `<pid> <who>` into the file. Err(text) is what the file says of the
/// holder (empty when a shared holder is in the way).
fn try_lock(path: &Path, hold: Hold, who: &str) -> Result<Result<File, String>> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut f = open_lock_file(path)
        .with_context(|| format!("opening the lock file {}", path.display()))?;
    let op = match hold {
        Hold::Exclusive => libc::LOCK_EX,
        Hold::Shared => libc::LOCK_SH,
    };
    // SAFETY: flock on a descriptor we own.
    let rc = unsafe { libc::flock(f.as_raw_fd(), op | libc::LOCK_NB) };
    if rc != 0 {
        // Only an exclusive holder writes the file: when the others all
        // hold it shared, what it says is stale.
        // SAFETY: as above.
        let shared = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) } == 0;
        let mut text = String::new();
        if !shared {
            let _ = f.read_to_string(&mut text);
        }
        return Ok(Err(text.trim().to_string()));
    }
    if let Hold::Exclusive = hold {
        // Only written under the exclusive lock: the descriptor, not the
        // path, is truncated, and it was opened without following a link.
        f.set_len(0)?;
        f.rewind()?;
        write!(f, "{} {who}", std::process::id())?;
    }
    Ok(Ok(f))
}

/// `(PID 123, merge)` from a lock file's `123 merge`.
fn holder(text: &str) -> String {
    match text.split_once(' ') {
        Some((pid, who)) => format!(" (PID {pid}, {who})"),
        None if !text.is_empty() => format!(" (PID {text})"),
        None => String::new(),
    }
}

/// Held while a command writes into the project's output: every command
/// that writes a campaign's datasets or pages (`run`, `merge`, `bless`,
/// `render`, `publish`) holds the project's lock shared and the campaign's
/// exclusively; `import`, which writes `algorithms/` and `kat/` that every
/// campaign reads, holds the project's exclusively. A command that cannot
/// have its locks refuses at once, naming the holder.
pub struct ProjectLock {
    _files: Vec<File>,
}

/// The project-wide lock file, in the output directory.
fn project_lock_path(output: &Path) -> PathBuf {
    output.join(".lock")
}

fn busy(text: &str, what: &str, shown: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "another pqbench{} is writing {shown}; wait for it to finish (or stop it) and run {what} again",
        holder(text)
    )
}

impl ProjectLock {
    /// The locks of a command writing `plan`'s campaign (`command` names
    /// it in the lock file and in a refusal).
    pub fn acquire(plan: &Plan, command: &str) -> Result<ProjectLock> {
        let campaign_dir = plan
            .output_dir
            .parent()
            .context("the dataset directory has no parent")?;
        let output = campaign_dir
            .parent()
            .context("the campaign directory has no parent")?;
        let shared = project_lock_path(output);
        let project = try_lock(&shared, Hold::Shared, command)?
            .map_err(|t| busy(&t, command, &plan.display_path(output)))?;
        let path = campaign_dir.join(".lock");
        let campaign = try_lock(&path, Hold::Exclusive, command)?
            .map_err(|t| busy(&t, command, &plan.display_path(campaign_dir)))?;
        Ok(ProjectLock {
            _files: vec![project, campaign],
        })
    }

    /// The lock of a command writing the project's algorithm and KAT
    /// files (`import`): no campaign command runs meanwhile.
    pub(crate) fn exclusive(output: &Path, command: &str) -> Result<ProjectLock> {
        let path = project_lock_path(output);
        let f = try_lock(&path, Hold::Exclusive, command)?.map_err(|t| {
            // The output directory as the project names it.
            let shown = output.file_name().unwrap_or(output.as_os_str());
            busy(&t, command, &shown.to_string_lossy())
        })?;
        Ok(ProjectLock { _files: vec![f] })
    }
}

/// Per-CPU locks, taken before the first measurement and held to the end
/// of the run.
#[derive(Default)]
pub(crate) struct CpuLocks {
    held: Mutex<Vec<File>>,
}

/// The machine's temporary directory, where every pqbench of the machine
/// finds the CPU locks: not `TMPDIR`, which each user (or each shell) may
/// point elsewhere, and two runs that looked in different places would
/// measure on one core at once.
const MACHINE_TMP: &str = "/tmp";

/// Where CPU locks live: shared by every user and project of the machine,
/// in `/tmp/pqbench-locks/`.
pub(crate) fn cpu_lock_path(cpu: usize) -> PathBuf {
    lock_dir(Path::new(MACHINE_TMP)).join(format!("cpu{cpu}.lock"))
}

fn lock_dir(tmp: &Path) -> PathBuf {
    tmp.join("pqbench-locks")
}

/// The shared lock directory under `tmp`, created sticky and writable by
/// all (like the temporary directory itself) when missing; an existing one
/// must be a real directory with those bits, owned by root or by us, so no
/// other user can have replaced or prepared it.
fn shared_lock_dir(tmp: &Path) -> Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    let dir = lock_dir(tmp);
    match std::fs::DirBuilder::new().mode(0o1777).create(&dir) {
        Ok(()) => std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777))
            .with_context(|| format!("setting the mode of {}", dir.display()))?,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e).with_context(|| format!("creating {}", dir.display())),
    }
    let m = std::fs::symlink_metadata(&dir)?;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if !m.file_type().is_dir() || m.mode() & 0o1777 != 0o1777 || (m.uid() != 0 && m.uid() != me) {
        bail!(
            "{} is not pqbench's shared lock directory (a directory with mode 1777 owned by root or by you); remove it and run again",
            dir.display()
        );
    }
    Ok(dir)
}

impl CpuLocks {
    /// Takes the lock of every measuring CPU, waiting while another
    /// pqbench measures on one of them; `who` names this run in the lock
    /// file for the others to read. The wait is reported when it begins,
    /// naming the holder, and then every [`WAIT_REPORT_SECONDS`], so a log
    /// never goes quiet without saying why.
    pub(crate) fn acquire(&self, cpus: &[usize], who: &str, progress: &Progress) -> Result<()> {
        let mut held = self.held.lock().expect("cpu lock list");
        if !held.is_empty() {
            return Ok(());
        }
        // One global order, so two runs wanting overlapping CPUs never
        // wait for each other in a cycle.
        let mut cpus = cpus.to_vec();
        cpus.sort_unstable();
        cpus.dedup();
        shared_lock_dir(Path::new(MACHINE_TMP))?;
        for cpu in cpus {
            let path = cpu_lock_path(cpu);
            let began = Instant::now();
            let mut reported: Option<Instant> = None;
            let file = loop {
                match try_lock(&path, Hold::Exclusive, who)? {
                    Ok(f) => break f,
                    Err(text) => {
                        let due = reported
                            .is_none_or(|r| r.elapsed().as_secs_f64() >= WAIT_REPORT_SECONDS);
                        if due {
                            progress.note(&wait_line(
                                cpu,
                                &text,
                                &path,
                                reported.map(|_| began.elapsed()),
                            ));
                            reported = Some(Instant::now());
                        }
                        std::thread::sleep(Duration::from_millis(200));
                    }
                }
            };
            if reported.is_some() {
                progress.note(&format!(
                    "CPU {cpu} is free after {:.0} s of waiting",
                    began.elapsed().as_secs_f64()
                ));
            }
            held.push(file);
        }
        Ok(())
    }
}

/// Seconds between two lines while waiting for a CPU.
const WAIT_REPORT_SECONDS: f64 = 10.0;

/// The line of a wait for `cpu`, first (`waited` None) or later.
fn wait_line(cpu: usize, text: &str, path: &Path, waited: Option<Duration>) -> String {
    match waited {
        None => format!(
            "CPU {cpu} is measuring for another pqbench{}; waiting for it ({})",
            holder(text),
            path.display()
        ),
        Some(w) => format!(
            "still waiting for CPU {cpu}{} after {:.0} s",
            holder(text),
            w.as_secs_f64()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes `path` exclusively once the holders this test dropped are
    /// gone. A process forked by a test running beside this one keeps a
    /// copy of every descriptor until its `exec` closes it, which can hold
    /// a dropped lock for a moment: that moment is waited out, a lock that
    /// stays held is a failure.
    fn exclusive_after_drop(path: &Path) -> bool {
        (0..500).any(|_| {
            let ok = try_lock(path, Hold::Exclusive, "test").unwrap().is_ok();
            if !ok {
                std::thread::sleep(Duration::from_millis(10));
            }
            ok
        })
    }

    #[test]
    fn a_wait_for_a_cpu_names_its_holder_first_and_then_how_long_it_lasts() {
        let path = Path::new("/tmp/pqbench-locks/cpu1.lock");
        let text = "4242 measuring campaign demo for /p/output/demo/local";
        assert_eq!(
            wait_line(1, text, path, None),
            "CPU 1 is measuring for another pqbench (PID 4242, measuring campaign demo for \
             /p/output/demo/local); waiting for it (/tmp/pqbench-locks/cpu1.lock)"
        );
        assert_eq!(
            wait_line(1, text, path, Some(Duration::from_secs(20))),
            "still waiting for CPU 1 (PID 4242, measuring campaign demo for /p/output/demo/local) \
             after 20 s"
        );
    }

    #[test]
    fn a_held_lock_names_its_holder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        let first = try_lock(&path, Hold::Exclusive, "merge")
            .unwrap()
            .expect("first lock");
        // flock locks belong to the open file description: a second open in
        // this process conflicts like another process would.
        match try_lock(&path, Hold::Exclusive, "run").unwrap() {
            Err(text) => assert_eq!(
                holder(&text),
                format!(" (PID {}, merge)", std::process::id())
            ),
            Ok(_) => panic!("second lock granted"),
        }
        assert!(try_lock(&path, Hold::Shared, "run").unwrap().is_err());
        drop(first);
        assert!(exclusive_after_drop(&path));
    }

    #[test]
    fn shared_holders_coexist_and_keep_an_exclusive_one_out() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        let a = try_lock(&path, Hold::Shared, "run").unwrap().expect("a");
        let b = try_lock(&path, Hold::Shared, "merge").unwrap().expect("b");
        assert!(try_lock(&path, Hold::Exclusive, "import").unwrap().is_err());
        drop((a, b));
        assert!(exclusive_after_drop(&path));
    }

    #[test]
    fn a_planted_link_is_refused_and_its_target_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("precious");
        std::fs::write(&target, "keep me").unwrap();
        let path = dir.path().join("x.lock");
        std::os::unix::fs::symlink(&target, &path).unwrap();
        let err = try_lock(&path, Hold::Exclusive, "run").unwrap_err();
        assert!(format!("{err:#}").contains("symbolic link"), "{err:#}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
    }

    #[test]
    fn a_new_lock_file_is_usable_by_every_user_whatever_the_umask() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        // Created under the process's umask (022 by default, which would
        // leave 0644), then set by fchmod. The umask is not changed here:
        // it is shared with every test running beside this one.
        drop(
            try_lock(&path, Hold::Exclusive, "run")
                .unwrap()
                .expect("lock"),
        );
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o666);
    }

    #[test]
    fn another_user_takes_a_cpu_lock_after_root_created_it() {
        use std::os::unix::fs::PermissionsExt;
        use std::os::unix::process::CommandExt;
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: acting as another user needs root");
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = shared_lock_dir(tmp.path()).unwrap().join("cpu0.lock");
        drop(
            try_lock(&path, Hold::Exclusive, "run")
                .unwrap()
                .expect("root's lock"),
        );
        // Another user opens the file as pqbench does (read-write, no link
        // followed, no O_CREAT) and locks it; perl is part of every Debian.
        let script = "use Fcntl qw(:flock O_RDWR O_NOFOLLOW); \
            sysopen(my $f, $ARGV[0], O_RDWR|O_NOFOLLOW) or die \"open: $!\"; \
            flock($f, LOCK_EX|LOCK_NB) or die \"flock: $!\";";
        let out = std::process::Command::new("perl")
            .args(["-e", script])
            .arg(&path)
            .uid(65534)
            .gid(65534)
            .output()
            .expect("perl");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    #[test]
    fn the_shared_directory_is_sticky_and_a_foreign_one_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let dir = shared_lock_dir(tmp.path()).unwrap();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o7777, 0o1777);
        // A link in its place (planted by another user) is refused.
        let other = tempfile::tempdir().unwrap();
        std::fs::remove_dir(&dir).unwrap();
        std::os::unix::fs::symlink(other.path(), &dir).unwrap();
        let err = shared_lock_dir(tmp.path()).unwrap_err();
        assert!(
            format!("{err:#}").contains("not pqbench's shared lock directory"),
            "{err:#}"
        );
    }
}
