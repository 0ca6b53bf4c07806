//! A key pair made once per operation and given to each of its processes
//! (the driver's side: `driver_keys.c`).
//!
//! The set-up of sign, verify, enc and dec begins with a key generation.
//! Where one costs more than a trial's timed calls (Classic McEliece's:
//! seconds, retried a random number of times), each calibration, trial and
//! replay process spends most of its time on a key it throws away, and
//! the kernel's witness sees a set-up that varies several-fold between
//! processes. Then one process of mode `keys` makes the pair from a fresh
//! seed, as a set-up would, and prints it; pqbench gives the bytes to every
//! later process of the operation as files of its job directory. Their
//! set-ups still check the pair (verify's honest signature, dec's honest
//! round trip), so a pair that works only in the process that made it
//! fails there. The record keeps the keys process, with the sha256 of
//! each half instead of its bytes.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;

use super::driver::{self, Fed, ProcessRecord};
use crate::context::Cx;

/// The pair the processes of one operation share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SharedKeys {
    pub pk: Vec<u8>,
    pub sk: Vec<u8>,
}

/// Whether the operations after keygen share one pair, by the campaign's
/// `timing.share-keys` and what keygen's calibration found a call costs.
pub(crate) fn wanted(
    share: crate::plan::ShareKeys,
    op: &str,
    keygen_seconds: Option<f64>,
    trial_seconds: f64,
) -> bool {
    use crate::plan::ShareKeys;
    matches!(op, "sign" | "verify" | "enc" | "dec")
        && match share {
            ShareKeys::Always => true,
            ShareKeys::Never => false,
            ShareKeys::Auto => keygen_seconds.is_some_and(|k| k >= trial_seconds),
        }
}

/// What making the pair gave: the process (its record) and the pair, or
/// why there is none.
pub(crate) struct Built {
    pub proc: ProcessRecord,
    pub keys: std::result::Result<Arc<SharedKeys>, String>,
}

/// Runs the keys process with `seed` (fresh: the library's randomness of
/// its key generation) and checks what it printed.
pub(crate) fn build(
    cx: &Cx,
    lib: &std::path::Path,
    seed: &str,
    cpu: Option<usize>,
    timeout: Duration,
) -> Result<Built> {
    let args: Vec<String> = ["--op", "keygen", "--mode", "keys"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let settings = format!("seed={seed}");
    let fed = Fed {
        settings: Some(&settings),
        ..Fed::default()
    };
    let mut proc = driver::run_with_files(cx, lib, &args, fed, cpu, timeout, &[])?.proc;
    if let Some((_, why)) = proc.failure() {
        return Ok(Built {
            proc,
            keys: Err(format!("making the shared key pair: {why}")),
        });
    }
    let keys = read(&proc).map(Arc::new);
    keep_digests(&mut proc);
    Ok(Built { proc, keys })
}

/// The pair the process printed on its `keys` line.
fn read(proc: &ProcessRecord) -> std::result::Result<SharedKeys, String> {
    let line = proc
        .line("keys")
        .ok_or("the keys process printed no keys line")?;
    let half = |key: &str| -> std::result::Result<Vec<u8>, String> {
        let bytes = line
            .get(key)
            .and_then(|v| hex::decode(v).ok())
            .ok_or_else(|| format!("the keys process's {key} is missing or not hex"))?;
        if bytes.is_empty() {
            return Err(format!("the keys process's {key} is empty"));
        }
        Ok(bytes)
    };
    Ok(SharedKeys {
        pk: half("pk")?,
        sk: half("sk")?,
    })
}

/// The record keeps each half's digest, not its bytes.
fn keep_digests(proc: &mut ProcessRecord) {
    if let Some(line) = proc.lines.iter_mut().find(|l| l.tag == "keys") {
        for key in ["pk", "sk"] {
            if let Some(hex) = line.fields.remove(key) {
                let bytes = hex::decode(&hex).unwrap_or_default();
                line.fields
                    .insert(format!("{key}_sha256"), crate::fsutil::sha256_hex(&bytes));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::ShareKeys;

    #[test]
    fn auto_shares_a_key_generation_as_long_as_a_trial() {
        let auto = |op, keygen| wanted(ShareKeys::Auto, op, keygen, 0.05);
        assert!(auto("enc", Some(0.05)) && auto("verify", Some(3.0)));
        assert!(!auto("enc", Some(0.049)));
        // Without keygen's calibration nothing says the pair is dear.
        assert!(!auto("sign", None));
        // keygen makes its own keys; hash and KEX operations have none.
        assert!(!auto("keygen", Some(3.0)) && !auto("exchange", Some(3.0)));
        assert!(wanted(ShareKeys::Always, "dec", Some(1e-6), 0.05));
        assert!(!wanted(ShareKeys::Never, "dec", Some(30.0), 0.05));
    }
}
