//! The system a run belongs to: read from the registry
//! (`campaigns/systems.toml`), chosen from the campaign's `systems` (the
//! command line's `--system`, else the first this host can run natively),
//! and checked against the host before anything is built or measured.

use std::path::Path;

use toml::Spanned;

use super::names;
use super::problems::Problems;
use crate::config::systems::{RawExecutor, RawSystem, RawSystems};
use crate::config::Loaded;
use crate::error::ConfigError;

/// The registry's file, relative to the project root.
pub(crate) const REGISTRY: &str = "campaigns/systems.toml";

pub use crate::records::system::Runner;

pub use crate::records::system::Executor;

pub use crate::records::system::SshExecutor;

pub use crate::records::system::SlurmExecutor;

pub use crate::records::system::SystemSpec;

impl SystemSpec {
    pub(crate) fn emulated(&self) -> bool {
        matches!(self.runner, Runner::Emulator { .. })
    }

    /// The implicit system of a campaign naming an unregistered one.
    pub(crate) fn implicit(id: &str) -> SystemSpec {
        SystemSpec {
            id: id.to_string(),
            arch: "any".into(),
            description: String::new(),
            title: None,
            compiler: None,
            assembler: None,
            sysroot: None,
            toolchain_limits: None,
            toolchain_environment: Vec::new(),
            runner: Runner::Native,
            reach: "local".into(),
            cpus: Vec::new(),
            cpu_model: None,
            fingerprints: Vec::new(),
            require_fixed: None,
            registered: false,
            executor: Executor::Local,
        }
    }

    /// Why this host cannot run the system natively, or None.
    pub(crate) fn host_mismatch(&self, host_arch: &str, host_cpu_model: &str) -> Option<String> {
        if self.emulated() {
            return None;
        }
        if self.arch != "any" && self.arch != host_arch {
            return Some(format!(
                "system {} is registered as a native {} machine, but this host is {host_arch}",
                self.id, self.arch
            ));
        }
        match &self.cpu_model {
            Some(m) if m != host_cpu_model => Some(format!(
                "system {} is registered with CPU model `{m}`, but this host has `{host_cpu_model}`",
                self.id
            )),
            _ => None,
        }
    }
}

/// The architecture name of this host, as the registry spells it.
pub(crate) fn host_arch() -> &'static str {
    std::env::consts::ARCH
}

/// Every system of the registry (none when the file does not exist).
pub fn registry(root: &Path, p: &mut Problems) -> Vec<(SystemSpec, Option<Spanned<String>>)> {
    let file = root.join(REGISTRY);
    if !file.is_file() {
        return Vec::new();
    }
    let Some(raw) = p.read::<RawSystems>(&file) else {
        return Vec::new();
    };
    let mut out: Vec<(SystemSpec, Option<Spanned<String>>)> = Vec::new();
    for s in &raw.value.systems {
        if let Some(spec) = resolve_one(&raw, s, p) {
            if out.iter().any(|(o, _)| o.id == spec.id) {
                p.push(
                    raw.error_at(&s.id, format!("system `{}` is registered twice", spec.id))
                        .help("keep one [[system]] table per id"),
                );
                continue;
            }
            out.push((spec, Some(s.id.clone())));
        }
    }
    out
}

fn resolve_one(raw: &Loaded<RawSystems>, s: &RawSystem, p: &mut Problems) -> Option<SystemSpec> {
    let id = s.id.get_ref();
    let mut ok = true;
    if let Err(why) = names::check_name(id) {
        p.push(
            raw.error_at(&s.id, format!("system id `{id}` {why}"))
                .help(format!(
                    "ids look like x86_1 or arm_1: {}",
                    names::NAME_RULE
                )),
        );
        ok = false;
    }
    let arch = s.arch.get_ref();
    if !["x86_64", "aarch64", "any"].contains(&arch.as_str()) {
        p.push(
            raw.error_at(&s.arch, format!("unknown architecture `{arch}`"))
                .help("use x86_64, aarch64, or any (a native system that runs anywhere)"),
        );
        ok = false;
    }
    let kind = s.runner.kind.as_ref();
    let runner = match kind.map(|k| k.get_ref().as_str()) {
        None | Some("native") => Runner::Native,
        Some("emulator") => {
            let command = s.runner.command.clone().unwrap_or_else(|| {
                let mut c = vec![format!("qemu-{arch}")];
                if let Some(root) = &s.toolchain.sysroot {
                    c.extend(["-L".to_string(), root.clone()]);
                }
                c
            });
            if command.is_empty() || arch == "any" {
                p.push(
                    raw.error_at(
                        kind.expect("kind was given"),
                        "an emulated system needs an architecture and an emulator command",
                    )
                    .help("set arch = \"aarch64\" and runner.command = [\"qemu-aarch64\", \"-L\", \"/usr/aarch64-linux-gnu\"]"),
                );
                ok = false;
            }
            Runner::Emulator { command }
        }
        Some(other) => {
            p.push(
                raw.error_at(
                    kind.expect("kind was given"),
                    format!("unknown runner kind `{other}`"),
                )
                .help("use native or emulator"),
            );
            return None;
        }
    };
    if let Some(r) = &s.runner.reach {
        if r.get_ref() != "local" {
            p.push(
                raw.error_at(
                    r,
                    format!("unknown way to reach a system: `{}`", r.get_ref()),
                )
                .help("use local (this machine)"),
            );
            ok = false;
        }
    }
    let compiler = compiler(raw, s, &runner, p);
    ok = ok && compiler.is_some();
    let compiler = compiler.flatten();
    let executor = executor(raw, s, p);
    ok = ok && executor.is_some();
    ok.then(|| SystemSpec {
        id: id.clone(),
        arch: arch.clone(),
        description: s.description.clone(),
        title: s.title.clone(),
        compiler,
        assembler: s.toolchain.assembler.as_ref().map(|a| a.get_ref().clone()),
        sysroot: s.toolchain.sysroot.clone(),
        toolchain_limits: toolchain_limits(raw, s, p),
        toolchain_environment: toolchain_environment(raw, s, p),
        runner,
        reach: "local".into(),
        cpus: s.cpus.clone().unwrap_or_default(),
        cpu_model: s.host.cpu_model.clone(),
        fingerprints: s.host.fingerprints.clone(),
        require_fixed: s.host.require_fixed,
        registered: true,
        executor: executor.expect("checked above"),
    })
}

/// The compiler a system prescribes (`toolchain.compiler`, else the cross
/// prefix's gcc), with its toolchain's other keys checked; None when the
/// toolchain is unusable (reported in `p`).
fn compiler(
    raw: &Loaded<RawSystems>,
    s: &RawSystem,
    runner: &Runner,
    p: &mut Problems,
) -> Option<Option<String>> {
    let mut ok = true;
    let compiler = s
        .toolchain
        .compiler
        .as_ref()
        .map(|c| c.get_ref().clone())
        .or_else(|| s.toolchain.cross_prefix.as_ref().map(|p| format!("{p}gcc")));
    if matches!(runner, Runner::Emulator { .. }) && compiler.is_none() {
        p.push(
            raw.error_at(
                &s.id,
                format!(
                    "emulated system `{}` names no cross compiler",
                    s.id.get_ref()
                ),
            )
            .help("set toolchain.cross-prefix (e.g. \"aarch64-linux-gnu-\") or toolchain.compiler"),
        );
        ok = false;
    }
    if let Some(a) = &s.toolchain.assembler {
        if a.get_ref().first().is_none_or(|c| c.trim().is_empty()) {
            p.push(
                raw.error_at(a, "toolchain.assembler names no program")
                    .help("e.g. assembler = [\"clang\", \"--target=aarch64-linux-gnu\"], or remove the key"),
            );
            ok = false;
        }
    }
    ok.then_some(compiler)
}

/// `[system.toolchain.limits]` with each key left out at its default;
/// None when the system sets none. A zero is refused at its key: a job
/// without any limit is not what an evaluator of hostile builds wants.
fn toolchain_limits(
    raw: &Loaded<RawSystems>,
    s: &RawSystem,
    p: &mut Problems,
) -> Option<crate::records::toolchain::ToolchainLimits> {
    let l = s.toolchain.limits.as_ref()?;
    let mut out = crate::records::toolchain::ToolchainLimits::default();
    for (key, value, slot) in [
        ("memory-mib", &l.memory_mib, &mut out.memory_mib),
        ("cpu-seconds", &l.cpu_seconds, &mut out.cpu_seconds),
        ("file-mib", &l.file_mib, &mut out.file_mib),
        ("processes", &l.processes, &mut out.processes),
    ] {
        let Some(v) = value else { continue };
        if *v.get_ref() == 0 {
            p.push(
                raw.error_at(v, format!("toolchain.limits.{key} is 0"))
                    .help("give a positive limit, or remove the key to keep the default"),
            );
        }
        *slot = *v.get_ref();
    }
    Some(out)
}

/// `toolchain.environment`: the names of pqbench's variables the
/// system's toolchain jobs get. Each is refused at its place when it is no
/// variable name, would undo the job's confinement
/// (`passed_variable_refused`) or is named twice.
fn toolchain_environment(raw: &Loaded<RawSystems>, s: &RawSystem, p: &mut Problems) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in &s.toolchain.environment {
        let n = name.get_ref();
        if let Some(why) = passed_variable_refused(n) {
            p.push(
                raw.error_at(name, format!("toolchain.environment names `{n}`, which {why}"))
                    .help(format!(
                        "remove `{n}` from toolchain.environment of system {}: list only the names of variables a toolchain job may see, e.g. environment = [\"CCACHE_DISABLE\", \"SOURCE_DATE_EPOCH\"]",
                        s.id.get_ref()
                    )),
            );
        } else if out.contains(n) {
            p.push(
                raw.error_at(name, format!("toolchain.environment names `{n}` twice"))
                    .help(format!(
                        "keep one `{n}` in toolchain.environment of system {}",
                        s.id.get_ref()
                    )),
            );
        } else {
            out.push(n.clone());
        }
    }
    out
}

/// The first executor value that could be taken for an option or split a
/// command line (`host = "-oProxyCommand=…"`), named by its key.
fn unsafe_value(e: &RawExecutor) -> Option<String> {
    let values = [
        ("host", &e.host),
        ("user", &e.user),
        ("identity", &e.identity),
        ("work-dir", &e.work_dir),
        ("pqbench", &e.pqbench),
        ("partition", &e.partition),
        ("account", &e.account),
        ("time-limit", &e.time_limit),
        ("shared-dir", &e.shared_dir),
    ];
    let word = |key: &str| key == "host" || key == "user";
    values.into_iter().find_map(|(key, v)| {
        let v = v.as_deref()?;
        let bad = v.starts_with('-')
            || v.chars().any(char::is_control)
            || (word(key) && (v.is_empty() || v.chars().any(char::is_whitespace)));
        bad.then(|| format!("executor.{key} = {v:?} is not a plain value"))
    })
}

/// The executor of a registered system, or None after recording why not.
fn executor(raw: &Loaded<RawSystems>, s: &RawSystem, p: &mut Problems) -> Option<Executor> {
    let e = &s.executor;
    let default_cost_seconds = e.default_cost_seconds.unwrap_or(60.0);
    let missing = |what: &str, kind: &Spanned<String>, p: &mut Problems| {
        p.push(
            raw.error_at(
                kind,
                format!("a {} executor needs `{what}`", kind.get_ref()),
            )
            .help(format!("set executor.{what} for system {}", s.id.get_ref())),
        );
    };
    let Some(kind) = &e.kind else {
        return Some(Executor::Local);
    };
    if let Some(bad) = unsafe_value(e) {
        p.push(raw.error_at(kind, bad).help(format!(
            "executor values of system {} reach ssh and sbatch command lines: write them without a leading `-`, control characters, or (in host and user) blanks",
            s.id.get_ref()
        )));
        return None;
    }
    match kind.get_ref().as_str() {
        "local" => Some(Executor::Local),
        "ssh" => {
            let (Some(host), Some(work_dir)) = (&e.host, &e.work_dir) else {
                missing(if e.host.is_none() { "host" } else { "work-dir" }, kind, p);
                return None;
            };
            Some(Executor::Ssh(SshExecutor {
                host: host.clone(),
                port: e.port,
                user: e.user.clone(),
                identity: e.identity.clone(),
                work_dir: work_dir.clone(),
                pqbench: e.pqbench.clone(),
                options: e.ssh_options.clone(),
                shards: e
                    .shards
                    .unwrap_or_else(|| s.cpus.as_ref().map_or(1, |c| c.len().max(1))),
                default_cost_seconds,
            }))
        }
        "slurm" => {
            let Some(shared_dir) = &e.shared_dir else {
                missing("shared-dir", kind, p);
                return None;
            };
            Some(Executor::Slurm(SlurmExecutor {
                partition: e.partition.clone(),
                account: e.account.clone(),
                time_limit: e.time_limit.clone(),
                shared_dir: shared_dir.clone(),
                environment: e.environment.clone(),
                shards: e.shards.unwrap_or(1),
                default_cost_seconds,
            }))
        }
        other => {
            p.push(
                raw.error_at(kind, format!("unknown executor `{other}`"))
                    .help("use local, ssh or slurm"),
            );
            None
        }
    }
}

/// Chooses the run's system among the campaign's: `wanted` (the command
/// line), else the first one this host runs natively, else the first.
pub(crate) fn choose(
    systems: &[SystemSpec],
    wanted: Option<&str>,
) -> Result<SystemSpec, ConfigError> {
    if let Some(w) = wanted {
        return systems.iter().find(|s| s.id == w).cloned().ok_or_else(|| {
            ConfigError::new(format!("the campaign has no system `{w}`")).help(format!(
                "choose one of: {}",
                systems
                    .iter()
                    .map(|s| s.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        });
    }
    let host = crate::host::environment();
    systems
        .iter()
        .find(|s| !s.emulated() && s.host_mismatch(host_arch(), &host.cpu_model).is_none())
        .or_else(|| systems.first())
        .cloned()
        .ok_or_else(|| ConfigError::new("the campaign names no system"))
}

/// Why a system may not pass pqbench's variable `name` to its toolchain
/// jobs (`toolchain.environment`), or None when it may: a name that is no
/// variable name, one the sandbox sets itself, one that makes the loader
/// or glibc load code of its choosing, or one naming a socket the job must
/// not learn of.
pub(crate) fn passed_variable_refused(name: &str) -> Option<&'static str> {
    let mut chars = name.chars();
    let well_formed = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !well_formed {
        return Some("is not a variable name (letters, digits and `_`, not starting with a digit)");
    }
    if ["PATH", "HOME", "TMPDIR", "LANG", "LC_ALL"].contains(&name) {
        return Some("is set by pqbench for every toolchain job (its own PATH, the C locale, HOME and TMPDIR in the job's scratch folder)");
    }
    if name.starts_with("LD_") || name == "GCONV_PATH" {
        return Some("would make the dynamic loader or glibc load code of its choosing into every program of the job");
    }
    if name.ends_with("_SOCK")
        || name.starts_with("SSH_")
        || name.starts_with("DBUS_")
        || name == "XDG_RUNTIME_DIR"
    {
        return Some("names a socket (an agent's, a session bus, the user's runtime folder) the job must not learn of");
    }
    None
}
