//! The system a run belongs to, as registered and recorded.

use serde::{Deserialize, Serialize};

/// How programs run on a system.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Runner {
    Native,
    /// A user-mode emulator: functional checks only, never timings.
    Emulator {
        command: Vec<String>,
    },
}

/// Where a system's shards run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Executor {
    /// Here, in this process (shards on the measuring CPUs).
    Local,
    Ssh(SshExecutor),
    Slurm(SlurmExecutor),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SshExecutor {
    pub host: String,
    pub port: Option<u16>,
    pub user: Option<String>,
    pub identity: Option<String>,
    pub work_dir: String,
    /// A pqbench installed remotely (another architecture).
    pub pqbench: Option<String>,
    pub options: Vec<String>,
    pub shards: usize,
    pub default_cost_seconds: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlurmExecutor {
    pub partition: Option<String>,
    pub account: Option<String>,
    pub time_limit: Option<String>,
    pub shared_dir: String,
    pub environment: std::collections::BTreeMap<String, String>,
    pub shards: usize,
    pub default_cost_seconds: f64,
}

/// A registered system (or the implicit one of a campaign that names an
/// unregistered system: native, any architecture, no host constraints).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemSpec {
    pub id: String,
    /// `x86_64`, `aarch64`, or `any`.
    pub arch: String,
    pub description: String,
    pub title: Option<String>,
    /// The compiler the system prescribes (cross compilers), if any.
    pub compiler: Option<String>,
    /// The program (with its arguments) that assembles `.s` sources
    /// instead of the compiler, if the system names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assembler: Option<Vec<String>>,
    pub sysroot: Option<String>,
    /// `[system.toolchain.limits]`, when the system sets its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toolchain_limits: Option<crate::records::toolchain::ToolchainLimits>,
    /// `toolchain.environment`: the names of pqbench's variables its
    /// toolchain jobs get (never their values, which may be secrets).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub toolchain_environment: Vec<String>,
    pub runner: Runner,
    /// `local`: this machine.
    pub reach: String,
    pub cpus: Vec<usize>,
    pub cpu_model: Option<String>,
    pub fingerprints: Vec<String>,
    pub require_fixed: Option<bool>,
    /// Whether the registry names it.
    pub registered: bool,
    /// How this machine reaches the system: local configuration (hosts,
    /// keys, shared directories), never part of a published record.
    #[serde(skip_serializing, default = "local_executor")]
    pub executor: Executor,
}

fn local_executor() -> Executor {
    Executor::Local
}
