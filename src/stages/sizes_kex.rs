//! Sizes of key-exchange and hash instances. A KEX: its passes, each
//! message's length as produced, the protocol-message bytes, public keys A
//! and B (0 = no long-term key), the bandwidth (messages plus each public
//! key a party needs once), the long-term secret-key cap and the shared
//! secret; a curated `ID;Instance;PkABytes;PkBBytes;ProtocolMessageBytes`
//! catalog overrides public keys and protocol bytes. A hash: its digest.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::context::Cx;
use crate::error::ConfigError;
use crate::kat::KatOutput;
use crate::kinds::Sizes;
use crate::measure::timing::TimeOutput;
use crate::plan::Instance;
use crate::sizes::{read_semicolon_catalog, SizeFigure, SizesOutput};

/// One row of the KEX size catalog.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct KexCatalogEntry {
    pub pk_a: Option<u64>,
    pub pk_b: Option<u64>,
    pub protocol_messages: Option<u64>,
}

/// Reads `ID;Instance;PkABytes;PkBBytes;ProtocolMessageBytes`.
pub(crate) fn read_kex_catalog(
    path: &Path,
) -> Result<BTreeMap<(String, String), KexCatalogEntry>, ConfigError> {
    read_semicolon_catalog(
        path,
        "KEX size catalog",
        &["PkABytes", "PkBBytes", "ProtocolMessageBytes"],
        |line| {
            Ok(KexCatalogEntry {
                pk_a: line.bytes(0)?,
                pk_b: line.bytes(1)?,
                protocol_messages: line.bytes(2)?,
            })
        },
    )
}

pub(crate) fn kex_catalog_entry(cx: &Cx, inst: &Instance) -> Result<Option<KexCatalogEntry>> {
    let Some(path) = cx
        .plan
        .kex_catalog
        .as_ref()
        .filter(|_| inst.kind.def().sizes() == Sizes::PerRole)
    else {
        return Ok(None);
    };
    Ok(read_kex_catalog(path)?
        .get(&(inst.algorithm.clone(), inst.label.clone()))
        .cloned())
}

fn figure(
    api: Option<u64>,
    observed: Option<u64>,
    catalog: Option<u64>,
    prefer_api: bool,
) -> SizeFigure {
    let (shown, from) = match (catalog, api, observed) {
        (Some(c), _, _) => (Some(c), "catalog"),
        (None, Some(a), _) if prefer_api => (Some(a), "api"),
        (None, _, Some(o)) => (Some(o), "observed"),
        (None, a, None) => (a, "api"),
    };
    SizeFigure {
        api,
        observed,
        observed_min: None,
        catalog,
        shown,
        shown_from: from.into(),
    }
}

/// The sizes of a KEX or hash instance from its KAT figures, the lengths
/// its timing runs returned and the catalog.
pub(crate) fn sizes(
    inst: &Instance,
    kat: &KatOutput,
    time: Option<&TimeOutput>,
    catalog: Option<KexCatalogEntry>,
) -> SizesOutput {
    let timed = |key: &str| {
        time.and_then(|t| {
            t.ops
                .iter()
                .filter_map(|o| o.lengths.get(key).copied())
                .max()
        })
    };
    // With the lengths that crossed between processes in the KAT's round
    // trip (under the timing runs' keys).
    let observed = |kat_key: &str, time_key: &str| {
        [kat.figure(kat_key), timed(time_key), kat.crossed(time_key)]
            .into_iter()
            .flatten()
            .max()
    };
    let mut figures = BTreeMap::new();
    let mut disagreements = Vec::new();
    let show = |v: Option<u64>| v.map_or("–".to_string(), |v| v.to_string());
    if inst.kind.def().sizes() == Sizes::Digest {
        let api = kat.figure("api_digest_bytes");
        let obs = kat.figure("max_digest_len");
        if matches!((obs, api), (Some(o), Some(a)) if o > a) {
            disagreements.push(format!("digest: API {}, observed {}", show(api), show(obs)));
        }
        figures.insert("digest".to_string(), figure(api, obs, None, true));
        return SizesOutput {
            figures,
            basis: None,
            disagreements,
        };
    }
    let passes = kat.figure("passes");
    let pk_cap = kat.figure("api_pk_bytes");
    let cat = catalog.as_ref();
    let mut put = |name: &str, f: SizeFigure, check_cap: bool| {
        let over = check_cap && matches!((f.observed, f.api), (Some(o), Some(a)) if o > a);
        let off = matches!((f.catalog, f.observed), (Some(c), Some(o)) if c != o);
        if over || off {
            disagreements.push(format!(
                "{name}: API {}, observed {}, catalog {}",
                show(f.api),
                show(f.observed),
                show(f.catalog)
            ));
        }
        figures.insert(name.to_string(), f);
    };
    put("passes", figure(passes, passes, None, true), false);
    let pka = figure(
        pk_cap,
        observed("max_pka_len", "pka"),
        cat.and_then(|c| c.pk_a),
        false,
    );
    let pkb = figure(
        pk_cap,
        observed("max_pkb_len", "pkb"),
        cat.and_then(|c| c.pk_b),
        false,
    );
    let msgs = figure(
        kat.figure("api_msg_bytes"),
        observed("max_msgs_len", "msgs"),
        cat.and_then(|c| c.protocol_messages),
        false,
    );
    for k in 1..=passes.unwrap_or(0) {
        let key = format!("m{k}");
        let f = figure(None, observed(&format!("max_m{k}_len"), &key), None, false);
        put(&format!("message {k}"), f, false);
    }
    // Bandwidth: every message, and each long-term public key once (a
    // party without one sends nothing for it).
    let bandwidth = [&msgs, &pka, &pkb]
        .iter()
        .map(|f| f.shown)
        .sum::<Option<u64>>();
    put("public key A", pka, true);
    put("public key B", pkb, true);
    put("protocol messages", msgs, true);
    put("bandwidth", figure(None, bandwidth, None, false), false);
    let sk = observed("max_ska_len", "ska").max(observed("max_skb_len", "skb"));
    put(
        "secret key",
        figure(kat.figure("api_sk_bytes"), sk, None, true),
        true,
    );
    put(
        "shared secret",
        figure(
            kat.figure("api_ss_bytes"),
            observed("max_ss_len", "ss"),
            None,
            true,
        ),
        true,
    );
    SizesOutput {
        figures,
        basis: None,
        disagreements,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kex_catalog_lines_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("k.csv");
        std::fs::write(
            &p,
            "ID;Instance;PkABytes;PkBBytes;ProtocolMessageBytes\nkex-1;A;0;32;96\n",
        )
        .unwrap();
        let c = read_kex_catalog(&p).unwrap();
        let e = &c[&("kex-1".into(), "A".into())];
        assert_eq!(
            (e.pk_a, e.pk_b, e.protocol_messages),
            (Some(0), Some(32), Some(96))
        );
        std::fs::write(&p, "kex-1;A;0;32\n").unwrap();
        let e = read_kex_catalog(&p).unwrap_err().to_string();
        assert!(
            e.contains("expected 5 fields") && e.contains("k.csv:1:1"),
            "{e}"
        );
    }
}
