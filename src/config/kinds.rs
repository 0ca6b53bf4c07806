//! The operations of the key-exchange and hash kinds, in one place: what
//! the time, memory and profile stages run, what the records are keyed by
//! and the order the pages list them in.
//!
//! A KEX is timed as a whole (`exchange`) and step by step (`init_a`,
//! `init_b`, `pass1..passP`, `derive_a`, `derive_b`); P is the instance's
//! own pass count (`kex_get_passes_num()`), at most 16. A hash is timed at
//! eight message sizes, each an operation `hash_<bytes>`.

/// The most passes a KEX may have (the adapter resolves pass functions by
/// name up to this number).
pub(crate) const KEX_MAX_PASSES: u32 = 16;

/// Every KEX operation in protocol order, for the largest protocol.
pub(crate) const KEX_OPERATIONS: &[&str] = &[
    "exchange", "init_a", "init_b", "pass1", "pass2", "pass3", "pass4", "pass5", "pass6", "pass7",
    "pass8", "pass9", "pass10", "pass11", "pass12", "pass13", "pass14", "pass15", "pass16",
    "derive_a", "derive_b",
];

/// `hash_<bytes>` for each message size S1–S8 of the hash timing.
pub const HASH_OPERATIONS: &[&str] = &[
    "hash_32",
    "hash_128",
    "hash_512",
    "hash_1024",
    "hash_4096",
    "hash_8192",
    "hash_16384",
    "hash_65536",
];

/// The message size of a hash operation (`hash_4096` → 4096).
pub(crate) fn hash_bytes(op: &str) -> Option<u64> {
    op.strip_prefix("hash_")?.parse().ok()
}

/// The pass of a KEX step (`pass3` → 3).
pub(crate) fn kex_pass(op: &str) -> Option<u32> {
    op.strip_prefix("pass")?.parse().ok()
}

/// Whether a KEX operation is a step (timed inside complete protocol
/// runs), as opposed to the whole `exchange`.
pub fn is_kex_step(op: &str) -> bool {
    op != "exchange" && KEX_OPERATIONS.contains(&op)
}

/// The operations of a KEX with `passes` passes, in protocol order.
pub fn kex_operations(passes: u32) -> Vec<&'static str> {
    KEX_OPERATIONS
        .iter()
        .copied()
        .filter(|op| kex_pass(op).is_none_or(|k| k <= passes))
        .collect()
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
        let sizes: Vec<u64> = HASH_OPERATIONS
            .iter()
            .filter_map(|o| hash_bytes(o))
            .collect();
        assert_eq!(sizes, [32, 128, 512, 1024, 4096, 8192, 16384, 65536]);
    }
}
