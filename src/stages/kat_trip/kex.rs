//! The round trip of a key exchange (`RoundTrip::Exchange`). Each party's
//! steps run in processes of their own, given only that party's own key
//! and state as its previous step left them, the other party's public key
//! and the messages so far: first each party derives the KAT record's
//! secret from the record's keys, final states and messages; then a whole
//! protocol runs anew from the record's key pairs and initial states (a
//! party the record lacks is initialised in a process of its own), pass
//! by pass, and the two secrets derived at its end must agree. A state or
//! message that is a handle into the memory of the process that made it
//! works in none of them.

use std::collections::BTreeMap;

use super::{reported, Said, Step, Trip};
use crate::kinds::KEX_MAX_PASSES;

/// The first record's fields as written, by lower-case name.
type Text = BTreeMap<String, String>;

/// One party: its key pair, and its state as its last step left it.
struct Party {
    pk: Vec<u8>,
    sk: Vec<u8>,
    st: Vec<u8>,
}

/// Both parties' steps, each in a fresh process.
pub(super) fn exchange(trip: &mut Trip, text: &Text) -> Step<()> {
    let (a, a_recorded) = party(trip, text, true)?;
    let (b, b_recorded) = party(trip, text, false)?;
    if a_recorded && b_recorded {
        record_secret(trip, text, &a, &b)?;
    }
    protocol(trip, a, b)
}

/// A byte field of the record, cut to its `<name>_Len` (an empty field is
/// written `00`); None when it is missing or its length disagrees.
fn sized(text: &Text, name: &str) -> Option<Vec<u8>> {
    let bytes = hex::decode(text.get(name)?).ok()?;
    match text.get(&format!("{name}_len")).map(|n| n.parse::<usize>()) {
        None => Some(bytes),
        Some(Ok(0)) => Some(Vec::new()),
        Some(Ok(n)) if n == bytes.len() => Some(bytes),
        Some(_) => None,
    }
}

fn need(text: &Text, name: &str) -> Step<Vec<u8>> {
    Ok(sized(text, name).ok_or_else(|| {
        format!("the KAT file's first record has no readable {name} of the length it states")
    })?)
}

/// A party's key pair and initial state: the KAT record's (`PKa`, `SKa`,
/// `Init_Sta` or B's), or else from its init in a fresh process; true when
/// they are the record's.
fn party(trip: &mut Trip, text: &Text, a: bool) -> Step<(Party, bool)> {
    let side = if a { "a" } else { "b" };
    let recorded = (
        sized(text, &format!("pk{side}")),
        sized(text, &format!("sk{side}")),
        sized(text, &format!("init_st{side}")),
    );
    let (party, from_record) = match recorded {
        (Some(pk), Some(sk), Some(st)) => (Party { pk, sk, st }, true),
        _ => {
            let op = format!("init_{side}");
            let said = trip.step(&op, &[])?;
            let party = Party {
                pk: reported(&said, "pk", &op)?,
                sk: reported(&said, "sk", &op)?,
                st: reported(&said, "st", &op)?,
            };
            (party, false)
        }
    };
    trip.note(&format!("pk{side}"), party.pk.len());
    trip.note(&format!("sk{side}"), party.sk.len());
    trip.note(&format!("st{side}"), party.st.len());
    Ok((party, from_record))
}

/// One step of one party, given its own key and state, the other party's
/// public key and the messages so far.
fn run(
    trip: &mut Trip,
    op: &str,
    me: (&[u8], &[u8]),
    peer_pk: &[u8],
    msgs: &[Vec<u8>],
) -> Step<Said> {
    let names: Vec<String> = (1..=msgs.len()).map(|k| format!("m{k}")).collect();
    let mut files: Vec<(&str, &[u8])> = vec![("sk", me.0), ("st", me.1), ("peer_pk", peer_pk)];
    files.extend(
        names
            .iter()
            .map(String::as_str)
            .zip(msgs.iter().map(Vec::as_slice)),
    );
    trip.step(op, &files)
}

/// derive_a or derive_b in a fresh process: the secret, its length noted.
fn derive(
    trip: &mut Trip,
    op: &str,
    me: (&[u8], &[u8]),
    peer_pk: &[u8],
    msgs: &[Vec<u8>],
) -> Step<Vec<u8>> {
    let said = run(trip, op, me, peer_pk, msgs)?;
    trip.bytes(&said, "ss", op)
}

fn note_messages(trip: &mut Trip, msgs: &[Vec<u8>]) {
    for (k, m) in msgs.iter().enumerate() {
        trip.note(&format!("m{}", k + 1), m.len());
    }
    trip.note("msgs", msgs.iter().map(Vec::len).sum());
}

/// Each party derives the record's secret in a fresh process from the
/// record's keys, its final state and the record's messages.
fn record_secret(trip: &mut Trip, text: &Text, a: &Party, b: &Party) -> Step<()> {
    let passes = text
        .get("pass_num")
        .and_then(|n| n.parse::<u32>().ok())
        .filter(|p| (1..=KEX_MAX_PASSES).contains(p))
        .ok_or_else(|| "the KAT file's first record has no Pass_Num of 1 to 16".to_string())?;
    let msgs = (1..=passes)
        .map(|k| need(text, &format!("m{k}")))
        .collect::<Step<Vec<_>>>()?;
    note_messages(trip, &msgs);
    let ss = need(text, "ss")?;
    trip.note("ss", ss.len());
    // The last pass each party made (B none in a one-pass protocol).
    let last_a = passes - u32::from(passes % 2 == 0);
    let last_b = passes - u32::from(passes % 2 == 1);
    let sta = need(text, &format!("pass{last_a}_sta"))?;
    let stb = match last_b {
        0 => need(text, "init_stb")?,
        k => need(text, &format!("pass{k}_stb"))?,
    };
    for (op, me, st, peer) in [("derive_a", a, &sta, b), ("derive_b", b, &stb, a)] {
        if derive(trip, op, (&me.sk, st), &peer.pk, &msgs)? != ss {
            return Err(format!(
                "{op} of the KAT record's keys, final state and messages in a fresh process gave \
                 another shared secret than the KAT run (its keys, states or messages work only \
                 in the process that made them)"
            )
            .into());
        }
    }
    Ok(())
}

/// A whole protocol anew: pass k by its party (odd k: A) in a fresh
/// process until a pass ends it, then each party's derivation.
fn protocol(trip: &mut Trip, mut a: Party, mut b: Party) -> Step<()> {
    let mut msgs: Vec<Vec<u8>> = Vec::new();
    loop {
        let k = msgs.len() + 1;
        if k > KEX_MAX_PASSES as usize {
            return Err(format!("no pass of the first {KEX_MAX_PASSES} ended the protocol").into());
        }
        let op = format!("pass{k}");
        let (me, peer) = if k % 2 == 1 {
            (&mut a, &b)
        } else {
            (&mut b, &a)
        };
        let said = run(trip, &op, (&me.sk, &me.st), &peer.pk, &msgs)?;
        me.st = reported(&said, "st", &op)?;
        let m = reported(&said, "msg", &op)?;
        trip.note(&op.replace("pass", "m"), m.len());
        msgs.push(m);
        if said.get("last").map(String::as_str) == Some("1") {
            break;
        }
    }
    trip.note("msgs", msgs.iter().map(Vec::len).sum());
    trip.note("sta", a.st.len());
    trip.note("stb", b.st.len());
    let ssa = derive(trip, "derive_a", (&a.sk, &a.st), &b.pk, &msgs)?;
    let ssb = derive(trip, "derive_b", (&b.sk, &b.st), &a.pk, &msgs)?;
    if ssa != ssb || ssa.is_empty() {
        return Err(
            "the two parties' shared secrets differ when each pass and derivation runs in a \
             fresh process given only the bytes the others made (its states or messages work \
             only in the process that made them)"
                .to_string()
                .into(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_is_cut_to_its_stated_length() {
        let text: Text = [
            ("pka", "00"),
            ("pka_len", "0"),
            ("ska", "0A0B"),
            ("ska_len", "2"),
            ("m1", "0A0B"),
            ("m1_len", "3"),
            ("ss", "01"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(sized(&text, "pka"), Some(vec![]));
        assert_eq!(sized(&text, "ska"), Some(vec![0x0a, 0x0b]));
        assert_eq!(sized(&text, "m1"), None);
        assert_eq!(sized(&text, "ss"), Some(vec![1]));
        assert_eq!(sized(&text, "pkb"), None);
    }
}
