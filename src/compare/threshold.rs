//! The noise threshold t: the relative change below which nothing is
//! called faster or slower. Runs on one host move as a whole (frequency,
//! a busy sibling core, a neighbour on the VM's host), which a run's own
//! trials cannot show, so the default is taken from measured run-to-run
//! dispersion wherever it exists, in this order:
//!
//! 1. history: other runs on the same host (same fingerprint) that
//!    measured the same library of the same instance with the same
//!    counter, each measurement independent (a reused time-stage result
//!    is one measurement, however many runs carry it). With at least
//!    `MIN_HISTORY_PAIRS` pairs of such repeats, t = exp(q95) − 1, q95 the
//!    95th percentile of |ln(median_i / median_j)| over the pairs;
//! 2. otherwise the runs themselves: 3 × the median trial-mean CV over
//!    every operation record of both runs (trial means take in preemption
//!    and other disturbances, so this is the host's noise level; two runs
//!    of an operation with process-to-process CV c differ by about √2·c,
//!    3c is about two such deviations) — but at least
//!    `UNFIXED_HOST_THRESHOLD` when either run's host check found
//!    problems (no fixed clock, turbo, SMT sibling, a virtual CPU): on such
//!    hosts whole runs shift by tens of percent while their trials agree
//!    within a few (measured on the project's 2-core VM: the same library
//!    at 1.4× and at 1/1.55× the cycles of an earlier run, every trial
//!    agreeing), and the trials cannot tell.
//!
//! Every t is clamped to [`THRESHOLD_FLOOR`, `THRESHOLD_CAP`]: the floor
//! keeps code-layout wobble out; the cap keeps a doubling callable.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::noise::{timed_trials, trial_cv};
use super::RunData;
use crate::records::lock::{self, Lock};
use crate::records::operation::OperationRecord;
use crate::stats;

pub(crate) const THRESHOLD_FLOOR: f64 = 0.02;
pub(crate) const THRESHOLD_CAP: f64 = 0.75;
pub(crate) const CV_MULTIPLIER: f64 = 3.0;
pub(crate) const UNFIXED_HOST_THRESHOLD: f64 = 0.6;
/// Used when no record has two trials and the hosts were fixed.
pub(crate) const FALLBACK_THRESHOLD: f64 = 0.10;
pub(crate) const MIN_HISTORY_PAIRS: usize = 10;
/// Most recent runs of a runs directory read for history.
const HISTORY_RUNS: usize = 50;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Threshold {
    pub value: f64,
    /// `given`, `history`, `trials` or `unfixed host`.
    pub source: String,
    /// Median trial-mean CV over both runs' records, when computed.
    pub median_cv: Option<f64>,
    /// Repeat pairs behind a history-based value.
    pub history_pairs: usize,
    pub explanation: String,
}

impl Threshold {
    pub(crate) fn given(value: f64) -> Threshold {
        Threshold {
            value,
            source: "given".into(),
            median_cv: None,
            history_pairs: 0,
            explanation: format!("{value} (given)"),
        }
    }

    /// The default for comparing `a` with `b` (see the module comment);
    /// `history` are other runs' locks.
    pub(crate) fn default_for(a: &RunData, b: &RunData, history: &[Lock]) -> Threshold {
        let fp = a.info.host_fingerprint.as_deref();
        if let Some(t) = fp.and_then(|fp| from_history(history, fp)) {
            return t;
        }
        let unfixed = [&a.info, &b.info]
            .iter()
            .any(|i| i.host_fixed != Some(true));
        from_trials(a.records.values().chain(b.records.values()), unfixed)
    }
}

/// Rule 2: the runs' own trial dispersion, raised on unfixed hosts.
pub(crate) fn from_trials<'a>(
    records: impl Iterator<Item = &'a OperationRecord>,
    unfixed_host: bool,
) -> Threshold {
    let cvs: Vec<f64> = records
        .filter(|r| timed_trials(r).len() >= 2)
        .map(trial_cv)
        .collect();
    let (base, base_text, median_cv) = if cvs.is_empty() {
        (
            FALLBACK_THRESHOLD,
            "no record has two trials".to_string(),
            None,
        )
    } else {
        let cv = stats::median(&cvs);
        (
            CV_MULTIPLIER * cv,
            format!(
                "{CV_MULTIPLIER} × median trial-mean CV {cv:.4} over {} operation records = {:.3}",
                cvs.len(),
                CV_MULTIPLIER * cv
            ),
            Some(cv),
        )
    };
    let raised = unfixed_host && base < UNFIXED_HOST_THRESHOLD;
    let value =
        if raised { UNFIXED_HOST_THRESHOLD } else { base }.clamp(THRESHOLD_FLOOR, THRESHOLD_CAP);
    let explanation = if raised {
        format!(
            "{value:.3}: a host was not fixed and no repeated runs on it measure its run-to-run dispersion, so the unfixed-host value {UNFIXED_HOST_THRESHOLD} applies (the trials alone give {base_text})"
        )
    } else {
        format!("{value:.3} from the trials: {base_text}, clamped to [{THRESHOLD_FLOOR}, {THRESHOLD_CAP}]")
    };
    Threshold {
        value,
        source: if raised { "unfixed host" } else { "trials" }.into(),
        median_cv,
        history_pairs: 0,
        explanation,
    }
}

/// Rule 1: repeated independent measurements of identical libraries.
pub(crate) fn from_history(history: &[Lock], fingerprint: &str) -> Option<Threshold> {
    // (instance, op, library, counter) → time-result digest → median.
    type Key<'a> = (&'a str, &'a str, &'a str, Option<&'a str>);
    let mut groups: BTreeMap<Key, BTreeMap<&str, f64>> = BTreeMap::new();
    let mut runs = 0;
    for l in history.iter().filter(|l| l.host.fingerprint == fingerprint) {
        runs += 1;
        for i in &l.instances {
            let (Some(lib), Some(digest)) = (
                i.library_sha256.as_deref(),
                i.stages
                    .get("time")
                    .and_then(|s| s.result_sha256.as_deref()),
            ) else {
                continue;
            };
            for (op, m) in &i.median_cycles {
                let key = (i.instance.as_str(), op.as_str(), lib, i.counter.as_deref());
                groups.entry(key).or_default().entry(digest).or_insert(*m);
            }
        }
    }
    let mut logs = Vec::new();
    for medians in groups.values() {
        let m: Vec<f64> = medians.values().copied().filter(|m| *m > 0.0).collect();
        for (i, x) in m.iter().enumerate() {
            logs.extend(m[i + 1..].iter().map(|y| (x / y).ln().abs()));
        }
    }
    if logs.len() < MIN_HISTORY_PAIRS {
        return None;
    }
    logs.sort_by(f64::total_cmp);
    let q95 = stats::percentile(&logs, 95.0);
    let value = (q95.exp() - 1.0).clamp(THRESHOLD_FLOOR, THRESHOLD_CAP);
    Some(Threshold {
        value,
        source: "history".into(),
        median_cv: None,
        history_pairs: logs.len(),
        explanation: format!(
            "{value:.3} = 95th percentile of the run-to-run change over {} pairs of repeated measurements of identical libraries in {runs} other runs on this host, clamped to [{THRESHOLD_FLOOR}, {THRESHOLD_CAP}]",
            logs.len()
        ),
    })
}

/// Locks of other runs near `dirs`: the `runs/` directory a run directory
/// sits in, or a dataset's own `runs/`; at most the 50 most recent of
/// each, never the runs named in `exclude`.
pub(crate) fn history_near(dirs: &[&Path], exclude: &[&str]) -> Vec<Lock> {
    let mut runs_dirs: Vec<PathBuf> = Vec::new();
    for d in dirs {
        let candidate = if d.join(lock::LOCK_FILE).is_file() {
            d.parent().map(Path::to_path_buf)
        } else {
            Some(d.join(crate::records::layout::RUNS))
        };
        if let Some(r) = candidate.filter(|r| r.is_dir()) {
            let r = r.canonicalize().unwrap_or(r);
            if !runs_dirs.contains(&r) {
                runs_dirs.push(r);
            }
        }
    }
    let mut out = Vec::new();
    for r in runs_dirs {
        let mut names: Vec<String> = std::fs::read_dir(&r)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.') && !exclude.contains(&n.as_str()))
            .collect();
        names.sort();
        let skip = names.len().saturating_sub(HISTORY_RUNS);
        out.extend(
            names[skip..]
                .iter()
                .filter_map(|n| lock::load(&r.join(n)).ok())
                .filter(|l| !exclude.contains(&l.run_id.as_str())),
        );
    }
    out
}
