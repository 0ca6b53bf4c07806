//! pqbench's side of a job: the pipes at fixed descriptors, the launcher
//! (or, in a binary that does not call `jail_entry`, the program itself
//! with process-group and resource limits only), and the `Output`.

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::config::{parse_reports, JailConfig, Level, Report, JAIL_ARG};
use super::layer_name as name;
use super::pipes::{self, Keep, Reader};
use super::{confine, jail, uids, Isolation, Layer, Outcome, Output, Rusage, SandboxError, Spec};

/// Extra time pqbench gives a launcher beyond the job's timeout, which init
/// enforces itself; past it pqbench kills the launcher's group.
const LAUNCHER_GRACE: Duration = Duration::from_secs(2);

/// Pipe ends are moved to descriptors from here on before the fork, so
/// that placing them at 3, 4, ... in the child cannot clobber one another.
const HIGH_FD: i32 = 100;

struct Plumbing {
    readers: Vec<Reader>,
    stdout_w: OwnedFd,
    stderr_w: OwnedFd,
    /// (high descriptor, descriptor number in the child), kept open until
    /// the spawn.
    placed: Vec<(OwnedFd, i32)>,
    status_fd: i32,
    /// pqbench's end of the CPU mark's acknowledgement pipe.
    mark_w: Option<OwnedFd>,
}

fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    Ok(rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?)
}

fn high(fd: OwnedFd) -> std::io::Result<OwnedFd> {
    Ok(rustix::io::fcntl_dupfd_cloexec(&fd, HIGH_FD)?)
}

impl Plumbing {
    /// Readers in order: stdout, stderr, each channel, then the status
    /// pipe (when `status`).
    fn new(spec: &Spec, status: bool) -> std::io::Result<Plumbing> {
        let (out_r, stdout_w) = pipe()?;
        let (err_r, stderr_w) = pipe()?;
        let mut readers = vec![
            Reader::new(out_r, Keep::Tail(spec.tail_bytes))?,
            Reader::new(err_r, Keep::Tail(spec.tail_bytes))?,
        ];
        let mut placed = Vec::new();
        for c in &spec.channels {
            let (r, w) = pipe()?;
            readers.push(Reader::new(
                r,
                Keep::Full {
                    cap: c.cap,
                    name: c.name.clone(),
                },
            )?);
            placed.push((high(w)?, c.fd));
        }
        for input in &spec.inputs {
            placed.push((high(filled_pipe(&input.bytes)?)?, input.fd));
        }
        let mut mark_w = None;
        if spec.cpu_mark.is_some() {
            let (r, w) = pipe()?;
            placed.push((high(r)?, super::MARK_FD));
            mark_w = Some(w);
        }
        let status_fd = guarded_fds(spec).into_iter().max().unwrap_or(2) + 1;
        if status {
            let (r, w) = pipe()?;
            readers.push(Reader::new(
                r,
                Keep::Full {
                    cap: 1 << 20,
                    name: "status".into(),
                },
            )?);
            placed.push((high(w)?, status_fd));
        }
        Ok(Plumbing {
            readers,
            stdout_w,
            stderr_w,
            placed,
            status_fd,
            mark_w,
        })
    }
}

/// The read end of a pipe holding `bytes` and then end of file (its write
/// end is closed here, before the job exists).
fn filled_pipe(bytes: &[u8]) -> std::io::Result<OwnedFd> {
    if bytes.len() > super::INPUT_CAP {
        return Err(std::io::Error::other(format!(
            "an input of {} bytes does not fit in a pipe",
            bytes.len()
        )));
    }
    let (r, w) = pipe()?;
    if bytes.len() > super::PIPE_ALWAYS {
        // Written whole before the job exists: the buffer must hold it.
        let got = rustix::pipe::fcntl_setpipe_size(&w, bytes.len())?;
        if got < bytes.len() {
            return Err(std::io::Error::other(format!(
                "a pipe of {got} bytes cannot hold an input of {}",
                bytes.len()
            )));
        }
    }
    std::io::Write::write_all(&mut std::fs::File::from(w), bytes)?;
    Ok(r)
}

/// The descriptors the job keeps and may not replace: channels and inputs.
fn guarded_fds(spec: &Spec) -> Vec<i32> {
    let channels = spec.channels.iter().map(|c| c.fd);
    let mark = spec.cpu_mark.map(|_| super::MARK_FD);
    channels
        .chain(spec.inputs.iter().map(|i| i.fd))
        .chain(mark)
        .collect()
}

/// Limits applied in the forked child before exec when there is no
/// launcher (async-signal-safe system calls only).
fn direct_limits(limits: &super::Limits) -> std::io::Result<()> {
    let set = |res: libc::__rlimit_resource_t, v: u64| -> std::io::Result<()> {
        let mut cur = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: plain system calls with valid pointers.
        unsafe {
            if libc::getrlimit(res, &mut cur) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let v = confine::clamp_limit(v, cur.rlim_max);
            let new = libc::rlimit {
                rlim_cur: v,
                rlim_max: v,
            };
            if libc::setrlimit(res, &new) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    };
    set(libc::RLIMIT_CORE, 0)?;
    for (res, v) in [
        (libc::RLIMIT_AS, limits.address_space),
        (libc::RLIMIT_CPU, limits.cpu_seconds),
        (libc::RLIMIT_FSIZE, limits.file_size),
    ] {
        if v > 0 {
            set(res, v)?;
        }
    }
    Ok(())
}

/// A toolchain job's whole environment: what a submission job gets, with
/// HOME and TMPDIR in its first writable directory and the compiler's own
/// directory first on PATH, then those of pqbench's variables `passed`
/// names that are set now (its system's `toolchain.environment`); nothing
/// else of pqbench's (no credentials, agent sockets or tokens), only what
/// the caller sets.
fn toolchain_env(spec: &Spec, writable: &[PathBuf], passed: &[String]) -> Vec<(String, String)> {
    let mut env = confine::submission_env(writable.first().map(PathBuf::as_path), &spec.env);
    // The counter override is for the measuring driver, not a compiler.
    if !spec.env.iter().any(|(k, _)| k == "PQB_COUNTER") {
        env.retain(|(k, _)| k != "PQB_COUNTER");
    }
    if let Some(dir) = spec.program.parent().filter(|d| d.is_absolute()) {
        if let Some((_, path)) = env.iter_mut().find(|(k, _)| k == "PATH") {
            if !spec.env.iter().any(|(k, _)| k == "PATH") {
                *path = format!("{}:{path}", dir.display());
            }
        }
    }
    // Checked at plan time; checked again here, so that no caller can
    // undo the confinement, nor replace what the job already has.
    for name in passed {
        if crate::plan::system::passed_variable_refused(name).is_some()
            || env.iter().any(|(k, _)| k == name)
        {
            continue;
        }
        // A value that is not UTF-8 stays behind, as an unset one does.
        if let Ok(value) = std::env::var(name) {
            env.push((name.clone(), value));
        }
    }
    env
}

fn job_env(spec: &Spec) -> Vec<(String, String)> {
    match &spec.isolation {
        Isolation::Submission { .. } => confine::submission_env(spec.cwd.as_deref(), &spec.env),
        Isolation::Toolchain {
            writable, passed, ..
        } => toolchain_env(spec, writable, passed),
    }
}

fn config(
    spec: &Spec,
    plumbing: &Plumbing,
    job_ids: Option<(u32, u32)>,
    probe: bool,
) -> JailConfig {
    let (level, reads, execs, writes) = match &spec.isolation {
        Isolation::Submission { readable } => (
            Level::Submission,
            readable.clone(),
            Vec::new(),
            spec.cwd.iter().cloned().collect(),
        ),
        Isolation::Toolchain {
            writable,
            readable,
            executable,
            ..
        } => (
            Level::Toolchain,
            readable.clone(),
            executable.clone(),
            writable.clone(),
        ),
    };
    JailConfig {
        level,
        program: spec.program.clone(),
        args: spec.args.clone(),
        env: job_env(spec),
        cwd: spec.cwd.clone(),
        timeout_ms: spec.timeout.as_millis().min(u128::from(u64::MAX)) as u64,
        limits: spec.limits,
        cpu: spec.cpu,
        status_fd: plumbing.status_fd,
        keep_fds: guarded_fds(spec),
        reads,
        execs,
        writes,
        job_ids,
        probe,
        rss_floor: spec.rss_floor,
    }
}

/// A job uid when pqbench is root: leased, and owner of the directories
/// the job writes (a submission's job directory, a toolchain job's scratch
/// folder).
fn job_ids(spec: &Spec) -> Option<(uids::UidLease, (u32, u32))> {
    if !rustix::process::geteuid().is_root() {
        return None;
    }
    let lease = uids::lease()?;
    let ids = (lease.uid, lease.uid);
    match &spec.isolation {
        // The job directory alone: the library copy and the inputs pqbench
        // placed in it stay pqbench's.
        Isolation::Submission { .. } => {
            if let Some(dir) = &spec.cwd {
                std::os::unix::fs::chown(dir, Some(ids.0), Some(ids.1)).ok()?;
            }
        }
        Isolation::Toolchain { writable, .. } => {
            for dir in writable {
                chown_tree(dir, ids, 0).ok()?;
            }
        }
    }
    Some((lease, ids))
}

/// Gives `path` and everything beneath it (links themselves, never their
/// targets) to the job's uid: a folder that several jobs write in turn (a
/// CMake build's configure and build steps) holds files of the earlier
/// job's uid.
fn chown_tree(path: &Path, (uid, gid): (u32, u32), depth: usize) -> std::io::Result<()> {
    std::os::unix::fs::lchown(path, Some(uid), Some(gid))?;
    if depth < 64 && std::fs::symlink_metadata(path)?.is_dir() {
        for e in std::fs::read_dir(path)? {
            chown_tree(&e?.path(), (uid, gid), depth + 1)?;
        }
    }
    Ok(())
}

struct Started {
    pid: i32,
    readers: Vec<Reader>,
    mark_w: Option<OwnedFd>,
    start: Instant,
    jailed: bool,
    _lease: Option<uids::UidLease>,
}

fn start(spec: &Spec, probe: bool) -> Result<Started, SandboxError> {
    let jailed = jail::hooked();
    let mut plumbing = Plumbing::new(spec, jailed)?;
    let lease = if jailed { job_ids(spec) } else { None };
    let mut cmd;
    if jailed {
        let cfg = config(spec, &plumbing, lease.as_ref().map(|l| l.1), probe);
        // The configuration goes through a memfd, not the command line: a
        // long link line with pqbench's environment can exceed what one
        // argument may hold.
        let json = serde_json::to_vec(&cfg).map_err(std::io::Error::other)?;
        let memfd =
            rustix::fs::memfd_create("pqbench-jail-config", rustix::fs::MemfdFlags::CLOEXEC)
                .map_err(std::io::Error::from)?;
        let mut file = std::fs::File::from(memfd);
        std::io::Write::write_all(&mut file, &json)?;
        std::io::Seek::rewind(&mut file)?;
        let config_fd = plumbing.status_fd + 1;
        plumbing
            .placed
            .push((high(OwnedFd::from(file))?, config_fd));
        cmd = Command::new("/proc/self/exe");
        cmd.arg0("pqbench-jail")
            .arg(JAIL_ARG)
            .arg(config_fd.to_string())
            .env_clear();
    } else {
        cmd = Command::new(&spec.program);
        cmd.args(&spec.args).env_clear().envs(job_env(spec));
        if let Some(dir) = &spec.cwd {
            cmd.current_dir(dir);
        }
    }
    let Plumbing {
        readers,
        stdout_w,
        stderr_w,
        placed,
        mark_w,
        ..
    } = plumbing;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::from(stdout_w))
        .stderr(Stdio::from(stderr_w));
    let moves: Vec<(i32, i32)> = placed
        .iter()
        .map(|(fd, to)| (fd.as_raw_fd(), *to))
        .collect();
    let limits = spec.limits;
    let cpu = spec.cpu;
    // SAFETY: the closure runs in the forked child before exec and makes
    // only async-signal-safe system calls (setpgid, prctl, dup2, and
    // without a launcher getrlimit, setrlimit, sched_setaffinity); it does
    // not allocate.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setpgid(0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Die with pqbench: a killed campaign leaves no job running.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            for &(from, to) in &moves {
                // dup2 clears close-on-exec on the new descriptor.
                if libc::dup2(from, to) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            if !jailed {
                direct_limits(&limits)?;
                if let Some(c) = cpu {
                    let mut set: libc::cpu_set_t = std::mem::zeroed();
                    libc::CPU_SET(c, &mut set);
                    if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0
                    {
                        return Err(std::io::Error::last_os_error());
                    }
                }
            }
            Ok(())
        });
    }
    let start = Instant::now();
    let child = cmd.spawn().map_err(|e| SandboxError::Start {
        program: spec.program.display().to_string(),
        reason: e.to_string(),
    })?;
    // Our copies of the write ends must go, or the pipes never reach EOF.
    drop(cmd);
    drop(placed);
    Ok(Started {
        pid: child.id() as i32,
        readers,
        mark_w,
        start,
        jailed,
        _lease: lease.map(|l| l.0),
    })
}

pub(super) fn run(spec: &Spec) -> Result<Output, SandboxError> {
    let mut s = start(spec, false)?;
    let grace = if s.jailed {
        LAUNCHER_GRACE
    } else {
        Duration::ZERO
    };
    // The results channel is the first after stdout and stderr.
    let mut mark = match (spec.cpu_mark, s.mark_w.take()) {
        (Some(tag), Some(ack)) if !spec.channels.is_empty() => Some(pipes::Mark::new(2, tag, ack)),
        _ => None,
    };
    let ended = pipes::collect(
        s.pid,
        &mut s.readers,
        s.start,
        s.start + spec.timeout + grace,
        mark.as_mut(),
    );
    let overflow = s
        .readers
        .iter()
        .find_map(|r| r.overflow_name().map(String::from));
    let mut readers = s.readers.into_iter();
    let stdout = readers.next().expect("stdout reader");
    let stderr = readers.next().expect("stderr reader");
    let channels: Vec<Vec<u8>> = readers
        .by_ref()
        .take(spec.channels.len())
        .map(|r| r.buf)
        .collect();
    let mut out = Output {
        outcome: Outcome::TimedOut,
        stdout: stdout.buf,
        stderr: stderr.buf,
        stdout_bytes: stdout.total,
        stderr_bytes: stderr.total,
        channels,
        overflow,
        wall: ended.elapsed,
        rusage: None,
        layers: Vec::new(),
        cpu_witness: super::CpuWitness::missing(crate::records::process::WITHOUT_LAUNCHER),
    };
    if s.jailed {
        let status = readers.next().map(|r| r.buf).unwrap_or_default();
        jailed_outcome(spec, &parse_reports(&status), &ended, &mut out)?;
    } else {
        out.layers = direct_layers(&spec.limits);
        if let (Some((st, ru)), false) = (ended.status, ended.timed_out) {
            out.outcome = wait_outcome(st);
            out.rusage = Some(rusage(&ru));
        }
    }
    out.cpu_witness.mark_ns = mark.and_then(|m| m.cpu_ns);
    Ok(out)
}

fn jailed_outcome(
    spec: &Spec,
    reports: &[Report],
    ended: &pipes::Ended,
    out: &mut Output,
) -> Result<(), SandboxError> {
    for r in reports {
        match r {
            Report::Ready { layers } => out.layers = layers.clone(),
            Report::NotStarted { error } => {
                return Err(SandboxError::Start {
                    program: spec.program.display().to_string(),
                    reason: error.clone(),
                })
            }
            _ => {}
        }
    }
    let exit = reports.iter().find_map(|r| match r {
        Report::Exit {
            outcome,
            rusage,
            wall_seconds,
            cpu_witness,
        } => Some((*outcome, *rusage, *wall_seconds, cpu_witness.clone())),
        _ => None,
    });
    match exit {
        Some((outcome, rusage, wall, witness)) => {
            out.outcome = outcome;
            out.rusage = Some(rusage);
            out.wall = Duration::from_secs_f64(wall);
            out.cpu_witness = witness;
        }
        // pqbench's own deadline: the launcher did not end in time.
        None if ended.timed_out => out.outcome = Outcome::TimedOut,
        // init was killed before it could report (only possible without
        // a PID namespace, where the job can signal it).
        None => out.outcome = Outcome::Signaled(libc::SIGKILL),
    }
    Ok(())
}

fn wait_outcome(st: i32) -> Outcome {
    if libc::WIFSIGNALED(st) {
        Outcome::Signaled(libc::WTERMSIG(st))
    } else {
        Outcome::Exited(libc::WEXITSTATUS(st))
    }
}

fn rusage(ru: &libc::rusage) -> Rusage {
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Rusage {
        user_seconds: secs(ru.ru_utime),
        system_seconds: secs(ru.ru_stime),
        max_rss_kib: ru.ru_maxrss.max(0) as u64,
        launcher_rss_kib: None,
    }
}

/// The layers of a job started without the launcher.
fn direct_layers(limits: &super::Limits) -> Vec<Layer> {
    let why = "needs the launcher";
    let mut v = vec![Layer::off(
        name::LAUNCHER,
        "this binary does not call pqbench::sandbox::jail_entry first thing in main",
    )];
    for n in [
        name::USER_NS,
        name::PID_NS,
        name::MOUNT_NS,
        name::NET_NS,
        name::IPC_NS,
        name::REAPER,
    ] {
        v.push(Layer::off(n, why));
    }
    v.push(Layer::on(
        name::RLIMITS,
        format!(
            "address space {}, CPU seconds {}, file size {} (0: unlimited), clamped to the hard limits",
            limits.address_space, limits.cpu_seconds, limits.file_size
        ),
    ));
    for n in [
        name::PROCESSES,
        name::JOB_UID,
        name::CAPABILITIES,
        name::NO_NEW_PRIVS,
        name::LANDLOCK_FS,
        name::LANDLOCK_NET,
        name::LANDLOCK_SCOPE,
        name::SECCOMP,
    ] {
        v.push(Layer::off(n, why));
    }
    v.push(Layer::on(
        name::ENVIRONMENT,
        "minimal environment for submissions",
    ));
    v
}

/// Starts the launcher in probe mode: the layers it sets up, nothing run.
pub(super) fn probe(spec: &Spec) -> Result<Vec<Layer>, SandboxError> {
    if !jail::hooked() {
        return Ok(direct_layers(&spec.limits));
    }
    let mut s = start(spec, true)?;
    let ended = pipes::collect(s.pid, &mut s.readers, s.start, s.start + spec.timeout, None);
    let status = s.readers.pop().map(|r| r.buf).unwrap_or_default();
    let reports = parse_reports(&status);
    let mut out = Output {
        outcome: Outcome::TimedOut,
        stdout: Vec::new(),
        stderr: Vec::new(),
        stdout_bytes: 0,
        stderr_bytes: 0,
        channels: Vec::new(),
        overflow: None,
        wall: ended.elapsed,
        rusage: None,
        layers: Vec::new(),
        cpu_witness: super::CpuWitness::default(),
    };
    jailed_outcome(spec, &reports, &ended, &mut out)?;
    if out.layers.is_empty() {
        return Err(SandboxError::Start {
            program: "the launcher".into(),
            reason: "it reported no layers".into(),
        });
    }
    Ok(out.layers)
}
