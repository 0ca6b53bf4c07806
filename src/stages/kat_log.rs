//! The KAT stage's log and its check of the generator's KAT channel,
//! shared by the signature/KEM/KEX path (`kat`) and the hash files
//! (`kat_hash`).

use crate::sandbox::frame;

/// Whether the KAT channel holds exactly the bytes the runner says it
/// wrote (`kat_bytes`, `kat_fnv1a64`): a process the library forked shares
/// the channel and could add to it.
pub(super) fn kat_channel_error(generator: &[(String, String)], kat: &[u8]) -> Option<String> {
    let get = |key: &str| {
        generator
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    };
    let bytes = get("kat_bytes").and_then(|v| v.parse::<usize>().ok());
    let hash = get("kat_fnv1a64").and_then(|v| u64::from_str_radix(v, 16).ok());
    match (bytes, hash) {
        (Some(n), Some(h)) if n == kat.len() && h == frame::fnv1a64(kat) => None,
        (Some(n), Some(_)) => Some(format!(
            "the KAT channel holds {} bytes that are not the {n} bytes the generator wrote",
            kat.len()
        )),
        _ => Some("the generator did not account for its KAT file".into()),
    }
}

/// The KAT log: `key = value` lines, ending with `RESULT <id> <label> <STATUS>`.
/// No timestamps, so an unchanged library gives a byte-identical log.
#[derive(Default)]
pub(super) struct LogWriter {
    pub(super) text: String,
}

impl LogWriter {
    pub(super) fn kv(&mut self, k: &str, v: &str) {
        let v = v.replace('\n', " ");
        self.text.push_str(&format!("{k} = {v}\n"));
    }
    pub(super) fn line(&mut self, l: &str) {
        self.text.push_str(l);
        self.text.push('\n');
    }
    pub(super) fn raw(&mut self, block: &str) {
        for l in block.lines() {
            self.text.push_str("# ");
            self.text.push_str(l);
            self.text.push('\n');
        }
    }
}
