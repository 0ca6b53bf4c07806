//! The rules of key-exchange and hash algorithm files, each reported at its
//! position with the fix: a hash set without its digest width, a digest
//! width on another kind, `[kex] names` renaming no NGCC function or to no
//! C name, and the new kinds on the NIST API.

use crate::common;
use common::TestProject;

fn validate(p: &TestProject, id: &str, toml: &str) -> String {
    p.write(&format!("algorithms/{id}.toml"), toml);
    let out = p.pqbench(&["validate", &format!("algorithms/{id}.toml")]);
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    format!("{}{}", out.stdout, out.stderr)
}

/// The demo, whose sources the faulty files below reuse under other ids.
fn project() -> TestProject {
    TestProject::demo()
}

#[test]
fn hash_and_kex_rules_name_the_key_and_the_fix() {
    let p = project();
    let hash = p
        .read("algorithms/hash-95.toml")
        .replace("id = \"hash-95\"", "id = \"hash-x\"")
        .replace("digest-bits = 512\n", "");
    let err = validate(&p, "hash-x", &hash);
    assert!(
        err.contains("hash parameter set `RILL-512` has no `digest-bits`")
            && err.contains("digest-bits = 256"),
        "{err}"
    );
    let sign = p
        .read("algorithms/sign-90.toml")
        .replace("id = \"sign-90\"", "id = \"sign-x\"")
        .replace(
            "label = \"WINTER-192\"",
            "label = \"WINTER-192\"\ndigest-bits = 256",
        );
    let err = validate(&p, "sign-x", &sign);
    assert!(
        err.contains("`digest-bits` belongs to hash algorithms, not `sign`"),
        "{err}"
    );

    let kex = p
        .read("algorithms/kex-93.toml")
        .replace("id = \"kex-93\"", "id = \"kex-x\"")
        .replace(
            "[[implementation]]",
            "[kex]\nnames = { kex_get_state = \"x\", kex_init_a = \"9bad\" }\n\n[[implementation]]",
        );
    let err = validate(&p, "kex-x", &kex);
    assert!(
        err.contains("`kex_get_state` is not an NGCC KEX function"),
        "{err}"
    );
    assert!(err.contains("`9bad` is not a C symbol name"), "{err}");

    let nist = p
        .read("algorithms/kex-93.toml")
        .replace("id = \"kex-93\"", "id = \"kex-y\"")
        .replace("api = \"ngcc\"", "api = \"nist\"");
    let err = validate(&p, "kex-y", &nist);
    assert!(
        err.contains("kind `kex` exists on the NGCC API only") && err.contains("api = \"ngcc\""),
        "{err}"
    );
}

#[test]
fn a_renamed_getter_is_called_under_its_own_name() {
    let p = project();
    // Brook with its state getters renamed, as some submissions name them.
    let src = p.read("algorithms/kex-93/brook.c").replace(
        "unsigned long long kex_get_sta_len_bytes(void)",
        "unsigned long long kex_get_sta_len_bytes_initiator(void)",
    );
    p.write("algorithms/kex-93/brook.c", &src);
    let api = p.read("algorithms/kex-93/api.h").replace(
        "unsigned long long kex_get_sta_len_bytes(void);",
        "unsigned long long kex_get_sta_len_bytes_initiator(void);",
    );
    p.write("algorithms/kex-93/api.h", &api);
    let toml = p.read("algorithms/kex-93.toml").replace(
        "[[implementation]]",
        "[kex]\nnames = { kex_get_sta_len_bytes = \"kex_get_sta_len_bytes_initiator\" }\n\n[[implementation]]",
    );
    p.write("algorithms/kex-93.toml", &toml);
    p.pqbench(&["validate", "algorithms/kex-93.toml"]).expect(0);
    p.write(
        "campaigns/renamed.toml",
        &common::quick_campaign(
            &["kex-93"],
            "flag-profiles = [\"guide\"]\nstages = [\"build\", \"kat\"]",
        ),
    );
    // The same protocol: the blessed KAT still passes.
    p.pqbench(&["-q", "run", "renamed"]).expect(0);
}
