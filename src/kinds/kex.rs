//! Key exchange (NGCC `kex_*`): timed as a whole (`exchange`) and step by
//! step (`init_a`, `init_b`, `pass1..passP`, `derive_a`, `derive_b`); P is
//! the instance's own pass count (`kex_get_passes_num()`), at most 16. NGCC
//! only; the submission may rename its functions (`[kex] names`).

use super::{AdapterInput, ApiFamily, Chart, KindDef, PageNotes, RoundTrip, Sizes, Summary};

pub(super) struct Kex;

/// The most passes a KEX may have (the adapter resolves pass functions by
/// name up to this number).
pub const KEX_MAX_PASSES: u32 = 16;

/// Every KEX operation in protocol order, for the largest protocol.
pub const KEX_OPERATIONS: &[&str] = &[
    "exchange", "init_a", "init_b", "pass1", "pass2", "pass3", "pass4", "pass5", "pass6", "pass7",
    "pass8", "pass9", "pass10", "pass11", "pass12", "pass13", "pass14", "pass15", "pass16",
    "derive_a", "derive_b",
];

/// The NGCC KEX functions other than the passes, as the API names them.
const FIXED_API: &[&str] = &[
    "kex_get_passes_num",
    "kex_get_pk_len_bytes",
    "kex_get_sk_len_bytes",
    "kex_get_sta_len_bytes",
    "kex_get_stb_len_bytes",
    "kex_get_ss_len_bytes",
    "kex_get_total_msg_len_bytes",
    "kex_init_a",
    "kex_init_b",
    "kex_derive_ss_a",
    "kex_derive_ss_b",
];

/// The pass of a KEX step (`pass3` → 3).
pub fn kex_pass(op: &str) -> Option<u32> {
    op.strip_prefix("pass")?.parse().ok()
}

/// Whether `op` is a KEX operation: the whole `exchange` or a step.
pub fn is_kex_operation(op: &str) -> bool {
    KEX_OPERATIONS.contains(&op)
}

/// Whether a KEX operation is a step (timed inside complete protocol
/// runs), as opposed to the whole `exchange`.
pub fn is_kex_step(op: &str) -> bool {
    op != "exchange" && is_kex_operation(op)
}

/// The operations of a KEX with `passes` passes, in protocol order.
pub fn kex_operations(passes: u32) -> Vec<&'static str> {
    KEX_OPERATIONS
        .iter()
        .copied()
        .filter(|op| kex_pass(op).is_none_or(|k| k <= passes))
        .collect()
}

/// `kex_generate_pass<k>_msg_a` (odd k, the initiator) or `_msg_b`.
pub fn kex_pass_name(k: u32) -> String {
    let side = if k % 2 == 1 { "a" } else { "b" };
    format!("kex_generate_pass{k}_msg_{side}")
}

/// Every NGCC KEX function name the `[kex] names` table may rename.
pub fn kex_api_names() -> Vec<String> {
    let mut v: Vec<String> = FIXED_API.iter().map(|s| s.to_string()).collect();
    v.extend((1..=KEX_MAX_PASSES).map(kex_pass_name));
    v
}

impl KindDef for Kex {
    fn name(&self) -> &'static str {
        "kex"
    }

    fn operations(&self) -> &'static [&'static str] {
        KEX_OPERATIONS
    }

    fn instance_operations(&self, passes: Option<u32>) -> Vec<&'static str> {
        kex_operations(passes.unwrap_or(0))
    }

    /// Only the whole exchange: a step needs the rest of the protocol run
    /// around each call.
    fn profiles(&self, op: &str) -> bool {
        op == "exchange"
    }

    fn counts(&self, op: &str) -> bool {
        op == "exchange"
    }

    fn ngcc_only(&self) -> bool {
        true
    }

    fn takes_kex_table(&self) -> bool {
        true
    }

    fn adapter_defines(&self, input: &AdapterInput) -> Vec<String> {
        let mut a = vec!["-DPQB_KIND_IS_KEX".to_string()];
        // Each renamed NGCC name becomes the submission's name.
        for (std, to) in input.renames {
            a.push(format!("-D{std}={to}"));
        }
        a
    }

    fn round_trip(&self) -> Option<RoundTrip> {
        Some(RoundTrip::Exchange)
    }

    /// The pass unit resolves `kex_generate_pass<k>` by name.
    fn adapter_units(&self) -> &'static [&'static str] {
        &["adapter_kex_passes.c"]
    }

    fn api_symbols(&self, api: ApiFamily, _: &str, input: &AdapterInput) -> Vec<String> {
        if api != ApiFamily::Ngcc {
            return Vec::new();
        }
        // Pass 1 is the only pass every protocol has; the others are
        // exported by `export_globs`.
        let mut names: Vec<&str> = FIXED_API[..9].to_vec();
        names.push("kex_generate_pass1_msg_a");
        names.extend(&FIXED_API[9..]);
        names.iter().map(|n| input.renamed(n)).collect()
    }

    /// Later passes exist only in protocols that have them.
    fn export_globs(&self) -> &'static [&'static str] {
        &["kex_generate_pass*"]
    }

    fn kat_reference(&self, _: ApiFamily) -> &'static str {
        // Named after their instance; see `kat_files`.
        "KAT_KEX.txt"
    }

    fn kat_files(&self, _: ApiFamily, label: &str, _: &[&str]) -> Vec<(String, String)> {
        vec![(format!("{label}.kat"), format!("KAT_KEX_{label}.txt"))]
    }

    fn sizes(&self) -> Sizes {
        Sizes::PerRole
    }

    fn chart(&self) -> Chart {
        Chart::Steps
    }

    fn page_notes(&self) -> PageNotes {
        PageNotes::Steps
    }

    fn summary(&self) -> Summary {
        Summary::Exchange
    }

    fn function(&self) -> &'static str {
        "key exchange"
    }

    fn method_bullets(&self) -> &'static [&'static str] {
        &[
            "Key exchanges: `exchange` is one whole protocol (both initialisations, every pass, both derivations), the two secrets' agreement checked in setup. Each step (init_a, init_b, pass1..passP, derive_a, derive_b) is timed inside complete protocol runs, the counter read around that one call; it is planned from the exchange's calibration (the same runs per trial), and every trial process measures the counter's own cost per call (median of two back-to-back reads), stated on the algorithm page. Only `exchange` is profiled.",
            "Key-exchange KATs follow the NGCC seed schedule (10 records by default); guard bytes surround every buffer, returned lengths are checked against their caps, and a pass ending the protocol early or late, or secrets that differ, are CRYPTOFAIL.",
        ]
    }

    fn ngcc_entry(&self) -> &'static [&'static str] {
        &[
            "kex_init_a",
            "kex_init_b",
            "kex_derive_ss_a",
            "kex_derive_ss_b",
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_follow_the_protocol() {
        assert_eq!(
            kex_operations(2),
            ["exchange", "init_a", "init_b", "pass1", "pass2", "derive_a", "derive_b"]
        );
        assert_eq!(kex_operations(16).len(), KEX_OPERATIONS.len());
        assert_eq!(kex_pass("pass12"), Some(12));
        assert!(is_kex_step("derive_b") && !is_kex_step("exchange") && !is_kex_step("hash_32"));
        assert_eq!(kex_pass_name(1), "kex_generate_pass1_msg_a");
        assert_eq!(kex_pass_name(16), "kex_generate_pass16_msg_b");
        assert_eq!(kex_api_names().len(), 11 + 16);
    }
}
