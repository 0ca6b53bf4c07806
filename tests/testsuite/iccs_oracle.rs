//! The ICCS stand-in helpers (SM3, pseudoXOF, pseudohash, SM3 Hash_DRBG)
//! against independent implementations built on the RustCrypto `sm3` crate.

use crate::common;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use rand::{Rng, SeedableRng};
use sm3::{Digest, Sm3};

fn sm3(data: &[u8]) -> Vec<u8> {
    Sm3::digest(data).to_vec()
}

/// KDF-SM3 counter mode: SM3(m || ctr), 32-bit big-endian counter from 1.
fn kdf(out_bits: usize, m: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut ctr: u32 = 1;
    while out.len() * 8 < out_bits {
        out.extend(sm3(&[m, &ctr.to_be_bytes()].concat()));
        ctr += 1;
    }
    truncate_bits(out, out_bits)
}

fn truncate_bits(mut v: Vec<u8>, bits: usize) -> Vec<u8> {
    v.truncate(bits.div_ceil(8));
    if bits % 8 != 0 {
        let last = v.len() - 1;
        v[last] &= 0xffu8 << (8 - bits % 8);
    }
    v
}

const SEEDLEN: usize = 55; // 440 bits

/// SP 800-90A Hash_df with SM3.
fn hash_df(input: &[u8], bits: u32) -> Vec<u8> {
    let mut out = Vec::new();
    let mut counter: u8 = 1;
    while out.len() * 8 < bits as usize {
        out.extend(sm3(&[&[counter][..], &bits.to_be_bytes(), input].concat()));
        counter += 1;
    }
    out.truncate(bits as usize / 8);
    out
}

/// (a + b) mod 2^440, big-endian.
fn add_into(a: &mut [u8; SEEDLEN], b: &[u8]) {
    let mut carry = 0u16;
    for i in 0..SEEDLEN {
        let ai = SEEDLEN - 1 - i;
        let bv = if i < b.len() {
            b[b.len() - 1 - i] as u16
        } else {
            0
        };
        let s = a[ai] as u16 + bv + carry;
        a[ai] = s as u8;
        carry = s >> 8;
    }
}

struct HashDrbg {
    v: [u8; SEEDLEN],
    c: [u8; SEEDLEN],
    counter: u64,
}

impl HashDrbg {
    fn new(entropy: &[u8]) -> HashDrbg {
        let v: [u8; SEEDLEN] = hash_df(entropy, 440).try_into().unwrap();
        let c: [u8; SEEDLEN] = hash_df(&[&[0u8][..], &v].concat(), 440).try_into().unwrap();
        HashDrbg { v, c, counter: 1 }
    }

    fn generate(&mut self, bits: usize) -> Vec<u8> {
        let mut data = self.v;
        let mut w = Vec::new();
        while w.len() * 8 < bits {
            w.extend(sm3(&data));
            add_into(&mut data, &[1]);
        }
        let h = sm3(&[&[3u8][..], &self.v].concat());
        let c = self.c;
        add_into(&mut self.v, &h);
        add_into(&mut self.v, &c);
        add_into(&mut self.v, &self.counter.to_be_bytes());
        self.counter += 1;
        truncate_bits(w, bits)
    }
}

struct Harness {
    _dir: tempfile::TempDir,
    exe: PathBuf,
}

fn harness() -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let standin = root.join("algorithms/components/iccs-standin");
    let exe = dir.path().join("harness");
    let status = Command::new("gcc")
        .args(["-std=c99", "-O2", "-D_GNU_SOURCE", "-I"])
        .arg(&standin)
        .arg(root.join("tests/fixtures/oracle/iccs_harness.c"))
        .args(["sm3.c", "auxfunc.c", "drng.c"].map(|f| standin.join(f)))
        .arg("-o")
        .arg(&exe)
        .status()
        .unwrap();
    assert!(status.success());
    Harness { _dir: dir, exe }
}

/// Sends all commands at once and returns one output line per answer.
fn ask(h: &Harness, commands: &[String]) -> Vec<String> {
    let mut child = Command::new(&h.exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let text = commands.join("\n") + "\n";
    let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

fn hexarg(b: &[u8]) -> String {
    if b.is_empty() {
        "-".into()
    } else {
        hex::encode(b)
    }
}

#[test]
fn sm3_matches_the_rustcrypto_crate_on_random_inputs() {
    let h = harness();
    let mut rng = rand::rngs::StdRng::seed_from_u64(32905);
    let inputs: Vec<Vec<u8>> = (0..600)
        .map(|i| {
            let len = if i < 200 { i } else { rng.gen_range(0..3000) };
            (0..len).map(|_| rng.gen()).collect()
        })
        .collect();
    let cmds: Vec<String> = inputs
        .iter()
        .map(|m| format!("sm3 0 {}", hexarg(m)))
        .collect();
    let got = ask(&h, &cmds);
    assert_eq!(got.len(), inputs.len());
    for (m, g) in inputs.iter().zip(&got) {
        assert_eq!(g, &hex::encode(sm3(m)), "message of {} bytes", m.len());
    }
    // The GB/T 32905 example: SM3("abc").
    assert_eq!(
        ask(&h, &["sm3 0 616263".into()])[0],
        "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0"
    );
}

#[test]
fn pseudoxof_and_pseudohash_match_kdf_sm3() {
    let h = harness();
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    let mut cmds = Vec::new();
    let mut want = Vec::new();
    for i in 0..300 {
        let m: Vec<u8> = (0..rng.gen_range(0..200)).map(|_| rng.gen()).collect();
        let bits = if i % 3 == 0 {
            rng.gen_range(1..2000)
        } else {
            8 * rng.gen_range(1..300)
        };
        cmds.push(format!("xof {bits} {}", hexarg(&m)));
        want.push(hex::encode(kdf(bits, &m)));
        cmds.push(format!("hash {bits} {}", hexarg(&m)));
        want.push(hex::encode(kdf(bits, &[&[1u8][..], &m].concat())));
    }
    assert_eq!(ask(&h, &cmds), want);
}

#[test]
fn hash_drbg_matches_sp800_90a_over_sm3() {
    let h = harness();
    let mut rng = rand::rngs::StdRng::seed_from_u64(90);
    for seed_len in [16usize, 32, 48, 64, 100] {
        let seed: Vec<u8> = (0..seed_len).map(|_| rng.gen()).collect();
        let draws: Vec<usize> = (0..12)
            .map(|i| {
                if i % 4 == 3 {
                    rng.gen_range(1..3000)
                } else {
                    8 * rng.gen_range(1..200)
                }
            })
            .collect();
        let cmd = format!(
            "drbg {} {}",
            hex::encode(&seed),
            draws
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        );
        let mut oracle = HashDrbg::new(&seed);
        let want: Vec<String> = draws
            .iter()
            .map(|&b| hex::encode(oracle.generate(b)))
            .collect();
        assert_eq!(ask(&h, &[cmd]), want, "seed of {seed_len} bytes");
    }
    // The driver's seed (bytes 00..2f): a fixed first draw pins the stand-in.
    let seed: Vec<u8> = (0u8..48).collect();
    let first = HashDrbg::new(&seed).generate(256);
    assert_eq!(
        hex::encode(first),
        "b569718fc1f1f82a4c0acf90ff4ac10966e11e3750012597bb7ecfd357c962aa"
    );
}

/// The ICCS baseline of a campaign with hash candidates: every helper
/// instance's self-check file (`KAT_ICCS`) holds GB/T 32905's two examples
/// and 257 messages drawn from the stand-in's Hash_DRBG ("KAT_ICCS" × 8),
/// each digest equal to what the RustCrypto `sm3` crate gives for the
/// helper (sm3hash: SM3; pseudoXOF: KDF-SM3; pseudohash: KDF-SM3 of 0x01 ‖
/// the message, the stand-in's definition).
#[test]
fn the_iccs_baseline_self_check_agrees_with_the_sm3_crate() {
    let p = common::TestProject::demo();
    p.write(
        "campaigns/baseline.toml",
        "algorithms = [\"hash-95\"]\nflag-profiles = [\"guide\"]\nstages = [\"build\", \"kat\"]\n[host]\nrequire-fixed = false\n",
    );
    p.pqbench(&["-q", "run", "baseline"]).expect(0);
    let dir = "output/baseline/local/kat/iccs";
    let labels = [
        "sm3hash-256",
        "pseudohash-512",
        "pseudohash-768",
        "pseudohash-1024",
        "pseudoXOF-256",
        "pseudoXOF-512",
    ];
    for label in labels {
        let (helper, bits) = label.split_once('-').unwrap();
        let bits: usize = bits.parse().unwrap();
        let text = p.read(&format!("{dir}/{label}__KAT_ICCS.kat"));
        let records: Vec<Vec<(&str, &str)>> = text
            .split("\n\n")
            .filter(|r| !r.trim().is_empty())
            .map(|r| r.lines().filter_map(|l| l.split_once(" = ")).collect())
            .collect();
        assert_eq!(records.len(), 2 + 257, "{label}");
        fn field<'a>(r: &[(&'a str, &'a str)], k: &str) -> &'a str {
            r.iter().find(|(x, _)| *x == k).unwrap().1
        }
        // GB/T 32905's examples, through the component's sm3hash.
        assert_eq!(
            field(&records[0], "Dst").to_lowercase(),
            "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0"
        );
        assert_eq!(
            field(&records[1], "Dst").to_lowercase(),
            hex::encode(sm3(&b"abcd".repeat(16)))
        );
        let mut drbg = HashDrbg::new(&b"KAT_ICCS".repeat(8));
        for (n, r) in records[2..].iter().enumerate() {
            let m = if n == 0 {
                Vec::new()
            } else {
                drbg.generate(8 * n)
            };
            assert_eq!(field(r, "Msg_Len"), (8 * n).to_string(), "{label}");
            let shown = if m.is_empty() {
                "00".to_string()
            } else {
                hex::encode_upper(&m)
            };
            assert_eq!(field(r, "Msg"), shown, "{label} message {n}");
            let want = match helper {
                "sm3hash" => sm3(&m),
                "pseudoXOF" => kdf(bits, &m),
                _ => kdf(bits, &[&[1u8][..], &m].concat()),
            };
            assert_eq!(field(r, "Dst_Len"), bits.to_string());
            assert_eq!(
                field(r, "Dst"),
                hex::encode_upper(&want),
                "{label} at {} bytes",
                n
            );
        }
        let log = p.read(&format!("{dir}/{label}.log"));
        assert!(
            log.trim_end()
                .ends_with(&format!("RESULT iccs {label} PASS")),
            "{log}"
        );
    }
}
