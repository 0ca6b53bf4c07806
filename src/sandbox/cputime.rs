//! A running job's CPU time as the kernel keeps it, read by pqbench from
//! `/proc` while the job runs: the moment its driver says it starts timing
//! (`Spec::cpu_mark`). The job is the first process under the launcher
//! (and its init) that is not pqbench's own program; its time is the sum
//! of its tasks' run time in `schedstat` (nanoseconds, every thread).

use std::path::{Path, PathBuf};

/// The CPU time of the job under `top` so far, in nanoseconds; None when
/// `/proc` does not say (no `children` or `schedstat` in this kernel, or
/// the job already gone).
pub(super) fn job_cpu_ns(top: i32) -> Option<u64> {
    let own = std::fs::read_link("/proc/self/exe").ok()?;
    let job = job_under(top, &own)?;
    let tasks = std::fs::read_dir(format!("/proc/{job}/task")).ok()?;
    let mut total = 0u64;
    for t in tasks.flatten() {
        total += run_time_ns(&t.path())?;
    }
    Some(total)
}

/// The first process from `pid` down (first children) whose program is
/// not `own`: the launcher and its init run pqbench's binary.
fn job_under(mut pid: i32, own: &Path) -> Option<i32> {
    for _ in 0..8 {
        let exe: Option<PathBuf> = std::fs::read_link(format!("/proc/{pid}/exe")).ok();
        if exe.as_deref() != Some(own) {
            return Some(pid);
        }
        let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).ok()?;
        pid = children.split_whitespace().next()?.parse().ok()?;
    }
    None
}

/// A task's run time: the first field of its `schedstat`.
fn run_time_ns(task: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(task.join("schedstat")).ok()?;
    text.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spinning_child_is_found_and_its_time_grows() {
        let mut child = std::process::Command::new("sh")
            .args([
                "-c",
                "i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done; sleep 5",
            ])
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let own = std::fs::read_link("/proc/self/exe").unwrap();
        assert_eq!(job_under(pid, &own), Some(pid));
        // The shell's loop takes some CPU before it sleeps; the time read
        // never goes down.
        let first = job_cpu_ns(pid);
        std::thread::sleep(std::time::Duration::from_millis(300));
        let second = job_cpu_ns(pid);
        child.kill().unwrap();
        child.wait().unwrap();
        let (Some(a), Some(b)) = (first, second) else {
            assert!(std::env::var("CI").map_or(true, |v| v != "true"));
            eprintln!("skipped: this kernel has no schedstat");
            return;
        };
        assert!(b >= a && b > 0, "{a} {b}");
    }
}
