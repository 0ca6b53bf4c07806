//! What building a key-exchange or hash instance adds to the library: the
//! adapter's defines, extra support units and the exported API names.

use crate::plan::{Instance, Kind};

/// The NGCC name `std` as the submission spells it.
fn renamed(inst: &Instance, std: &str) -> String {
    inst.spec
        .kex_names
        .get(std)
        .cloned()
        .unwrap_or_else(|| std.to_string())
}

/// `-D` flags of the adapter (and of the KEX pass unit) for a KEX or hash
/// instance: the kind, a hash's digest width, a KEX's renamed functions.
pub(crate) fn adapter_defines(inst: &Instance) -> Vec<String> {
    let mut a = Vec::new();
    match inst.kind {
        Kind::Kex => {
            a.push("-DPQB_KIND_IS_KEX".into());
            // Each renamed NGCC name becomes the submission's name.
            for (std, to) in &inst.spec.kex_names {
                a.push(format!("-D{std}={to}"));
            }
        }
        Kind::Hash => {
            a.push("-DPQB_KIND_IS_HASH".into());
            a.push(format!(
                "-DPQB_HASH_BITS={}",
                inst.spec.digest_bits.unwrap_or(256)
            ));
            if inst.spec.iccs_helper.is_some() {
                a.push("-DPQB_ICCS_BASELINE".into());
            }
        }
        Kind::Sign | Kind::Kem => {}
    }
    a
}

/// Support units compiled into the library besides the adapter, with the
/// flags they add to the instance's own.
pub(crate) fn extra_units(inst: &Instance) -> Vec<(&'static str, Vec<String>)> {
    let mut v = Vec::new();
    if inst.kind == Kind::Kex {
        v.push(("adapter_kex_passes.c", adapter_defines(inst)));
    }
    if let Some(h) = &inst.spec.iccs_helper {
        v.push((
            "iccs_crypthash.c",
            vec![
                format!("-DPQB_ICCS_HELPER_{h}"),
                format!("-DPQB_HASH_BITS={}", inst.spec.digest_bits.unwrap_or(256)),
            ],
        ));
    }
    v
}

/// The API functions a KEX or hash library exports (and must define).
pub(crate) fn api_names(inst: &Instance) -> Vec<String> {
    match inst.kind {
        Kind::Kex => [
            "kex_get_passes_num",
            "kex_get_pk_len_bytes",
            "kex_get_sk_len_bytes",
            "kex_get_sta_len_bytes",
            "kex_get_stb_len_bytes",
            "kex_get_ss_len_bytes",
            "kex_get_total_msg_len_bytes",
            "kex_init_a",
            "kex_init_b",
            "kex_generate_pass1_msg_a",
            "kex_derive_ss_a",
            "kex_derive_ss_b",
        ]
        .iter()
        .map(|n| renamed(inst, n))
        .collect(),
        Kind::Hash => vec!["CryptHash".into()],
        Kind::Sign | Kind::Kem => Vec::new(),
    }
}
