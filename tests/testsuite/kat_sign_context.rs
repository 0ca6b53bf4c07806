//! The FIPS 204 context-string signature API (`[nist] signature-api =
//! "fips204-context"`): the toy of `tests/fixtures/sign-context`, whose tag
//! covers the context, built and run through the adapter by the stages
//! that call it (kat, time, memory, profile; count and ct where Valgrind
//! is), its KAT file compared byte for byte with one computed here from
//! the toy's definition over the independent CTR_DRBG of
//! `ctr_drbg_oracle`; and `pqbench import` drafting the key from its api.h.

use crate::common::{self, TestProject};
use crate::ctr_drbg_oracle::{entropy, Drbg};

const N: usize = 16;
const H: usize = 8;
const PRIME: u64 = 0x100000001b3;

/// The toy's `mix` (README.md): FNV-1a over the pieces, then one byte per
/// output index.
fn mix(pieces: &[&[u8]], out_len: usize) -> Vec<u8> {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in pieces.iter().flat_map(|p| p.iter()) {
        h = (h ^ u64::from(*b)).wrapping_mul(PRIME);
    }
    (0..out_len)
        .map(|i| {
            h = (h ^ i as u64).wrapping_mul(PRIME);
            (h >> 56) as u8
        })
        .collect()
}

/// The `.rsp` file the classic NIST generator would write for the toy
/// signing with context `ctx`: header, then per record the master stream's
/// seed and message, the keys and the signed message from the record's
/// own DRBG.
fn expected_rsp(label: &str, records: usize, ctx: &[u8]) -> String {
    let hex = |b: &[u8]| hex::encode_upper(b);
    let mut master = Drbg::new(&entropy());
    let mut out = format!("# {label}\n\n");
    for count in 0..records {
        let seed: [u8; 48] = master.generate(48).try_into().unwrap();
        let mlen = 33 * (count + 1);
        let msg = master.generate(mlen);
        let mut rng = Drbg::new(&seed);
        let sk_seed = rng.generate(N);
        let pk = mix(&[&sk_seed], N);
        let salt = rng.generate(H);
        let prefix = [0u8, ctx.len() as u8];
        let tag = mix(&[&pk, &salt, &prefix, ctx, &msg], H);
        let sm = [salt.as_slice(), &tag, &msg].concat();
        out += &format!(
            "count = {count}\nseed = {}\nmlen = {mlen}\nmsg = {}\npk = {}\nsk = {}{}\nsmlen = {}\nsm = {}\n\n",
            hex(&seed),
            hex(&msg),
            hex(&pk),
            hex(&sk_seed),
            hex(&pk),
            sm.len(),
            hex(&sm)
        );
    }
    out
}

const TOML: &str = r#"id = "ctx-toy"
name = "CTX-TOY"
kind = "sign"
api = "nist"

[nist]
lengths = "size-t"
signature-api = "fips204-context"

[[implementation]]
name = "reference"
root = "ctx-toy"
sources = ["sign.c"]

[[parameter-set]]
label = "CTX-TOY"
kat-records = 20

# The profile stage relinks the library with the adapter's randomness
# wrapped: sign draws once per call.
[[profile.wrap]]
symbol = "{randombytes}"
class = "drng"

[[known-issue]]
labels = ".*"
action = "measure"
cause = "no reference KAT: the file is compared in the test"
"#;

#[test]
fn context_api_signatures_are_made_and_opened_with_the_empty_context() {
    let p = TestProject::bare();
    p.copy("tests/fixtures/sign-context", "algorithms/ctx-toy");
    p.write("algorithms/ctx-toy.toml", TOML);
    // count and ct run the driver under Valgrind: only where it is.
    let valgrind = common::skip::tools_or_skip(&["valgrind"], "apt-get install valgrind");
    let stages = if valgrind {
        "stages = [\"build\", \"kat\", \"time\", \"memory\", \"profile\", \"survey\", \"count\", \"ct\"]"
    } else {
        "stages = [\"build\", \"kat\", \"time\", \"memory\", \"profile\", \"survey\"]"
    };
    p.write(
        "campaigns/t.toml",
        &common::quick_campaign(&["ctx-toy"], stages),
    );
    let run = p.pqbench(&["-q", "run", "t"]);
    let rsp = p.read("output/t/local/kat/ctx-toy/CTX-TOY.rsp");
    assert!(
        rsp == expected_rsp("CTX-TOY", 20, b""),
        "the KAT file differs from the toy's definition with the empty context\n{}\n{}",
        run.stdout,
        run.stderr
    );
    // The toy's tag covers the context: any other would show.
    assert_ne!(rsp, expected_rsp("CTX-TOY", 20, b"pqbench"));
    // verify accepts in the time stage's honest set-up and replays.
    for op in ["keygen", "sign", "verify"] {
        let r = common::op_record(&p, "t", "ctx-toy", "CTX-TOY", op);
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["status"], "ok", "{op}: {json:#}");
    }
    let stage =
        |dir: &str, op: &str| p.json(&format!("output/t/local/{dir}/ctx-toy/CTX-TOY__{op}.json"));
    let sign = stage("profile", "sign");
    assert_eq!(sign["status"], "ok", "{sign:#}");
    assert_eq!(sign["calls_per_op"]["randombytes"], 1.0, "{sign:#}");
    // The survey starts from the functions the API's macros rename to:
    // the toy defines no `crypto_sign_keypair` symbol at all.
    let survey = p.json("output/t/local/survey.json");
    let evidence = &survey["algorithms"][0]["instances"][0]["evidence"];
    assert_eq!(evidence["api_missing"], serde_json::json!([]), "{survey:#}");
    let found = evidence["api_found"].as_array().unwrap();
    assert!(
        found.contains(&serde_json::json!("ctxtoy_keypair")),
        "{survey:#}"
    );
    assert!(
        found.contains(&serde_json::json!("ctxtoy_sign")),
        "{survey:#}"
    );
    if valgrind {
        for op in ["sign", "verify"] {
            assert_eq!(stage("count", op)["status"], "ok", "count {op}");
            assert_eq!(stage("ct", op)["status"], "clean", "ct {op}");
        }
    }
}

#[test]
fn import_drafts_the_context_api_from_the_prototype() {
    let p = TestProject::bare();
    let fixture = common::repo().join("tests/fixtures/sign-context");
    p.pqbench(&["import", fixture.to_str().unwrap(), "--id", "ctx-toy"])
        .expect(0);
    let toml = p.read("algorithms/ctx-toy.toml");
    assert!(
        toml.contains("signature-api = \"fips204-context\""),
        "{toml}"
    );
    assert!(toml.contains("lengths = \"size-t\""), "{toml}");
    p.pqbench(&["validate", "algorithms/ctx-toy.toml"])
        .expect(0);
}
