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

use super::layer_name as name;
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
/// `writes`, with the folders on the way to `passable` that others may not
/// search covered (`cover_blocked`). `host_mnt_ns` is the mount-namespace
/// inode before unshare: if it did not change, nothing is touched. Also
/// says whether the namespace is confirmed private (so init may mount its
/// own /proc).
pub(super) fn readonly_view(
    host_mnt_ns: Option<u64>,
    writes: &[PathBuf],
    passable: &[PathBuf],
) -> (Layer, bool) {
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
    let covered = cover_blocked(passable);
    let mut layer = remount_readonly(writes);
    match covered {
        Ok(c) if c.is_empty() => {}
        Ok(c) => layer.detail.push_str(&format!(
            "; folders others may not search covered, the job's paths bound back in them: {}",
            c.join(", ")
        )),
        Err(e) => {
            layer.active = false;
            layer.detail.push_str(&format!("; {e}"));
        }
    }
    (layer, true)
}

/// Whether a job of another uid may search `dir` (its "others" bits: a
/// job uid is never a folder's owner, nor in its group).
fn searchable(dir: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(dir).is_ok_and(|m| m.permissions().mode() & 0o001 != 0)
}

/// The outermost proper ancestor of `path` that others may not search.
fn first_blocked(path: &Path) -> Option<PathBuf> {
    let mut ancestors: Vec<&Path> = path.ancestors().skip(1).collect();
    ancestors.reverse();
    ancestors
        .into_iter()
        .find(|a| !searchable(a))
        .map(Path::to_path_buf)
}

/// Makes each of `paths` reachable, by its own path, for a job uid that may
/// not search a folder on the way (a project in a 0700 home or temporary
/// directory): the outermost such folder is covered by an empty tmpfs in
/// which each path is bound back from the original, so the job sees the
/// paths it was given and nothing else of that folder. Repeated while a
/// bound path has a blocked folder below another bound one. Returns the
/// covered folders. Runs as root in the job's private mount namespace,
/// before the view is made read-only.
fn cover_blocked(paths: &[PathBuf]) -> Result<Vec<String>, String> {
    use std::os::fd::AsRawFd;
    let mut targets: Vec<(PathBuf, std::os::fd::OwnedFd)> = Vec::new();
    for p in paths {
        let Ok(canonical) = p.canonicalize() else {
            continue;
        };
        let fd = rustix::fs::open(
            &canonical,
            rustix::fs::OFlags::PATH | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .map_err(|e| format!("opening {}: {e}", canonical.display()))?;
        for at in [canonical.clone(), p.clone()] {
            if at.is_absolute() && !targets.iter().any(|(t, _)| t == &at) {
                let fd = fd.try_clone().map_err(|e| format!("dup: {e}"))?;
                targets.push((at, fd));
            }
        }
    }
    let mut covered: Vec<PathBuf> = Vec::new();
    for _ in 0..8 {
        let mut blocked: Vec<PathBuf> = targets
            .iter()
            .filter_map(|(t, _)| first_blocked(t))
            .filter(|b| !covered.contains(b))
            .collect();
        blocked.sort();
        blocked.dedup();
        // Only the outermost: a cover hides everything beneath it.
        let outer: Vec<PathBuf> = blocked
            .iter()
            .filter(|b| !blocked.iter().any(|o| o != *b && b.starts_with(o)))
            .cloned()
            .collect();
        if outer.is_empty() {
            break;
        }
        for c in &outer {
            if c.parent().is_none() {
                return Err("the root folder itself may not be searched by others".into());
            }
            rustix::mount::mount(
                "tmpfs",
                c,
                "tmpfs",
                MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
                Some(c"mode=0755,size=64k"),
            )
            .map_err(|e| format!("covering {}: {e}", c.display()))?;
            let mut inside: Vec<&(PathBuf, std::os::fd::OwnedFd)> =
                targets.iter().filter(|(t, _)| t.starts_with(c)).collect();
            inside.sort_by_key(|(t, _)| t.components().count());
            for (t, fd) in inside {
                if t.exists() {
                    continue; // inside a path bound a moment ago
                }
                let is_dir = rustix::fs::fstat(fd).is_ok_and(|st| {
                    rustix::fs::FileType::from_raw_mode(st.st_mode)
                        == rustix::fs::FileType::Directory
                });
                let made = if is_dir {
                    std::fs::create_dir_all(t)
                } else {
                    t.parent()
                        .map_or(Ok(()), std::fs::create_dir_all)
                        .and_then(|()| std::fs::File::create(t).map(drop))
                };
                made.map_err(|e| format!("placing {}: {e}", t.display()))?;
                let source = format!("/proc/self/fd/{}", fd.as_raw_fd());
                rustix::mount::mount_bind_recursive(source.as_str(), t)
                    .map_err(|e| format!("binding {}: {e}", t.display()))?;
            }
        }
        covered.extend(outer);
    }
    Ok(covered.iter().map(|c| c.display().to_string()).collect())
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
