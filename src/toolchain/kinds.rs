//! What an instance's kind adds to its library build, from the kind's
//! definition (`crate::kinds`): the adapter's defines, extra support units
//! and the exported API names.

use crate::kinds::AdapterInput;
use crate::plan::{Binding, Instance, SignatureApi};

/// The instance specifics a kind's build needs.
fn input(inst: &Instance) -> AdapterInput<'_> {
    AdapterInput {
        digest_bits: inst.spec.digest_bits,
        renames: &inst.spec.kex_names,
        iccs_baseline: inst.spec.iccs_helper.is_some(),
        sign_context: matches!(
            inst.binding,
            Binding::Nist {
                signature_api: SignatureApi::Fips204Context,
                ..
            }
        ),
    }
}

/// `-D` flags of the adapter (and of the kind's extra units): the kind, a
/// hash's digest width, a KEX's renamed functions.
pub(crate) fn adapter_defines(inst: &Instance) -> Vec<String> {
    inst.kind.def().adapter_defines(&input(inst))
}

/// Support units compiled into the library besides the adapter, with the
/// flags they add to the instance's own.
pub(crate) fn extra_units(inst: &Instance) -> Vec<(&'static str, Vec<String>)> {
    let mut v: Vec<(&'static str, Vec<String>)> = inst
        .kind
        .def()
        .adapter_units()
        .iter()
        .map(|u| (*u, adapter_defines(inst)))
        .collect();
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

/// The API functions the library exports (and must define).
pub(crate) fn api_names(inst: &Instance) -> Vec<String> {
    let (namespace, suffix) = match &inst.binding {
        Binding::Nist {
            namespace, suffix, ..
        } => (namespace.as_str(), suffix.as_str()),
        Binding::Ngcc { .. } => ("", ""),
    };
    inst.kind
        .def()
        .api_symbols(inst.api, namespace, &input(inst))
        .into_iter()
        .map(|f| format!("{f}{suffix}"))
        .collect()
}
