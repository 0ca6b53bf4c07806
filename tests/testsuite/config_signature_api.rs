//! `[nist] signature-api`: an unknown value names the accepted ones, and
//! the key belongs to signatures only; each one positioned error with its
//! fix, and nothing runs.

use crate::common::TestProject;

fn algorithm(kind: &str, api: &str) -> String {
    format!(
        "id = \"ctx-1\"\nname = \"One\"\nkind = \"{kind}\"\napi = \"nist\"\n\n[nist]\nsignature-api = \"{api}\"\n\n[[implementation]]\nname = \"reference\"\nroot = \"ctx-1\"\n\n[[parameter-set]]\nlabel = \"ONE-1\"\n"
    )
}

/// `pqbench plan` of a campaign over `alg`: its error text (exit 2).
fn error_of(alg: &str) -> String {
    let p = TestProject::bare();
    p.write("algorithms/ctx-1/sign.c", "int x;\n");
    p.write("algorithms/ctx-1.toml", alg);
    p.write("campaigns/c.toml", "algorithms = [\"ctx-1\"]\n");
    let run = p.pqbench(&["plan", "c"]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    run.stderr
}

#[test]
fn an_unknown_signature_api_lists_the_accepted_ones() {
    let err = error_of(&algorithm("sign", "fips204"));
    for w in [
        "`signature-api` wants one of `classic`, `fips204-context`, found `fips204`",
        "ctx-1.toml:7:17",
        "help: use one of: classic, fips204-context",
    ] {
        assert!(err.contains(w), "missing {w:?} in:\n{err}");
    }
}

#[test]
fn a_kem_with_a_signature_api_is_refused_at_the_key() {
    let err = error_of(&algorithm("kem", "fips204-context"));
    for w in [
        "`signature-api` belongs to signatures, not `kem`",
        "ctx-1.toml:7:1",
        "help: remove it",
    ] {
        assert!(err.contains(w), "missing {w:?} in:\n{err}");
    }
    assert_eq!(err.matches("error").count(), 1, "{err}");
}

#[test]
fn a_signature_with_the_context_api_plans() {
    let p = TestProject::bare();
    p.write("algorithms/ctx-1/sign.c", "int x;\n");
    p.write(
        "algorithms/ctx-1.toml",
        &algorithm("sign", "fips204-context"),
    );
    p.write("campaigns/c.toml", "algorithms = [\"ctx-1\"]\n");
    let run = p.pqbench(&["plan", "c"]).expect(0);
    assert!(run.stdout.contains("ctx-1/ONE-1"), "{}", run.stdout);
}
