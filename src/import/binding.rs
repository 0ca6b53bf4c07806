//! How the adapter binds to a submission: NGCC headers and the ICCS helper
//! component, or the NIST header, namespace, length type and the symbol the
//! code calls for randomness.

use std::path::Path;

use super::emit::NistDraft;
use super::folder::Folder;
use crate::config::algorithm::{Kind, LengthType, SignatureApi};

/// Functions of the ICCS helper files NGCC submissions build on.
const ICCS: &[&str] = &["pseudohash", "pseudoXOF", "sm3hash", "get_random_number"];

/// `uses`, its note, and `[ngcc] headers`.
pub(super) fn ngcc(
    main: &Folder,
    alg_dir: &Path,
    todos: &mut Vec<String>,
) -> (Vec<String>, Option<String>, Vec<String>) {
    let calls = main.calls();
    let defined = main.defined();
    let called: Vec<&&str> = ICCS.iter().filter(|f| calls.contains(**f)).collect();
    let iccs = !called.is_empty() && !ICCS.iter().any(|f| defined.contains(*f));
    let mut headers = Vec::new();
    let api = ["sig_keygen", "kem_keygen", "kex_init_a", "CryptHash"]
        .iter()
        .find_map(|f| main.declaring(f));
    headers.push(api.map_or("api.h".to_string(), |f| f.rel.clone()));
    let drng = main
        .library()
        .into_iter()
        .find(|f| f.is_header() && f.code.contains("drng_algorithm") && f.code.contains("DRNG_ctx"))
        .map(|f| f.rel.clone());
    match drng {
        Some(h) => headers.push(h),
        None if iccs => headers.push("drng.h".into()),
        None => todos
            .push("add the header declaring DRNG_ctx and drng_algorithm to [ngcc] headers".into()),
    }
    headers.dedup();
    if !iccs {
        return (Vec::new(), None, headers);
    }
    let names = called.iter().map(|s| **s).collect::<Vec<_>>().join(", ");
    let note = format!(
        "The sources call the ICCS helpers ({names}) without defining them: iccs-standin is pqbench's stand-in; replace it with the official auxfunc.c/drng.c files for an evaluation."
    );
    if !alg_dir.join("components/iccs-standin.toml").is_file() {
        todos.push("add a component with the ICCS helper files (algorithms/components/<name>.toml) and name it in `uses`".into());
    }
    (vec!["iccs-standin".into()], Some(note), headers)
}

pub(super) fn nist(
    main: &Folder,
    kind: Kind,
    common_ns: Option<String>,
    namespaces: &[String],
) -> NistDraft {
    let ns = common_ns
        .clone()
        .or_else(|| namespaces.first().cloned())
        .unwrap_or_default();
    let (keypair, op, drafts_lengths) = kind.def().nist_draft();
    let header = main
        .declaring(&format!("{ns}{keypair}"))
        .filter(|f| f.is_header())
        .map_or("api.h".to_string(), |f| f.rel.clone());
    let macros = main.macros();
    // The main operation's prototype: its length type, and for a signature
    // whether it takes a context string.
    let decl = drafts_lengths
        .then(|| {
            main.library()
                .iter()
                .flat_map(|f| f.decls.iter())
                .find(|d| {
                    super::csource::expansions(&d.name, d.via.as_deref(), &macros)
                        .contains(&format!("{ns}{op}"))
                })
        })
        .flatten();
    let lengths = decl
        .filter(|d| d.params.contains("size_t"))
        .map(|_| LengthType::SizeT);
    // A header may wrap the context form in a function-like macro of the
    // classic five arguments (AIMer's `crypto_sign(sm, smlen, m, mlen,
    // sk)` passes NULL, 0): callers then make the classic call, and a
    // context call would put its extra arguments into the macro's.
    let classic_wrapper = macros
        .iter()
        .any(|m| m.name == format!("{ns}{op}") && m.params.as_ref().is_some_and(|p| p.len() == 5));
    let signature_api = decl
        .filter(|d| {
            kind.def().takes_signature_api() && takes_context(&d.params) && !classic_wrapper
        })
        .map(|_| SignatureApi::Fips204Context);
    let defined = main.defined();
    let mut rb: Vec<String> = main
        .calls()
        .into_iter()
        .filter(|c| c.to_ascii_lowercase().contains("randombytes") && !c.ends_with("_init"))
        .filter(|c| !defined.contains(c))
        .collect();
    rb.sort();
    let mut d = NistDraft {
        header,
        namespace: common_ns.filter(|n| !n.is_empty()),
        lengths,
        signature_api,
        ..NistDraft::default()
    };
    match rb.len() {
        0 => {
            d.randombytes = "randombytes".into();
            d.randombytes_note = Some(
                "no call to an undefined *randombytes* function found: check the randomness symbol"
                    .into(),
            );
        }
        1 => {
            d.randombytes = rb.remove(0);
            d.randombytes_note =
                Some("the randomness function the sources call but do not define".into());
        }
        _ => {
            d.randombytes = rb[0].clone();
            d.todos.push(format!(
                "randombytes: the sources call several undefined functions: {}",
                rb.join(", ")
            ));
        }
    }
    d
}

/// Whether `crypto_sign`'s parameters (`params`, the prototype's text) are
/// the FIPS 204 / FIPS 205 form: seven, a context string and its length
/// between the message and the key, where the classic form has five.
fn takes_context(params: &str) -> bool {
    let names: Vec<&str> = params.split(',').map(str::trim).collect();
    names.len() == 7 && names[4].contains('*') && !names[5].contains('*')
}

#[cfg(test)]
mod tests {
    use super::takes_context;

    #[test]
    fn context_prototypes_are_told_from_classic_ones() {
        assert!(takes_context(
            "uint8_t * sm , size_t * smlen , const uint8_t * m , size_t mlen , const uint8_t * ctx , size_t ctxlen , const uint8_t * sk"
        ));
        assert!(!takes_context(
            "unsigned char * sm , unsigned long long * smlen , const unsigned char * m , unsigned long long mlen , const unsigned char * sk"
        ));
    }
}

#[cfg(test)]
mod header_tests {
    use crate::import::folder::Folder;

    /// The NIST binding drafted for a folder of `files` (name, text).
    fn bound(files: &[(&str, &str)]) -> crate::import::emit::NistDraft {
        let t = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(t.path().join(name), text).unwrap();
        }
        let folder = Folder::scan(t.path());
        crate::import::submission::bind(&folder, t.path(), None)
            .nist
            .expect("a NIST binding")
    }

    /// AIMer's api.h, as KpqClean ships it: the sizes bare, some API names
    /// mapped to namespaced functions and the others plain, and the context
    /// form wrapped in a macro of the classic five arguments.
    const API: &str = r#"
#define NS(s) team_x128_##s
#define CRYPTO_PUBLICKEYBYTES 32
#define CRYPTO_SECRETKEYBYTES 64
#define CRYPTO_BYTES 16
#define CRYPTO_ALGNAME "x-128"
#define crypto_sign_keypair NS(crypto_sign_keypair)
int crypto_sign_keypair(uint8_t *pk, uint8_t *sk);
int crypto_sign(uint8_t *sm, size_t *smlen, const uint8_t *m, size_t mlen,
                const uint8_t *ctx, size_t ctxlen, const uint8_t *sk);
int crypto_sign_open(uint8_t *m, size_t *mlen, const uint8_t *sm, size_t smlen,
                     const uint8_t *ctx, size_t ctxlen, const uint8_t *pk);
#define crypto_sign(sm, smlen, m, mlen, sk) \
  crypto_sign((sm), (smlen), (m), (mlen), NULL, 0, (sk))
"#;
    const SIGN: &str = r#"
#include "api.h"
int crypto_sign_keypair(uint8_t *pk, uint8_t *sk) { return 0; }
int (crypto_sign)(uint8_t *sm, size_t *smlen, const uint8_t *m, size_t mlen,
                const uint8_t *ctx, size_t ctxlen, const uint8_t *sk) { return 0; }
int crypto_sign_open(uint8_t *m, size_t *mlen, const uint8_t *sm, size_t smlen,
                     const uint8_t *ctx, size_t ctxlen, const uint8_t *pk) { return 0; }
"#;

    #[test]
    fn plain_sizes_keep_the_plain_names_and_a_classic_wrapper_is_called_classically() {
        let d = bound(&[("api.h", API), ("sign.c", SIGN)]);
        assert_eq!(d.namespace, None);
        assert_eq!(d.signature_api, None);
        // Without the wrapper, the context form is what callers call.
        let bare = API.replace("#define crypto_sign(sm, smlen, m, mlen, sk) \\\n  crypto_sign((sm), (smlen), (m), (mlen), NULL, 0, (sk))\n", "");
        assert_ne!(bare, API);
        let d = bound(&[("api.h", &bare), ("sign.c", SIGN)]);
        assert_eq!(
            d.signature_api,
            Some(crate::config::algorithm::SignatureApi::Fips204Context)
        );
    }

    /// A header's `static inline` helper around the randomness is defined
    /// where it is included: the symbol is the one it calls, never itself.
    #[test]
    fn a_static_inline_helper_is_never_the_randomness_symbol() {
        let rng = "#include <stddef.h>\n#include <stdint.h>\n\
                   int randombytes(uint8_t *x, size_t n);\n\
                   static inline int\nsample_randombytes(uint8_t *x, size_t n)\n{\n    return randombytes(x, n);\n}\n\
                   static __inline__ __attribute__((always_inline)) void seed_randombytes(uint8_t *x) { randombytes(x, 32); }\n";
        let sign = "#include \"api.h\"\n#include \"rng_helpers.h\"\n\
                    int crypto_sign_keypair(uint8_t *pk, uint8_t *sk) { seed_randombytes(sk); randombytes(pk, 1); return sample_randombytes(pk, 32); }\n";
        let d = bound(&[("api.h", API), ("rng_helpers.h", rng), ("sign.c", sign)]);
        assert_eq!(d.randombytes, "randombytes");
        assert!(
            d.todos.iter().all(|t| !t.contains("randombytes")),
            "{:?}",
            d.todos
        );
        let note = d.randombytes_note.unwrap_or_default();
        assert!(note.contains("call but do not define"), "{note}");
    }
}
