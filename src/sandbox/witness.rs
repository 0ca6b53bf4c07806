//! The kernel's witness of a job's CPU time: a perf software counter
//! (`task-clock`) that init opens on itself before it forks the job,
//! disabled, inherited by every task it forks and enabled when the job
//! execs. The job never holds the descriptor (it is close-on-exec and the
//! job is forked from init before any of the job's code runs), cannot
//! disable a counter it did not open (`PR_TASK_PERF_EVENTS_DISABLE` only
//! touches a task's own events), and init never execs, so the count is the
//! job's CPU time, its threads' and its descendants', from the exec on.
//! Unlike the driver's figures it does not depend on the process telling
//! the truth.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

pub use crate::records::process::CpuWitness;

// <linux/perf_event.h>
const PERF_TYPE_SOFTWARE: u32 = 1;
const PERF_COUNT_SW_TASK_CLOCK: u64 = 1;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;
const ATTR_SIZE_VER0: u32 = 64;
const DISABLED: u64 = 1 << 0;
const INHERIT: u64 = 1 << 1;
const EXCLUDE_KERNEL: u64 = 1 << 5;
const EXCLUDE_HV: u64 = 1 << 6;
const ENABLE_ON_EXEC: u64 = 1 << 12;

/// An open task-clock counter on the calling task.
pub(super) struct TaskClock {
    fd: OwnedFd,
}

fn open_with(flags: u64) -> std::io::Result<OwnedFd> {
    // perf_event_attr, version 0 layout: type, size, config,
    // sample_period, sample_type, read_format, then the flag bits.
    let mut attr = [0u64; 8];
    attr[0] = u64::from(PERF_TYPE_SOFTWARE) | (u64::from(ATTR_SIZE_VER0) << 32);
    attr[1] = PERF_COUNT_SW_TASK_CLOCK;
    attr[5] = flags;
    // SAFETY: the attribute buffer is 64 bytes, its size field says so;
    // pid 0, cpu -1: the calling task on any CPU.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr.as_ptr(),
            0 as libc::pid_t,
            -1 as libc::c_int,
            -1 as libc::c_int,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor the kernel just returned, owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

impl TaskClock {
    /// Opens the counter for the tasks the caller forks next, which start
    /// counting when they exec. Kernel time is counted where the kernel
    /// allows it (task-clock counts the task's whole run time either way;
    /// `perf_event_paranoid` 2 only asks that kernel time be excluded).
    pub(super) fn open_for_children() -> Result<TaskClock, String> {
        let base = DISABLED | INHERIT | ENABLE_ON_EXEC;
        let fd = match open_with(base) {
            Ok(fd) => fd,
            Err(e) if e.raw_os_error() == Some(libc::EACCES) => {
                open_with(base | EXCLUDE_KERNEL | EXCLUDE_HV).map_err(|e| why(&e))?
            }
            Err(e) => return Err(why(&e)),
        };
        Ok(TaskClock { fd })
    }

    /// Nanoseconds counted so far by the job and its descendants (those
    /// that exited are folded into the count by the kernel, live ones are
    /// read as well).
    pub(super) fn read(&self) -> Result<u64, String> {
        let mut v = [0u8; 8];
        // SAFETY: reads 8 bytes into an 8-byte buffer.
        let n = unsafe { libc::read(self.fd.as_raw_fd(), v.as_mut_ptr().cast(), v.len()) };
        if n != 8 {
            return Err(format!(
                "reading the task-clock counter: {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(u64::from_ne_bytes(v))
    }
}

fn why(e: &std::io::Error) -> String {
    let hint = match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => {
            " (refused: see /proc/sys/kernel/perf_event_paranoid, or a seccomp filter of the container)"
        }
        Some(libc::ENOENT) | Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP) => {
            " (this kernel has no perf events)"
        }
        _ => "",
    };
    format!("perf_event_open task-clock: {e}{hint}")
}

/// The witness of a finished job from its counter, or why there is none.
pub(super) fn witness(clock: &Result<TaskClock, String>) -> CpuWitness {
    match clock
        .as_ref()
        .map_err(Clone::clone)
        .and_then(TaskClock::read)
    {
        Ok(ns) => CpuWitness {
            task_clock_ns: Some(ns),
            mark_ns: None,
            missing: None,
        },
        Err(e) => CpuWitness::missing(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A forked child that burns CPU after exec is counted; the parent's
    /// own work is not.
    #[test]
    fn counts_the_child_from_its_exec() {
        let clock = match TaskClock::open_for_children() {
            Ok(c) => c,
            Err(e) => {
                eprintln!("skipped: {e}");
                assert!(std::env::var("CI").as_deref() != Ok("true"), "{e}");
                return;
            }
        };
        let busy = |n: u64| (0..n).fold(0u64, |a, i| a.wrapping_mul(31).wrapping_add(i));
        std::hint::black_box(busy(50_000_000));
        assert_eq!(clock.read().unwrap(), 0, "the parent is never counted");
        let st = std::process::Command::new("/bin/sh")
            .args(["-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"])
            .status()
            .unwrap();
        assert!(st.success());
        let ns = clock.read().unwrap();
        assert!(ns > 1_000_000, "child's task-clock {ns} ns");
    }
}
