//! The round trip across processes, part of the KAT check. The KAT runner
//! makes every key, ciphertext and signature of its file in one process,
//! so a library whose "public key" is a handle into a table it keeps in
//! memory reproduces its own KAT file and looks small. Here each step is a
//! fresh driver process (`pqb-driver`, mode `trip`) given only bytes that
//! another process made, as files in its job directory: the first KAT
//! record's, then an earlier step's output. No key generation runs in a
//! step (a key exchange's party the record lacks excepted: its init runs
//! in a process of its own; `kex`). An instance whose outputs work only
//! inside the process that made them fails its KAT with `CROSSFAIL` and
//! the step that failed; the lengths that crossed are what the sizes stage
//! observes.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use anyhow::Result;

use crate::context::Cx;
use crate::kat::Crossing;
use crate::kinds::RoundTrip;
use crate::measure::driver;
use crate::plan::{ApiFamily, Instance};

mod kex;

/// The first record (`Count = 0`) of a KAT file: each field's text by its
/// lower-case name (`pk`, `pk_len`, `pass_num`, ...).
fn first_record_text(kat: &[u8]) -> BTreeMap<String, String> {
    let text = String::from_utf8_lossy(kat);
    let mut out = BTreeMap::new();
    let mut inside = false;
    for line in text.lines() {
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim().to_ascii_lowercase();
        let value = value.trim();
        if key == "count" {
            if inside {
                break;
            }
            inside = value == "0";
            continue;
        }
        if inside {
            out.insert(key, value.to_string());
        }
    }
    out
}

/// The first record (`Count = 0`) of a KAT file: each hex field by its
/// lower-case name (`pk`, `sk`, `ct`, `ss`, `msg`/`m`, `sm`/`sn`).
pub(crate) fn first_record(kat: &[u8]) -> BTreeMap<String, Vec<u8>> {
    first_record_text(kat)
        .into_iter()
        .filter_map(|(key, value)| Some((key, hex::decode(value).ok()?)))
        .collect()
}

/// What a step was given and what it said: its `trip` line's fields.
type Said = BTreeMap<String, String>;

/// Why a round trip stopped: pqbench could not run a step (an error of the
/// stage), or the instance failed one (its finding).
enum Stop {
    Run(anyhow::Error),
    Failed(String),
}

impl From<anyhow::Error> for Stop {
    fn from(e: anyhow::Error) -> Stop {
        Stop::Run(e)
    }
}

impl From<String> for Stop {
    fn from(why: String) -> Stop {
        Stop::Failed(why)
    }
}

type Step<T> = std::result::Result<T, Stop>;

struct Trip<'a> {
    cx: &'a Cx<'a>,
    lib: &'a Path,
    timeout: Duration,
    lengths: BTreeMap<String, u64>,
}

impl Trip<'_> {
    /// One step in a fresh process.
    fn step(&mut self, op: &str, files: &[(&str, &[u8])]) -> Step<Said> {
        let args: Vec<String> = ["--op", op, "--mode", "trip"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let named: Vec<(String, &[u8])> = files
            .iter()
            .map(|(name, bytes)| (format!("trip.{name}"), *bytes))
            .collect();
        let refs: Vec<(&str, &[u8])> = named.iter().map(|(n, b)| (n.as_str(), *b)).collect();
        let ran = driver::run_with_files(
            self.cx,
            self.lib,
            &args,
            driver::Fed::default(),
            None,
            self.timeout,
            &refs,
        )?;
        if let Some((_, why)) = ran.proc.failure() {
            return Err(format!("{op} in a fresh process: {why}").into());
        }
        Ok(ran
            .proc
            .line("trip")
            .map(|l| l.fields.clone())
            .ok_or_else(|| format!("{op} in a fresh process reported nothing"))?)
    }

    /// The bytes of a hex field a step reported, its length noted (`sig`
    /// by the caller: an attached signature carries its message).
    fn bytes(&mut self, said: &Said, field: &str, op: &str) -> Step<Vec<u8>> {
        let bytes = reported(said, field, op)?;
        if field != "sig" {
            self.note(field, bytes.len());
        }
        Ok(bytes)
    }

    /// The longest `field` that crossed so far, now at least `len`.
    fn note(&mut self, field: &str, len: usize) {
        let e = self.lengths.entry(field.to_string()).or_default();
        *e = (*e).max(len as u64);
    }
}

/// The bytes of a hex field a step reported.
fn reported(said: &Said, field: &str, op: &str) -> Step<Vec<u8>> {
    Ok(said
        .get(field)
        .and_then(|h| hex::decode(h).ok())
        .ok_or_else(|| format!("{op} in a fresh process gave no {field}"))?)
}

/// Runs the round trip of `inst` over `kat` (the file its KAT run made
/// with the library `lib`); None for a kind without one.
pub(crate) fn check(cx: &Cx, inst: &Instance, lib: &Path, kat: &[u8]) -> Result<Option<Crossing>> {
    let Some(kind) = inst.kind.def().round_trip() else {
        return Ok(None);
    };
    let record = first_record(kat);
    let mut trip = Trip {
        cx,
        lib,
        timeout: Duration::from_secs_f64(cx.plan.kat.timeout_seconds),
        lengths: BTreeMap::new(),
    };
    let ended = match kind {
        RoundTrip::Encapsulation => encapsulation(&mut trip, &record),
        RoundTrip::Signature => signature(&mut trip, &record, inst.api),
        RoundTrip::Exchange => kex::exchange(&mut trip, &first_record_text(kat)),
    };
    let failure = match ended {
        Ok(()) => None,
        Err(Stop::Failed(why)) => Some(why),
        Err(Stop::Run(e)) => return Err(e),
    };
    Ok(Some(Crossing {
        lengths: trip.lengths,
        failure,
    }))
}

type Record = BTreeMap<String, Vec<u8>>;

fn field<'r>(record: &'r Record, names: &[&str]) -> Step<&'r [u8]> {
    let found = names.iter().find_map(|n| record.get(*n));
    Ok(found
        .map(Vec::as_slice)
        .ok_or_else(|| format!("the KAT file's first record has no {}", names.join("/")))?)
}

/// dec(sk, ct) of the KAT record gives its ss; enc(pk) anew; dec of that
/// gives the secret enc gave.
fn encapsulation(trip: &mut Trip, record: &Record) -> Step<()> {
    let pk = field(record, &["pk"])?;
    let sk = field(record, &["sk"])?;
    let ct = field(record, &["ct"])?;
    let ss = field(record, &["ss"])?;
    for (name, bytes) in [("pk", pk), ("sk", sk), ("ct", ct), ("ss", ss)] {
        trip.note(name, bytes.len());
    }
    let said = trip.step("dec", &[("sk", sk), ("ct", ct)])?;
    if trip.bytes(&said, "ss", "dec")? != ss {
        return Err(
            "dec of the KAT record's ciphertext in a fresh process gave another shared secret \
             than the KAT run (its keys or ciphertext work only in the process that made them)"
                .to_string()
                .into(),
        );
    }
    let said = trip.step("enc", &[("pk", pk)])?;
    let ct2 = trip.bytes(&said, "ct", "enc")?;
    let ss2 = trip.bytes(&said, "ss", "enc")?;
    let said = trip.step("dec", &[("sk", sk), ("ct", &ct2)])?;
    if trip.bytes(&said, "ss", "dec")? != ss2 {
        return Err(
            "a ciphertext made in one fresh process decapsulates to another secret in the next"
                .to_string()
                .into(),
        );
    }
    Ok(())
}

/// verify(pk, msg, sig) of the KAT record; sign(sk, msg) anew; verify that.
fn signature(trip: &mut Trip, record: &Record, api: ApiFamily) -> Step<()> {
    let (msg, sig) = match api {
        ApiFamily::Nist => (&["msg"][..], &["sm"][..]),
        ApiFamily::Ngcc => (&["m"][..], &["sn"][..]),
    };
    let pk = field(record, &["pk"])?;
    let sk = field(record, &["sk"])?;
    let msg = field(record, msg)?;
    let sig = field(record, sig)?;
    // NIST's crypto_sign writes the signature and the message.
    let detached = |s: &[u8]| match api {
        ApiFamily::Nist => s.len().saturating_sub(msg.len()),
        ApiFamily::Ngcc => s.len(),
    };
    trip.note("pk", pk.len());
    trip.note("sk", sk.len());
    trip.note("sig", detached(sig));
    // An accepted signature, and the same with a flipped bit rejected: a
    // verify that accepts whatever it cannot look up passes neither.
    let verified = |said: &Said| {
        said.get("verify").map(String::as_str) == Some("0")
            && said.get("flipped").is_some_and(|f| f != "0")
    };
    let said = trip.step("verify", &[("pk", pk), ("msg", msg), ("sig", sig)])?;
    if !verified(&said) {
        return Err(
            "verify in a fresh process rejects the KAT record's signature, or accepts it with a \
             flipped bit (its keys or signature work only in the process that made them)"
                .to_string()
                .into(),
        );
    }
    let said = trip.step("sign", &[("sk", sk), ("msg", msg)])?;
    let sig2 = trip.bytes(&said, "sig", "sign")?;
    trip.note("sig", detached(&sig2));
    let said = trip.step("verify", &[("pk", pk), ("msg", msg), ("sig", &sig2)])?;
    if !verified(&said) {
        return Err(
            "a signature made in one fresh process is rejected in the next"
                .to_string()
                .into(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::first_record;

    #[test]
    fn the_first_record_is_read_by_field_whatever_the_format() {
        let nist = b"# ML-KEM\n\ncount = 0\nseed = 00\npk = 0A0B\nsk = 0C\nct = 0D\nss = 0E\n\ncount = 1\npk = FF\n";
        let r = first_record(nist);
        assert_eq!(r["pk"], vec![0x0a, 0x0b]);
        assert_eq!(r["ss"], vec![0x0e]);
        let ngcc = b"Count = 0\nSeed_Len = 1\nSeed = 00\nPK_Len = 1\nPK = 01\nSK = 02\nM_Len = 1\nM = 03\nSn_Len = 1\nSn = 04\n\nCount = 1\nPK = 09\n";
        let r = first_record(ngcc);
        assert_eq!(r["pk"], vec![1]);
        assert_eq!(r["m"], vec![3]);
        assert_eq!(r["sn"], vec![4]);
        assert!(first_record(b"count = 1\npk = 00\n").is_empty());
    }
}
