//! Hash functions (NGCC `CryptHash`): timed at eight message sizes, each an
//! operation `hash_<bytes>`; a parameter set declares its digest width. NGCC
//! only; neither profiled nor surveyed (a hash is itself the symmetric
//! primitive), and no constant-time check (no secret input).

use super::{AdapterInput, ApiFamily, Chart, KindDef, PageNotes, Sizes, Summary};

pub(super) struct Hash;

/// Message sizes S1–S8 of the hash timing, in bytes.
pub const HASH_SIZES: [u64; 8] = [32, 128, 512, 1024, 4096, 8192, 16384, 65536];

/// `hash_<bytes>` for each of `HASH_SIZES`.
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
pub fn hash_bytes(op: &str) -> Option<u64> {
    op.strip_prefix("hash_")?.parse().ok()
}

impl KindDef for Hash {
    fn name(&self) -> &'static str {
        "hash"
    }

    fn operations(&self) -> &'static [&'static str] {
        HASH_OPERATIONS
    }

    fn profiles(&self, _: &str) -> bool {
        false
    }

    fn profiled(&self) -> bool {
        false
    }

    fn ct_checked(&self) -> bool {
        false
    }

    fn public_key(&self) -> bool {
        false
    }

    fn ngcc_only(&self) -> bool {
        true
    }

    fn takes_digest_bits(&self) -> bool {
        true
    }

    fn adapter_defines(&self, input: &AdapterInput) -> Vec<String> {
        let mut a = vec![
            "-DPQB_KIND_IS_HASH".to_string(),
            format!("-DPQB_HASH_BITS={}", input.digest_bits.unwrap_or(256)),
        ];
        if input.iccs_baseline {
            a.push("-DPQB_ICCS_BASELINE".into());
        }
        a
    }

    fn api_symbols(&self, api: ApiFamily, _: &str, _: &AdapterInput) -> Vec<String> {
        match api {
            ApiFamily::Ngcc => vec!["CryptHash".into()],
            ApiFamily::Nist => Vec::new(),
        }
    }

    fn kat_reference(&self, _: ApiFamily) -> &'static str {
        // Named after their instance; see `kat_files`.
        "KAT_2_12.txt"
    }

    /// One file per campaign hash KAT file (`KAT_2_12_<label>.txt`, ...).
    fn kat_files(&self, _: ApiFamily, label: &str, files: &[&str]) -> Vec<(String, String)> {
        files
            .iter()
            .map(|f| (format!("{label}__{f}.kat"), format!("{f}_{label}.txt")))
            .collect()
    }

    fn kat_per_file(&self) -> bool {
        true
    }

    fn sizes(&self) -> Sizes {
        Sizes::Digest
    }

    fn chart(&self) -> Chart {
        Chart::ByMessageSize
    }

    fn page_notes(&self) -> PageNotes {
        PageNotes::Fixed("Each message is msg[i] = (131·i + bytes) mod 256, hashed with the instance's digest width; cycles/byte is the mean cycles over the message bytes, MB/s its bytes (10^6) per second of mean time.")
    }

    fn summary(&self) -> Summary {
        Summary::ByMessageSize
    }

    fn category(&self) -> &'static str {
        "hash function"
    }

    fn function(&self) -> &'static str {
        "cryptographic hash"
    }

    fn method_bullets(&self) -> &'static [&'static str] {
        &[
            "Hash functions: CryptHash with the instance's digest width, timed at 32, 128, 512, 1024, 4096, 8192, 16384 and 65536 bytes (msg[i] = (131·i + bytes) mod 256) as operations hash_<bytes>; cycles/byte and MB/s (10^6 bytes per second) derive from the mean. KAT files KAT_2_12 and KAT_2_23 (KAT_2_33 and KAT_Loop when the campaign asks), one manifest line each. Hashes are neither profiled nor surveyed.",
        ]
    }

    fn ngcc_entry(&self) -> &'static [&'static str] {
        &["CryptHash"]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_are_the_sizes() {
        let sizes: Vec<u64> = HASH_OPERATIONS
            .iter()
            .filter_map(|o| hash_bytes(o))
            .collect();
        assert_eq!(sizes, HASH_SIZES);
    }
}
