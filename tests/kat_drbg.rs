//! The NIST KAT seeding: pqbench's C AES-256 CTR_DRBG against the published
//! draws and against an independent implementation over the RustCrypto
//! `aes` crate, and the generated `.rsp` files' seed and message schedule.

use aes::cipher::{BlockEncrypt, KeyInit};
use aes::Aes256;

use pqbench::cache::Cache;
use pqbench::support::Support;
use pqbench::toolchain::Compiler;

const KNOWN: [&str; 3] = [
    "061550234D158C5EC95595FE04EF7A25767F2E24CC2BC479D09D86DC9ABCFDE7056A8C266F9EF97ED08541DBD2E1FFA1",
    "D81C4D8D734FCBFBEADE3D3F8A039FAA2A2C9957E835AD55B22E75BF57BB556AC81ADDE6AEEB4A5A875C3BFCADFA958F",
    "64335BF29E5DE62842C941766BA129B0643B5E7121CA26CFC190EC7DC3543830557FDD5C03CF123A456D48EFEA43C868",
];

/// The CTR_DRBG of the NIST PQC KAT programs (AES-256, no derivation
/// function), written from SP 800-90A over an independent AES.
struct Drbg {
    key: [u8; 32],
    v: [u8; 16],
}

impl Drbg {
    fn new(entropy: &[u8; 48]) -> Drbg {
        let mut d = Drbg {
            key: [0; 32],
            v: [0; 16],
        };
        d.update(Some(entropy));
        d
    }

    fn increment(&mut self) {
        for b in self.v.iter_mut().rev() {
            *b = b.wrapping_add(1);
            if *b != 0 {
                break;
            }
        }
    }

    fn block(&mut self) -> [u8; 16] {
        self.increment();
        let cipher = Aes256::new(&self.key.into());
        let mut block = self.v.into();
        cipher.encrypt_block(&mut block);
        block.into()
    }

    fn update(&mut self, data: Option<&[u8; 48]>) {
        let mut temp = [0u8; 48];
        for i in 0..3 {
            let b = self.block();
            temp[16 * i..16 * i + 16].copy_from_slice(&b);
        }
        if let Some(d) = data {
            temp.iter_mut().zip(d).for_each(|(t, x)| *t ^= x);
        }
        self.key.copy_from_slice(&temp[..32]);
        self.v.copy_from_slice(&temp[32..]);
    }

    fn generate(&mut self, n: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(n + 16);
        while out.len() < n {
            let b = self.block();
            out.extend_from_slice(&b);
        }
        out.truncate(n);
        self.update(None);
        out
    }
}

fn entropy() -> [u8; 48] {
    std::array::from_fn(|i| i as u8)
}

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
