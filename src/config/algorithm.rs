//! Raw algorithm and component TOML, as written by users.
//!
//! These structs only describe the file format; `plan::resolve` turns them
//! into validated instances. Keys are kebab-case and unknown keys are errors.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::values;

pub use crate::records::kinds::Kind;

pub use crate::records::kinds::ApiFamily;

impl ApiFamily {
    pub fn as_str(self) -> &'static str {
        match self {
            ApiFamily::Ngcc => "ngcc",
            ApiFamily::Nist => "nist",
        }
    }
}

/// `algorithms/<id>.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawAlgorithm {
    pub id: Spanned<String>,
    pub name: String,
    pub kind: Kind,
    pub api: ApiFamily,
    #[serde(default)]
    pub description: String,
    /// Links shown on the page ("Security evaluation", "Submission").
    #[serde(default)]
    pub links: BTreeMap<String, String>,
    /// Shared components (`algorithms/components/<name>.toml`) compiled into
    /// every instance.
    #[serde(default)]
    pub uses: Vec<Spanned<String>>,
    #[serde(default)]
    pub ngcc: Option<RawNgcc>,
    #[serde(default)]
    pub nist: Option<RawNist>,
    /// KEX only: names of API functions where the submission deviates.
    #[serde(default)]
    pub kex: Option<RawKex>,
    #[serde(default, rename = "implementation")]
    pub implementations: Vec<RawImplementation>,
    #[serde(default, rename = "parameter-set")]
    pub parameter_sets: Vec<RawParameterSet>,
    #[serde(default)]
    pub kat: RawKat,
    #[serde(default, rename = "known-issue")]
    pub known_issues: Vec<RawKnownIssue>,
    /// Constant-time sites expected by design, with the reason.
    #[serde(default, rename = "ct-annotation")]
    pub ct_annotations: Vec<super::exact::RawCtAnnotation>,
    /// Free text shown beside the survey verdict.
    #[serde(default)]
    pub survey_note: Option<String>,
    /// Helper symbols of this algorithm to profile, beyond the campaign's.
    #[serde(default)]
    pub profile: super::campaign::RawProfile,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawNgcc {
    /// Headers declaring the API and the DRNG, force-included into the
    /// adapter (searched in the include dirs).
    pub headers: Vec<String>,
}

/// `[kex]` of a key-exchange algorithm.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawKex {
    /// The NGCC name of a function → the name the submission uses, e.g.
    /// `kex_get_sta_len_bytes = "kex_get_sta_len_bytes_initiator"`.
    #[serde(default)]
    pub names: BTreeMap<String, Spanned<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum LengthType {
    #[default]
    UnsignedLongLong,
    SizeT,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum KatRng {
    /// pqbench's own AES-256 CTR_DRBG behind the randomness symbol.
    #[default]
    Builtin,
    /// The submission's own NIST `rng.c` (must be among its sources).
    Submission,
}

/// How the submission's KAT RNG init function takes its seed: the classic
/// NIST `rng.c` form `(entropy, personalization, strength)`, or one of the
/// shorter forms public trees ship.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum InitArgs {
    /// `init(entropy48, NULL, 256)`.
    #[default]
    Classic,
    /// `init(entropy48)`.
    Entropy,
    /// `init(entropy, 48)`.
    EntropyLength,
    /// `init(entropy48, NULL)`.
    EntropyPersonalization,
}

impl InitArgs {
    pub fn as_str(self) -> &'static str {
        match self {
            InitArgs::Classic => "classic",
            InitArgs::Entropy => "entropy",
            InitArgs::EntropyLength => "entropy-length",
            InitArgs::EntropyPersonalization => "entropy-personalization",
        }
    }
}

/// The signature API of a NIST-API signature: the five-argument
/// `crypto_sign(sm, smlen, m, mlen, sk)` of the NIST PQC call, or the
/// FIPS 204 / FIPS 205 form with a context string after the message
/// (`crypto_sign(sm, smlen, m, mlen, ctx, ctxlen, sk)`, and likewise
/// `crypto_sign_open`), which pqbench calls with the empty context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SignatureApi {
    #[default]
    Classic,
    Fips204Context,
}

impl SignatureApi {
    pub fn as_str(self) -> &'static str {
        match self {
            SignatureApi::Classic => "classic",
            SignatureApi::Fips204Context => "fips204-context",
        }
    }

    /// The default form, left out of serialised plans so that their bytes
    /// (and every key derived from them) stay as they were.
    pub fn is_classic(&self) -> bool {
        *self == SignatureApi::Classic
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawNist {
    #[serde(default = "default_api_header")]
    pub header: String,
    /// Prefix of every function and `CRYPTO_` macro; a parameter set may
    /// override it.
    #[serde(default)]
    pub namespace: String,
    /// Tail of every API function name (`crypto_kem_keypair_Frodo640`:
    /// `_Frodo640`), for code whose functions, not macros, carry the
    /// parameter set; a parameter set may override it.
    #[serde(default)]
    pub suffix: String,
    /// The symbol the code calls for randomness.
    #[serde(default = "default_randombytes")]
    pub randombytes: String,
    #[serde(default)]
    pub lengths: LengthType,
    #[serde(default)]
    pub kat_rng: KatRng,
    /// With `kat-rng = "submission"`: the symbol seeding the submission's
    /// RNG (default `randombytes_init`).
    #[serde(default)]
    pub randombytes_init: Option<Spanned<String>>,
    /// With `kat-rng = "submission"`: how that function takes its seed.
    #[serde(default)]
    pub randombytes_init_args: Option<InitArgs>,
    /// Signatures only: which form of `crypto_sign` and `crypto_sign_open`
    /// the code defines.
    #[serde(default)]
    pub signature_api: Option<Spanned<SignatureApi>>,
}

fn default_api_header() -> String {
    "api.h".into()
}

fn default_randombytes() -> String {
    "randombytes".into()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawImplementation {
    pub name: Spanned<String>,
    /// Source root, relative to the TOML file.
    pub root: Spanned<String>,
    /// Files or glob patterns relative to the root.
    #[serde(default = "default_sources")]
    pub sources: Vec<Spanned<String>>,
    #[serde(default)]
    pub exclude: Vec<String>,
    #[serde(default)]
    pub include_dirs: Vec<Spanned<String>>,
    #[serde(default)]
    pub defines: BTreeMap<String, DefineValue>,
    /// CPU features the code needs (`avx2`, `aes`, ...): compiled with the
    /// matching `-m` flag and skipped on hosts without them.
    #[serde(default)]
    pub cpu_features: Vec<String>,
    /// System libraries the code links (`crypto` for OpenSSL's libcrypto:
    /// `-lcrypto`), found where the compiler finds them.
    #[serde(default)]
    pub libraries: Vec<Spanned<String>>,
    /// Architectures the code is written for (`aarch64` for NEON code,
    /// `x86_64` for AVX2 assembly); on a system of another architecture the
    /// implementation is skipped with that reason. Empty: portable.
    #[serde(default)]
    pub arch: Vec<String>,
    /// The compiler flags of the implementation's own build (its Makefile
    /// or CMake file), used by the campaign's `submitter` flag profile.
    #[serde(default)]
    pub submitter_cflags: Option<Vec<String>>,
    /// NIST namespace of this implementation's symbols and macros
    /// (overrides `[nist] namespace`; a parameter set's overrides both).
    #[serde(default)]
    pub namespace: Option<String>,
    /// Shared components compiled into this implementation's instances
    /// only (with its flags), after the algorithm's own `uses`.
    #[serde(default)]
    pub uses: Vec<Spanned<String>>,
    /// Opt-in to run the submission's own CMake project instead of
    /// compiling the source list directly.
    #[serde(default)]
    pub cmake: Option<RawCmake>,
    /// Flags some files get beyond the implementation's: the AVX2 file of
    /// a library that chooses its code at run time.
    #[serde(default, rename = "unit")]
    pub units: Vec<RawUnit>,
}

/// `[[implementation.unit]]`: what the files its patterns select are
/// compiled with beyond the implementation's flags.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawUnit {
    /// Files or glob patterns relative to the instance's root; each must
    /// select one of its sources.
    pub sources: Vec<Spanned<String>>,
    /// Each becomes `-m<feature>` for these files only. Unlike the
    /// implementation's, they do not skip a host without them: a library
    /// that compiles an AVX2 file beside a portable one checks the CPU
    /// before it calls it.
    #[serde(default)]
    pub cpu_features: Vec<String>,
    #[serde(default)]
    pub defines: BTreeMap<String, DefineValue>,
}

fn default_sources() -> Vec<Spanned<String>> {
    vec![Spanned::new(0..0, "*.c".to_string())]
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawCmake {
    /// The CMake target producing a static library of the scheme.
    pub target: String,
    #[serde(default)]
    pub options: BTreeMap<String, String>,
}

/// A define's value: `NAME = 16`, `NAME = "x"`, or `NAME = true` (bare -DNAME).
/// Deserialized by hand so a wrong value says which forms a define takes.
#[derive(Debug, Clone)]
pub enum DefineValue {
    Int(i64),
    Bool(bool),
    Text(String),
}

impl<'de> Deserialize<'de> for DefineValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DefineVisitor)
    }
}

struct DefineVisitor;

impl serde::de::Visitor<'_> for DefineVisitor {
    type Value = DefineValue;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an integer, a string, or true/false (true: bare -DNAME, false: not defined)")
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<DefineValue, E> {
        Ok(DefineValue::Int(v))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<DefineValue, E> {
        i64::try_from(v)
            .map(DefineValue::Int)
            .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(v), &self))
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<DefineValue, E> {
        Ok(DefineValue::Bool(v))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<DefineValue, E> {
        Ok(DefineValue::Text(v.to_string()))
    }
}

impl DefineValue {
    /// The `-D` argument for this define, or None when `false` (not defined).
    pub(crate) fn flag(&self, name: &str) -> Option<String> {
        match self {
            DefineValue::Int(v) => Some(format!("-D{name}={v}")),
            DefineValue::Bool(true) => Some(format!("-D{name}")),
            DefineValue::Bool(false) => None,
            DefineValue::Text(v) => Some(format!("-D{name}={v}")),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawParameterSet {
    pub label: Spanned<String>,
    #[serde(default)]
    pub defines: BTreeMap<String, DefineValue>,
    /// NIST namespace for this set (overrides `[nist] namespace`).
    #[serde(default)]
    pub namespace: Option<String>,
    /// NIST function-name suffix for this set (overrides `[nist] suffix`).
    #[serde(default)]
    pub suffix: Option<String>,
    /// NIST API header for this set (overrides `[nist] header`), for code
    /// with one header per set (`api_frodo640.h`).
    #[serde(default)]
    pub header: Option<Spanned<String>>,
    /// Restrict to these implementations (default: all).
    #[serde(default)]
    pub implementations: Option<Vec<String>>,
    /// Replace the implementation's source root (relative to the TOML),
    /// for submissions with one folder per parameter set.
    #[serde(default)]
    pub root: Option<Spanned<String>>,
    #[serde(default)]
    pub sources: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    pub exclude: Option<Vec<String>>,
    #[serde(default)]
    pub include_dirs: Option<Vec<Spanned<String>>>,
    /// KAT records to check for this set (slow sets may check fewer).
    #[serde(default, deserialize_with = "values::count_u32")]
    pub kat_records: Option<u32>,
    /// Hash only: the digest width of this instance, in bits.
    #[serde(default, deserialize_with = "values::count_u32")]
    pub digest_bits: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawKat {
    /// Manifest of reference digests; default `kat/<id>/kat.sha256` under
    /// the project root.
    #[serde(default)]
    pub manifest: Option<Spanned<String>>,
    /// Directory holding reference files named in the manifest.
    #[serde(default)]
    pub reference_dir: Option<Spanned<String>>,
    /// Records to generate (default: 100 for NIST, 10 for NGCC).
    #[serde(default, deserialize_with = "values::count_u32")]
    pub records: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IssueAction {
    /// Still timed, marked with its cause.
    Measure,
    /// Not timed.
    Exclude,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawKnownIssue {
    /// Regular expression over instance labels.
    pub labels: Spanned<String>,
    pub action: IssueAction,
    pub cause: String,
}

/// `algorithms/components/<name>.toml`: sources shared by many algorithms,
/// such as the ICCS hash and DRNG helpers.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawComponent {
    pub name: Spanned<String>,
    #[serde(default)]
    pub description: String,
    pub root: Spanned<String>,
    #[serde(default = "default_sources")]
    pub sources: Vec<Spanned<String>>,
    #[serde(default)]
    pub exclude: Vec<String>,
    #[serde(default)]
    pub include_dirs: Vec<Spanned<String>>,
    #[serde(default)]
    pub defines: BTreeMap<String, DefineValue>,
}
