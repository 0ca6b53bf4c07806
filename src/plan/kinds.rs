//! The rules of kinds in algorithm files: a hash instance's digest width,
//! a KEX's renamed API functions, which API they need, and that only
//! signatures name a signature API.

use std::collections::BTreeMap;

use super::algorithm::Resolver;
use super::names;
use super::*;
use crate::config::algorithm::RawParameterSet;
use crate::config::Step;
use crate::kinds::kex_api_names;

/// The largest digest width a hash instance may declare, in bits.
pub(crate) const MAX_DIGEST_BITS: u32 = 1 << 16;

impl Resolver<'_> {
    /// Kind rules that need no file system.
    pub(super) fn kind_rules(&mut self) {
        let raw = self.raw;
        let a = &raw.value;
        let def = a.kind.def();
        if def.ngcc_only() && a.api != ApiFamily::Ngcc {
            self.p.push(
                raw.error_at_value(
                    &[Step::Key("api")],
                    format!("kind `{}` exists on the NGCC API only", a.kind.as_str()),
                )
                .help("set api = \"ngcc\""),
            );
        }
        for (j, ps) in a.parameter_sets.iter().enumerate() {
            let at = [
                Step::Key("parameter-set"),
                Step::Index(j),
                Step::Key("digest-bits"),
            ];
            match (def.takes_digest_bits(), ps.digest_bits) {
                (true, None) => self.p.push(
                    raw.error_at(
                        &ps.label,
                        format!(
                            "hash parameter set `{}` has no `digest-bits`",
                            ps.label.get_ref()
                        ),
                    )
                    .help("give the instance's digest width, e.g. digest-bits = 256"),
                ),
                (true, Some(b)) if b > MAX_DIGEST_BITS => self.p.push(
                    raw.error_at_value(
                        &at,
                        format!("`digest-bits` = {b} is more than {MAX_DIGEST_BITS}"),
                    )
                    .help("a digest width in bits, e.g. 256 or 512"),
                ),
                (true, _) | (_, None) => {}
                (false, Some(_)) => self.p.push(
                    raw.error_at_key(
                        &at,
                        format!(
                            "`digest-bits` belongs to hash algorithms, not `{}`",
                            a.kind.as_str()
                        ),
                    )
                    .help("remove it"),
                ),
            }
        }
        let signature_api = a.nist.as_ref().and_then(|n| n.signature_api.as_ref());
        if signature_api.is_some() && a.api == ApiFamily::Nist && !def.takes_signature_api() {
            self.p.push(
                raw.error_at_key(
                    &[Step::Key("nist"), Step::Key("signature-api")],
                    format!(
                        "`signature-api` belongs to signatures, not `{}`",
                        a.kind.as_str()
                    ),
                )
                .help("remove it, or set kind = \"sign\" if the code is a signature"),
            );
        }
        let Some(kex) = &a.kex else { return };
        if !def.takes_kex_table() {
            self.p.push(
                raw.error_at_key(
                    &[Step::Key("kex")],
                    "`[kex]` belongs to key-exchange algorithms",
                )
                .help("remove it or set kind = \"kex\""),
            );
        }
        let known = kex_api_names();
        for (name, to) in &kex.names {
            if !known.contains(name) {
                self.p.push(
                    raw.error_at_key(
                        &[Step::Key("kex"), Step::Key("names"), Step::Key(name)],
                        format!("`{name}` is not an NGCC KEX function"),
                    )
                    .help("rename one of kex_get_*_len_bytes, kex_get_passes_num, kex_init_a/b, kex_generate_pass<k>_msg_<a|b>, kex_derive_ss_a/b"),
                );
            }
            if !names::is_c_identifier(to.get_ref()) {
                self.p.push(
                    raw.error_at(to, format!("`{}` is not a C symbol name", to.get_ref()))
                        .help("name the function the submission defines"),
                );
            }
        }
    }

    /// The kind-specific part of one instance.
    pub(super) fn kind_spec(&self, ps: &RawParameterSet) -> KindSpec {
        let a = &self.raw.value;
        KindSpec {
            digest_bits: if a.kind.def().takes_digest_bits() {
                ps.digest_bits
            } else {
                None
            },
            kex_names: a
                .kex
                .as_ref()
                .map(|k| {
                    k.names
                        .iter()
                        .map(|(n, v)| (n.clone(), v.get_ref().clone()))
                        .collect::<BTreeMap<_, _>>()
                })
                .unwrap_or_default(),
            iccs_helper: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_files_follow_the_campaign() {
        let mut k = KatSettings {
            timeout_seconds: 1.0,
            records_override: None,
            hash_full: false,
            hash_loop: false,
        };
        assert_eq!(k.hash_files(), ["KAT_2_12", "KAT_2_23"]);
        k.hash_full = true;
        k.hash_loop = true;
        assert_eq!(
            k.hash_files(),
            ["KAT_2_12", "KAT_2_23", "KAT_2_33", "KAT_Loop"]
        );
    }
}
