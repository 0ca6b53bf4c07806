//! Raw system registry (`campaigns/systems.toml`): every machine a campaign
//! may run on, registered once — its architecture, toolchain, how programs
//! run on it (natively or under a user-mode emulator), its measuring CPUs
//! and the host state measurements from it must come from.

use serde::Deserialize;
use toml::Spanned;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawSystems {
    #[serde(default, rename = "system")]
    pub systems: Vec<RawSystem>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawSystem {
    /// `<arch>_<n>` (e.g. `x86_1`, `arm_1`), or `local`.
    pub id: Spanned<String>,
    /// `x86_64` or `aarch64` (as `uname -m` says), or `any` for a native
    /// system that runs wherever pqbench runs (the demo's `local`).
    pub arch: Spanned<String>,
    #[serde(default)]
    pub description: String,
    /// Shown on the pages (e.g. "Intel i7-12700, one P-core at 2.1 GHz").
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub toolchain: RawToolchain,
    #[serde(default)]
    pub runner: RawRunner,
    /// Measuring CPUs (default: the campaign's, else the last allowed).
    #[serde(default)]
    pub cpus: Option<Vec<usize>>,
    #[serde(default)]
    pub host: RawExpectedHost,
    /// How the system's shards run: here, over SSH or through Slurm.
    #[serde(default)]
    pub executor: RawExecutor,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawExecutor {
    /// `local` (default), `ssh` or `slurm`.
    #[serde(default)]
    pub kind: Option<Spanned<String>>,
    /// How many shards a campaign is split into (default: the number of
    /// measuring CPUs for ssh, 1 for slurm).
    #[serde(default)]
    pub shards: Option<usize>,
    /// Seconds an instance with no earlier measurement is assumed to take.
    #[serde(default)]
    pub default_cost_seconds: Option<f64>,
    // ssh
    #[serde(default)]
    pub host: Option<String>,
    #[serde(default)]
    pub port: Option<u16>,
    #[serde(default)]
    pub user: Option<String>,
    /// Private key file (`ssh -i`); pqbench stores no credentials.
    #[serde(default)]
    pub identity: Option<String>,
    /// Remote directory for pqbench's files and the shards' projects.
    #[serde(default)]
    pub work_dir: Option<String>,
    /// A pqbench installed on the remote side, used when its architecture
    /// differs from this one (its version must equal this pqbench's).
    #[serde(default)]
    pub pqbench: Option<String>,
    /// Extra `ssh -o` options, e.g. `["StrictHostKeyChecking=no"]`.
    #[serde(default)]
    pub ssh_options: Vec<String>,
    // slurm
    #[serde(default)]
    pub partition: Option<String>,
    #[serde(default)]
    pub account: Option<String>,
    /// Time limit of one shard (`sbatch --time`), e.g. `"02:00:00"`.
    #[serde(default)]
    pub time_limit: Option<String>,
    /// A directory every node sees (the shards' projects and results).
    #[serde(default)]
    pub shared_dir: Option<String>,
    /// Environment given to `sbatch`/`squeue`/`scancel` (e.g. SLURM_CONF).
    #[serde(default)]
    pub environment: std::collections::BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawToolchain {
    /// The C compiler (default: `<cross-prefix>gcc`, else the campaign's).
    #[serde(default)]
    pub compiler: Option<Spanned<String>>,
    /// Prefix of a cross toolchain, e.g. `aarch64-linux-gnu-`.
    #[serde(default)]
    pub cross_prefix: Option<String>,
    /// The program and arguments that assemble plain assembly sources
    /// (`.s`, which no preprocessor reads) instead of the compiler: e.g.
    /// `["clang", "--target=aarch64-linux-gnu"]` for code written in the
    /// syntax of Apple's assembler (`ld1.2d`), which GNU as rejects.
    #[serde(default)]
    pub assembler: Option<Spanned<Vec<String>>>,
    /// Root of the target's libraries (the emulator's `-L`).
    #[serde(default)]
    pub sysroot: Option<String>,
    /// What one compiler, assembler, linker or build job may use.
    #[serde(default)]
    pub limits: Option<RawToolchainLimits>,
    /// Names of pqbench's environment variables every toolchain job of the
    /// system gets (values read at run time, never recorded), e.g.
    /// `["CCACHE_DISABLE", "SOURCE_DATE_EPOCH"]`.
    #[serde(default)]
    pub environment: Vec<Spanned<String>>,
}

/// `[system.toolchain.limits]`: each key left out keeps its default.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawToolchainLimits {
    #[serde(default)]
    pub memory_mib: Option<Spanned<u64>>,
    #[serde(default)]
    pub cpu_seconds: Option<Spanned<u64>>,
    #[serde(default)]
    pub file_mib: Option<Spanned<u64>>,
    #[serde(default)]
    pub processes: Option<Spanned<u64>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawRunner {
    /// `native` (default) or `emulator`.
    #[serde(default)]
    pub kind: Option<Spanned<String>>,
    /// The emulator command before the program, e.g.
    /// `["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"]`.
    #[serde(default)]
    pub command: Option<Vec<String>>,
    /// How the system is reached: `local` (this machine).
    #[serde(default)]
    pub reach: Option<Spanned<String>>,
}

/// What a host must show to be this system: measurements from any other
/// host are refused.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawExpectedHost {
    /// The CPU model as /proc/cpuinfo names it.
    #[serde(default)]
    pub cpu_model: Option<String>,
    /// Host fingerprints (as `campaign.json` records them) accepted.
    #[serde(default)]
    pub fingerprints: Vec<String>,
    /// Refuse to measure on a host that is not fixed (default: the
    /// campaign's `[host] require-fixed`).
    #[serde(default)]
    pub require_fixed: Option<bool>,
}
