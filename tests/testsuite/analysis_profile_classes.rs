//! Helper classes for code that is not ICCS code: a NIST-API fixture with
//! its own SHA-256 and a renamed randombytes (tests/fixtures/profile_nist,
//! designed split in its api.h). With a `hash` wrap on the namespaced
//! SHA-256 (declared by the algorithm, `{namespace}` expanded per instance)
//! and a `drng` wrap on `{randombytes}` (the campaign's; pqbench's adapter
//! defines that symbol, not the submission), the page shows both shares
//! near the design under the configured column titles, and the survey
//! verdict stays `bypass`. Its own test binary, so no other test of this
//! set measures beside it.

use crate::common;
use common::*;

use pqbench::records::analysis::ProfileRecord;

const ALGORITHM: &str = r#"id = "fix-97"
name = "Fixture fix-97"
kind = "sign"
api = "nist"

[nist]
header = "api.h"
randombytes = "fix_randombytes"

[[implementation]]
name = "reference"
root = "profile_nist"
sources = ["sign.c", "sha256.c"]

[[parameter-set]]
label = "PN-1"
namespace = "PQB_PN_"

[profile.classes]
hash = "own SHA-256"

[[profile.wrap]]
symbol = "{namespace}sha256"
class = "hash"

[[known-issue]]
labels = ".*"
action = "measure"
cause = "fixture without reference KAT"
"#;

const WRAPS: &str = "[[profile.wrap]]\nsymbol = \"{randombytes}\"\nclass = \"drng\"\n";

fn profile_record(p: &TestProject, op: &str) -> ProfileRecord {
    let rel = format!("output/t/local/profile/fix-97/PN-1__{op}.json");
    serde_json::from_str(&p.read(&rel)).unwrap_or_else(|e| panic!("parsing {rel}: {e}"))
}

/// Share of the profiled trial's time its process had the CPU.
fn cpu_share(r: &ProfileRecord) -> f64 {
    let t = r.process.as_ref().unwrap().line("trial").unwrap();
    t.f64("cpu_seconds").unwrap() / t.f64("seconds").unwrap()
}

fn class_share(r: &ProfileRecord, class: &str) -> f64 {
    pqbench::measure::profile::class_share(
        &r.shapes,
        r.total_ticks,
        &pqbench::plan::HelperClass::new(class),
    )
}

#[test]
fn own_sha256_and_renamed_randombytes_get_their_shares() {
    let p = TestProject::bare();
    p.copy("tests/fixtures/profile_nist", "algorithms/profile_nist");
    p.write("algorithms/fix-97.toml", ALGORITHM);
    let campaign = measure_campaign(
        &["fix-97"],
        &["build", "kat", "time", "profile", "survey", "render"],
        &[
            ("trials", "1"),
            ("trial-seconds", "0.3"),
            ("max-iterations", "2000"),
            ("budget-seconds", "3.0"),
            // The debug build's bootstrap over thousands of samples is slow.
            ("samples", "false"),
        ],
        WRAPS,
    );
    p.write("campaigns/t.toml", &campaign);
    p.pqbench(&["run", "t"]).expect(1); // NOKAT counts as failing

    // A profile that lost the CPU is measured again (at most 3 runs in all),
    // keeping each operation's run that had the CPU most.
    let ops = ["keygen", "sign", "verify"];
    let mut best: Vec<ProfileRecord> = ops.iter().map(|op| profile_record(&p, op)).collect();
    for _ in 0..2 {
        if best.iter().all(|r| cpu_share(r) >= 0.95) {
            break;
        }
        p.pqbench(&["run", "t", "--remeasure"]).expect(1);
        for (i, op) in ops.iter().enumerate() {
            let again = profile_record(&p, op);
            if cpu_share(&again) > cpu_share(&best[i]) {
                best[i] = again;
            }
        }
    }
    let [keygen, sign, verify] = &best[..] else {
        unreachable!()
    };
    for r in &best {
        assert_eq!(r.status, "ok", "{}: {:?}", r.op, r.detail);
        let mut wrapped = r.wrapped.clone();
        wrapped.sort();
        // The namespace expanded; the adapter's randombytes wrapped too.
        assert_eq!(wrapped, ["PQB_PN_sha256", "fix_randombytes"], "{}", r.op);
    }
    let calls = |r: &ProfileRecord| -> Vec<(String, f64)> {
        r.calls_per_op
            .iter()
            .map(|(f, c)| (f.clone(), *c))
            .collect()
    };
    assert_eq!(calls(keygen), [("fix_randombytes".to_string(), 4.0)]);
    assert_eq!(calls(sign), [("PQB_PN_sha256".to_string(), 2.0)]);
    assert_eq!(calls(verify), [("PQB_PN_sha256".to_string(), 1.0)]);

    // The designed split, within 10 points: keygen all DRNG, sign half
    // and verify a quarter in the wrapped SHA-256.
    let near = |r: &ProfileRecord, class: &str, want: f64| {
        let got = class_share(r, class);
        assert!(
            (got - want).abs() <= 0.10,
            "{} {class}: {got:.3}, designed {want}",
            r.op
        );
    };
    near(keygen, "drng", 1.0);
    near(keygen, "hash", 0.0);
    near(sign, "hash", 0.5);
    near(sign, "drng", 0.0);
    near(verify, "hash", 0.25);
    near(verify, "drng", 0.0);
    // The recorded two-way split agrees with the classes.
    for r in &best {
        assert!((r.hash_share - class_share(r, "hash")).abs() < 1e-12);
        assert!((r.drng_share - class_share(r, "drng")).abs() < 1e-12);
    }

    // Profiling looked at the SHA-256, the survey did not: its own SHA-2
    // constants, no ICCS helper, so `bypass`.
    let survey = p.json("output/t/local/survey.json");
    let alg = &survey["algorithms"][0];
    assert_eq!(alg["verdict"], "bypass", "{alg:#}");
    let reason = alg["reason"].as_str().unwrap();
    assert!(reason.contains("no ICCS helper reached"), "{reason}");

    // The page's columns are the configured classes, and the verdict is
    // unchanged there too.
    let page = p.read("output/t/site/local/fix-97.md");
    assert!(
        page.contains("| instance | operation | own SHA-256 | DRNG | calls per operation |")
            && page.contains("| `PN-1` | keygen | 0.0% | "),
        "{page}"
    );
    // NIST-API code has no ICCS helpers to call: the page words the same
    // verdict as its own primitives.
    assert!(
        page.contains("Survey verdict: [own primitives (NIST API: no ICCS helpers to use)]"),
        "{page}"
    );
    let summary = p.read("output/t/site/local/summary.md");
    assert!(
        summary.contains("profiled helpers other than the DRNG (own SHA-256)"),
        "{summary}"
    );
}
