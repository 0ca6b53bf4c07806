//! Signatures: keygen, sign and verify, on the NIST (`crypto_sign_*`) and
//! NGCC (`sig_*`) APIs.

use super::{AdapterInput, ApiFamily, KindDef, RoundTrip, SizeField, Sizes, Summary};

pub(super) struct Sign;

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
        name: "signature",
        api_key: "api_sig_bytes",
        kat_key: "max_sig_len",
        time_key: "sig",
    },
];

impl KindDef for Sign {
    fn name(&self) -> &'static str {
        "sign"
    }

    fn operations(&self) -> &'static [&'static str] {
        &["keygen", "sign", "verify"]
    }

    fn keys_build_by_kind(&self) -> bool {
        false
    }

    fn takes_signature_api(&self) -> bool {
        true
    }

    fn round_trip(&self) -> Option<RoundTrip> {
        Some(RoundTrip::Signature)
    }

    fn adapter_defines(&self, input: &AdapterInput) -> Vec<String> {
        let mut d = vec!["-DPQB_KIND_IS_SIGN".to_string()];
        if input.sign_context {
            // adapter_nist_api.c: the context forms, called with the empty
            // context.
            d.push("-DPQB_SIGN_CONTEXT".into());
        }
        d
    }

    fn api_symbols(&self, api: ApiFamily, namespace: &str, _: &AdapterInput) -> Vec<String> {
        match api {
            ApiFamily::Ngcc => [
                "sig_keygen",
                "sig_sign",
                "sig_verify",
                "sig_get_pk_len_bytes",
                "sig_get_sk_len_bytes",
                "sig_get_sn_len_bytes",
            ]
            .map(String::from)
            .to_vec(),
            ApiFamily::Nist => ["crypto_sign_keypair", "crypto_sign", "crypto_sign_open"]
                .map(|f| format!("{namespace}{f}"))
                .to_vec(),
        }
    }

    fn kat_reference(&self, api: ApiFamily) -> &'static str {
        match api {
            ApiFamily::Nist => "PQCsignKAT.rsp",
            ApiFamily::Ngcc => "KAT_SIG.txt",
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
            heading: "Digital signatures",
            sizes: &["public key", "signature"],
        }
    }

    fn function(&self) -> &'static str {
        "digital signature"
    }

    fn ngcc_entry(&self) -> &'static [&'static str] {
        &["sig_keygen", "sig_sign", "sig_verify"]
    }

    fn nist_keypair(&self) -> Option<&'static str> {
        Some("crypto_sign_keypair")
    }

    fn nist_draft(&self) -> (&'static str, &'static str, bool) {
        // The message length parameter of crypto_sign differs between
        // submissions (size_t or unsigned long long): drafted from the tree.
        ("crypto_sign_keypair", "crypto_sign", true)
    }

    fn yaml_types(&self) -> (&'static [&'static str], Option<&'static str>) {
        (&["sig", "signature", "sign"], Some("length-signature"))
    }
}
