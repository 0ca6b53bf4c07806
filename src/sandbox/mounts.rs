//! The mount-namespace layer: inside a private mount namespace every mount
//! becomes read-only except the job's writable directories, and init mounts
//! a /proc of its own PID namespace (the job sees only its own processes).
//!
//! Everything here runs only after `unshare(CLONE_NEWNS)` succeeded *and*
//! the process's mount-namespace inode changed: the remounts below must
//! never reach the host's mounts. Remounts always carry MS_BIND, which
//! changes the flags of this namespace's copy of a mount, never the file
//! system (superblock) behind it.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rustix::mount::{MountFlags, MountPropagationFlags};

use super::layers::name;
use super::Layer;

/// The inode of one of this process's namespaces (`mnt`, `pid`, `net`, ...).
pub(super) fn ns_inode(kind: &str) -> Option<u64> {
    std::fs::metadata(format!("/proc/self/ns/{kind}"))
        .ok()
        .map(|m| m.ino())
}

/// One line of /proc/self/mountinfo: the mount point and the flags of this
/// mount that a remount must keep (in a user namespace they are locked).
struct MountPoint {
    path: PathBuf,
    keep: MountFlags,
}

/// mountinfo escapes space, tab, newline and backslash as `\ooo`.
fn unescape(field: &str) -> String {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 4 <= b.len() {
            let octal = std::str::from_utf8(&b[i + 1..i + 4])
                .ok()
                .and_then(|s| u8::from_str_radix(s, 8).ok());
            if let Some(v) = octal {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn mount_points() -> Vec<MountPoint> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let path = PathBuf::from(unescape(f.get(4)?));
            let mut keep = MountFlags::empty();
            for opt in f.get(5)?.split(',') {
                keep |= match opt {
                    "nosuid" => MountFlags::NOSUID,
                    "nodev" => MountFlags::NODEV,
                    "noexec" => MountFlags::NOEXEC,
                    "noatime" => MountFlags::NOATIME,
                    "nodiratime" => MountFlags::NODIRATIME,
                    "relatime" => MountFlags::RELATIME,
                    "nosymfollow" => MountFlags::NOSYMFOLLOW,
                    _ => MountFlags::empty(),
                };
            }
            Some(MountPoint { path, keep })
        })
        .collect()
}

/// Makes this (new) mount namespace a read-only view of the system but for
/// `writes`. `host_mnt_ns` is the mount-namespace inode before unshare: if
/// it did not change, nothing is touched. Also says whether the namespace
/// is confirmed private (so init may mount its own /proc).
pub(super) fn readonly_view(host_mnt_ns: Option<u64>, writes: &[PathBuf]) -> (Layer, bool) {
    let now = ns_inode("mnt");
    if host_mnt_ns.is_none() || now.is_none() || now == host_mnt_ns {
        let why = "could not confirm a private mount namespace; mounts left alone";
        return (Layer::off(name::MOUNT_NS, why), false);
    }
    if let Err(e) = rustix::mount::mount_change(
        "/",
        MountPropagationFlags::REC | MountPropagationFlags::PRIVATE,
    ) {
        let why = format!("making mounts private: {e}");
        return (Layer::off(name::MOUNT_NS, why), false);
    }
    (remount_readonly(writes), true)
}

fn remount_readonly(writes: &[PathBuf]) -> Layer {
    let mut writable = Vec::new();
    for w in writes {
        // A bind mount of the directory onto itself gives it a mount of its
        // own that stays writable when everything else is made read-only.
        match rustix::mount::mount_bind(w, w) {
            Ok(()) => writable.push(w.clone()),
            Err(e) => {
                return Layer::off(
                    name::MOUNT_NS,
                    format!("binding {} writable: {e}", w.display()),
                )
            }
        }
    }
    let mut failed = Vec::new();
    let mut count = 0;
    for m in mount_points() {
        if writable.iter().any(|w| w == &m.path) {
            continue;
        }
        let flags = MountFlags::BIND | MountFlags::RDONLY | m.keep;
        match rustix::mount::mount_remount(&m.path, flags, "") {
            Ok(()) => count += 1,
            Err(e) => failed.push(format!("{} ({e})", m.path.display())),
        }
    }
    let shown: Vec<String> = writable.iter().map(|p| p.display().to_string()).collect();
    if failed.is_empty() {
        Layer::on(
            name::MOUNT_NS,
            format!(
                "private mount namespace: {count} mounts read-only, writable only {}",
                shown.join(", ")
            ),
        )
    } else {
        Layer::off(
            name::MOUNT_NS,
            format!(
                "private mount namespace, but {} of {} mounts stayed writable: {}",
                failed.len(),
                failed.len() + count,
                failed.join(", ")
            ),
        )
    }
}

/// Mounts a fresh /proc for the PID namespace init lives in (called by init,
/// after `readonly_view` confirmed the private mount namespace).
pub(super) fn private_proc() -> Result<(), String> {
    rustix::mount::mount(
        "proc",
        Path::new("/proc"),
        "proc",
        MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC | MountFlags::RDONLY,
        None,
    )
    .map_err(|e| format!("mounting /proc: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_escapes_are_decoded() {
        assert_eq!(unescape("/a\\040b"), "/a b");
        assert_eq!(unescape("/plain"), "/plain");
        assert_eq!(unescape("/x\\134y"), "/x\\y");
    }
}
