//! init: the launcher's child, PID 1 of the job's PID namespace when there
//! is one. It confines itself (so the job inherits every layer), reports the
//! layers, forks and execs the job, enforces the timeout, and reports the
//! job's exit status and resource usage on the status pipe. When init exits
//! the kernel kills everything left in its PID namespace; without one, init
//! is a child subreaper and kills every descendant itself.

use std::ffi::CString;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

use super::config::{JailConfig, Level, Report};
use super::layer_name as name;
use super::{confine, mounts, Layer, Outcome, Rusage};

/// Which namespaces the launcher entered.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Namespaces {
    pub user: bool,
    pub pid: bool,
    pub mount: bool,
}

/// Runs init; never returns.
pub(super) fn run(cfg: &JailConfig, layers: Vec<Layer>, mut status: File, ns: Namespaces) -> ! {
    let code = match confine_and_run(cfg, layers, &mut status, ns) {
        Ok(()) => 0,
        Err(error) => {
            let _ = status.write_all(&Report::NotStarted { error }.line());
            1
        }
    };
    std::process::exit(code)
}

fn confine_and_run(
    cfg: &JailConfig,
    mut layers: Vec<Layer>,
    status: &mut File,
    ns: Namespaces,
) -> Result<(), String> {
    // Die with the launcher, hence with pqbench.
    let _ = rustix::process::set_parent_process_death_signal(Some(Signal::KILL));
    // Not dumpable: a job with init's uid can neither ptrace init nor open
    // its memory or descriptors (the status pipe) through /proc.
    let _ = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable);
    if ns.pid {
        let proc_note = if ns.mount {
            match mounts::private_proc() {
                Ok(()) => ", a /proc showing only the job's processes",
                Err(_) => ", but the host's /proc (a private one could not be mounted)",
            }
        } else {
            ""
        };
        layers.push(Layer::on(
            name::REAPER,
            format!("when the job's init exits, the kernel kills every process left in its PID namespace{proc_note}"),
        ));
    } else {
        layers.push(match rustix::process::set_child_subreaper(Some(rustix::process::getpid())) {
            Ok(()) => Layer::on(
                name::REAPER,
                "fallback without a PID namespace: init is a child subreaper and kills every descendant left when the job ends",
            ),
            Err(e) => Layer::off(name::REAPER, format!("no PID namespace and no subreaper: {e}")),
        });
    }
    layers.push(confine::rlimits(&cfg.limits));
    if let Some(cpu) = cfg.cpu {
        let mut set = rustix::thread::CpuSet::new();
        set.set(cpu);
        rustix::thread::sched_setaffinity(None, &set)
            .map_err(|e| format!("pinning to CPU {cpu}: {e}"))?;
    }
    if let Some(dir) = &cfg.cwd {
        std::env::set_current_dir(dir)
            .map_err(|e| format!("entering the job directory {}: {e}", dir.display()))?;
    }
    // Opened with pqbench's rights: the job's uid may not be able to reach
    // the program's directory, and it does not need to.
    let program = rustix::fs::open(
        &cfg.program,
        rustix::fs::OFlags::PATH | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| format!("starting {}: {e}", cfg.program.display()))?;
    let own_uid = identity(cfg, ns, &mut layers)?;
    layers.push(confine::process_limit(cfg.limits.processes, own_uid));
    layers.push(confine::drop_capabilities());
    layers.push(confine::no_new_privs());
    layers.extend(confine::landlock(cfg));
    // Before the filter, which refuses close_range over the channels.
    keep_only_channels(&cfg.keep_fds)?;
    layers.push(confine::seccomp(&cfg.keep_fds));
    layers.push(Layer::on(
        name::ENVIRONMENT,
        match cfg.level {
            Level::Submission => {
                "only PATH, LANG, LC_ALL, HOME and TMPDIR (the job directory), nothing of pqbench's"
            }
            Level::Toolchain => {
                "only PATH (the compiler's directory first), LANG, LC_ALL, HOME and TMPDIR (the scratch folder), and the variables its system's toolchain.environment names, nothing else of pqbench's"
            }
        },
    ));
    write_report(status, &Report::Ready { layers })?;
    if cfg.probe {
        return Ok(());
    }
    let exit = run_job(cfg, &program, status, ns, own_uid)?;
    write_report(status, &exit)
}

fn write_report(status: &mut File, r: &Report) -> Result<(), String> {
    status
        .write_all(&r.line())
        .map_err(|e| format!("writing the status pipe: {e}"))
}

/// The job's uid: a leased unprivileged one when pqbench is root (every
/// capability goes with root), else pqbench's own. Returns whether the uid
/// (or user namespace) is the job's alone, which makes RLIMIT_NPROC a
/// per-job limit.
fn identity(cfg: &JailConfig, ns: Namespaces, layers: &mut Vec<Layer>) -> Result<bool, String> {
    match cfg.job_ids {
        Some((uid, gid)) => {
            use rustix::process::{Gid, Uid};
            use rustix::thread::{set_thread_groups, set_thread_res_gid, set_thread_res_uid};
            let gid_ = Gid::from_raw(gid);
            let uid_ = Uid::from_raw(uid);
            set_thread_groups(&[]).map_err(|e| format!("setgroups: {e}"))?;
            set_thread_res_gid(gid_, gid_, gid_).map_err(|e| format!("setresgid: {e}"))?;
            set_thread_res_uid(uid_, uid_, uid_).map_err(|e| format!("setresuid: {e}"))?;
            layers.push(Layer::on(
                name::JOB_UID,
                format!("runs as uid {uid} gid {gid}, held by this job alone"),
            ));
            Ok(true)
        }
        None => {
            let why = if rustix::process::geteuid().is_root() {
                "pqbench is root but no job uid could be leased"
            } else if ns.user {
                "pqbench is not root: the job keeps pqbench's uid, in a user namespace of its own"
            } else {
                "pqbench is not root: the job keeps pqbench's uid"
            };
            layers.push(Layer::off(name::JOB_UID, why));
            Ok(ns.user)
        }
    }
}

/// Every descriptor but stdio and the channels is closed when the job
/// execs (the status pipe and the program's descriptor included).
fn keep_only_channels(keep: &[i32]) -> Result<(), String> {
    // SAFETY: plain system call; it only sets close-on-exec flags.
    let r = unsafe { libc::close_range(3, u32::MAX, libc::CLOSE_RANGE_CLOEXEC as i32) };
    if r != 0 {
        return Err(format!("close_range: {}", std::io::Error::last_os_error()));
    }
    for &fd in keep {
        // SAFETY: plain system call on a descriptor number; a missing one
        // fails with EBADF, which is reported.
        if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } != 0 {
            return Err(format!(
                "channel descriptor {fd}: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}

fn cstrings<I: IntoIterator<Item = Vec<u8>>>(items: I) -> Result<Vec<CString>, String> {
    items
        .into_iter()
        .map(|b| CString::new(b).map_err(|_| "an argument holds a NUL byte".to_string()))
        .collect()
}

fn run_job(
    cfg: &JailConfig,
    program: &OwnedFd,
    status: &mut File,
    ns: Namespaces,
    own_uid: bool,
) -> Result<Report, String> {
    let argv = cstrings(
        std::iter::once(cfg.program.as_os_str().as_bytes().to_vec())
            .chain(cfg.args.iter().map(|a| a.as_bytes().to_vec())),
    )?;
    let envp = cstrings(cfg.env.iter().map(|(k, v)| format!("{k}={v}").into_bytes()))?;
    let mut argv_p: Vec<*const libc::c_char> = argv.iter().map(|c| c.as_ptr()).collect();
    argv_p.push(std::ptr::null());
    let mut envp_p: Vec<*const libc::c_char> = envp.iter().map(|c| c.as_ptr()).collect();
    envp_p.push(std::ptr::null());
    let job = Exec {
        argv: &argv_p,
        envp: &envp_p,
    };
    // Before the clock opens: the copy inherits no counter.
    let launcher_rss_kib = cfg
        .rss_floor
        .then(|| launcher_rss(cfg, program, status, ns, job))
        .flatten();
    // Opened on init before the fork, close-on-exec: the job inherits the
    // counter (enabled at its exec), never the descriptor.
    let clock = super::witness::TaskClock::open_for_children();
    let start = Instant::now();
    // SAFETY: init is single-threaded, so the child may allocate.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        exec_job(cfg, program, status, ns, job, Until::Exec);
    }
    let (st, ru, timed_out) = wait_job(pid, Duration::from_millis(cfg.timeout_ms));
    let wall_seconds = start.elapsed().as_secs_f64();
    let cpu_witness = super::witness::witness(&clock);
    drop(clock);
    if !ns.pid {
        sweep(own_uid && cfg.job_ids.is_some());
    }
    let outcome = if timed_out {
        Outcome::TimedOut
    } else if libc::WIFSIGNALED(st) {
        Outcome::Signaled(libc::WTERMSIG(st))
    } else {
        Outcome::Exited(libc::WEXITSTATUS(st))
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Ok(Report::Exit {
        outcome,
        rusage: Rusage {
            user_seconds: secs(ru.ru_utime),
            system_seconds: secs(ru.ru_stime),
            max_rss_kib: ru.ru_maxrss.max(0) as u64,
            launcher_rss_kib,
        },
        wall_seconds,
        cpu_witness,
    })
}

/// The job's command line and environment, NUL-terminated pointer arrays.
#[derive(Clone, Copy)]
struct Exec<'a> {
    argv: &'a [*const libc::c_char],
    envp: &'a [*const libc::c_char],
}

/// How far a forked copy of init goes on the job's path.
#[derive(Clone, Copy, PartialEq)]
enum Until {
    /// The job: exec.
    Exec,
    /// The launcher's share of the job's peak RSS: exit where the job
    /// would exec.
    Control,
}

/// The high-water mark, in KiB, of a copy of init forked as the job is and
/// ended where the job execs. The kernel keeps a process's high-water mark
/// across exec, so the job's `ru_maxrss` includes its own copy's, which
/// this matches to within the pages the two paths touch differently.
/// None when the copy could not be made or waited for (a process limit
/// reached): the job still runs, and its record is judged as one without
/// the figure.
fn launcher_rss(
    cfg: &JailConfig,
    program: &OwnedFd,
    status: &mut File,
    ns: Namespaces,
    job: Exec,
) -> Option<u64> {
    // SAFETY: init is single-threaded, so the child may allocate.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return None;
    }
    if pid == 0 {
        exec_job(cfg, program, status, ns, job, Until::Control);
    }
    let mut st = 0;
    // SAFETY: zeroed rusage is a valid out-parameter.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: plain system call with valid pointers, on init's own child.
        let r = unsafe { libc::wait4(pid, &mut st, 0, &mut ru) };
        if r == pid {
            return Some(ru.ru_maxrss.max(0) as u64);
        }
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return None;
        }
    }
}

/// The job's side of the fork: default signal handling, then exec (or,
/// for the launcher's copy, exit at that point).
fn exec_job(
    cfg: &JailConfig,
    program: &OwnedFd,
    status: &mut File,
    ns: Namespaces,
    job: Exec,
    until: Until,
) -> ! {
    let Exec { argv, envp } = job;
    // SAFETY: plain system calls on valid arguments; the pointer arrays are
    // NUL-terminated and their strings outlive the exec.
    unsafe {
        // pqbench's runtime ignores SIGPIPE (and pqbench SIGXFSZ, to report
        // a full file-size limit itself); ignored signals survive exec, and a
        // job over its file-size limit must die of it as usual.
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::signal(libc::SIGXFSZ, libc::SIG_DFL);
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        if !ns.pid {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
        }
        if until == Until::Control {
            // The same call on no program (EBADF, before the kernel reads
            // anything): the copy faults in the pages the job's exec does.
            libc::execveat(
                -1,
                c"".as_ptr(),
                argv.as_ptr() as *const *mut libc::c_char,
                envp.as_ptr() as *const *mut libc::c_char,
                libc::AT_EMPTY_PATH,
            );
            libc::_exit(0);
        }
        libc::execveat(
            program.as_fd().as_raw_fd(),
            c"".as_ptr(),
            argv.as_ptr() as *const *mut libc::c_char,
            envp.as_ptr() as *const *mut libc::c_char,
            libc::AT_EMPTY_PATH,
        );
        // A script (a compiler wrapper with `#!`) cannot be started from a
        // close-on-exec descriptor: its interpreter would be handed a
        // /dev/fd path that exec closed, and the kernel says ENOENT. Such a
        // program is started by its path (argv[0]) instead.
        if std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOENT) {
            libc::execve(argv[0], argv.as_ptr(), envp.as_ptr());
        }
    }
    let error = format!(
        "starting {}: {}",
        cfg.program.display(),
        std::io::Error::last_os_error()
    );
    let _ = status.write_all(&Report::NotStarted { error }.line());
    // SAFETY: leaving the forked child without running init's destructors.
    unsafe { libc::_exit(127) }
}

/// Waits for the job, reaping every other process that ends meanwhile
/// (orphans re-parented to init); kills the job at the timeout.
fn wait_job(pid: i32, timeout: Duration) -> (i32, libc::rusage, bool) {
    let pidfd = rustix::process::pidfd_open(
        Pid::from_raw(pid).expect("positive pid"),
        rustix::process::PidfdFlags::empty(),
    )
    .ok();
    let deadline = Instant::now() + timeout;
    let mut timed_out = false;
    loop {
        loop {
            let mut st = 0;
            // SAFETY: zeroed rusage is a valid out-parameter.
            let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
            // SAFETY: plain system call with valid pointers.
            let r = unsafe { libc::wait4(-1, &mut st, libc::WNOHANG, &mut ru) };
            if r == pid {
                return (st, ru, timed_out);
            }
            if r <= 0 {
                break;
            }
        }
        let now = Instant::now();
        if now >= deadline && !timed_out {
            timed_out = true;
            // SAFETY: plain system call.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        let wait = deadline
            .saturating_duration_since(now)
            .clamp(Duration::from_millis(1), Duration::from_millis(50));
        match &pidfd {
            Some(fd) => {
                let mut fds = [rustix::event::PollFd::new(fd, rustix::event::PollFlags::IN)];
                let ts = rustix::event::Timespec {
                    tv_sec: 0,
                    tv_nsec: wait.as_nanos() as _,
                };
                let _ = rustix::event::poll(&mut fds, Some(&ts));
            }
            None => std::thread::sleep(wait),
        }
    }
}

/// Without a PID namespace: kills every descendant left (they were
/// re-parented to init, the subreaper) and, when the uid is the job's
/// alone, every process of that uid, until none is left.
fn sweep(dedicated_uid: bool) {
    let me = std::process::id();
    for _ in 0..500 {
        if dedicated_uid {
            // SAFETY: plain system call; -1 means every process this uid may
            // signal except init itself.
            unsafe { libc::kill(-1, libc::SIGKILL) };
        }
        let children =
            std::fs::read_to_string(format!("/proc/self/task/{me}/children")).unwrap_or_default();
        let pids: Vec<i32> = children
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        for &p in &pids {
            // SAFETY: plain system call.
            unsafe { libc::kill(p, libc::SIGKILL) };
        }
        let mut reaped_any = false;
        loop {
            let mut st = 0;
            // SAFETY: plain system call.
            let r = unsafe { libc::waitpid(-1, &mut st, libc::WNOHANG) };
            if r <= 0 {
                if r < 0 && !reaped_any && pids.is_empty() {
                    return; // ECHILD: no descendant left
                }
                break;
            }
            reaped_any = true;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}
