//! Comparing instruction counts (`count/<id>/<label>__<op>.json`) of two
//! runs. Counts are exact: a different instruction count per call is a
//! real change of the work done, whatever its size, so the verdict is a
//! comparison of the exact figures (the per-call means as fractions
//! total/calls), with the ratio beside it. Only the hardware counter's
//! counts carry noise (interrupts add a few instructions): differences
//! below `PERF_NOISE` of them are `within noise`.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::records::count::{CountRecord, ExactStatus, METHOD_PERF};

/// Relative difference the hardware instruction counter may show between
/// runs of the same library.
pub(crate) const PERF_NOISE: f64 = 1e-4;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CountVerdict {
    #[serde(rename = "identical")]
    Identical,
    #[serde(rename = "more instructions")]
    More,
    #[serde(rename = "fewer instructions")]
    Fewer,
    #[serde(rename = "within noise")]
    WithinNoise,
    #[serde(rename = "incomparable")]
    Incomparable,
}

impl CountVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            CountVerdict::Identical => "identical",
            CountVerdict::More => "more instructions",
            CountVerdict::Fewer => "fewer instructions",
            CountVerdict::WithinNoise => "within noise",
            CountVerdict::Incomparable => "incomparable",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CountComparison {
    pub instance: String,
    pub algorithm: String,
    pub label: String,
    pub op: String,
    pub verdict: CountVerdict,
    pub reason: Option<String>,
    pub method: Option<String>,
    /// Instructions per call in each run.
    pub per_call_a: Option<f64>,
    pub per_call_b: Option<f64>,
    /// per_call_b / per_call_a.
    pub ratio: Option<f64>,
    /// per_call_b − per_call_a.
    pub difference: Option<f64>,
}

/// Every `count/*/*.json` under `dir`, keyed by (`<id>/<label>`, op).
pub(crate) fn load(dir: &Path) -> Result<BTreeMap<(String, String), CountRecord>> {
    let mut out = BTreeMap::new();
    let pattern = format!(
        "{}/count/*/*.json",
        glob::Pattern::escape(&dir.display().to_string())
    );
    for path in glob::glob(&pattern)?.flatten() {
        let rec: CountRecord = crate::fsutil::read_json(&path)
            .with_context(|| format!("reading the count record {}", path.display()))?;
        out.insert(
            (format!("{}/{}", rec.algorithm, rec.label), rec.op.clone()),
            rec,
        );
    }
    Ok(out)
}

pub(crate) fn compare(
    a: &BTreeMap<(String, String), CountRecord>,
    b: &BTreeMap<(String, String), CountRecord>,
) -> Vec<CountComparison> {
    let mut keys: Vec<&(String, String)> = a.keys().chain(b.keys()).collect();
    keys.sort_by(|x, y| super::natural_key_cmp(x, y));
    keys.dedup();
    keys.into_iter()
        .map(|k| compare_op(a.get(k), b.get(k)))
        .collect()
}

/// (total, calls) of a counted operation.
fn figures(r: &CountRecord) -> Option<(u64, u64)> {
    let i = r
        .instructions
        .as_ref()
        .filter(|_| r.status == ExactStatus::Ok)?;
    (i.calls > 0).then_some((i.total, i.calls))
}

pub(crate) fn compare_op(a: Option<&CountRecord>, b: Option<&CountRecord>) -> CountComparison {
    let any = a.or(b).expect("a count from one of the runs");
    let mut c = CountComparison {
        instance: format!("{}/{}", any.algorithm, any.label),
        algorithm: any.algorithm.clone(),
        label: any.label.clone(),
        op: any.op.clone(),
        verdict: CountVerdict::Incomparable,
        reason: None,
        method: any.method.clone(),
        per_call_a: a.and_then(figures).map(|(t, n)| t as f64 / n as f64),
        per_call_b: b.and_then(figures).map(|(t, n)| t as f64 / n as f64),
        ratio: None,
        difference: None,
    };
    let (Some(ra), Some(rb)) = (a, b) else {
        c.reason = Some(format!(
            "only in run {}",
            if a.is_some() { "A" } else { "B" }
        ));
        return c;
    };
    let (Some((ta, na)), Some((tb, nb))) = (figures(ra), figures(rb)) else {
        let which = if figures(ra).is_none() {
            ("A", ra)
        } else {
            ("B", rb)
        };
        c.reason = Some(format!(
            "not counted in run {} ({})",
            which.0, which.1.status
        ));
        return c;
    };
    if ra.method != rb.method {
        c.reason = Some(format!(
            "different methods: {} vs {}",
            ra.method.as_deref().unwrap_or("none"),
            rb.method.as_deref().unwrap_or("none")
        ));
        return c;
    }
    let (pa, pb) = (ta as f64 / na as f64, tb as f64 / nb as f64);
    c.ratio = Some(pb / pa);
    c.difference = Some(pb - pa);
    // Exact: tb/nb against ta/na in integers.
    let (x, y) = (
        u128::from(tb) * u128::from(na),
        u128::from(ta) * u128::from(nb),
    );
    c.verdict = if x == y {
        CountVerdict::Identical
    } else if ra.method.as_deref() == Some(METHOD_PERF) && ((pb - pa) / pa).abs() <= PERF_NOISE {
        CountVerdict::WithinNoise
    } else if x > y {
        CountVerdict::More
    } else {
        CountVerdict::Fewer
    };
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::count::Instructions;

    fn rec(per_call: &[u64], method: &str) -> CountRecord {
        CountRecord {
            algorithm: "a".into(),
            label: "L".into(),
            op: "sign".into(),
            status: ExactStatus::Ok,
            detail: None,
            method: Some(method.into()),
            tool: None,
            host_fingerprint: None,
            library_sha256: None,
            cpu: None,
            warmup: 1,
            per_call: per_call.to_vec(),
            instructions: Instructions::of(per_call),
            process: None,
        }
    }

    #[test]
    fn one_instruction_is_a_difference() {
        let a = rec(&[1000, 1000, 1000], "callgrind");
        let same = compare_op(Some(&a), Some(&rec(&[1000, 1000, 1000], "callgrind")));
        assert_eq!(same.verdict, CountVerdict::Identical);
        let one = compare_op(Some(&a), Some(&rec(&[1001, 1001, 1001], "callgrind")));
        assert_eq!(one.verdict, CountVerdict::More);
        assert_eq!(one.difference, Some(1.0));
        assert_eq!(one.ratio, Some(1.001));
        let fewer = compare_op(Some(&a), Some(&rec(&[999, 1000, 1000], "callgrind")));
        assert_eq!(fewer.verdict, CountVerdict::Fewer);
        // The hardware counter's few stray instructions are noise.
        let p = compare_op(
            Some(&rec(&[100000], "perf-instructions")),
            Some(&rec(&[100003], "perf-instructions")),
        );
        assert_eq!(p.verdict, CountVerdict::WithinNoise);
        let m = compare_op(
            Some(&a),
            Some(&rec(&[1000, 1000, 1000], "perf-instructions")),
        );
        assert_eq!(m.verdict, CountVerdict::Incomparable);
    }
}
