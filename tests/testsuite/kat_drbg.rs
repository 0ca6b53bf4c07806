//! The NIST KAT seeding: pqbench's C AES-256 CTR_DRBG against the published
//! draws and against an independent implementation over the RustCrypto
//! `aes` crate, and the generated `.rsp` files' seed and message schedule.

use crate::ctr_drbg_oracle;
use ctr_drbg_oracle::{entropy, Drbg, KNOWN};

use pqbench::cache::Cache;
use pqbench::support::Support;
use pqbench::toolchain::Compiler;

#[test]
fn rust_oracle_reproduces_the_published_draws() {
    let mut d = Drbg::new(&entropy());
    for want in KNOWN {
        assert_eq!(hex::encode_upper(d.generate(48)), want);
    }
}

#[test]
fn c_drbg_reproduces_the_published_draws() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::new(dir.path());
    let cc = Compiler::detect("gcc").unwrap();
    let support = Support::prepare(&cache, &cc).unwrap();
    let out = std::process::Command::new(&support.kat_runner)
        .arg("--drbg-selftest")
        .output()
        .unwrap();
    assert!(out.status.success());
    let lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(lines, KNOWN);
}

/// Field values of one `.rsp` file, per record.
fn records(text: &str) -> Vec<Vec<(String, String)>> {
    let mut out: Vec<Vec<(String, String)>> = Vec::new();
    for line in text.lines() {
        if let Some((k, v)) = line.split_once(" = ") {
            if k == "count" {
                out.push(Vec::new());
            }
            out.last_mut().unwrap().push((k.to_string(), v.to_string()));
        }
    }
    out
}

fn field<'a>(rec: &'a [(String, String)], name: &str) -> &'a str {
    &rec.iter().find(|(k, _)| k == name).unwrap().1
}

/// Every seed and message of the committed NIST-API demo references comes
/// from the master DRBG in the published order: seed, then message, count
/// after count.
#[test]
fn demo_rsp_seeds_and_messages_follow_the_master_drbg() {
    for label in ["LARCH-1", "LARCH-3"] {
        let path = format!(
            "{}/kat/sign-92/{label}/PQCsignKAT.rsp",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).unwrap();
        let recs = records(&text);
        assert_eq!(recs.len(), 100);
        let mut master = Drbg::new(&entropy());
        for (i, rec) in recs.iter().enumerate() {
            assert_eq!(field(rec, "count"), i.to_string());
            assert_eq!(
                field(rec, "seed"),
                hex::encode_upper(master.generate(48)),
                "{label} count {i}"
            );
            let mlen = 33 * (i + 1);
            assert_eq!(field(rec, "mlen"), mlen.to_string());
            assert_eq!(
                field(rec, "msg"),
                hex::encode_upper(master.generate(mlen)),
                "{label} count {i}"
            );
        }
        assert_eq!(field(&recs[0], "seed"), KNOWN[0]);
        assert_eq!(
            field(&recs[1], "seed"),
            KNOWN[2],
            "count 1 follows the count-0 message"
        );
    }
}

/// The exact layout of the NIST `.rsp` files: header, empty line, 100
/// records each followed by an empty line, upper-case hex.
#[test]
fn demo_rsp_has_the_nist_layout() {
    let path = format!(
        "{}/kat/sign-92/LARCH-1/PQCsignKAT.rsp",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = text.split('\n').collect();
    assert_eq!(lines[0], "# LARCH-1");
    assert_eq!(lines[1], "");
    assert!(text.ends_with("\n\n"));
    let fields = ["count", "seed", "mlen", "msg", "pk", "sk", "smlen", "sm"];
    let body = &lines[2..lines.len() - 1];
    assert_eq!(body.len(), 100 * (fields.len() + 1));
    for (r, chunk) in body.chunks(fields.len() + 1).enumerate() {
        for (line, name) in chunk.iter().zip(fields) {
            let (k, v) = line
                .split_once(" = ")
                .unwrap_or_else(|| panic!("record {r}: {line}"));
            assert_eq!(k, name, "record {r}");
            let hex_field = !["count", "mlen", "smlen"].contains(&name);
            if hex_field {
                assert!(
                    v.bytes()
                        .all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(&b)),
                    "record {r} {name}"
                );
                assert_eq!(v.len() % 2, 0);
            } else {
                assert!(v.parse::<u64>().is_ok());
            }
        }
        assert_eq!(
            chunk[fields.len()],
            "",
            "record {r} ends with an empty line"
        );
        let smlen: usize = chunk[6].split_once(" = ").unwrap().1.parse().unwrap();
        assert_eq!(chunk[7].len() - "sm = ".len(), 2 * smlen);
    }
}
