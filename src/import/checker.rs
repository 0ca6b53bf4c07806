//! A tree that ships KAT checkers and no generator (FrodoKEM's
//! `PQCtestKAT_kem` opens `KAT/PQCkemKAT_<secret key bytes>.rsp`, makes
//! each record again from its seed and compares): the checker its own
//! build made judges pqbench's KAT file. The file is accepted only when
//! the checker exits 0 on it *and* fails on a copy whose last record has
//! one digit changed, so a checker that reads nothing, stops early or
//! accepts anything proves nothing. The checker runs as a submission job,
//! as the generators do (`observe::run_program`).

use std::path::Path;

use anyhow::{Context, Result};

use crate::sandbox::Outcome;

/// A set's KAT checker, as its tree's build made it.
#[derive(Debug, Clone)]
pub struct Checker {
    /// The set's label in the draft.
    pub label: String,
    /// The program, relative to the tree.
    pub program: String,
    /// The build command that made it.
    pub command: String,
    pub bytes: Vec<u8>,
}

/// What the checker made of pqbench's file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Judgement {
    /// Accepted, read under this name (the reference's file name).
    Accepted {
        file: String,
    },
    Rejected(String),
}

/// At most this many names from the program get a copy of the file.
const MAX_NAMES: usize = 16;

/// Runs `checker` on pqbench's KAT file `rsp`, then on a copy with its
/// last record changed.
pub(crate) fn judge(checker: &Checker, rsp: &[u8]) -> Result<Judgement> {
    let text = String::from_utf8_lossy(rsp);
    let Some(sk) = secret_key_bytes(&text) else {
        return Ok(Judgement::Rejected(
            "pqbench's KAT file has no `sk = ` line for the checker to find it by".into(),
        ));
    };
    let names = file_names(&checker.bytes, sk, &text);
    let (code, output) = run(checker, &names, rsp)?;
    if code != Outcome::Exited(0) {
        return Ok(Judgement::Rejected(format!(
            "the tree's checker {} rejects pqbench's KAT file ({code}): {}",
            checker.program,
            last_line(&output)
        )));
    }
    let Some(changed) = corrupt_last_record(&text) else {
        return Ok(Judgement::Rejected(
            "pqbench's KAT file has no record to change for the checker's control run".into(),
        ));
    };
    let (code, _) = run(checker, &names, changed.as_bytes())?;
    if code == Outcome::Exited(0) {
        return Ok(Judgement::Rejected(format!(
            "the tree's checker {} also accepts a copy with one digit of the last record changed: it proves nothing",
            checker.program
        )));
    }
    let file = names[0].rsplit('/').next().unwrap_or(&names[0]).to_string();
    Ok(Judgement::Accepted { file })
}

/// Writes `rsp` under every name in a folder of its own and runs the
/// checker there: its exit and the tail of its output.
fn run(checker: &Checker, names: &[String], rsp: &[u8]) -> Result<(Outcome, String)> {
    let job = tempfile::Builder::new()
        .prefix("pqbench-checker-")
        .tempdir()
        .context("creating the checker's folder")?;
    for n in names {
        let path = job.path().join(n);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        std::fs::write(&path, rsp).with_context(|| format!("writing {}", path.display()))?;
    }
    super::observe::run_program(job.path(), "pqb-checker-program", &checker.bytes)
}

fn last_line(text: &str) -> String {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no output")
        .trim()
        .chars()
        .take(200)
        .collect()
}

/// The length of the first record's secret key: NIST's checkers name
/// the file they open by it.
fn secret_key_bytes(rsp: &str) -> Option<usize> {
    let hex = rsp.lines().find_map(|l| l.trim().strip_prefix("sk = "))?;
    Some(hex.trim().len() / 2)
}

/// The names the checker may open its file by: the `.rsp` names in its
/// program (`KAT/PQCkemKAT_%d.rsp`, the number being the secret key's
/// length), relative and inside its folder; else NIST's name, beside it
/// and in `KAT/`.
fn file_names(program: &[u8], sk: usize, rsp: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for s in strings(program).filter(|s| s.ends_with(".rsp")) {
        let n = ["%llu", "%lu", "%zu", "%u", "%d", "%i"]
            .iter()
            .fold(s, |n, f| n.replace(f, &sk.to_string()));
        let inside = Path::new(&n)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
        if inside && !n.contains('%') && !names.contains(&n) && names.len() < MAX_NAMES {
            names.push(n);
        }
    }
    if names.is_empty() {
        let kind = if rsp.contains("\nct = ") {
            "kem"
        } else {
            "sign"
        };
        let nist = format!("PQC{kind}KAT_{sk}.rsp");
        names = vec![format!("KAT/{nist}"), nist];
    }
    names
}

/// Runs of printable ASCII of at least five characters, as `strings`.
fn strings(bytes: &[u8]) -> impl Iterator<Item = String> + '_ {
    bytes
        .split(|b| !(b.is_ascii_graphic() || *b == b' '))
        .filter(|r| r.len() >= 5)
        .map(|r| String::from_utf8_lossy(r).into_owned())
}

/// The file with one hex digit of its last record's last value changed.
fn corrupt_last_record(rsp: &str) -> Option<String> {
    let lines: Vec<&str> = rsp.lines().collect();
    let at = lines.iter().rposition(|l| {
        l.split_once(" = ").is_some_and(|(k, v)| {
            k != "count" && !v.is_empty() && v.bytes().all(|b| b.is_ascii_hexdigit())
        })
    })?;
    let (key, value) = lines[at].split_once(" = ")?;
    let mut digits: Vec<u8> = value.bytes().collect();
    let last = digits.last_mut()?;
    *last = if *last == b'0' { b'1' } else { b'0' };
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    out[at] = format!("{key} = {}", String::from_utf8_lossy(&digits));
    let mut text = out.join("\n");
    if rsp.ends_with('\n') {
        text.push('\n');
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_in_the_program_are_filled_with_the_key_length() {
        let program = b"\x00\x01Couldn't open <%s> for read\x00KAT/PQCkemKAT_%d.rsp\x00../x_%d.rsp\x00/etc/a.rsp\x00";
        assert_eq!(
            file_names(program, 19888, ""),
            vec!["KAT/PQCkemKAT_19888.rsp"]
        );
        // No name in the program: NIST's, for the kind the file holds.
        assert_eq!(
            file_names(b"", 32, "count = 0\nct = 00\n"),
            vec!["KAT/PQCkemKAT_32.rsp", "PQCkemKAT_32.rsp"]
        );
    }

    #[test]
    fn the_control_copy_differs_in_the_last_records_last_value_only() {
        let rsp = "# x\n\ncount = 0\nsk = AB\nss = 10\n\ncount = 1\nsk = CD\nss = 21\n";
        let c = corrupt_last_record(rsp).unwrap();
        assert_eq!(
            c,
            "# x\n\ncount = 0\nsk = AB\nss = 10\n\ncount = 1\nsk = CD\nss = 20\n"
        );
        assert_eq!(secret_key_bytes(rsp), Some(1));
    }
}
