//! The per-process layers init applies to itself before it forks the job
//! (the job inherits them all): resource limits, capabilities,
//! no_new_privs, Landlock and seccomp. Each returns the layers it set up, or
//! why not.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use landlock::{
    Access, AccessFs, AccessNet, LandlockStatus, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

use super::config::{JailConfig, Level};
use super::layer_name as name;
use super::{Layer, Limits};

/// Directories every job may read and execute from: the dynamic loader,
/// system libraries, locale and loader configuration, and the kernel's
/// pseudo file systems (the driver reads /proc/self/status).
pub(super) const SYSTEM_READS: &[&str] = &[
    "/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin", "/etc", "/opt", "/proc",
    "/sys", "/dev",
];

/// What a compiler, assembler, linker or build tool may read besides its
/// inputs: the system's programs, headers and libraries, the loader's and
/// the name service's configuration, and the devices and CPU description
/// compilers consult. Not the rest of `/etc` (host keys), `/home`, `/root`
/// or `/opt`: a submission's `#include` or `.incbin` of a file there fails.
pub(super) const TOOLCHAIN_READS: &[&str] = &[
    "/usr",
    "/lib",
    "/lib64",
    "/lib32",
    "/libx32",
    "/bin",
    "/sbin",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/localtime",
    "/dev/null",
    "/dev/zero",
    "/dev/urandom",
    "/dev/random",
    "/proc/cpuinfo",
    "/sys/devices/system/cpu",
];

/// The Landlock ABI whose rights pqbench asks for (tested on it); newer
/// kernels enforce exactly these, older ones what they can.
const LANDLOCK_ABI: ABI = ABI::V7;

/// The lower of a wanted limit and the current hard limit: raising a hard
/// limit needs privileges, and a limit above the hard one is not ours to
/// give.
pub(super) fn clamp_limit(wanted: u64, hard: u64) -> u64 {
    // RLIM_INFINITY is the largest value, so min() keeps it meaningful.
    wanted.min(hard)
}

fn set_limit(resource: rustix::process::Resource, wanted: u64) -> Result<u64, String> {
    use rustix::process::{getrlimit, setrlimit, Rlimit};
    let current = getrlimit(resource);
    let value = clamp_limit(wanted, current.maximum.unwrap_or(u64::MAX));
    setrlimit(
        resource,
        Rlimit {
            current: Some(value),
            maximum: Some(value),
        },
    )
    .map_err(|e| format!("{resource:?}: {e}"))?;
    Ok(value)
}

/// Address space, CPU time, file size and core limits, each clamped to the
/// hard limit pqbench itself runs under.
pub(super) fn rlimits(limits: &Limits) -> Layer {
    use rustix::process::Resource;
    let mut set = Vec::new();
    let mut errors = Vec::new();
    let mut clamped = Vec::new();
    let wanted = [
        (Resource::Core, Some(0), "core"),
        (
            Resource::As,
            (limits.address_space > 0).then_some(limits.address_space),
            "address space",
        ),
        (
            Resource::Cpu,
            (limits.cpu_seconds > 0).then_some(limits.cpu_seconds),
            "CPU seconds",
        ),
        (
            Resource::Fsize,
            (limits.file_size > 0).then_some(limits.file_size),
            "file size",
        ),
    ];
    for (resource, value, what) in wanted {
        let Some(value) = value else { continue };
        match set_limit(resource, value) {
            Ok(v) if v < value => clamped.push(format!("{what} {v} (hard limit)")),
            Ok(v) => set.push(format!("{what} {v}")),
            Err(e) => errors.push(e),
        }
    }
    set.extend(clamped);
    if errors.is_empty() {
        Layer::on(name::RLIMITS, set.join(", "))
    } else {
        Layer::off(
            name::RLIMITS,
            format!("{}; failed: {}", set.join(", "), errors.join("; ")),
        )
    }
}

/// RLIMIT_NPROC: a per-job process limit when the job has a uid (or user
/// namespace) of its own; otherwise it would count every process of the
/// user, so it is not set.
pub(super) fn process_limit(processes: u64, own_uid: bool) -> Layer {
    if processes == 0 {
        return Layer::off(name::PROCESSES, "no process limit requested");
    }
    if !own_uid {
        return Layer::off(
            name::PROCESSES,
            "the job shares its uid with other processes, so RLIMIT_NPROC would count them too",
        );
    }
    match set_limit(rustix::process::Resource::Nproc, processes) {
        Ok(v) => Layer::on(
            name::PROCESSES,
            format!("at most {v} processes and threads for the job's uid"),
        ),
        Err(e) => Layer::off(name::PROCESSES, e),
    }
}

/// Empties the bounding, ambient, inheritable, permitted and effective
/// capability sets: nothing the job execs can gain a capability back.
pub(super) fn drop_capabilities() -> Layer {
    use rustix::thread::{
        clear_ambient_capability_set, remove_capability_from_bounding_set, set_capabilities,
        CapabilitySet, CapabilitySets,
    };
    for cap in CapabilitySet::all().iter() {
        // Capabilities the kernel does not know fail with EINVAL: nothing
        // to drop there.
        let _ = remove_capability_from_bounding_set(cap);
    }
    let _ = clear_ambient_capability_set();
    let empty = CapabilitySets {
        effective: CapabilitySet::empty(),
        permitted: CapabilitySet::empty(),
        inheritable: CapabilitySet::empty(),
    };
    match set_capabilities(None, empty) {
        Ok(()) => Layer::on(name::CAPABILITIES, "every capability set empty"),
        Err(e) => Layer::off(name::CAPABILITIES, format!("capset: {e}")),
    }
}

pub(super) fn no_new_privs() -> Layer {
    match rustix::thread::set_no_new_privs(true) {
        Ok(()) => Layer::on(
            name::NO_NEW_PRIVS,
            "set-uid files and file capabilities grant nothing",
        ),
        Err(e) => Layer::off(name::NO_NEW_PRIVS, format!("prctl: {e}")),
    }
}

fn existing(paths: impl IntoIterator<Item = PathBuf>) -> Vec<PathBuf> {
    paths.into_iter().filter(|p| p.exists()).collect()
}

fn show(paths: &[PathBuf]) -> String {
    let v: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    v.join(", ")
}

/// The hierarchies a job was granted, for its layer's report.
struct Granted<'a> {
    system: &'a [PathBuf],
    inputs: &'a [PathBuf],
    execs: &'a [PathBuf],
    writes: &'a [PathBuf],
}

impl Granted<'_> {
    fn describe(&self, level: Level) -> String {
        let reads: Vec<PathBuf> = self.system.iter().chain(self.inputs).cloned().collect();
        match level {
            Level::Submission => format!(
                "writes only beneath {}; reads only {} and the program",
                show(self.writes),
                show(&reads)
            ),
            Level::Toolchain => format!(
                "writes only beneath {} and /dev/null; reads only there, {}, {} and the program; executes only {}, {} and the program",
                show(self.writes),
                show(&reads),
                show(self.execs),
                show(self.system),
                show(self.execs),
            ),
        }
    }
}

/// Landlock: file-system access (reads, writes only beneath the job's
/// writable directories), TCP, and signals/abstract sockets beyond the job.
pub(super) fn landlock(cfg: &JailConfig) -> Vec<Layer> {
    match try_landlock(cfg) {
        Ok(layers) => layers,
        Err(e) => [name::LANDLOCK_FS, name::LANDLOCK_NET, name::LANDLOCK_SCOPE]
            .iter()
            .map(|n| Layer::off(n, format!("Landlock setup failed: {e}")))
            .collect(),
    }
}

fn try_landlock(cfg: &JailConfig) -> Result<Vec<Layer>, landlock::RulesetError> {
    let abi = LANDLOCK_ABI;
    let read = AccessFs::from_read(abi);
    let file_read = read & AccessFs::from_file(abi);
    // A toolchain job reads its inputs but executes only the system's and
    // the compiler's own programs: nothing a submission ships, nothing it
    // made in the scratch folder.
    let (system, input, write) = match cfg.level {
        Level::Submission => (SYSTEM_READS, read, AccessFs::from_all(abi)),
        Level::Toolchain => (
            TOOLCHAIN_READS,
            read & !AccessFs::Execute,
            AccessFs::from_all(abi) & !AccessFs::Execute,
        ),
    };
    let system = existing(system.iter().map(PathBuf::from));
    let inputs = existing(cfg.reads.iter().cloned());
    let execs = existing(cfg.execs.iter().cloned());
    let writes = existing(cfg.writes.iter().cloned());
    let mut created = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))?
        .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)?
        .scope(Scope::AbstractUnixSocket | Scope::Signal)?
        .create()?;
    let rules = system
        .iter()
        .chain(&execs)
        .map(|p| (p, read))
        .chain(inputs.iter().map(|p| (p, input)));
    for (p, access) in rules {
        if let Ok(fd) = PathFd::new(p) {
            let access = if p.is_dir() {
                access
            } else {
                access & AccessFs::from_file(abi)
            };
            created = created.add_rule(PathBeneath::new(fd, access))?;
        }
    }
    if let Ok(fd) = PathFd::new(&cfg.program) {
        created = created.add_rule(PathBeneath::new(fd, file_read))?;
    }
    for p in &writes {
        if let Ok(fd) = PathFd::new(p) {
            created = created.add_rule(PathBeneath::new(fd, write))?;
        }
    }
    if let Ok(fd) = PathFd::new("/dev/null") {
        created = created.add_rule(PathBeneath::new(
            fd,
            AccessFs::ReadFile | AccessFs::WriteFile,
        ))?;
    }
    let status = created.restrict_self()?;
    let kernel_abi = match status.landlock {
        LandlockStatus::Available { effective_abi, .. } => effective_abi as i32,
        _ => 0,
    };
    let enforced = match status.ruleset {
        RulesetStatus::FullyEnforced => "fully enforced",
        RulesetStatus::PartiallyEnforced => "partially enforced",
        RulesetStatus::NotEnforced => "not enforced",
    };
    let granted = Granted {
        system: &system,
        inputs: &inputs,
        execs: &execs,
        writes: &writes,
    };
    let fs_detail = format!(
        "{} (ABI {kernel_abi}, {enforced})",
        granted.describe(cfg.level)
    );
    let fs = if status.ruleset == RulesetStatus::NotEnforced {
        Layer::off(
            name::LANDLOCK_FS,
            format!(
                "the kernel does not enforce Landlock ({:?})",
                status.landlock
            ),
        )
    } else {
        Layer::on(name::LANDLOCK_FS, fs_detail)
    };
    let net = if kernel_abi >= 4 {
        Layer::on(name::LANDLOCK_NET, "TCP bind and connect denied")
    } else {
        Layer::off(
            name::LANDLOCK_NET,
            format!("needs Landlock ABI 4, the kernel has {kernel_abi}"),
        )
    };
    let scope = if kernel_abi >= 6 {
        Layer::on(
            name::LANDLOCK_SCOPE,
            "no signals to and no abstract unix sockets of processes outside the job",
        )
    } else {
        Layer::off(
            name::LANDLOCK_SCOPE,
            format!("needs Landlock ABI 6, the kernel has {kernel_abi}"),
        )
    };
    Ok(vec![fs, net, scope])
}

/// System calls no benchmark tool or compiler needs and an escaping job
/// would: sockets of any family, namespaces and mounts, tracing other processes, kernel keyrings,
/// BPF, io_uring (which can issue calls behind seccomp's back). `clone3`
/// answers ENOSYS so libc falls back to `clone`, whose flags are checked.
fn filters(channels: &[i32]) -> Result<Vec<BpfProgram>, seccompiler::BackendError> {
    let arch = std::env::consts::ARCH.try_into()?;
    let cond = |arg, len, op, v| SeccompCondition::new(arg, len, op, v);
    let mut eperm: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    // No socket at all: a unix socket reaches the host's daemons by path
    // (docker.sock, the evaluator's ssh-agent), which Landlock does not
    // govern. `socketpair`, which reaches nothing outside the job, stays.
    eperm.insert(libc::SYS_socket, Vec::new());
    let namespaces = [
        libc::CLONE_NEWUSER,
        libc::CLONE_NEWNS,
        libc::CLONE_NEWPID,
        libc::CLONE_NEWNET,
        libc::CLONE_NEWIPC,
        libc::CLONE_NEWUTS,
        libc::CLONE_NEWCGROUP,
    ];
    let mut clone_rules = Vec::new();
    for flag in namespaces {
        let flag = flag as u64;
        clone_rules.push(SeccompRule::new(vec![cond(
            0,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(flag),
            flag,
        )?])?);
    }
    eperm.insert(libc::SYS_clone, clone_rules);
    for sys in [
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_bpf,
        libc::SYS_userfaultfd,
        libc::SYS_open_by_handle_at,
        libc::SYS_kexec_load,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_reboot,
    ] {
        eperm.insert(sys, Vec::new());
    }
    channel_guard(&mut eperm, channels)?;
    let mut enosys: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for sys in [
        libc::SYS_clone3,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ] {
        enosys.insert(sys, Vec::new());
    }
    let eperm = SeccompFilter::new(
        eperm,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )?;
    let enosys = SeccompFilter::new(
        enosys,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )?;
    Ok(vec![eperm.try_into()?, enosys.try_into()?])
}

/// The job's result channels stay the pipes pqbench reads: no descriptor
/// can be duplicated onto one (`dup2`, `dup3`), and none can be closed
/// (`close`, `close_range` over it), so a library loaded by the job cannot
/// put a pipe of its own in a channel's place and rewrite what the tool
/// writes; nor can it `tee` an input channel (read the bytes pqbench
/// gave the tool without consuming them). (`fcntl(F_DUPFD)` only takes free numbers, which an open
/// channel is not; the process's exit closes the channels.)
fn channel_guard(
    rules: &mut BTreeMap<i64, Vec<SeccompRule>>,
    channels: &[i32],
) -> Result<(), seccompiler::BackendError> {
    let arg = |n, op, v: i32| SeccompCondition::new(n, SeccompCmpArgLen::Dword, op, v as u64);
    for &fd in channels {
        for (sys, n) in [
            (libc::SYS_dup2, 1),
            (libc::SYS_dup3, 1),
            (libc::SYS_close, 0),
            (libc::SYS_tee, 0),
        ] {
            rules
                .entry(sys)
                .or_default()
                .push(SeccompRule::new(vec![arg(n, SeccompCmpOp::Eq, fd)?])?);
        }
        rules
            .entry(libc::SYS_close_range)
            .or_default()
            .push(SeccompRule::new(vec![
                arg(0, SeccompCmpOp::Le, fd)?,
                arg(1, SeccompCmpOp::Ge, fd)?,
            ])?);
    }
    Ok(())
}

pub(super) fn seccomp(channels: &[i32]) -> Layer {
    let programs = match filters(channels) {
        Ok(p) => p,
        Err(e) => return Layer::off(name::SECCOMP, format!("building the filter: {e}")),
    };
    for p in &programs {
        if let Err(e) = seccompiler::apply_filter(p) {
            return Layer::off(name::SECCOMP, format!("installing the filter: {e}"));
        }
    }
    Layer::on(
        name::SECCOMP,
        format!(
            "denied: socket() of any family (socketpair allowed), namespaces, mounts, ptrace, process_vm_*, keyrings, bpf, io_uring; dup2/dup3 onto, close and close_range of the result channels {channels:?}"
        ),
    )
}

/// The minimal environment of submission processes: nothing from
/// pqbench's own environment except the counter override pqbench itself
/// documents, plus what the caller sets explicitly.
pub(super) fn submission_env(
    cwd: Option<&Path>,
    extra: &[(String, String)],
) -> Vec<(String, String)> {
    let home = cwd.map(|p| p.display().to_string()).unwrap_or("/".into());
    let mut env = vec![
        (
            "PATH".to_string(),
            "/usr/local/bin:/usr/bin:/bin".to_string(),
        ),
        ("LANG".to_string(), "C".to_string()),
        ("LC_ALL".to_string(), "C".to_string()),
        ("HOME".to_string(), home.clone()),
        ("TMPDIR".to_string(), home),
    ];
    if let Ok(v) = std::env::var("PQB_COUNTER") {
        env.push(("PQB_COUNTER".to_string(), v));
    }
    for (k, v) in extra {
        env.retain(|(key, _)| key != k);
        env.push((k.clone(), v.clone()));
    }
    env
}
