//! What each kind of submission is, one file per kind: its operations, the
//! API symbols and adapter defines it builds with, its KAT files, its size
//! fields, how its pages present it and how an imported tree is recognised
//! as one. `Kind::def` is the one place that maps the published enum
//! (`records::kinds::Kind`) to these definitions; everything else asks the
//! definition instead of matching on the kind.
//!
//! Where pages differ in shape rather than in strings (sizes per protocol
//! role, a table by message size, step notes), a kind returns a small data
//! enum and the renderer matches on that, so the renderer never names a
//! kind.

mod hash;
mod kem;
mod kex;
mod sign;

use std::collections::BTreeMap;

pub(crate) use crate::records::kinds::{ApiFamily, Kind};

pub use hash::{hash_bytes, HASH_OPERATIONS, HASH_SIZES};
pub use kex::{
    is_kex_operation, is_kex_step, kex_api_names, kex_operations, kex_pass, kex_pass_name,
    KEX_MAX_PASSES, KEX_OPERATIONS,
};

/// One size figure of a signature or KEM: the page's column title, the
/// KAT driver's API key and observed-maximum key, and the time record's
/// length key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SizeField {
    pub(crate) name: &'static str,
    pub(crate) api_key: &'static str,
    pub(crate) kat_key: &'static str,
    pub(crate) time_key: &'static str,
}

/// Which sizes a kind publishes and where their columns come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sizes {
    /// The same fields for every instance, in column order.
    Fixed(&'static [SizeField]),
    /// One column per protocol message and role, from the dataset (KEX).
    PerRole,
    /// A digest only, not shown as a size table (hash).
    Digest,
}

/// The algorithm page's chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Chart {
    /// One bar per operation.
    Operations,
    /// Bars of the operations the protocol has (steps vary with passes).
    Steps,
    /// Lines of cycles/byte over message size.
    ByMessageSize,
}

/// What the page says below the performance table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PageNotes {
    None,
    /// A fixed sentence.
    Fixed(&'static str),
    /// The step-timing notes computed from the dataset (KEX).
    Steps,
}

/// The system summary's section for a kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Summary {
    /// A table of operation means with these size columns.
    Operations {
        heading: &'static str,
        sizes: &'static [&'static str],
    },
    /// The key-exchange section (whole exchange, steps).
    Exchange,
    /// The hash sections (by message size, and the ICCS baseline).
    ByMessageSize,
}

/// How a kind's outputs are checked across processes (`stages::kat_trip`):
/// each step is a fresh process given only the bytes another made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RoundTrip {
    /// Verify the KAT record's signature, sign its message anew, verify
    /// that signature.
    Signature,
    /// Decapsulate the KAT record's ciphertext, encapsulate to its public
    /// key anew, decapsulate that ciphertext.
    Encapsulation,
    /// Derive the KAT record's secret from its keys, final states and
    /// messages; run a whole protocol anew from its key pairs, each
    /// party's pass and derivation in a process of its own.
    Exchange,
}

/// What the adapter build of one instance needs to know beyond its kind.
pub(crate) struct AdapterInput<'a> {
    pub(crate) digest_bits: Option<u32>,
    /// NGCC names the submission renames (`[kex] names`).
    pub(crate) renames: &'a BTreeMap<String, String>,
    /// The instance is an ICCS baseline helper.
    pub(crate) iccs_baseline: bool,
    /// A NIST-API signature whose `crypto_sign` and `crypto_sign_open`
    /// take a context string (FIPS 204, FIPS 205).
    pub(crate) sign_context: bool,
}

impl AdapterInput<'_> {
    /// The NGCC name `std` as the submission spells it.
    pub(crate) fn renamed(&self, std: &str) -> String {
        self.renames
            .get(std)
            .cloned()
            .unwrap_or_else(|| std.to_string())
    }
}

/// Everything kind-specific. Defaults describe the common case (a
/// public-key algorithm on both API families, every operation counted,
/// profiled and checked), so a kind states only where it differs.
pub(crate) trait KindDef: Sync {
    /// The name in algorithm files and records (`kind = "..."`).
    fn name(&self) -> &'static str;

    /// Every operation, in the order records and pages list them.
    fn operations(&self) -> &'static [&'static str];

    /// The operations one instance has (`passes`: a KEX's pass count).
    fn instance_operations(&self, _passes: Option<u32>) -> Vec<&'static str> {
        self.operations().to_vec()
    }

    /// Whether the profile stage profiles `op`.
    fn profiles(&self, _op: &str) -> bool {
        true
    }

    /// Whether any operation is profiled (the profile stages run at all).
    fn profiled(&self) -> bool {
        true
    }

    /// Whether the count stage counts `op`.
    fn counts(&self, _op: &str) -> bool {
        true
    }

    /// Whether the constant-time check applies (it needs a secret input).
    fn ct_checked(&self) -> bool {
        true
    }

    /// A public-key algorithm: surveyed for the symmetric primitives it
    /// reaches, and its page has that section.
    fn public_key(&self) -> bool {
        true
    }

    /// The kind exists on the NGCC API only.
    fn ngcc_only(&self) -> bool {
        false
    }

    /// Parameter sets declare `digest-bits`.
    fn takes_digest_bits(&self) -> bool {
        false
    }

    /// The NIST binding may name a signature API (`[nist] signature-api`).
    fn takes_signature_api(&self) -> bool {
        false
    }

    /// The algorithm file may have a `[kex]` table.
    fn takes_kex_table(&self) -> bool {
        false
    }

    /// The build key names the kind and its instance specifics. The first
    /// two kinds predate this and keep their keys (and caches) as they were.
    fn keys_build_by_kind(&self) -> bool {
        true
    }

    /// `-D` flags the adapter is compiled with.
    fn adapter_defines(&self, input: &AdapterInput) -> Vec<String>;

    /// How its keys and outputs are checked across processes, if they are.
    fn round_trip(&self) -> Option<RoundTrip> {
        None
    }

    /// Extra support units compiled with the adapter's defines.
    fn adapter_units(&self) -> &'static [&'static str] {
        &[]
    }

    /// The API functions the library exports (and the submission must
    /// define); `namespace` prefixes NIST names.
    fn api_symbols(&self, api: ApiFamily, namespace: &str, input: &AdapterInput) -> Vec<String>;

    /// Version-script globs exported besides `api_symbols`.
    fn export_globs(&self) -> &'static [&'static str] {
        &[]
    }

    /// The reference KAT file name of an instance (for the manifest).
    fn kat_reference(&self, api: ApiFamily) -> &'static str;

    /// Each KAT file an instance generates: (the file in the run's KAT
    /// folder, the reference file name). `hash_files`: the campaign's hash
    /// KAT files.
    fn kat_files(&self, api: ApiFamily, label: &str, hash_files: &[&str]) -> Vec<(String, String)>;

    /// The KAT stage checks one generator run per campaign KAT file.
    fn kat_per_file(&self) -> bool {
        false
    }

    /// The sizes it publishes.
    fn sizes(&self) -> Sizes;

    /// The page's chart.
    fn chart(&self) -> Chart {
        Chart::Operations
    }

    /// The notes below the performance table.
    fn page_notes(&self) -> PageNotes {
        PageNotes::None
    }

    /// The system summary's section.
    fn summary(&self) -> Summary;

    /// The category line of its page.
    fn category(&self) -> &'static str {
        "public-key algorithm"
    }

    /// What it does, on its page ("digital signature").
    fn function(&self) -> &'static str;

    /// The method page's bullets when the campaign has such algorithms.
    fn method_bullets(&self) -> &'static [&'static str] {
        &[]
    }

    /// NGCC entry functions whose presence marks a tree as this kind.
    fn ngcc_entry(&self) -> &'static [&'static str];

    /// The NIST keypair function (without namespace) marking this kind.
    fn nist_keypair(&self) -> Option<&'static str> {
        None
    }

    /// The NIST functions an import draft looks up: keypair and the main
    /// operation, and whether the latter's length type is drafted.
    fn nist_draft(&self) -> (&'static str, &'static str, bool) {
        // Kinds without a NIST API are refused by the plan: drafted as a
        // KEM would be.
        ("crypto_kem_keypair", "crypto_kem_enc", false)
    }

    /// META.yml `type` values naming this kind, and the length key
    /// (`length-signature`) whose presence alone names it.
    fn yaml_types(&self) -> (&'static [&'static str], Option<&'static str>) {
        (&[], None)
    }
}

/// The one KAT file of a NIST- or NGCC-API instance: `.rsp` for the NIST
/// format, `.kat` for NGCC's.
fn api_kat_file(api: ApiFamily, label: &str, reference: &str) -> Vec<(String, String)> {
    let ext = match api {
        ApiFamily::Nist => "rsp",
        ApiFamily::Ngcc => "kat",
    };
    vec![(format!("{label}.{ext}"), reference.to_string())]
}

impl Kind {
    /// Every kind, in the order pages and summaries list them.
    pub(crate) const ALL: [Kind; 4] = [Kind::Sign, Kind::Kem, Kind::Kex, Kind::Hash];

    /// The definition of this kind: the one match on the enum.
    pub(crate) fn def(self) -> &'static dyn KindDef {
        match self {
            Kind::Sign => &sign::Sign,
            Kind::Kem => &kem::Kem,
            Kind::Kex => &kex::Kex,
            Kind::Hash => &hash::Hash,
        }
    }

    /// Every operation of the kind (a KEX: for the largest protocol).
    pub(crate) fn operations(self) -> &'static [&'static str] {
        self.def().operations()
    }

    /// The operations one instance has: a KEX's passes up to its own pass
    /// count (`None`: not known, no pass).
    pub(crate) fn instance_operations(self, kex_passes: Option<u32>) -> Vec<&'static str> {
        self.def().instance_operations(kex_passes)
    }

    /// Whether the profile stage profiles `op`.
    pub(crate) fn profiles(self, op: &str) -> bool {
        self.def().profiles(op)
    }

    /// Whether the count stage counts `op`.
    pub(crate) fn counts(self, op: &str) -> bool {
        self.def().counts(op)
    }

    /// Whether the constant-time check applies.
    pub(crate) fn ct_checked(self) -> bool {
        self.def().ct_checked()
    }

    pub fn as_str(self) -> &'static str {
        self.def().name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_the_published_form() {
        for k in Kind::ALL {
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(json, format!("\"{}\"", k.as_str()));
        }
    }
}
