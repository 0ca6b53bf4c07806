//! Raw campaign TOML (`campaigns/<name>.toml`).

use std::collections::BTreeMap;

use serde::Deserialize;
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
    /// The systems the campaign runs on (ids from `campaigns/systems.toml`),
    /// in the order the pages list them; `run --system` picks one.
    #[serde(default)]
    pub systems: Option<Vec<Spanned<String>>>,
    /// Algorithm ids or glob patterns over ids.
    pub algorithms: Vec<Spanned<String>>,
    /// Implementations to include (default: all).
    #[serde(default)]
    pub implementations: Option<Vec<String>>,
    /// Instances to include, as glob patterns over `<id>/<label>`
    /// (default: every instance of the selected algorithms).
    #[serde(default)]
    pub instances: Option<Vec<Spanned<String>>>,
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
    /// Another campaign (on the same system) whose measurements this one
    /// takes when that campaign holds one with the same inputs.
    #[serde(default)]
    pub reuse_measurements_from: Option<Spanned<String>>,
    /// Regular expressions over instances (`<id>/<label>` or the label):
    /// those instances are measured last, or on `--deferred-cpu`.
    #[serde(default)]
    pub defer: Vec<Spanned<String>>,
    /// `[count]`: the `count` stage's settings, which it reads and
    /// validates itself (`stages::count::CountSettings`), as a stage's
    /// `[stage.<name>]` table.
    #[serde(default)]
    pub count: Option<Spanned<toml::Table>>,
    /// `[ct]`: the `ct` stage's settings (`stages::ct::CtSettings`).
    #[serde(default)]
    pub ct: Option<Spanned<toml::Table>>,
    #[serde(default)]
    pub iccs: RawIccs,
    /// Tables of stages that own their settings (`[stage.<name>]`): the
    /// stage of that name validates its table.
    #[serde(default)]
    pub stage: BTreeMap<String, Spanned<toml::Table>>,
    /// `[matrix]`: compilers × flag profiles every instance is also built,
    /// KAT-checked and timed under.
    #[serde(default)]
    pub matrix: Option<RawMatrix>,
}

/// Stages whose settings are a table of their own name (`[count]`), not
/// `[stage.<name>]`.
pub const OWN_TABLES: [&str; 2] = ["count", "ct"];

/// The table that holds stage `name`'s settings, as the campaign writes it
/// (`count`, `stage.scan`).
pub fn settings_table(name: &str) -> String {
    if OWN_TABLES.contains(&name) {
        name.to_string()
    } else {
        format!("stage.{name}")
    }
}

impl RawCampaign {
    /// Every stage's settings table by stage name: the `[stage.<name>]`
    /// tables and those of `OWN_TABLES`.
    pub fn stage_tables(&self) -> impl Iterator<Item = (&str, &Spanned<toml::Table>)> {
        let own = [("count", &self.count), ("ct", &self.ct)];
        self.stage
            .iter()
            .filter(|(k, _)| !OWN_TABLES.contains(&k.as_str()))
            .map(|(k, t)| (k.as_str(), t))
            .chain(own.into_iter().filter_map(|(k, t)| Some((k, t.as_ref()?))))
    }
}

/// `[matrix] compilers = [...]`, `profiles = [...]`: the first of each is
/// the campaign's headline combination.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawMatrix {
    pub compilers: Vec<Spanned<String>>,
    pub profiles: Vec<Spanned<String>>,
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
    /// One key pair for all processes of an operation: auto, always, never.
    pub share_keys: Option<crate::records::settings::ShareKeys>,
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

/// `[profile]` of a campaign or an algorithm: the helper symbols to wrap
/// and the classes their time is shown under.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawProfile {
    /// Symbols to wrap (a campaign without any: the ICCS hash helpers and
    /// the DRNG, for NGCC-API instances).
    #[serde(default, rename = "wrap")]
    pub wraps: Option<Vec<RawWrap>>,
    /// Class name → column title: declares classes beyond `hash`, `xof`
    /// and `drng` (a wrap may name only a declared class, so a typo is an
    /// error, never a new share) and retitles those three.
    #[serde(default)]
    pub classes: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawWrap {
    /// A C symbol, where `{namespace}` stands for the instance's NIST
    /// namespace and `{randombytes}` for its randombytes symbol.
    pub symbol: Spanned<String>,
    /// `hash`, `xof`, `drng` or a class declared under `classes`: which
    /// share the time goes to.
    pub class: Spanned<String>,
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

pub use crate::records::settings::HelperClass;

impl std::fmt::Display for HelperClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
