//! The KAT manifest lines of a scheme in a PQClean-style tree: its
//! META.yml `nistkat-sha256` digest, one `exact:1` line per instance.

use super::emit::Draft;
use super::yaml::Scheme;
use crate::bless::reference_name;
use crate::config::algorithm::{ApiFamily, Kind};
use crate::kat::provenance::Provenance;

pub(super) fn is_sha256(d: &str) -> bool {
    d.len() == 64 && d.bytes().all(|b| b.is_ascii_hexdigit())
}

/// One `exact:1` line per instance from META.yml `nistkat-sha256`, after
/// its provenance comment; a note when there is no usable digest.
pub(super) fn manifest(
    draft: &Draft,
    s: &Scheme,
    kind: Kind,
    notes: &mut Vec<String>,
) -> Vec<(String, String)> {
    let file = reference_name(ApiFamily::Nist, kind);
    let mut manifest = Vec::new();
    match &s.kat_single {
        Some(d) if is_sha256(d) => {
            manifest.push((
                String::new(),
                Provenance::Published.comment(&format!(
                    "META.yml nistkat-sha256 of {}: the first record, for every implementation",
                    s.name
                )),
            ));
            for (_, full) in draft.labels() {
                manifest.push((full.clone(), format!("{d} exact:1 {full}/{file}")));
            }
        }
        Some(d) => notes.push(format!(
            "{}: `{d}` is not a SHA-256 digest; skipped",
            s.name
        )),
        None => notes.push(format!(
            "{}: META.yml has no nistkat-sha256: after a run, `pqbench bless` records the output",
            s.name
        )),
    }
    manifest
}
