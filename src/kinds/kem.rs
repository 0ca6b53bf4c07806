//! Key encapsulation: keygen, enc and dec, on the NIST (`crypto_kem_*`) and
//! NGCC (`kem_*`) APIs.

use super::{AdapterInput, ApiFamily, KindDef, RoundTrip, SizeField, Sizes, Summary};

pub(super) struct Kem;

const SIZES: &[SizeField] = &[
    SizeField {
        name: "public key",
        api_key: "api_pk_bytes",
        kat_key: "max_pk_len",
        time_key: "pk",
    },
    SizeField {
        name: "secret key",
        api_key: "api_sk_bytes",
        kat_key: "max_sk_len",
        time_key: "sk",
    },
    SizeField {
        name: "ciphertext",
        api_key: "api_ct_bytes",
        kat_key: "max_ct_len",
        time_key: "ct",
    },
    SizeField {
        name: "shared secret",
        api_key: "api_ss_bytes",
        kat_key: "max_ss_len",
        time_key: "ss",
    },
];

impl KindDef for Kem {
    fn name(&self) -> &'static str {
        "kem"
    }

    fn operations(&self) -> &'static [&'static str] {
        &["keygen", "enc", "dec"]
    }

    fn keys_build_by_kind(&self) -> bool {
        false
    }

    fn adapter_defines(&self, _: &AdapterInput) -> Vec<String> {
        vec!["-DPQB_KIND_IS_KEM".into()]
    }

    fn round_trip(&self) -> Option<RoundTrip> {
        Some(RoundTrip::Encapsulation)
    }

    fn api_symbols(&self, api: ApiFamily, namespace: &str, _: &AdapterInput) -> Vec<String> {
        match api {
            ApiFamily::Ngcc => [
                "kem_keygen",
                "kem_enc",
                "kem_dec",
                "kem_get_pk_len_bytes",
                "kem_get_sk_len_bytes",
                "kem_get_ss_len_bytes",
                "kem_get_ct_len_bytes",
            ]
            .map(String::from)
            .to_vec(),
            ApiFamily::Nist => ["crypto_kem_keypair", "crypto_kem_enc", "crypto_kem_dec"]
                .map(|f| format!("{namespace}{f}"))
                .to_vec(),
        }
    }

    fn kat_reference(&self, api: ApiFamily) -> &'static str {
        match api {
            ApiFamily::Nist => "PQCkemKAT.rsp",
            ApiFamily::Ngcc => "KAT_KEM.txt",
        }
    }

    fn kat_files(&self, api: ApiFamily, label: &str, _: &[&str]) -> Vec<(String, String)> {
        super::api_kat_file(api, label, self.kat_reference(api))
    }

    fn sizes(&self) -> Sizes {
        Sizes::Fixed(SIZES)
    }

    fn summary(&self) -> Summary {
        Summary::Operations {
            heading: "Key encapsulation",
            sizes: &["public key", "ciphertext"],
        }
    }

    fn function(&self) -> &'static str {
        "key encapsulation"
    }

    fn ngcc_entry(&self) -> &'static [&'static str] {
        &["kem_keygen", "kem_enc", "kem_dec"]
    }

    fn nist_keypair(&self) -> Option<&'static str> {
        Some("crypto_kem_keypair")
    }

    fn yaml_types(&self) -> (&'static [&'static str], Option<&'static str>) {
        (&["kem"], Some("length-ciphertext"))
    }
}
