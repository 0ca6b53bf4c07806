//! The launcher: pqbench's own binary re-executed with a hidden first
//! argument (`/proc/self/exe __pqbench-jail <config-fd>`). It starts with an
//! empty environment, enters new namespaces (user namespace when not root,
//! then PID, mount, network, IPC), makes the mount namespace a read-only
//! view, and forks init (`init.rs`), PID 1 of the new PID namespace, which
//! confines itself further, runs the job and reports. The launcher only
//! waits for init.
//!
//! The launcher is single-threaded (it runs before anything else in
//! `main`), which `unshare(CLONE_NEWUSER)` and a safe `fork` require.

use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, FromRawFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::thread::UnshareFlags;

use super::config::{JailConfig, Level, Report, JAIL_ARG};
use super::init::Namespaces;
use super::layer_name as name;
use super::{init, mounts, Layer};

static HOOKED: AtomicBool = AtomicBool::new(false);

/// Whether this process's binary calls `jail_entry` first thing, so that
/// re-executing it with the hidden argument reaches the launcher.
pub(super) fn hooked() -> bool {
    HOOKED.load(Ordering::SeqCst)
}

/// The launcher's entry point. Call it first thing in `main`, before
/// parsing arguments: it returns None in a normal run (and notes that this
/// binary can serve as the launcher), or runs the launcher and returns its
/// exit code when the binary was started as one.
///
/// ```no_run
/// if let Some(code) = pqbench::sandbox::jail_entry() {
///     std::process::exit(code);
/// }
/// ```
pub fn jail_entry() -> Option<i32> {
    jail_entry_from(std::env::args_os().skip(1))
}

/// `jail_entry` with the arguments after argv[0] given (for a binary whose
/// arguments are not yet available through `std::env`, e.g. a constructor).
pub fn jail_entry_from(mut args: impl Iterator<Item = OsString>) -> Option<i32> {
    HOOKED.store(true, Ordering::SeqCst);
    if args.next()? != JAIL_ARG {
        return None;
    }
    let fd = args.next().and_then(|a| a.to_str()?.parse::<i32>().ok());
    let Some(fd) = fd.filter(|&fd| fd > 2) else {
        eprintln!("pqbench launcher: no configuration descriptor");
        return Some(125);
    };
    // SAFETY: pqbench placed the configuration memfd at this descriptor for
    // the launcher alone; it is read once and closed here.
    let mut file = unsafe { File::from_raw_fd(fd) };
    let mut config = Vec::new();
    if let Err(e) = file.read_to_end(&mut config) {
        eprintln!("pqbench launcher: reading the configuration: {e}");
        return Some(125);
    }
    drop(file);
    Some(launch(&config))
}

fn launch(config: &[u8]) -> i32 {
    let cfg: JailConfig = match serde_json::from_slice(config) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("pqbench launcher: bad configuration: {e}");
            return 125;
        }
    };
    // SAFETY: pqbench placed the status pipe's write end at this descriptor
    // for the launcher alone; nothing else in this fresh process owns it.
    let mut status = unsafe { File::from_raw_fd(cfg.status_fd) };
    let _ = rustix::io::fcntl_setfd(status.as_fd(), rustix::io::FdFlags::CLOEXEC);
    let mut layers = vec![Layer::on(
        name::LAUNCHER,
        "pqbench's binary re-executed as launcher and init",
    )];
    let ns = enter_namespaces(&cfg, &mut layers);
    // SAFETY: the process is single-threaded (see the module comment), so
    // the child may go on using the allocator and std.
    match unsafe { libc::fork() } {
        -1 => {
            let error = format!("fork: {}", std::io::Error::last_os_error());
            let _ = status.write_all(&Report::NotStarted { error }.line());
            1
        }
        0 => init::run(&cfg, layers, status, ns),
        child => {
            let mut st = 0;
            loop {
                // SAFETY: plain system call with a valid pointer.
                let r = unsafe { libc::waitpid(child, &mut st, 0) };
                let interrupted =
                    std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted;
                if r == child || (r < 0 && !interrupted) {
                    break;
                }
            }
            // init exits 0 after reporting; anything else means it was
            // killed before it could, which pqbench must hear about.
            if !(libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 0) {
                let error = if libc::WIFSIGNALED(st) {
                    format!("the job's init was killed by signal {}", libc::WTERMSIG(st))
                } else {
                    format!("the job's init exited with {}", libc::WEXITSTATUS(st))
                };
                let _ = status.write_all(&Report::Failed { error }.line());
            }
            0
        }
    }
}

fn unshare(flags: UnshareFlags) -> rustix::io::Result<()> {
    // SAFETY: UnshareFlags::FILES is never passed, so no thread can observe
    // a descriptor table it does not share (and there is only one thread).
    unsafe { rustix::thread::unshare_unsafe(flags) }
}

/// A user namespace mapping pqbench's uid and gid to themselves: inside it
/// the launcher may create the other namespaces and mount, outside it the
/// job has no more rights than pqbench's user.
fn enter_user_ns() -> Layer {
    let uid = rustix::process::getuid().as_raw();
    let gid = rustix::process::getgid().as_raw();
    if let Err(e) = unshare(UnshareFlags::NEWUSER) {
        return Layer::off(
            name::USER_NS,
            format!("unshare(CLONE_NEWUSER): {e} (unprivileged user namespaces disabled?)"),
        );
    }
    let write = |file: &str, text: String| std::fs::write(format!("/proc/self/{file}"), text);
    let mapped = write("uid_map", format!("{uid} {uid} 1\n"))
        .and_then(|()| write("setgroups", "deny\n".into()))
        .and_then(|()| write("gid_map", format!("{gid} {gid} 1\n")));
    match mapped {
        Ok(()) => Layer::on(
            name::USER_NS,
            format!("own user namespace, uid {uid} and gid {gid} mapped to themselves"),
        ),
        Err(e) => Layer::off(name::USER_NS, format!("writing the uid/gid map: {e}")),
    }
}

fn enter_namespaces(cfg: &JailConfig, layers: &mut Vec<Layer>) -> Namespaces {
    let root = rustix::process::geteuid().is_root();
    let mut ns = Namespaces::default();
    // Root creates the other namespaces directly; the user namespace only
    // serves an unprivileged pqbench, so as root it is no missing layer.
    if !root {
        let user = enter_user_ns();
        ns.user = user.active;
        layers.push(user);
    }
    let privileged = root || ns.user;
    let mut try_ns = |layer: &str, flag: UnshareFlags, what: &str| -> bool {
        if !privileged {
            layers.push(Layer::off(
                layer,
                "needs root or a user namespace, neither is available",
            ));
            return false;
        }
        match unshare(flag) {
            Ok(()) => {
                layers.push(Layer::on(layer, what));
                true
            }
            Err(e) => {
                layers.push(Layer::off(layer, format!("unshare: {e}")));
                false
            }
        }
    };
    ns.pid = try_ns(
        name::PID_NS,
        UnshareFlags::NEWPID,
        "the job's init is PID 1 of a namespace of its own",
    );
    let host_mnt = mounts::ns_inode("mnt");
    let mount = try_ns(
        name::MOUNT_NS,
        UnshareFlags::NEWNS,
        "private mount namespace",
    );
    try_ns(
        name::NET_NS,
        UnshareFlags::NEWNET,
        "network namespace of its own, no interface up",
    );
    try_ns(
        name::IPC_NS,
        UnshareFlags::NEWIPC,
        "System V IPC and POSIX message queues of its own",
    );
    if mount {
        // A toolchain job's uid must reach its inputs by their own paths
        // (they are on its command line), also where a folder on the way
        // (a 0700 home or temporary directory) would refuse it.
        let cover: Vec<PathBuf> = match (cfg.level, cfg.job_ids) {
            (Level::Toolchain, Some(_)) => cfg
                .reads
                .iter()
                .chain(&cfg.execs)
                .chain(&cfg.writes)
                .chain(cfg.cwd.iter())
                .cloned()
                .collect(),
            _ => Vec::new(),
        };
        let (view, private) = mounts::readonly_view(host_mnt, &cfg.writes, &cover);
        ns.mount = private;
        if let Some(l) = layers.iter_mut().find(|l| l.name == name::MOUNT_NS) {
            *l = view;
        }
    }
    ns
}
