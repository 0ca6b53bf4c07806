//! Raw campaign TOML (`campaigns/<name>.toml`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::values;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawCampaign {
    #[serde(default)]
    pub description: String,
    /// The system this campaign runs on (`local`, `x86_1`, ...); a
    /// directory name under `output/<campaign>/`.
    #[serde(default = "default_system")]
    pub system: Spanned<String>,
    /// Human description of the system for the pages (e.g. "x86-64").
    #[serde(default)]
    pub system_title: Option<String>,
    /// Algorithm ids or glob patterns over ids.
    pub algorithms: Vec<Spanned<String>>,
    /// Implementations to include (default: all).
    #[serde(default)]
    pub implementations: Option<Vec<String>>,
    /// Flag profiles in fallback order.
    #[serde(default = "default_profiles")]
    pub flag_profiles: Vec<Spanned<String>>,
    /// Extra or replaced flag profiles.
    #[serde(default, rename = "flag-profile")]
    pub flag_profile_defs: BTreeMap<String, RawFlagProfile>,
    /// The C compiler (overridden by the `CC` environment variable).
    #[serde(default)]
    pub compiler: Option<String>,
    /// Parallel build/KAT jobs (0 = one per core).
    #[serde(default)]
    pub jobs: usize,
    /// Stages to run, in pipeline order (default: all).
    #[serde(default)]
    pub stages: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    pub kat: RawCampaignKat,
    #[serde(default)]
    pub timing: RawTiming,
    #[serde(default)]
    pub host: RawHost,
    #[serde(default)]
    pub limits: RawLimits,
    #[serde(default)]
    pub sizes: RawSizes,
    #[serde(default)]
    pub profile: RawProfile,
    #[serde(default)]
    pub render: RawRender,
    #[serde(default)]
    pub iccs: RawIccs,
}

/// `[iccs]`: the ICCS helpers measured as the baseline of hash candidates.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawIccs {
    /// The component (`algorithms/components/<name>.toml`) the helpers are
    /// built from (default `iccs-standin`).
    pub component: Option<Spanned<String>>,
    /// Measure the helpers when the campaign has hash candidates (default
    /// true).
    pub baseline: Option<bool>,
}

fn default_system() -> Spanned<String> {
    Spanned::new(0..0, "local".into())
}

fn default_profiles() -> Vec<Spanned<String>> {
    ["guide", "harness-default"]
        .iter()
        .map(|s| Spanned::new(0..0, s.to_string()))
        .collect()
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawFlagProfile {
    pub cflags: Vec<String>,
    #[serde(default)]
    pub ldflags: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawCampaignKat {
    /// Per-instance KAT timeout in seconds.
    #[serde(default, deserialize_with = "values::seconds")]
    pub timeout_seconds: Option<f64>,
    /// Override the records checked for every instance.
    #[serde(default, deserialize_with = "values::count_u32")]
    pub records: Option<u32>,
    /// Hash candidates also generate `KAT_2_33` (three 2^33-bit messages,
    /// about 1 GiB of memory).
    pub hash_full: Option<bool>,
    /// Hash candidates also generate `KAT_Loop` (10^6 chained hashes).
    pub hash_loop: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawTiming {
    #[serde(default, deserialize_with = "values::count_u32")]
    pub trials: Option<u32>,
    pub warmup: Option<u32>,
    /// Target duration of one trial, seconds.
    #[serde(default, deserialize_with = "values::seconds")]
    pub trial_seconds: Option<f64>,
    #[serde(default, deserialize_with = "values::count_u64")]
    pub min_iterations: Option<u64>,
    #[serde(default, deserialize_with = "values::count_u64")]
    pub max_iterations: Option<u64>,
    /// Timed calls wanted per operation where the budget allows.
    pub min_calls: Option<u64>,
    /// Time budget per operation (all trials), seconds.
    #[serde(default, deserialize_with = "values::seconds")]
    pub budget_seconds: Option<f64>,
    /// Keep per-call cycle samples in the records.
    pub samples: Option<bool>,
    /// Measuring CPU(s); the command line overrides.
    #[serde(default, deserialize_with = "values::cpus")]
    pub cpus: Option<Vec<usize>>,
    /// Timeout of one driver process, seconds.
    #[serde(default, deserialize_with = "values::seconds")]
    pub timeout_seconds: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawHost {
    /// Refuse to measure on a host that is not fixed (governor, turbo, SMT).
    pub require_fixed: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawLimits {
    /// Address-space limit of submission processes, MiB.
    #[serde(default, deserialize_with = "values::mib")]
    pub memory_mib: Option<u64>,
    /// CPU-time limit of one submission process, seconds.
    #[serde(default, deserialize_with = "values::count_u64")]
    pub cpu_seconds: Option<u64>,
    /// Largest file a submission process may write, MiB.
    #[serde(default, deserialize_with = "values::mib")]
    pub file_mib: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawSizes {
    /// External size catalog CSV (relative to the campaign file).
    pub catalog: Option<Spanned<String>>,
    /// Key-exchange size catalog
    /// `ID;Instance;PkABytes;PkBBytes;ProtocolMessageBytes`.
    pub kex_catalog: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawProfile {
    /// Symbols to wrap (default: the ICCS hash helpers and the DRNG).
    #[serde(default, rename = "wrap")]
    pub wraps: Option<Vec<RawWrap>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawWrap {
    pub symbol: Spanned<String>,
    /// `hash` or `drng`: which share the time goes to (any other word is
    /// an error, so a typo cannot move time into another share).
    pub class: HelperClass,
    /// 0-based index of the argument holding the input length in bits.
    #[serde(default, deserialize_with = "values::arg_index")]
    pub in_bits_arg: Option<u32>,
    /// 0-based index of the argument holding the output length in bits.
    #[serde(default, deserialize_with = "values::arg_index")]
    pub out_bits_arg: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawRender {
    /// Directory of templates overriding the built-in ones.
    pub templates: Option<Spanned<String>>,
}

/// What a wrapped helper is, for the shares on the pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HelperClass {
    /// Hashing and XOF helpers: the "hash share".
    Hash,
    /// The deterministic random number generator: the "DRNG share".
    Drng,
}

impl HelperClass {
    pub fn as_str(self) -> &'static str {
        match self {
            HelperClass::Hash => "hash",
            HelperClass::Drng => "drng",
        }
    }
}
