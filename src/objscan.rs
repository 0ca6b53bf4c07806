//! Evidence for the symmetric-primitive survey from one instance's
//! relocatable objects: the ICCS helpers the exported API reaches, and the
//! well-known constant tables in code or data it reaches.
//!
//! Reachability is the function graph of [`LinkGraph`]. An API function
//! reaches what its own code calls or jumps to (tail calls included) or
//! takes the address of, and, transitively, what those functions' code
//! does; the data their code refers to is reached too, and data that data
//! points to. Code is cut into functions by its symbols even without
//! `-ffunction-sections` (a symbol of size 0, as in assembly without
//! `.size`, runs to the next one), and the calls the assembler resolved
//! inside a section, which carry no relocation, are decoded from the
//! instructions (x86, AArch64; other instruction sets keep a whole code
//! section as one piece). Data is never followed into code: a function
//! pointer in a table is no call. Data sections are whole, so they
//! over-approximate without `-fdata-sections` (a table sharing `.rodata`
//! with reachable data counts). A helper is reached when reached code
//! refers to it; it is recorded, not followed, and no function defining a
//! helper is entered (its SM3 is ICCS code).
//!
//! Tables: the leading entries, in little- and big-endian word order, are
//! searched in `.text*`, `.rodata*`, `.data*` (and data-model variants). As
//! code may build constants from immediates, a `.text` section also counts
//! with at least four distinct distinctive words of a table (all, if fewer),
//! little-endian as x86 immediates and literal pools hold them (AArch64
//! `movz/movk` pairs are not recognised). A SHA-256 word right after the low
//! half of the matching SHA-512 word is part of a SHA-512 immediate.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::elf::{LinkGraph, Node};

pub(crate) mod tamper;

/// Helper symbols of the NGCC API, the default for `scan`.
pub const DEFAULT_HELPERS: [&str; 5] = [
    "pseudohash",
    "pseudoXOF",
    "sm3hash",
    "get_random_number",
    "init_random_number",
];

/// DRNG helpers do not count as hashing: a submission may draw from the ICCS
/// DRNG and still bring its own hash.
pub(crate) fn is_drng_helper(name: &str) -> bool {
    name.contains("random")
}

/// What the survey stage found for one instance: its own objects (by
/// source file) and the evidence drawn from them.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct SurveyOutput {
    pub objects: Vec<String>,
    pub evidence: ObjectEvidence,
}

pub use crate::records::evidence::ObjectEvidence;

pub use crate::records::evidence::HelperUse;

pub use crate::records::evidence::TableHit;

/// Keccak-f[1600] round constant from the LFSR of FIPS 202, §3.2.5.
fn keccak_rc(round: usize) -> u64 {
    let rc = |t: usize| {
        let mut r: u16 = 1;
        for _ in 0..t % 255 {
            r <<= 1;
            r ^= if r & 0x100 != 0 { 0x171 } else { 0 }; // x^8+x^6+x^5+x^4+1
        }
        u64::from(r & 1)
    };
    (0..7).fold(0, |acc, j| acc | rc(j + 7 * round) << ((1 << j) - 1))
}

fn xtime(a: u8) -> u8 {
    (a << 1) ^ if a & 0x80 != 0 { 0x1b } else { 0 }
}

/// AES S-box entry (FIPS 197): inverse in GF(2^8), then the affine map.
fn aes_sbox(x: u8) -> u8 {
    let mul = |a, b: u8| (0..8).fold((0, a), |(p, a), i| (p ^ (a * ((b >> i) & 1)), xtime(a)));
    let v = (1..=255u8).find(|&y| mul(x, y).0 == 1).unwrap_or(0);
    v ^ v.rotate_left(1) ^ v.rotate_left(2) ^ v.rotate_left(3) ^ v.rotate_left(4) ^ 0x63
}

/// SHA-256 K entry: the first 32 fraction bits of the cube root of `prime`.
fn sha256_k(prime: u128) -> u32 {
    let fits = |r: u128| r * r * r <= prime << 96;
    let bit = |r: u128, b: u32| Some(r | (1 << b)).filter(|&t| fits(t)).unwrap_or(r);
    (0..36).rev().fold(0, bit) as u32
}

const SHA512_K: [u64; 8] = [
    0x428a2f98d728ae22,
    0x7137449123ef65cd,
    0xb5c0fbcfec4d3b2f,
    0xe9b5dba58189dbbc,
    0x3956c25bf348b538,
    0x59f111f1b605d019,
    0x923f82a4af194f9b,
    0xab1c5ed5da6d8118,
];
const SM3_IV: [u32; 8] = [
    0x7380166f, 0x4914b2b9, 0x172442d7, 0xda8a0600, 0xa96f30bc, 0x163138aa, 0xe38dee4d, 0xb0fb0e4e,
];
const SM4_SBOX: [u8; 32] = [
    0xd6, 0x90, 0xe9, 0xfe, 0xcc, 0xe1, 0x3d, 0xb7, 0x16, 0xb6, 0x14, 0xc2, 0x28, 0xfb, 0x2c, 0x05,
    0x2b, 0x67, 0x9a, 0x76, 0x2a, 0xbe, 0x04, 0xc3, 0xaa, 0x44, 0x13, 0x26, 0x49, 0x86, 0x06, 0x99,
];
/// "expand 32-byte k" as little-endian words.
const CHACHA_SIGMA: [u32; 4] = [0x61707865, 0x3320646e, 0x79622d32, 0x6b206574];

/// A constant table in the byte forms it is searched in.
struct Table {
    name: &'static str,
    family: &'static str,
    contiguous: [Vec<u8>; 2],
    /// Little-endian immediates, each with the SHA-512 low half that would
    /// betray it as part of a SHA-512 constant.
    immediates: Vec<(Vec<u8>, Option<[u8; 4]>)>,
}

/// `words` are the entries as little-endian bytes, the first `n` forming the
/// contiguous patterns. Among 64-bit entries only those needing more than 32
/// bits are distinctive enough to count as immediates; bytes never are.
fn table(name: &'static str, family: &'static str, words: &[Vec<u8>], n: usize) -> Table {
    let be = words[..n].iter().flat_map(|w| w.iter().rev()).copied();
    let shadow = |i: usize, w: &[u8]| {
        (family == "sha2" && w.len() == 4).then(|| (SHA512_K[i] as u32).to_le_bytes())
    };
    let immediates = words.iter().enumerate().filter(|(_, w)| match w.len() {
        4 => true,
        8 => w[4..] != [0; 4],
        _ => false,
    });
    Table {
        name,
        family,
        contiguous: [words[..n].concat(), be.collect()],
        immediates: immediates.map(|(i, w)| (w.clone(), shadow(i, w))).collect(),
    }
}

/// Tables derivable from their standards' definitions are computed, the
/// others (SHA-512 K, SM3 IV, SM4 S-box, ChaCha sigma) written out above.
fn tables() -> Vec<Table> {
    let w32 = |w: &[u32]| -> Vec<Vec<u8>> { w.iter().map(|x| x.to_le_bytes().to_vec()).collect() };
    let w64 = |w: &[u64]| -> Vec<Vec<u8>> { w.iter().map(|x| x.to_le_bytes().to_vec()).collect() };
    let w8 = |b: &[u8]| -> Vec<Vec<u8>> { b.iter().map(|&x| vec![x]).collect() };
    let rc: Vec<u64> = (0..8).map(keccak_rc).collect();
    let sha256 = [2, 3, 5, 7, 11, 13, 17, 19].map(sha256_k);
    let sbox: Vec<u8> = (0..32).map(aes_sbox).collect();
    // Te0[x] = (2·S[x], S[x], S[x], 3·S[x]); SM4 CK byte j of CK_i = (4i+j)·7.
    let be = u32::from_be_bytes;
    let te = |&s: &u8| be([xtime(s), s, s, xtime(s) ^ s]);
    let ck = |i: u8| be([0, 1, 2, 3].map(|j| (4 * i + j) * 7));
    let (te0, ck): (Vec<u32>, Vec<u32>) =
        (sbox[..8].iter().map(te).collect(), (0..8).map(ck).collect());
    vec![
        table("Keccak-f round constants", "keccak", &w64(&rc), 4),
        table("SHA-256 K", "sha2", &w32(&sha256), 8),
        table("SHA-512 K", "sha2", &w64(&SHA512_K), 4),
        table("SM3 IV", "sm3", &w32(&SM3_IV), 8),
        table("AES S-box", "aes", &w8(&sbox), 32),
        table("AES T-table", "aes", &w32(&te0), 8),
        table("SM4 S-box", "sm4", &w8(&SM4_SBOX), 32),
        table("SM4 CK", "sm4", &w32(&ck), 8),
        table("ChaCha sigma", "chacha", &w32(&CHACHA_SIGMA), 4),
    ]
}

fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    let mut windows = hay.get(from..)?.windows(needle.len());
    Some(from + windows.position(|w| w == needle)?)
}

impl Table {
    /// Offset of the first match in `data`, if the table is present.
    fn find_in(&self, data: &[u8], is_text: bool) -> Option<usize> {
        let whole = self.contiguous.iter().flat_map(|p| find(data, p, 0)).min();
        if whole.is_some() || !is_text || self.immediates.is_empty() {
            return whole;
        }
        let unshadowed = |(pat, shadow): &(Vec<u8>, Option<[u8; 4]>)| {
            let mut from = 0;
            while let Some(off) = find(data, pat, from) {
                if !shadow.is_some_and(|s| off >= 4 && data[off - 4..off] == s) {
                    return Some(off);
                }
                from = off + 1;
            }
            None
        };
        let found: Vec<usize> = self.immediates.iter().filter_map(unshadowed).collect();
        let needed = self.immediates.len().min(4);
        (found.len() >= needed).then(|| found.into_iter().min().unwrap_or(0))
    }
}

fn searchable(name: &str) -> bool {
    let prefixes = [".text", ".rodata", ".data", ".ldata", ".lrodata", ".sdata"];
    prefixes.iter().any(|p| name.starts_with(p)) || name.starts_with(".srodata")
}

/// Objects are named by file name, which is what a page shows.
fn label(path: &Path) -> String {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    name.unwrap_or_else(|| path.display().to_string())
}

/// Scans one instance's objects; see the module documentation for the rules.
pub fn scan(objects: &[PathBuf], api: &[String], helpers: &[String]) -> Result<ObjectEvidence> {
    let labels: Vec<String> = objects.iter().map(|p| label(p)).collect();
    let graph = LinkGraph::load(objects, searchable)?;
    let is_helper = |name: &str| helpers.iter().any(|h| h == name);
    let mut ev = ObjectEvidence::default();
    let mut uses: BTreeMap<String, HelperUse> = BTreeMap::new();
    let mut reachable = HashSet::new();
    for name in api {
        if ev.api_found.contains(name) || ev.api_missing.contains(name) {
            continue;
        }
        let Some(root) = graph.resolve(name, None) else {
            ev.api_missing.push(name.clone());
            continue;
        };
        ev.api_found.push(name.clone());
        let seen = |Node { object, .. }: Node, helper: &str| {
            let use_ = || HelperUse {
                helper: helper.to_string(),
                reached_from: name.clone(),
                via_object: labels[object].clone(),
            };
            uses.entry(helper.to_string()).or_insert_with(use_);
        };
        reachable.extend(graph.reach(root, is_helper, seen));
    }
    ev.reachable_helpers = uses.into_values().collect();

    let tables = tables();
    for (oi, secs) in graph.objects.iter().enumerate() {
        for (&si, s) in secs.iter().filter(|(_, s)| !s.data.is_empty()) {
            for t in &tables {
                let Some(off) = t.find_in(&s.data, s.is_text).map(|o| o as u64) else {
                    continue;
                };
                let symbol = s.symbol_at(off).map(str::to_string);
                let (table, family) = (t.name.into(), t.family.into());
                let hit = TableHit {
                    table,
                    family,
                    object: labels[oi].clone(),
                    symbol,
                };
                let reached = reachable.iter().any(|n: &Node| n.contains(oi, si, off));
                let list = match reached {
                    true => &mut ev.tables,
                    false => &mut ev.unreachable_tables,
                };
                list.push(hit);
            }
        }
    }
    for list in [&mut ev.tables, &mut ev.unreachable_tables] {
        list.sort();
        list.dedup();
    }
    Ok(ev)
}

/// The instruction sequences that announce a Valgrind client request
/// (valgrind.h's `__SPECIAL_INSTRUCTION_PREAMBLE`): on amd64
/// `rol $3,%rdi; rol $13,%rdi; rol $61,%rdi; rol $51,%rdi`, on arm64
/// `ror x12,x12,#3; #13; #51; #61`. Valgrind obeys a request in any code it
/// runs: one in a submission can mark its secrets defined (a forged clean
/// constant-time check) or stop the instruction count around its work.
const CLIENT_REQUEST_PREAMBLES: [&[u8]; 2] = [
    &[
        0x48, 0xc1, 0xc7, 0x03, 0x48, 0xc1, 0xc7, 0x0d, 0x48, 0xc1, 0xc7, 0x3d, 0x48, 0xc1, 0xc7,
        0x33,
    ],
    &[
        0x8c, 0x0d, 0xcc, 0x93, 0x8c, 0x35, 0xcc, 0x93, 0x8c, 0xcd, 0xcc, 0x93, 0x8c, 0xf5, 0xcc,
        0x93,
    ],
];

/// Where a Valgrind client request sits: the object (by index into the
/// scanned list) and the function around it, when the object names one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClientRequest {
    pub object: usize,
    pub symbol: Option<String>,
}

/// Every Valgrind client request in the executable sections of `objects`,
/// whatever their names (a section of its own is as executable as
/// `.text`).
pub(crate) fn client_requests(objects: &[PathBuf]) -> Result<Vec<ClientRequest>> {
    let graph = LinkGraph::load(objects, |_| true)?;
    let mut found = Vec::new();
    for (object, secs) in graph.objects.iter().enumerate() {
        for s in secs.values().filter(|s| s.is_text) {
            for preamble in CLIENT_REQUEST_PREAMBLES {
                let mut from = 0;
                while let Some(at) = find(&s.data, preamble, from) {
                    found.push(ClientRequest {
                        object,
                        symbol: s.symbol_at(at as u64).map(str::to_string),
                    });
                    from = at + preamble.len();
                }
            }
        }
    }
    found.dedup();
    Ok(found)
}

fn instance_verdict(e: &ObjectEvidence) -> &'static str {
    let helpers = &e.reachable_helpers;
    let hashing = helpers.iter().any(|h| !is_drng_helper(&h.helper));
    match (e.tables.is_empty(), hashing, helpers.is_empty()) {
        (false, true, _) => "mixed",
        (false, false, _) => "bypass",
        (true, _, false) => "ICCS-only",
        (true, _, true) => "none",
    }
}

/// The evidence of `instances` in one line, each distinct item once.
fn describe(instances: &[&ObjectEvidence]) -> String {
    let hit = |t: &TableHit| match &t.symbol {
        Some(s) => format!("{} in {} ({s})", t.table, t.object),
        None => format!("{} in {}", t.table, t.object),
    };
    let use_ = |h: &HelperUse| format!("{} from {} ({})", h.helper, h.reached_from, h.via_object);
    let list = |f: &dyn Fn(&ObjectEvidence) -> Vec<String>| {
        let mut items: Vec<String> = instances.iter().flat_map(|e| f(e)).collect();
        items.sort();
        items.dedup();
        items.join(", ")
    };
    let helpers = list(&|e| e.reachable_helpers.iter().map(use_).collect());
    let own = list(&|e| e.tables.iter().map(hit).collect());
    let or = |items: String, none: &str, some: &str| match items.is_empty() {
        true => none.to_string(),
        false => format!("{some}{items}"),
    };
    let mut parts = vec![
        or(helpers, "no ICCS helper reached", "reaches "),
        or(own, "no own table reachable", "own "),
    ];
    let unreachable = list(&|e| e.unreachable_tables.iter().map(hit).collect());
    let missing = list(&|e| e.api_missing.clone());
    for (what, items) in [("unreachable", unreachable), ("API not found", missing)] {
        if !items.is_empty() {
            parts.push(format!("{what}: {items}"));
        }
    }
    parts.join("; ")
}

/// Survey verdict over all instances of one algorithm, with a one-line reason.
///
/// Per instance: own tables reachable and a hashing helper (any helper but
/// the DRNG) reached → `mixed`; own tables only (DRNG use allowed) →
/// `bypass`; helpers only (the DRNG alone suffices) → `ICCS-only`; neither →
/// `none`. Instances that disagree give `instance-dependent`, listing each
/// instance's verdict and evidence; no instance gives `none`.
pub(crate) fn verdict(evidence_per_instance: &[ObjectEvidence]) -> (String, String) {
    let all: Vec<&ObjectEvidence> = evidence_per_instance.iter().collect();
    let verdicts: Vec<&str> = all.iter().map(|e| instance_verdict(e)).collect();
    match verdicts.first() {
        None => ("none".into(), "no instance was scanned".into()),
        Some(v) if verdicts.iter().all(|w| w == v) => (v.to_string(), describe(&all)),
        Some(_) => {
            let one = |(i, (e, v)): (usize, (&&ObjectEvidence, &&str))| {
                format!("instance {}: {v} ({})", i + 1, describe(&[*e]))
            };
            let each: Vec<String> = all.iter().zip(&verdicts).enumerate().map(one).collect();
            ("instance-dependent".into(), each.join(" | "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elf::tests::{gcc, scratch};

    #[test]
    fn derived_constants_match_published_values() {
        let first = |name: &str| {
            let t = tables().into_iter().find(|t| t.name == name).unwrap();
            u64::from_le_bytes(t.contiguous[0][..8].try_into().unwrap())
        };
        assert_eq!(first("Keccak-f round constants"), 1);
        assert_eq!(
            [keccak_rc(2), keccak_rc(3)],
            [0x800000000000808A, 0x8000000080008000]
        );
        assert_eq!(keccak_rc(23), 0x8000000080008008);
        assert_eq!(first("AES S-box"), 0xc56f6bf27b777c63);
        assert_eq!(aes_sbox(0x53), 0xed); // the worked example of FIPS 197
        assert_eq!(first("AES T-table") as u32, 0xc66363a5);
        assert_eq!(first("SM4 CK") as u32, 0x00070e15);
        assert_eq!(
            [first("SHA-256 K") as u32, sha256_k(311)],
            [0x428a2f98, 0xc67178f2]
        );
        let sha256 = [2, 3, 5, 7, 11, 13, 17, 19].map(sha256_k);
        assert_eq!(SHA512_K.map(|w| (w >> 32) as u32), sha256);
        assert_eq!(first("ChaCha sigma").to_le_bytes(), *b"expand 3");
    }

    const XOF_C: &str = r"
        int pseudoXOF(unsigned long long, const void *, unsigned long long, void *);
        int sig_sign(char *m) { return pseudoXOF(256, m, 64, m); }";
    const KEYGEN_C: &str = r"
        unsigned long long keccak_rc(int);
        int get_random_number(void *, void *, unsigned long long);
        int sig_keygen(char *pk, int r) { pk[0] = keccak_rc(r); return get_random_number(0, pk, 8); }";
    const KECCAK_FN: &str = "unsigned long long keccak_rc(int i) { return RC[i]; }\n";
    const AES_FN: &str = "unsigned char aes_sub(unsigned char x) { return SBOX[x]; }\n";
    const IMM_C: &str = r"// SM3 IV and SHA-512 K from immediates
        void sig_verify(volatile unsigned *s, volatile unsigned long long *k) {
          s[0] = 0x7380166f; s[1] = 0x4914b2b9; s[2] = 0x172442d7; s[3] = 0xda8a0600;
          s[4] = 0xa96f30bc; s[5] = 0x163138aa; s[6] = 0xe38dee4d; s[7] = 0xb0fb0e4e;
          k[0] = 0x428a2f98d728ae22; k[1] = 0x7137449123ef65cd;
          k[2] = 0xb5c0fbcfec4d3b2f; k[3] = 0xe9b5dba58189dbbc; }";
    const AUX_C: &str = r"// a helper implementation with its own SM3
        static const unsigned IV[8] = {0x7380166f, 0x4914b2b9, 0x172442d7, 0xda8a0600,
                                       0xa96f30bc, 0x163138aa, 0xe38dee4d, 0xb0fb0e4e};
        int pseudoXOF(unsigned long long b, const void *m, unsigned long long n, char *o)
        { o[0] = IV[n & 7]; return 0; }";

    fn c_table(ty: &str, name: &str, vals: impl Iterator<Item = u64>) -> String {
        let vals: Vec<String> = vals.map(|v| format!("{v:#x}ULL")).collect();
        format!("static const {ty} {name}[] = {{{}}};\n", vals.join(","))
    }

    /// A scratch directory of compiled fixture objects.
    struct Build(crate::elf::tests::Scratch);

    impl Build {
        fn cc(&self, name: &str, src: &str, flags: &[&str]) {
            std::fs::write(self.0.join(format!("{name}.c")), src).unwrap();
            let (c, o) = (format!("{name}.c"), format!("{name}.o"));
            let args = [&["-c", "-O2", "-fPIC", &c, "-o", &o], flags].concat();
            gcc(&args, &self.0);
        }

        fn scan(&self, names: &[&str]) -> ObjectEvidence {
            let object = |n: &&str| self.0.join(format!("{n}.o"));
            let objects: Vec<PathBuf> = names.iter().map(object).collect();
            let api = ["sig_keygen", "sig_sign", "sig_verify"].map(String::from);
            scan(&objects, &api, &DEFAULT_HELPERS.map(String::from)).unwrap()
        }
    }

    #[test]
    fn client_requests_are_found_in_any_executable_section() {
        if !cfg!(target_arch = "x86_64") {
            return;
        }
        let b = Build(scratch("client-requests"));
        // The amd64 preamble, once in .text and once in a section of its
        // own; a function without one beside them.
        let src = r#"
            #define PRE "rolq $3,%%rdi; rolq $13,%%rdi; rolq $61,%%rdi; rolq $51,%%rdi"
            void in_text(void) { __asm__ volatile(PRE ::: "rdi"); }
            __attribute__((section(".hidden_code")))
            void elsewhere(void) { __asm__ volatile(PRE ::: "rdi"); }
            int plain(int x) { return x + 1; }"#;
        b.cc("req", src, &[]);
        let found = client_requests(&[b.0.join("req.o")]).unwrap();
        let mut symbols: Vec<_> = found.iter().filter_map(|r| r.symbol.clone()).collect();
        symbols.sort();
        assert_eq!(symbols, ["elsewhere", "in_text"], "{found:?}");
    }

    fn names(hits: &[TableHit]) -> String {
        let name = |h: &TableHit| format!("{} in {}", h.table, h.object);
        hits.iter().map(name).collect::<Vec<_>>().join(", ")
    }

    /// Fixture tables come from the definitions above, not from the
    /// scanner's constants, so a wrong constant fails these scans.
    #[test]
    fn reachability_tables_and_verdicts() {
        let b = Build(scratch("objscan"));
        let rc = c_table("unsigned long long", "RC", (0..24).map(keccak_rc));
        let sbox = c_table(
            "unsigned char",
            "SBOX",
            (0..=255).map(aes_sbox).map(u64::from),
        );
        b.cc("xof", XOF_C, &[]);
        b.cc("keygen", KEYGEN_C, &[]);
        b.cc("keccak", &format!("{rc}{KECCAK_FN}"), &[]);
        b.cc("aes", &format!("{sbox}{AES_FN}"), &[]);

        let xof = b.scan(&["xof"]);
        assert_eq!((xof.api_found.len(), xof.api_missing.len()), (1, 2));
        let h = &xof.reachable_helpers[..];
        let uses = [&*h[0].helper, &*h[0].reached_from, &*h[0].via_object];
        assert_eq!((h.len(), uses), (1, ["pseudoXOF", "sig_sign", "xof.o"]));
        assert!(xof.tables.is_empty());
        assert_eq!(verdict(std::slice::from_ref(&xof)).0, "ICCS-only");

        let own = b.scan(&["keygen", "keccak", "aes"]);
        assert_eq!(names(&own.tables), "Keccak-f round constants in keccak.o");
        assert_eq!(own.tables[0].symbol.as_deref(), Some("RC"));
        assert_eq!(names(&own.unreachable_tables), "AES S-box in aes.o");
        assert_eq!(own.reachable_helpers[0].helper, "get_random_number");
        let (v, reason) = verdict(std::slice::from_ref(&own));
        assert_eq!(v, "bypass", "the DRNG alone is no hashing");
        assert!(
            reason.contains("own Keccak-f round constants in keccak.o (RC)"),
            "{reason}"
        );
        assert!(reason.contains("unreachable: AES S-box in aes.o"));

        let both = b.scan(&["xof", "keygen", "keccak", "aes"]);
        let (v, reason) = verdict(&[both.clone(), both]);
        assert_eq!(v, "mixed");
        assert!(reason.contains("pseudoXOF from sig_sign (xof.o)"));
        let (v, reason) = verdict(&[xof, own]);
        assert_eq!(v, "instance-dependent");
        assert!(reason.contains("instance 1: ICCS-only") && reason.contains("instance 2: bypass"));
        assert_eq!(verdict(&[]).0, "none");
        assert_eq!(verdict(&[ObjectEvidence::default()]).0, "none");

        // One file where the API reads RC and aes_sub is never called:
        // per-symbol sections separate them, a shared .rodata does not.
        let api = "unsigned long long sig_sign(int i) { return RC[i]; }";
        let one = format!("{rc}{sbox}{AES_FN}{api}");
        b.cc("split", &one, &["-ffunction-sections", "-fdata-sections"]);
        b.cc("merged", &one, &[]);
        let split = b.scan(&["split"]);
        assert_eq!(names(&split.tables), "Keccak-f round constants in split.o");
        assert_eq!(names(&split.unreachable_tables), "AES S-box in split.o");
        assert_eq!(b.scan(&["merged"]).tables.len(), 2);

        // Immediates count, and SHA-512 halves are not taken for SHA-256 K.
        b.cc("imm", IMM_C, &[]);
        let imm = b.scan(&["imm"]);
        assert_eq!(names(&imm.tables), "SHA-512 K in imm.o, SM3 IV in imm.o");

        // A helper defined among the objects is not entered.
        b.cc("aux", AUX_C, &[]);
        let aux = b.scan(&["xof", "aux"]);
        assert_eq!((aux.reachable_helpers.len(), aux.tables.len()), (1, 0));
        assert_eq!(names(&aux.unreachable_tables), "SM3 IV in aux.o");
        assert!(scan(&[b.0.join("missing.o")], &[], &[]).is_err());
    }
}
