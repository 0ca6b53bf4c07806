//! Running untrusted code: its own process group (killed whole on timeout),
//! resource limits, an optional CPU pin and a working directory of its own.
//! A crash or hang becomes an `Outcome`, never a stuck or aborted campaign.

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Address space, bytes (0 = unlimited).
    pub address_space: u64,
    /// CPU time, seconds (0 = unlimited).
    pub cpu_seconds: u64,
    /// Largest file written, bytes (0 = unlimited).
    pub file_size: u64,
}

impl Limits {
    pub fn unlimited() -> Limits {
        Limits {
            address_space: 0,
            cpu_seconds: 0,
            file_size: 0,
        }
    }

    pub fn from_plan(l: &crate::plan::Limits) -> Limits {
        Limits {
            address_space: l.memory_mib << 20,
            cpu_seconds: l.cpu_seconds,
            file_size: l.file_mib << 20,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Spec {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub cwd: Option<PathBuf>,
    pub env: Vec<(String, String)>,
    pub timeout: Duration,
    pub limits: Limits,
    /// Pin the process to this CPU.
    pub cpu: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "kebab-case")]
pub enum Outcome {
    Exited(i32),
    Signaled(i32),
    TimedOut,
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Exited(c) => write!(f, "exit status {c}"),
            Outcome::Signaled(s) => write!(f, "killed by signal {s} ({})", signal_name(*s)),
            Outcome::TimedOut => write!(f, "timed out"),
        }
    }
}

pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGABRT => "SIGABRT",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGTERM => "SIGTERM",
        _ => "signal",
    }
}

#[derive(Debug, Clone)]
pub struct Output {
    pub outcome: Outcome,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub wall: Duration,
}

/// Runs `spec` to completion or timeout.
pub fn run(spec: &Spec) -> Result<Output> {
    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = &spec.cwd {
        cmd.current_dir(dir);
    }
    for (k, v) in &spec.env {
        cmd.env(k, v);
    }
    let limits = spec.limits;
    let cpu = spec.cpu;
    // SAFETY: the closure runs in the forked child before exec and only makes
    // async-signal-safe system calls (setpgid, prctl, setrlimit,
    // sched_setaffinity).
    unsafe {
        cmd.pre_exec(move || {
            if libc::setpgid(0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Die with pqbench: a killed campaign leaves no submission running.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            set_limit(libc::RLIMIT_CORE, 0)?;
            if limits.address_space > 0 {
                set_limit(libc::RLIMIT_AS, limits.address_space)?;
            }
            if limits.cpu_seconds > 0 {
                set_limit(libc::RLIMIT_CPU, limits.cpu_seconds)?;
            }
            if limits.file_size > 0 {
                set_limit(libc::RLIMIT_FSIZE, limits.file_size)?;
            }
            if let Some(c) = cpu {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(c, &mut set);
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .with_context(|| format!("starting {}", spec.program.display()))?;
    let pgid = child.id() as i32;
    let mut out_pipe = child.stdout.take().expect("piped stdout");
    let mut err_pipe = child.stderr.take().expect("piped stderr");
    // Capped readers: a submission printing garbage without end must not
    // exhaust our memory.
    let out_t = std::thread::spawn(move || read_capped(&mut out_pipe));
    let err_t = std::thread::spawn(move || read_capped(&mut err_pipe));
    let outcome = loop {
        if let Some(status) = child.try_wait()? {
            break match (status.code(), status.signal()) {
                (Some(c), _) => Outcome::Exited(c),
                (None, Some(s)) => Outcome::Signaled(s),
                _ => Outcome::Exited(-1),
            };
        }
        if start.elapsed() >= spec.timeout {
            kill_group(pgid);
            let _ = child.wait();
            break Outcome::TimedOut;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    // Leftover children of the submission die with their group.
    kill_group(pgid);
    let stdout = out_t.join().unwrap_or_default();
    let stderr = err_t.join().unwrap_or_default();
    Ok(Output {
        outcome,
        stdout,
        stderr,
        wall: start.elapsed(),
    })
}

fn kill_group(pgid: i32) {
    // SAFETY: plain system call; a negative pid addresses the whole group.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

fn set_limit(resource: libc::__rlimit_resource_t, value: u64) -> std::io::Result<()> {
    let lim = libc::rlimit {
        rlim_cur: value,
        rlim_max: value,
    };
    // SAFETY: plain system call with a valid pointer.
    if unsafe { libc::setrlimit(resource, &lim) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

const OUTPUT_CAP: usize = 64 << 20;

fn read_capped(r: &mut impl Read) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        match r.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if out.len() < OUTPUT_CAP {
                    let take = n.min(OUTPUT_CAP - out.len());
                    out.extend_from_slice(&buf[..take]);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, timeout_ms: u64) -> Output {
        run(&Spec {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            cwd: None,
            env: vec![],
            timeout: Duration::from_millis(timeout_ms),
            limits: Limits::unlimited(),
            cpu: None,
        })
        .unwrap()
    }

    #[test]
    fn exit_codes_signals_and_timeouts_become_outcomes() {
        assert_eq!(sh("echo hi; exit 3", 5000).outcome, Outcome::Exited(3));
        assert_eq!(sh("echo hi", 5000).stdout, b"hi\n");
        assert_eq!(
            sh("kill -SEGV $$", 5000).outcome,
            Outcome::Signaled(libc::SIGSEGV)
        );
        let t = sh("sleep 30 & sleep 30", 200);
        assert_eq!(t.outcome, Outcome::TimedOut);
        assert!(t.wall < Duration::from_secs(5));
    }
}
