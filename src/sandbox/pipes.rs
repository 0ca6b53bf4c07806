//! One poll(2) loop that reads every pipe of a job (stdout and stderr as
//! capped tails, channels in full up to their caps, the launcher's status
//! pipe) and reaps the job's top process with wait4. It never waits on a
//! pipe for end-of-file: once the process is reaped (or killed at the
//! deadline) the pipes are drained for a bounded moment and the loop ends,
//! whatever descendants still hold them.

use std::os::fd::{AsFd, OwnedFd};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags};
use rustix::io::Errno;

/// How long pipes are drained after the process ended.
const DRAIN: Duration = Duration::from_millis(500);
/// Longest sleep in poll: the loop also checks deadlines and reaps.
const TICK: Duration = Duration::from_millis(50);

pub(super) enum Keep {
    /// Only the last `n` bytes.
    Tail(usize),
    /// Everything up to `cap` bytes; more is an overflow.
    Full { cap: usize, name: String },
}

pub(super) struct Reader {
    fd: OwnedFd,
    keep: Keep,
    pub buf: Vec<u8>,
    pub total: u64,
    eof: bool,
    pub overflowed: bool,
}

impl Reader {
    pub(super) fn new(fd: OwnedFd, keep: Keep) -> std::io::Result<Reader> {
        rustix::io::ioctl_fionbio(&fd, true)?;
        Ok(Reader {
            fd,
            keep,
            buf: Vec::new(),
            total: 0,
            eof: false,
            overflowed: false,
        })
    }

    /// Reads what is available now (bounded, so one chatty pipe cannot
    /// starve the loop).
    fn read_available(&mut self) {
        let mut chunk = [0u8; 65536];
        for _ in 0..64 {
            if self.eof {
                return;
            }
            match rustix::io::read(&self.fd, &mut chunk) {
                Ok(0) => self.eof = true,
                Ok(n) => self.take(&chunk[..n]),
                Err(Errno::AGAIN) => return,
                Err(Errno::INTR) => continue,
                Err(_) => self.eof = true,
            }
        }
    }

    fn take(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        match &self.keep {
            Keep::Tail(n) => {
                self.buf.extend_from_slice(bytes);
                if self.buf.len() > 2 * n {
                    let cut = self.buf.len() - n;
                    self.buf.drain(..cut);
                }
            }
            Keep::Full { cap, .. } => {
                if self.overflowed || self.buf.len() + bytes.len() > *cap {
                    self.overflowed = true;
                } else {
                    self.buf.extend_from_slice(bytes);
                }
            }
        }
    }

    fn finish(&mut self) {
        if let Keep::Tail(n) = self.keep {
            if self.buf.len() > n {
                let cut = self.buf.len() - n;
                self.buf.drain(..cut);
            }
        }
    }

    pub(super) fn overflow_name(&self) -> Option<&str> {
        match &self.keep {
            Keep::Full { name, .. } if self.overflowed => Some(name),
            _ => None,
        }
    }
}

/// Where to watch for the CPU mark: the reader's index and the whole line
/// (`\ntimed\n`), the pipe on which the job waits for pqbench to have
/// read its CPU time, and that time.
pub(super) struct Mark {
    pub reader: usize,
    pub line: Vec<u8>,
    scanned: usize,
    ack: Option<OwnedFd>,
    pub cpu_ns: Option<u64>,
}

impl Mark {
    pub(super) fn new(reader: usize, tag: &str, ack: OwnedFd) -> Mark {
        Mark {
            reader,
            line: format!("\n{tag}\n").into_bytes(),
            scanned: 0,
            ack: Some(ack),
            cpu_ns: None,
        }
    }

    /// Looks at what arrived since the last look; on the first sight of
    /// the line, reads the CPU time of the job under `top`.
    fn look(&mut self, readers: &[Reader], top: i32) {
        let Some(r) = readers.get(self.reader) else {
            return;
        };
        if self.cpu_ns.is_some() || r.buf.len() <= self.scanned {
            return;
        }
        // Back by the line's length, for a line split across reads.
        let from = self.scanned.saturating_sub(self.line.len());
        self.scanned = r.buf.len();
        if r.buf[from..]
            .windows(self.line.len())
            .any(|w| w == self.line)
        {
            // The job waits for the byte, so this is its set-up's time.
            self.cpu_ns = super::cputime::job_cpu_ns(top);
            if let Some(ack) = self.ack.take() {
                let _ = rustix::io::write(&ack, b"1");
            }
        }
    }
}

pub(super) struct Ended {
    /// wait4 status and rusage of the top process, None when it could not
    /// be reaped (never expected: it is SIGKILLed at the deadline).
    pub status: Option<(i32, libc::rusage)>,
    /// The deadline passed before the process ended.
    pub timed_out: bool,
    pub elapsed: Duration,
}

/// Kills the process group `pid` leads (and `pid` itself, should it have
/// left the group).
pub(super) fn kill_job(pid: i32) {
    // SAFETY: plain system calls; a negative pid addresses the group.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
        libc::kill(pid, libc::SIGKILL);
    }
}

fn reap(pid: i32, flags: i32) -> Option<(i32, libc::rusage)> {
    let mut st = 0;
    // SAFETY: zeroed rusage is a valid out-parameter.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: plain system call with valid pointers.
    let r = unsafe { libc::wait4(pid, &mut st, flags, &mut ru) };
    (r == pid).then_some((st, ru))
}

/// Reads `readers` and reaps `pid` until it ended and the pipes are
/// drained; kills its group at `deadline` or when a channel overflows.
pub(super) fn collect(
    pid: i32,
    readers: &mut [Reader],
    start: Instant,
    deadline: Instant,
    mut mark: Option<&mut Mark>,
) -> Ended {
    let pidfd = rustix::process::Pid::from_raw(pid)
        .and_then(|p| rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()).ok());
    let mut status = None;
    let mut timed_out = false;
    let mut killed = false;
    let mut drain_until: Option<Instant> = None;
    loop {
        if status.is_none() {
            status = reap(pid, libc::WNOHANG);
            if status.is_some() {
                // Leftovers of a job without a PID namespace die here.
                kill_job(pid);
                drain_until = Some(Instant::now() + DRAIN);
            }
        }
        let now = Instant::now();
        if let Some(d) = drain_until {
            if readers.iter().all(|r| r.eof) || now >= d {
                break;
            }
        }
        if status.is_none() && !timed_out && now >= deadline {
            timed_out = true;
            kill_job(pid);
        }
        if !killed && readers.iter().any(|r| r.overflowed) {
            killed = true;
            kill_job(pid);
        }
        if status.is_none() && (timed_out || killed) && now >= deadline + Duration::from_secs(5) {
            // SIGKILLed long ago and still there: wait for it outright.
            status = reap(pid, 0);
            break;
        }
        let wake = [
            drain_until,
            (status.is_none() && !timed_out).then_some(deadline),
        ]
        .into_iter()
        .flatten()
        .map(|t| t.saturating_duration_since(now))
        .fold(TICK, Duration::min)
        .max(Duration::from_millis(1));
        poll(readers, pidfd.as_ref(), status.is_none(), wake);
        for r in readers.iter_mut() {
            r.read_available();
        }
        if let (Some(m), None) = (mark.as_deref_mut(), status) {
            m.look(readers, pid);
        }
    }
    for r in readers.iter_mut() {
        r.read_available();
        r.finish();
    }
    Ended {
        status,
        timed_out,
        elapsed: start.elapsed(),
    }
}

fn poll(readers: &[Reader], pidfd: Option<&OwnedFd>, running: bool, wait: Duration) {
    let mut fds: Vec<PollFd> = readers
        .iter()
        .filter(|r| !r.eof)
        .map(|r| PollFd::new(&r.fd, PollFlags::IN))
        .collect();
    if let (Some(p), true) = (pidfd, running) {
        fds.push(PollFd::from_borrowed_fd(p.as_fd(), PollFlags::IN));
    }
    let ts = rustix::event::Timespec {
        tv_sec: wait.as_secs() as _,
        tv_nsec: wait.subsec_nanos() as _,
    };
    if fds.is_empty() {
        std::thread::sleep(wait);
    } else {
        let _ = rustix::event::poll(&mut fds, Some(&ts));
    }
}
