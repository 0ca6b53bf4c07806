//! Campaign settings as recorded in `campaign.json`, `build.json` and the
//! lock: timing plan, limits, helper wraps and classes, flag profiles,
//! constant-time annotations.

use serde::{Deserialize, Serialize};

use super::kinds::ApiFamily;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TimingSettings {
    pub trials: u32,
    pub warmup: u32,
    pub trial_seconds: f64,
    pub min_iterations: u64,
    pub max_iterations: u64,
    pub min_calls: u64,
    pub budget_seconds: f64,
    pub samples: bool,
    pub cpus: Vec<usize>,
    pub timeout_seconds: f64,
    /// Absent when `auto`, so campaigns that leave it keep their records.
    #[serde(default, skip_serializing_if = "ShareKeys::is_auto")]
    pub share_keys: ShareKeys,
}

/// Whether the processes that measure sign, verify, enc or dec share one
/// key pair made in a process of its own (`measure::keys`) instead of
/// each making its own in its set-up.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ShareKeys {
    /// When one key generation (keygen's calibration) costs at least
    /// `trial-seconds`: the set-ups would outweigh the calls they precede.
    #[default]
    Auto,
    Always,
    Never,
}

impl ShareKeys {
    fn is_auto(&self) -> bool {
        *self == ShareKeys::Auto
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Limits {
    pub memory_mib: u64,
    pub cpu_seconds: u64,
    pub file_mib: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Wrap {
    /// A C symbol; in a campaign's or algorithm's wraps it may hold
    /// `{namespace}` and `{randombytes}` (see `Plan::wraps_for`).
    pub symbol: String,
    pub class: HelperClass,
    pub in_bits_arg: Option<u32>,
    pub out_bits_arg: Option<u32>,
    /// Only instances of this API (the default profile's ICCS helpers
    /// belong to the NGCC API); None: every instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<ApiFamily>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlagProfile {
    pub name: String,
    pub cflags: Vec<String>,
    pub ldflags: Vec<String>,
    /// The `submitter` profile: `cflags` is pqbench's part, each
    /// implementation's own `submitter-cflags` follow it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub submitter: bool,
}

/// One combination of a campaign's `[matrix]`: a compiler and a flag
/// profile every instance is built, KAT-checked and timed under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Combination {
    /// `<compiler>.<profile>`: its column on the pages and its dataset's
    /// name among the campaign's further datasets.
    pub name: String,
    /// The compiler command as the campaign names it.
    pub compiler: String,
    pub profile: String,
    /// The campaign's headline combination: its figures are the dataset's
    /// own, not a folder under `matrix/`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub primary: bool,
}

/// The title of the ICCS placeholder hash functions' class in the default
/// profile (as the published pages head the column).
pub const ICCS_HASH_TITLE: &str = "pseudohash/XOF/sm3";

/// A helper class with its column title.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassDef {
    pub name: HelperClass,
    pub title: String,
}

/// What a wrapped helper is, for the shares on the pages: `hash`, `xof`,
/// `drng`, or a class a campaign or algorithm declares. Every class but
/// `drng` counts toward the "hash share" of summaries.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct HelperClass(String);

impl HelperClass {
    /// The built-in classes and their default column titles.
    pub(crate) const BUILTIN: [(&'static str, &'static str); 3] =
        [("hash", "hash"), ("xof", "XOF"), ("drng", "DRNG")];

    /// A class by name (names are checked where they are configured).
    pub fn new(name: impl Into<String>) -> HelperClass {
        HelperClass(name.into())
    }

    pub(crate) fn hash() -> HelperClass {
        HelperClass::new("hash")
    }

    pub(crate) fn drng() -> HelperClass {
        HelperClass::new("drng")
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The deterministic random number generator's class: its share is
    /// the "DRNG share", every other class's goes to the "hash share".
    pub fn is_drng(&self) -> bool {
        self.0 == "drng"
    }

    pub(crate) fn builtin_title(&self) -> Option<&'static str> {
        Self::BUILTIN
            .iter()
            .find(|(n, _)| *n == self.0)
            .map(|(_, t)| *t)
    }

    /// Class names are short lower-case words: `[a-z][a-z0-9-]*`, at most
    /// 32 characters (they go into C string literals and record keys).
    pub(crate) fn check_name(name: &str) -> Result<(), String> {
        let ok = name.len() <= 32
            && name.starts_with(|c: char| c.is_ascii_lowercase())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if ok {
            Ok(())
        } else {
            Err(format!(
                "class name `{name}` is not a lower-case word (letters, digits and -, at most 32)"
            ))
        }
    }
}

/// A `[[ct-annotation]]`: sites matching `site` (of the instances `labels`
/// matches, in `ops`) are expected, for `reason`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CtAnnotation {
    pub site: String,
    pub reason: String,
    /// Regular expression over labels; None: every instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<String>,
    /// Empty: every operation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ops: Vec<String>,
}
