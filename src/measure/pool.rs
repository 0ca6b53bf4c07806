//! Verify's pool of signatures, built once per operation and shared
//! (the driver's side: `driver_pool.c`).
//!
//! A verify process's inputs are signatures. Built by every trial and
//! replay process, they cost each one at least two signatures before its
//! first timed call: for a slow signer, far more than the verifications
//! timed. So one process of mode `pool` builds the pool, as a trial would
//! (key generation from its seed, signatures over distinct messages within
//! the pool's limits), and prints it; pqbench checks what it printed (at
//! least two entries, distinct messages, each of the message length) and
//! feeds the same bytes to every later process of the operation behind its
//! settings block, on a pipe the driver reads only once the library is
//! loaded. The record keeps the pool process, with the sha256 of the bytes
//! every trial got instead of the bytes.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;

use super::driver::{self, Fed, ProcessRecord};
use crate::context::Cx;

/// The message length of every entry (`MSG_BYTES` of `driver.h`).
const MSG_BYTES: usize = 64;
/// Room left in the input descriptor for the settings block.
const BLOCK_ROOM: usize = 8 << 10;

/// A pool as the driver reads it after its settings block.
#[derive(Debug, Clone)]
pub(crate) struct SharedPool {
    pub bytes: Arc<Vec<u8>>,
    pub entries: u64,
}

/// The most entries of `sig_bytes`-byte signatures under a
/// `pk_bytes`-byte key that fit in the input descriptor.
pub(crate) fn max_entries(pk_bytes: u64, sig_bytes: u64) -> u64 {
    let room = (crate::sandbox::INPUT_CAP - BLOCK_ROOM) as u64;
    room.saturating_sub(8 + pk_bytes) / (4 + MSG_BYTES as u64 + sig_bytes.max(1))
}

/// What building the pool gave: the process (its record), and the pool or
/// why there is none.
pub(crate) struct Built {
    pub proc: ProcessRecord,
    pub pool: std::result::Result<SharedPool, String>,
    /// Failed signing attempts of the pool's first signature (the honest
    /// one every verify set-up made before).
    pub setup_sign_retries: u64,
}

/// Runs the pool process of `op` (verify), fed its settings (a fresh seed
/// and the pool's limits: `inputs::PoolPlan::settings`) and the shared key
/// pair if any, and checks what it printed.
pub(crate) fn build(
    cx: &Cx,
    lib: &std::path::Path,
    op: &str,
    fed: Fed,
    cpu: Option<usize>,
    timeout: Duration,
) -> Result<Built> {
    let args: Vec<String> = ["--op", op, "--mode", "pool"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut proc = driver::run_with_files(cx, lib, &args, fed, cpu, timeout, &[])?.proc;
    if let Some((_, why)) = proc.failure() {
        return Ok(Built {
            proc,
            pool: Err(format!("building the shared pool: {why}")),
            setup_sign_retries: 0,
        });
    }
    let pool = encode(&proc);
    let setup_sign_retries = proc
        .line("pool")
        .and_then(|l| l.u64("setup_sign_retries"))
        .unwrap_or(0);
    keep_digest(&mut proc, pool.as_ref().ok());
    Ok(Built {
        proc,
        pool,
        setup_sign_retries,
    })
}

fn unhex(line: &driver::Line, key: &str) -> std::result::Result<Vec<u8>, String> {
    let v = line.get(key).ok_or_else(|| {
        format!(
            "the pool process printed a `{}` line without {key}",
            line.tag
        )
    })?;
    hex::decode(v).map_err(|_| format!("the pool process's {key} is not hex"))
}

/// The driver's layout of what the pool process printed, once checked.
fn encode(proc: &ProcessRecord) -> std::result::Result<SharedPool, String> {
    let head = proc
        .line("pool")
        .ok_or("the pool process printed no pool line")?;
    let pk = unhex(head, "pk")?;
    let entries: Vec<&driver::Line> = proc.lines.iter().filter(|l| l.tag == "entry").collect();
    if head.u64("entries") != Some(entries.len() as u64) {
        return Err(format!(
            "the pool process announced {:?} entries and printed {}",
            head.get("entries"),
            entries.len()
        ));
    }
    if entries.len() < 2 {
        return Err("the pool process built fewer than two entries".into());
    }
    let mut bytes = Vec::new();
    let u32le = |n: usize| (n as u32).to_le_bytes();
    bytes.extend(u32le(pk.len()));
    bytes.extend(&pk);
    bytes.extend(u32le(entries.len()));
    let mut messages = std::collections::BTreeSet::new();
    for e in &entries {
        let (msg, sig) = (unhex(e, "msg")?, unhex(e, "sig")?);
        if msg.len() != MSG_BYTES || sig.is_empty() {
            return Err(format!(
                "a pool entry holds a message of {} bytes and a signature of {}",
                msg.len(),
                sig.len()
            ));
        }
        if !messages.insert(msg.clone()) {
            return Err("the pool process repeated a message".into());
        }
        bytes.extend(u32le(sig.len()));
        bytes.extend(&msg);
        bytes.extend(&sig);
    }
    if bytes.len() + BLOCK_ROOM > crate::sandbox::INPUT_CAP {
        return Err(format!(
            "the pool takes {} bytes, beyond what a driver's input descriptor holds",
            bytes.len()
        ));
    }
    Ok(SharedPool {
        entries: entries.len() as u64,
        bytes: Arc::new(bytes),
    })
}

/// The record keeps the pool's digest, not its bytes.
fn keep_digest(proc: &mut ProcessRecord, pool: Option<&SharedPool>) {
    proc.lines.retain(|l| l.tag != "entry");
    if let Some(head) = proc.lines.iter_mut().find(|l| l.tag == "pool") {
        head.fields.remove("pk");
        if let Some(p) = pool {
            head.fields.insert(
                "sha256".into(),
                crate::fsutil::sha256_hex(p.bytes.as_slice()),
            );
        }
    }
}
