//! The validated plan every stage receives.
//!
//! Raw TOML is turned into a `Plan` exactly once (`resolve`); from then on
//! paths are absolute and checked, globs are expanded, defaults applied and
//! every instance is fully described. The plan is serde so it can go into
//! lock files and tests can build one by hand.

mod algorithm;
mod campaign_profiles;
mod component;
mod deferral;
pub(crate) mod exact;
pub(crate) mod flags;
pub(crate) mod iccs;
pub(crate) mod kinds;
pub(crate) mod matrix;
pub(crate) mod names;
mod paths;
mod problems;
mod profile;
mod project;
pub(crate) mod recorded;
mod resolve;
mod rules;
mod sharing;
pub mod system;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use crate::config::algorithm::{
    ApiFamily, InitArgs, IssueAction, KatRng, Kind, LengthType, SignatureApi,
};
pub use crate::config::campaign::HelperClass;
pub(crate) use algorithm::{check_algorithm, Selection};
pub(crate) use problems::Problems;
pub use profile::{ClassDef, ICCS_HASH_TITLE};
pub use project::Project;
pub use resolve::{resolve, resolve_with, resolve_with_stages, ResolveOptions};
pub(crate) use system::{Runner, SystemSpec};

/// The entry of `Plan::stages` that selects every registered stage (a
/// campaign without `stages`).
pub(crate) const ALL_STAGES: &str = "*";

/// What a campaign writes in `stages` for every stage that is not opt-in
/// (becomes `ALL_STAGES` in the plan): `stages = ["default", "count", "ct"]`.
pub(crate) const DEFAULT_STAGES: &str = "default";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Plan {
    pub campaign: String,
    pub description: String,
    /// The system this run belongs to (its id), and its registration.
    pub system: String,
    pub system_title: Option<String>,
    pub system_spec: SystemSpec,
    /// Every system of the campaign, in the order the pages list them.
    pub systems: Vec<String>,
    /// The system prescribes the compiler (a cross compiler): `CC` from the
    /// environment does not override it.
    pub compiler_from_system: bool,
    pub project_root: PathBuf,
    pub campaign_file: PathBuf,
    /// `output/<campaign>/<system>`: records of this run.
    pub output_dir: PathBuf,
    /// `output/<campaign>/site`: rendered pages of every system.
    pub site_dir: PathBuf,
    /// `output/.cache`: content-addressed stage results and artifacts.
    pub cache_dir: PathBuf,
    /// The C compiler command as configured (before `CC` resolution).
    pub compiler: String,
    pub jobs: usize,
    /// The stages the campaign selects (names from the stage registry, or
    /// `*` for all); the registry adds what they require.
    pub stages: Vec<String>,
    /// Where each entry of `stages` was written, for error messages.
    #[serde(skip)]
    pub stage_locations: Vec<Option<crate::error::Location>>,
    /// The campaign's `[stage.<name>]` tables, by stage name: each stage
    /// reads and validates its own (`engine::Stage::Settings`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub stage_settings: BTreeMap<String, serde_json::Value>,
    /// Where each of those tables was written, for error messages.
    #[serde(skip)]
    pub stage_settings_at: BTreeMap<String, crate::error::Location>,
    pub flag_profiles: Vec<FlagProfile>,
    pub kat: KatSettings,
    pub timing: TimingSettings,
    pub host: HostSettings,
    pub limits: Limits,
    pub sizes_catalog: Option<PathBuf>,
    /// The campaign whose measurements this one takes (on the same system)
    /// when that campaign vouches for one with the same inputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reuse_measurements_from: Option<String>,
    /// The campaign's wraps (the default profile's when it declares none);
    /// `wraps_for` gives an instance's.
    /// `ID;Instance;PkABytes;PkBBytes;ProtocolMessageBytes` for KEX sizes.
    #[serde(default)]
    pub kex_catalog: Option<PathBuf>,
    pub profile_wraps: Vec<Wrap>,
    /// Helper classes the campaign declares or retitles.
    #[serde(default)]
    pub profile_classes: Vec<ClassDef>,
    pub templates: Option<PathBuf>,
    pub algorithms: Vec<Algorithm>,
    pub instances: Vec<Instance>,
    /// Keys (`<id>/<label>`) of the instances `defer` selects: measured
    /// after every other instance, or on `--deferred-cpu`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deferred: Vec<String>,
    /// `[matrix]`: further compilers and flag profiles every instance is
    /// built, checked and timed under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix: Option<matrix::Matrix>,
    /// The further dataset this plan makes (a matrix combination, or
    /// another dimension's value); None for a campaign's own plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child: Option<crate::records::campaign::ChildDataset>,
}

impl Plan {
    pub fn algorithm(&self, id: &str) -> Option<&Algorithm> {
        self.algorithms.iter().find(|a| a.id == id)
    }

    /// A path relative to the project root, for display and records.
    pub fn display_path(&self, path: &std::path::Path) -> String {
        path.strip_prefix(&self.project_root)
            .unwrap_or(path)
            .display()
            .to_string()
    }
}

pub use crate::records::settings::FlagProfile;

impl FlagProfile {
    /// The built-in profiles: the evaluation guide's uniform flags, and the
    /// harness default used when a submission does not build or pass its KAT
    /// under the guide's strict C99.
    pub(crate) fn builtin(name: &str) -> Option<FlagProfile> {
        let cflags: &[&str] = match name {
            "guide" => &[
                "-std=c99",
                "-Wpedantic",
                "-Wall",
                "-Wextra",
                "-O2",
                "-fPIC",
                "-D_GNU_SOURCE",
                "-Wno-error",
            ],
            "harness-default" => &["-std=gnu11", "-O2", "-fPIC", "-D_GNU_SOURCE", "-w"],
            // The guide's flags but for optimisation and target: what the
            // uniform profile costs a submission. `-march=native` is built
            // as what it resolves to on the build host.
            "o3-native" => &[
                "-std=c99",
                "-Wpedantic",
                "-Wall",
                "-Wextra",
                "-O3",
                "-march=native",
                "-fPIC",
                "-D_GNU_SOURCE",
                "-Wno-error",
            ],
            // The library is shared, whatever the submission's build makes.
            SUBMITTER => &["-fPIC"],
            _ => return None,
        };
        Some(FlagProfile {
            name: name.to_string(),
            cflags: cflags.iter().map(|s| s.to_string()).collect(),
            ldflags: Vec::new(),
            submitter: name == SUBMITTER,
        })
    }

    /// This profile as `inst` is built with it: the submitter profile
    /// gains the implementation's own flags, and does not apply to an
    /// implementation that declares none.
    pub(crate) fn for_instance(&self, inst: &Instance) -> Option<FlagProfile> {
        if !self.submitter {
            return Some(self.clone());
        }
        let own = inst.submitter_cflags.as_ref()?;
        let mut p = self.clone();
        p.cflags.extend(own.iter().cloned());
        Some(p)
    }
}

/// The built-in profile made of each implementation's own build flags.
pub(crate) const SUBMITTER: &str = "submitter";

impl Plan {
    /// The campaign's flag profiles as `inst` is built with them, in order
    /// of preference.
    pub(crate) fn profiles_for(&self, inst: &Instance) -> Vec<FlagProfile> {
        self.flag_profiles
            .iter()
            .filter_map(|p| p.for_instance(inst))
            .collect()
    }

    /// The profile `name` as `inst` is built with it.
    pub(crate) fn profile_for(&self, inst: &Instance, name: &str) -> Option<FlagProfile> {
        self.flag_profiles
            .iter()
            .find(|p| p.name == name)
            .and_then(|p| p.for_instance(inst))
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KatSettings {
    pub timeout_seconds: f64,
    pub records_override: Option<u32>,
    /// Hash candidates also generate `KAT_2_33`.
    #[serde(default)]
    pub hash_full: bool,
    /// Hash candidates also generate `KAT_Loop`.
    #[serde(default)]
    pub hash_loop: bool,
}

impl KatSettings {
    /// The hash KAT files every hash instance generates, in order.
    pub(crate) fn hash_files(&self) -> Vec<&'static str> {
        let mut v = vec!["KAT_2_12", "KAT_2_23"];
        if self.hash_full {
            v.push("KAT_2_33");
        }
        if self.hash_loop {
            v.push("KAT_Loop");
        }
        v
    }
}

pub use crate::records::settings::{ShareKeys, TimingSettings};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostSettings {
    pub require_fixed: bool,
}

pub use crate::records::settings::Limits;

pub use crate::records::settings::Wrap;

impl Wrap {
    /// The ICCS helpers, for NGCC-API instances: hash(out_bits, msg,
    /// msg_bits, out) and get_random_number(ctx, out, len_bits).
    pub(crate) fn iccs_defaults() -> Vec<Wrap> {
        let hash = |s: &str| Wrap {
            symbol: s.into(),
            class: HelperClass::hash(),
            in_bits_arg: Some(2),
            out_bits_arg: Some(0),
            api: Some(ApiFamily::Ngcc),
        };
        vec![
            hash("pseudohash"),
            hash("pseudoXOF"),
            hash("sm3hash"),
            Wrap {
                symbol: "get_random_number".into(),
                class: HelperClass::drng(),
                in_bits_arg: None,
                out_bits_arg: Some(2),
                api: Some(ApiFamily::Ngcc),
            },
        ]
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Algorithm {
    pub id: String,
    pub name: String,
    pub kind: Kind,
    pub api: ApiFamily,
    pub description: String,
    pub links: BTreeMap<String, String>,
    /// The TOML file, relative to the project root.
    pub toml: String,
    pub known_issues: Vec<KnownIssue>,
    /// Expected constant-time sites, with their reasons.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ct_annotations: Vec<exact::CtAnnotation>,
    pub survey_note: Option<String>,
    pub kat_manifest: PathBuf,
    pub kat_reference_dir: Option<PathBuf>,
    pub implementations: Vec<String>,
    pub labels: Vec<String>,
    /// The algorithm's own `[[profile.wrap]]`s and declared classes.
    #[serde(default)]
    pub profile_wraps: Vec<Wrap>,
    #[serde(default)]
    pub profile_classes: Vec<ClassDef>,
}

impl Algorithm {
    /// The known issues whose label pattern matches `label`.
    pub(crate) fn issues_for(&self, label: &str) -> Vec<&KnownIssue> {
        self.known_issues
            .iter()
            .filter(|k| {
                regex::Regex::new(&format!("^(?:{})$", k.labels))
                    .map(|r| r.is_match(label))
                    .unwrap_or(false)
            })
            .collect()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KnownIssue {
    pub labels: String,
    pub action: IssueAction,
    pub cause: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SourceFile {
    pub path: PathBuf,
    /// Relative to the project root.
    pub display: String,
    /// CPU features of this file only (`[[implementation.unit]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_features: Vec<String>,
    /// `-D` flags of this file only, after the instance's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub defines: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "family", rename_all = "kebab-case")]
pub enum Binding {
    Ngcc {
        headers: Vec<String>,
    },
    Nist {
        header: String,
        namespace: String,
        /// Tail of the API function names (not of the macros).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        suffix: String,
        randombytes: String,
        lengths: LengthType,
        kat_rng: KatRng,
        /// How the submission's own RNG is seeded (`kat_rng` submission only).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rng_init: Option<RngInit>,
        /// A signature's `crypto_sign`/`crypto_sign_open` form (signatures
        /// only; the classic one is not written).
        #[serde(default, skip_serializing_if = "SignatureApi::is_classic")]
        signature_api: SignatureApi,
    },
}

/// The submission's KAT RNG seeding function and its argument shape.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RngInit {
    pub symbol: String,
    pub args: InitArgs,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Instance {
    pub algorithm: String,
    pub label: String,
    pub implementation: String,
    pub kind: Kind,
    pub api: ApiFamily,
    pub sources: Vec<SourceFile>,
    pub include_dirs: Vec<PathBuf>,
    /// `-D` flags, in a stable order.
    pub defines: Vec<String>,
    pub binding: Binding,
    pub cpu_features: Vec<String>,
    /// System libraries linked (`-l<name>`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub libraries: Vec<String>,
    /// Architectures the implementation is written for (empty: any).
    #[serde(default)]
    pub arch: Vec<String>,
    /// The flags of the implementation's own build, for the `submitter`
    /// profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submitter_cflags: Option<Vec<String>>,
    pub kat_records: u32,
    pub cmake: Option<CmakeSpec>,
    /// What a KEX or hash instance needs beyond its binding.
    #[serde(default, skip_serializing_if = "KindSpec::is_empty")]
    pub spec: KindSpec,
}

/// The kind-specific part of an instance: a hash's digest width, a KEX's
/// renamed API functions, and for the ICCS baseline the helper it wraps.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KindSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest_bits: Option<u32>,
    /// NGCC name → the submission's name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub kex_names: BTreeMap<String, String>,
    /// ICCS baseline instances: `sm3hash`, `pseudohash` or `pseudoXOF`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iccs_helper: Option<String>,
}

impl KindSpec {
    pub(crate) fn is_empty(&self) -> bool {
        *self == KindSpec::default()
    }
}

impl Instance {
    /// `<id>/<label>`, the instance's name in logs and paths.
    pub fn key(&self) -> String {
        format!("{}/{}", self.algorithm, self.label)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CmakeSpec {
    pub root: PathBuf,
    pub target: String,
    pub options: BTreeMap<String, String>,
}
