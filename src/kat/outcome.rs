//! What the KAT stage found for one instance: every flag profile tried,
//! with its library, verdict and evidence (blobs in the cache).

use serde::{Deserialize, Serialize};

use super::Status;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct KatAttempt {
    pub profile: String,
    pub status: Status,
    pub detail: Option<String>,
    pub library_sha256: Option<String>,
    pub load_bytes: Option<u64>,
    /// sha256 of the KAT log and of the generated KAT file (blobs).
    pub log_sha256: String,
    pub output_sha256: Option<String>,
    /// `key = value` lines the generator printed.
    pub generator: Vec<(String, String)>,
    /// Where the reference compared with came from (`submitted`,
    /// `published`, `blessed`; `kat::provenance`), when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// The records the reference's digest covers (the manifest line's
    /// count, else the whole file the campaign asks for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_records: Option<u32>,
    /// A hash instance's KAT files, each generated and checked on its own
    /// (its attempt's status is the first one that did not pass).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<KatFile>,
    /// The round trip across processes (`stages::kat_trip`), for the kinds
    /// that have one and a KAT run that completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crossed: Option<Crossing>,
}

/// What crossed between processes in the round trip, and whether it
/// worked there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Crossing {
    /// The longest of each output that crossed a process boundary, in
    /// bytes: `pk`, `sk`, `ct`, `ss`, `sig`; a key exchange's `pka`,
    /// `pkb`, `ska`, `skb`, `m<k>`, `msgs`, `ss` (and `sta`/`stb`).
    pub lengths: std::collections::BTreeMap<String, u64>,
    /// The step that failed and why; None when every step worked.
    pub failure: Option<String>,
}

/// One KAT file of a hash instance (`KAT_2_12`, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct KatFile {
    pub file: String,
    pub status: Status,
    pub detail: Option<String>,
    /// sha256 of the generated file (a blob).
    pub output_sha256: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct KatOutput {
    pub attempts: Vec<KatAttempt>,
    /// The attempt whose library the later stages use.
    pub chosen: usize,
}

impl KatOutput {
    pub(crate) fn final_attempt(&self) -> &KatAttempt {
        &self.attempts[self.chosen]
    }
    pub(crate) fn status(&self) -> Status {
        self.final_attempt().status
    }
    /// The longest `pk`, `sk`, `ct`, `ss` or `sig` that crossed between
    /// processes in the round trip.
    pub(crate) fn crossed(&self, field: &str) -> Option<u64> {
        self.final_attempt()
            .crossed
            .as_ref()?
            .lengths
            .get(field)
            .copied()
    }

    /// The CPU seconds one call of `op` took in the KAT run: the
    /// runner's `cost_<op>_seconds` over the records it wrote. None for
    /// runs from before the runner reported it.
    pub(crate) fn call_seconds(&self, op: &str) -> Option<f64> {
        let a = self.final_attempt();
        let key = format!("cost_{op}_seconds");
        let total: f64 = a
            .generator
            .iter()
            .find(|(k, _)| *k == key)?
            .1
            .parse()
            .ok()?;
        let records: f64 = a
            .generator
            .iter()
            .find(|(k, _)| k == "records")
            .and_then(|(_, v)| v.parse().ok())
            .filter(|n: &f64| *n > 0.0)?;
        Some(total / records)
    }

    /// A generator figure, e.g. `max_sig_len`.
    pub(crate) fn figure(&self, key: &str) -> Option<u64> {
        self.final_attempt()
            .generator
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| v.parse().ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(generator: &[(&str, &str)]) -> KatOutput {
        KatOutput {
            attempts: vec![KatAttempt {
                profile: "guide".into(),
                status: Status::Pass,
                detail: None,
                library_sha256: None,
                load_bytes: None,
                log_sha256: String::new(),
                output_sha256: None,
                generator: generator
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                reference: None,
                reference_records: None,
                files: Vec::new(),
                crossed: None,
            }],
            chosen: 0,
        }
    }

    #[test]
    fn a_calls_cost_is_the_runs_over_its_records() {
        let k = output(&[("records", "4"), ("cost_sign_seconds", "2.0e-01")]);
        assert_eq!(k.call_seconds("sign"), Some(0.05));
        // Not reported (an older runner), or no record written.
        assert_eq!(k.call_seconds("verify"), None);
        let none = output(&[("records", "0"), ("cost_sign_seconds", "2.0e-01")]);
        assert_eq!(none.call_seconds("sign"), None);
    }
}
