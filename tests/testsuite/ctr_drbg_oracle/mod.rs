//! An independent AES-256 CTR_DRBG (no derivation function) written from
//! SP 800-90A over the RustCrypto `aes` crate: the oracle the C DRBG of
//! the support code is checked against, whatever AES it runs on.
#![allow(dead_code)]

use aes::cipher::{BlockEncrypt, KeyInit};
use aes::Aes256;

/// The published draws of the NIST KAT master DRBG (entropy 0x00..0x2f):
/// count 0's seed, then the next two 48-byte draws (DESIGN "KAT (facts)").
pub const KNOWN: [&str; 3] = [
    "061550234D158C5EC95595FE04EF7A25767F2E24CC2BC479D09D86DC9ABCFDE7056A8C266F9EF97ED08541DBD2E1FFA1",
    "D81C4D8D734FCBFBEADE3D3F8A039FAA2A2C9957E835AD55B22E75BF57BB556AC81ADDE6AEEB4A5A875C3BFCADFA958F",
    "64335BF29E5DE62842C941766BA129B0643B5E7121CA26CFC190EC7DC3543830557FDD5C03CF123A456D48EFEA43C868",
];

/// The entropy of the NIST KAT master DRBG: bytes 0x00..0x2f.
pub fn entropy() -> [u8; 48] {
    std::array::from_fn(|i| i as u8)
}

pub struct Drbg {
    pub key: [u8; 32],
    pub v: [u8; 16],
}

impl Drbg {
    pub fn new(entropy: &[u8; 48]) -> Drbg {
        Drbg::with_personalization(entropy, None)
    }

    pub fn with_personalization(entropy: &[u8; 48], perso: Option<&[u8; 48]>) -> Drbg {
        let mut seed = *entropy;
        if let Some(p) = perso {
            seed.iter_mut().zip(p).for_each(|(s, x)| *s ^= x);
        }
        let mut d = Drbg {
            key: [0; 32],
            v: [0; 16],
        };
        d.update(Some(&seed));
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

    pub fn generate(&mut self, n: usize) -> Vec<u8> {
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

/// Entropy that makes the instantiated V equal `v` (no personalization):
/// V is the last 16 bytes of the first Update's output xor the entropy's,
/// and that output depends only on the all-zero starting key.
pub fn entropy_for_v(v: &[u8; 16]) -> [u8; 48] {
    let zero = Drbg::new(&[0; 48]);
    let mut e = [0u8; 48];
    for i in 0..16 {
        e[32 + i] = zero.v[i] ^ v[i];
    }
    e
}
