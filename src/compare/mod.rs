//! Comparing the timing figures of two runs, per instance and operation.
//!
//! Noise on a real host has three layers, and the interval reported for the
//! ratio median(B) / median(A) covers each of them (it is the hull of three
//! intervals):
//! 1. within a process, call to call: a 95 % bootstrap interval over the
//!    per-call samples (`stats::compare`), or over the trial means when a
//!    record kept no samples;
//! 2. process to process and run to run: every trial is a fresh process
//!    placed anew in memory, and on a shared or virtual host whole runs
//!    shift as well. A run's own trials cannot show the run-level shift, so
//!    the interval assumes it is no larger than one process's deviation:
//!    ratio × exp(±t₉₇.₅(k_A + k_B − 2) · √(d_A² + d_B²)), d = the CV
//!    across the run's k trials of the compared statistic (each trial's
//!    median call; each trial's mean without samples), Student's t because
//!    d rests on a handful of trials;
//! 3. counter resolution: counters that tick in steps of q cycles move a
//!    median by a step at a time: (m_B ∓ q) / (m_A ± q).
//!
//! Verdict, with t the noise threshold and α = 0.01:
//! - `incomparable` when the runs' host fingerprints or the operation's
//!   counters differ, or either run lacks timed calls for it;
//! - `slower` when the interval lies entirely above 1 + t and the
//!   Mann–Whitney p < α;
//! - `faster` when it lies entirely below 1 / (1 + t) and p < α;
//! - `within noise` otherwise.
//!
//! The default t comes from measured run-to-run dispersion on the host
//! (`threshold`): repeated runs of identical libraries when there are
//! enough, else the runs' trial-mean CVs, raised on an unfixed host.
//!
//! The Mann–Whitney test uses the same values as the bootstrap; with
//! per-call samples it sees only call-to-call noise (so p is tiny for any
//! shift), which is why the interval and t carry the verdict. With trial
//! means and few trials it is exact (`exact_mann_whitney_p`).

mod combination;
pub(crate) mod counts;
pub(crate) mod noise;
pub(crate) mod threshold;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::error::{ConfigError, Error};
use crate::records::campaign::CampaignRecord;
use crate::records::operation::OperationRecord;
use crate::stats;
pub use combination::compare_combinations;
pub(crate) use noise::{exact_mann_whitney_p, t975, trial_cv, trial_dispersion};
use noise::{resolution, timed_trials};
pub use threshold::Threshold;

pub(crate) const ALPHA: f64 = 0.01;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    #[serde(rename = "faster")]
    Faster,
    #[serde(rename = "slower")]
    Slower,
    #[serde(rename = "within noise")]
    WithinNoise,
    #[serde(rename = "incomparable")]
    Incomparable,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::WithinNoise => "within noise",
            Verdict::Incomparable => "incomparable",
        }
    }
}

/// One run's timing records, from a run directory or a dataset directory.
#[derive(Debug, Clone)]
pub struct RunData {
    pub dir: PathBuf,
    pub info: RunInfo,
    /// Keyed by (`<id>/<label>`, operation).
    pub records: BTreeMap<(String, String), OperationRecord>,
    /// Instruction counts (the `count` stage), keyed alike.
    pub counts: BTreeMap<(String, String), crate::records::count::CountRecord>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// The run id, or the directory when the run has no lock file.
    pub name: String,
    pub campaign: Option<String>,
    pub system: Option<String>,
    pub start_utc: Option<String>,
    pub host_fingerprint: Option<String>,
    /// Whether the host check found nothing wrong on every measuring CPU.
    pub host_fixed: Option<bool>,
}

impl RunData {
    /// Reads `campaign.json`, `lock.json` (for the run id) and every
    /// `records/<id>/<label>__<op>.json` under `dir`.
    pub fn load(dir: &Path) -> Result<RunData> {
        let campaign: Option<CampaignRecord> =
            crate::fsutil::read_json(&dir.join(crate::records::layout::CAMPAIGN)).ok();
        let lock = crate::records::lock::load(dir).ok();
        let info = RunInfo {
            name: lock
                .as_ref()
                .map(|l| l.run_id.clone())
                .unwrap_or_else(|| dir.display().to_string()),
            campaign: campaign.as_ref().map(|c| c.campaign.clone()),
            system: campaign.as_ref().map(|c| c.system.clone()),
            start_utc: campaign.as_ref().map(|c| c.start_utc.clone()),
            host_fingerprint: campaign.as_ref().map(|c| c.host_fingerprint.clone()),
            host_fixed: campaign
                .as_ref()
                .map(|c| c.host_checks.iter().all(|h| h.problems.is_empty())),
        };
        let mut records = BTreeMap::new();
        let pattern = format!(
            "{}/records/*/*.json",
            glob::Pattern::escape(&dir.display().to_string())
        );
        for path in glob::glob(&pattern)?.flatten() {
            let rec: OperationRecord = crate::fsutil::read_json(&path)
                .with_context(|| format!("reading the operation record {}", path.display()))?;
            records.insert(
                (format!("{}/{}", rec.algorithm, rec.label), rec.op.clone()),
                rec,
            );
        }
        Ok(RunData {
            dir: dir.to_path_buf(),
            info,
            records,
            counts: counts::load(dir)?,
        })
    }
}

/// The comparison of one operation of one instance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpComparison {
    pub instance: String,
    pub algorithm: String,
    pub label: String,
    pub op: String,
    pub verdict: Verdict,
    /// Why the operation is incomparable.
    pub reason: Option<String>,
    /// `per-call samples` or `trial means`.
    pub basis: Option<String>,
    pub median_a: Option<f64>,
    pub median_b: Option<f64>,
    /// median(B) / median(A) in cycles.
    pub ratio: Option<f64>,
    pub ci: Option<(f64, f64)>,
    pub p_value: Option<f64>,
    pub mann_whitney_u: Option<f64>,
    pub calls_a: Option<u64>,
    pub calls_b: Option<u64>,
    /// Trial-mean CV of each run (what the default threshold is made of).
    pub cv_a: Option<f64>,
    pub cv_b: Option<f64>,
    /// CV across trials of the compared statistic (trial medians with
    /// samples, else trial means): the run-to-run part of the interval.
    pub dispersion_a: Option<f64>,
    pub dispersion_b: Option<f64>,
    pub counter_a: Option<String>,
    pub counter_b: Option<String>,
}

/// A geometric-mean line for one algorithm over its comparable operations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlgorithmSummary {
    pub algorithm: String,
    pub compared: usize,
    pub geomean_ratio: Option<f64>,
    /// Geometric means of the operations' interval bounds: the operations
    /// of a run share its drift, so their errors are not averaged away.
    pub ci: Option<(f64, f64)>,
    /// From the interval alone (a geometric mean has no single test).
    pub verdict: Verdict,
    pub counts: BTreeMap<String, usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareReport {
    pub a: RunInfo,
    pub b: RunInfo,
    pub threshold: Threshold,
    pub alpha: f64,
    pub rule: String,
    pub operations: Vec<OpComparison>,
    pub algorithms: Vec<AlgorithmSummary>,
    pub counts: BTreeMap<String, usize>,
    /// Instruction counts per operation, compared exactly (runs with a
    /// `count` stage only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub instructions: Vec<counts::CountComparison>,
}

impl CompareReport {
    pub(crate) fn any(&self, v: Verdict) -> bool {
        self.operations.iter().any(|o| o.verdict == v)
    }

    pub(crate) fn any_count(&self, v: counts::CountVerdict) -> bool {
        self.instructions.iter().any(|o| o.verdict == v)
    }

    /// 1 when `fail_on_regression` (`--fail-on-regression`) and anything
    /// is `slower` or executes more instructions, else 0.
    pub fn exit_code(&self, fail_on_regression: bool) -> i32 {
        if fail_on_regression
            && (self.any(Verdict::Slower) || self.any_count(counts::CountVerdict::More))
        {
            crate::error::exit::ITEM_FAILURES
        } else {
            crate::error::exit::OK
        }
    }
}

pub fn rule_text(t: f64) -> String {
    format!(
        "ratio = median(B)/median(A) of cycles per call; its interval is the hull of a 95 % bootstrap interval (per-call samples when both records have them, else trial means), ratio × exp(±t₉₇.₅·√(d_A² + d_B²)) for process-to-process and run-to-run shifts (d = CV of the per-trial medians, or means without samples) and the counter's resolution. `slower`: interval above 1 + t = {:.3} and Mann–Whitney p < {ALPHA}; `faster`: interval below 1/(1 + t) = {:.3} and p < {ALPHA}; `incomparable`: different host fingerprint or counter, or no timed calls in one run; else `within noise`.",
        1.0 + t,
        1.0 / (1.0 + t)
    )
}

/// The threshold `given`, else the default from the runs and the history
/// of runs near them (never the two runs themselves).
pub(crate) fn choose_threshold(given: Option<f64>, a: &RunData, b: &RunData) -> Threshold {
    match given {
        Some(t) => Threshold::given(t),
        None => {
            let history = threshold::history_near(
                &[&a.dir, &b.dir],
                &[a.info.name.as_str(), b.info.name.as_str()],
            );
            Threshold::default_for(a, b, &history)
        }
    }
}

/// (instance, operation) keys in the order a reader expects
/// (`hash_128` before `hash_1024`).
pub(crate) fn natural_key_cmp(x: &(String, String), y: &(String, String)) -> std::cmp::Ordering {
    use crate::format::natural_cmp;
    natural_cmp(&x.0, &y.0).then_with(|| natural_cmp(&x.1, &y.1))
}

/// Compares every operation found in either run.
pub(crate) fn compare_runs(a: &RunData, b: &RunData, threshold: Threshold) -> CompareReport {
    let host = match (&a.info.host_fingerprint, &b.info.host_fingerprint) {
        (Some(x), Some(y)) if x == y => Ok(()),
        (Some(_), Some(_)) => Err("different host fingerprint".to_string()),
        _ => Err("host fingerprint not recorded".to_string()),
    };
    let mut keys: Vec<&(String, String)> = a.records.keys().chain(b.records.keys()).collect();
    keys.sort_by(|x, y| natural_key_cmp(x, y));
    keys.dedup();
    let operations: Vec<OpComparison> = keys
        .into_iter()
        .map(|k| compare_op(a.records.get(k), b.records.get(k), &host, threshold.value))
        .collect();
    let algorithms = summarize_algorithms(&operations, threshold.value);
    CompareReport {
        a: a.info.clone(),
        b: b.info.clone(),
        rule: rule_text(threshold.value),
        threshold,
        alpha: ALPHA,
        counts: count(operations.iter().map(|o| o.verdict)),
        operations,
        algorithms,
        instructions: counts::compare(&a.counts, &b.counts),
    }
}

fn count(verdicts: impl Iterator<Item = Verdict>) -> BTreeMap<String, usize> {
    let mut c = BTreeMap::new();
    for v in verdicts {
        *c.entry(v.as_str().to_string()).or_insert(0) += 1;
    }
    c
}

fn has_samples(r: &OperationRecord) -> bool {
    let t = timed_trials(r);
    !t.is_empty() && t.iter().all(|t| !t.samples.is_empty())
}

fn values(r: &OperationRecord, samples: bool) -> Vec<f64> {
    let t = timed_trials(r);
    if samples {
        t.iter()
            .flat_map(|t| &t.samples)
            .map(|&s| s as f64)
            .collect()
    } else {
        t.iter().map(|t| t.cycles / t.calls as f64).collect()
    }
}

pub(crate) fn compare_op(
    a: Option<&OperationRecord>,
    b: Option<&OperationRecord>,
    host: &Result<(), String>,
    t: f64,
) -> OpComparison {
    let mut c = unmeasured(a, b);
    let (Some(a), Some(b)) = (a, b) else {
        c.reason = Some(format!(
            "only in run {}",
            if a.is_some() { "A" } else { "B" }
        ));
        return c;
    };
    if let Some(why) = incomparable(a, b, host) {
        c.reason = Some(why);
        return c;
    }
    measure(&mut c, a, b, t);
    c
}

/// The comparison before measuring: incomparable, with what each record
/// tells on its own.
fn unmeasured(a: Option<&OperationRecord>, b: Option<&OperationRecord>) -> OpComparison {
    let any = a.or(b).expect("an operation from one of the runs");
    OpComparison {
        instance: format!("{}/{}", any.algorithm, any.label),
        algorithm: any.algorithm.clone(),
        label: any.label.clone(),
        op: any.op.clone(),
        verdict: Verdict::Incomparable,
        reason: None,
        basis: None,
        median_a: a
            .and_then(|r| r.statistics.as_ref())
            .map(|s| s.median_cycles),
        median_b: b
            .and_then(|r| r.statistics.as_ref())
            .map(|s| s.median_cycles),
        ratio: None,
        ci: None,
        p_value: None,
        mann_whitney_u: None,
        calls_a: a.map(|r| timed_trials(r).iter().map(|t| t.calls).sum()),
        calls_b: b.map(|r| timed_trials(r).iter().map(|t| t.calls).sum()),
        cv_a: a.map(trial_cv),
        cv_b: b.map(trial_cv),
        dispersion_a: None,
        dispersion_b: None,
        counter_a: a.and_then(|r| r.counter.clone()),
        counter_b: b.and_then(|r| r.counter.clone()),
    }
}

/// Why the two runs' records of an operation cannot be compared, if so.
fn incomparable(
    a: &OperationRecord,
    b: &OperationRecord,
    host: &Result<(), String>,
) -> Option<String> {
    let untimed = |r: &OperationRecord| !r.status.is_ok() || timed_trials(r).is_empty();
    if untimed(a) || untimed(b) {
        let which = if untimed(a) { ("A", a) } else { ("B", b) };
        return Some(format!(
            "no timed calls in run {} ({})",
            which.0, which.1.status
        ));
    }
    if let Err(why) = host {
        return Some(why.clone());
    }
    if a.counter != b.counter {
        return Some(format!(
            "different counter: {} vs {}",
            a.counter.as_deref().unwrap_or("none"),
            b.counter.as_deref().unwrap_or("none")
        ));
    }
    None
}

/// Fills in the ratio, its interval, the test and the verdict of two
/// comparable records (left incomparable when run A's median is zero).
fn measure(c: &mut OpComparison, a: &OperationRecord, b: &OperationRecord, t: f64) {
    let samples = has_samples(a) && has_samples(b);
    let (va, vb) = (values(a, samples), values(b, samples));
    let Some(cmp) = stats::compare(&va, &vb) else {
        c.reason = Some("zero median in run A".into());
        return;
    };
    let (ma, mb) = (stats::median(&va), stats::median(&vb));
    let (da, db) = (trial_dispersion(a, samples), trial_dispersion(b, samples));
    c.dispersion_a = Some(da);
    c.dispersion_b = Some(db);
    let mut ci = trial_hull(&cmp, a, b, da, db);
    if samples {
        ci = resolution_hull(ci, &va, &vb, ma, mb);
    }
    let p = if samples {
        cmp.p_value
    } else {
        exact_mann_whitney_p(&va, &vb).unwrap_or(cmp.p_value)
    };
    c.basis = Some(
        if samples {
            "per-call samples"
        } else {
            "trial means"
        }
        .into(),
    );
    c.median_a = Some(ma);
    c.median_b = Some(mb);
    c.ratio = Some(cmp.ratio_of_medians);
    c.ci = Some(ci);
    c.p_value = Some(p);
    c.mann_whitney_u = Some(cmp.mann_whitney_u);
    c.verdict = verdict(ci, p, t);
}

/// Layers 1 and 2 of the module comment: the bootstrap interval widened
/// to ratio × exp(±t₉₇.₅ · √(d_A² + d_B²)).
fn trial_hull(
    cmp: &stats::Comparison,
    a: &OperationRecord,
    b: &OperationRecord,
    da: f64,
    db: f64,
) -> (f64, f64) {
    let r = cmp.ratio_of_medians;
    let df = (timed_trials(a).len() + timed_trials(b).len()).saturating_sub(2);
    let h = if da == 0.0 && db == 0.0 {
        0.0
    } else {
        t975(df) * (da * da + db * db).sqrt()
    };
    (cmp.ci.0.min(r * (-h).exp()), cmp.ci.1.max(r * h.exp()))
}

/// Layer 3 of the module comment: medians a counter step q apart.
fn resolution_hull((lo, hi): (f64, f64), va: &[f64], vb: &[f64], ma: f64, mb: f64) -> (f64, f64) {
    let q = resolution(va).max(resolution(vb));
    let lo = lo.min((mb - q).max(0.0) / (ma + q));
    let hi = if ma > q {
        hi.max((mb + q) / (ma - q))
    } else {
        hi
    };
    (lo, hi)
}

fn verdict((lo, hi): (f64, f64), p: f64, t: f64) -> Verdict {
    if lo > 1.0 + t && p < ALPHA {
        Verdict::Slower
    } else if hi < 1.0 / (1.0 + t) && p < ALPHA {
        Verdict::Faster
    } else {
        Verdict::WithinNoise
    }
}

fn summarize_algorithms(ops: &[OpComparison], t: f64) -> Vec<AlgorithmSummary> {
    let mut by: BTreeMap<&str, Vec<&OpComparison>> = BTreeMap::new();
    for o in ops {
        by.entry(o.algorithm.as_str()).or_default().push(o);
    }
    by.into_iter()
        .map(|(alg, list)| {
            // ln of (ratio, interval low, interval high) per usable operation.
            let logs: Vec<[f64; 3]> = list
                .iter()
                .filter(|o| o.verdict != Verdict::Incomparable)
                .filter_map(|o| Some((o.ratio?, o.ci?)))
                .filter(|(r, (lo, _))| *r > 0.0 && *lo > 0.0)
                .map(|(r, (lo, hi))| [r.ln(), lo.ln(), hi.ln()])
                .collect();
            let geo = |k: usize| (logs.iter().map(|x| x[k]).sum::<f64>() / logs.len() as f64).exp();
            let (ratio, ci) = if logs.is_empty() {
                (None, None)
            } else {
                (Some(geo(0)), Some((geo(1), geo(2))))
            };
            let verdict = match ci {
                None => Verdict::Incomparable,
                Some((lo, _)) if lo > 1.0 + t => Verdict::Slower,
                Some((_, hi)) if hi < 1.0 / (1.0 + t) => Verdict::Faster,
                Some(_) => Verdict::WithinNoise,
            };
            AlgorithmSummary {
                algorithm: alg.to_string(),
                compared: logs.len(),
                geomean_ratio: ratio,
                ci,
                verdict,
                counts: count(list.iter().map(|o| o.verdict)),
            }
        })
        .collect()
}

/// Runs resolved by `lock::find_run` and loaded.
pub(crate) fn load_run(root: &Path, arg: &str) -> Result<(PathBuf, RunData)> {
    let dir = crate::records::lock::find_run(root, arg)?;
    let data = RunData::load(&dir)?;
    Ok((dir, data))
}

/// `pqbench compare <runA> <runB>`: loads both runs and compares them
/// with the threshold given, else the default; prints nothing (the binary
/// exports the report in the format asked for).
pub fn compare(
    root: &Path,
    a: &str,
    b: &str,
    threshold: Option<f64>,
) -> Result<CompareReport, Error> {
    check_threshold(threshold)?;
    // A run that cannot be found or read is bad input (exit 2).
    let (_, ra) = load_run(root, a).map_err(Error::input)?;
    let (_, rb) = load_run(root, b).map_err(Error::input)?;
    Ok(compare_runs(
        &ra,
        &rb,
        choose_threshold(threshold, &ra, &rb),
    ))
}

/// A `--threshold` must be a relative change.
pub(crate) fn check_threshold(threshold: Option<f64>) -> Result<(), Error> {
    match threshold {
        Some(t) if !(t.is_finite() && t >= 0.0) => Err(ConfigError::new(format!(
            "--threshold {t} is not a relative change"
        ))
        .help("give a non-negative number, e.g. --threshold 0.1 for 10 %")
        .into()),
        _ => Ok(()),
    }
}

#[cfg(test)]
pub(crate) mod tests;
