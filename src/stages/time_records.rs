//! The time stage's records (`records/<id>/<label>__<op>.json`): one per
//! timed operation, whose statistics `check` recomputes from its raw
//! trials and whose host must be one its system accepts.

use std::path::Path;

use anyhow::Result;

use crate::engine::{misplaced, OperationRecords};
use crate::fsutil;
use crate::measure::OpStatus;
use crate::records::campaign::CampaignRecord;
use crate::records::diff::{differ, first_difference};
use crate::records::layout::RECORDS as RECORDS_DIR;
use crate::records::operation::OperationRecord;
use crate::stats::Summary;

pub(crate) static RECORDS: OperationRecords<OperationRecord> =
    OperationRecords::new("timing records", recompute);

fn recompute(file: &Path, shown: &str, campaign: &CampaignRecord) -> Result<Vec<String>> {
    let r: OperationRecord = fsutil::read_json(file)?;
    let mut problems: Vec<String> = misplaced(shown, RECORDS_DIR, &r.algorithm, &r.label, &r.op)
        .into_iter()
        .collect();
    check_statistics(shown, &r, &mut problems);
    check_outputs(shown, &r, &mut problems);
    check_witness(shown, &r, &mut problems);
    check_memory(shown, &r, &mut problems);
    check_provenance(shown, &r, campaign, &mut problems);
    Ok(problems)
}

/// The summary's fields in declaration order (a JSON map would sort them),
/// so the first difference reported is the most basic one.
fn summary_fields(s: &Summary) -> [(&'static str, serde_json::Value); 17] {
    use serde_json::json;
    [
        ("n", json!(s.n)),
        ("mean_cycles", json!(s.mean_cycles)),
        ("mean_seconds", json!(s.mean_seconds)),
        ("ops_per_sec", json!(s.ops_per_sec)),
        ("median_trial_cycles", json!(s.median_trial_cycles)),
        ("median_trial_seconds", json!(s.median_trial_seconds)),
        ("min_trial_cycles", json!(s.min_trial_cycles)),
        ("max_trial_cycles", json!(s.max_trial_cycles)),
        ("p5_cycles", json!(s.p5_cycles)),
        ("p95_cycles", json!(s.p95_cycles)),
        ("median_cycles", json!(s.median_cycles)),
        ("cv", json!(s.cv)),
        ("ci_mean_cycles", json!(s.ci_mean_cycles)),
        ("ci_median_cycles", json!(s.ci_median_cycles)),
        ("outliers_low", json!(s.outliers_low)),
        ("outliers_high", json!(s.outliers_high)),
        ("basis", json!(s.basis)),
    ]
}

/// A record's statistics are what its raw trials give, field for field.
fn check_statistics(rel: &str, r: &OperationRecord, problems: &mut Vec<String>) {
    let recomputed = crate::stats::summarize(&r.trials);
    if recomputed == r.statistics {
        return;
    }
    let why = match (&r.statistics, &recomputed) {
        (Some(a), Some(b)) => summary_fields(a)
            .iter()
            .zip(summary_fields(b).iter())
            .find_map(|((name, x), (_, y))| first_difference(&format!("statistics.{name}"), x, y)),
        _ => differ("statistics", &r.statistics, &recomputed),
    };
    let why = why.unwrap_or_else(|| "statistics differ".into());
    problems.push(format!("{rel}: {why}"));
}

/// A record whose output checks show a timed call that differs from its
/// recomputation must be `inconsistent`, with no figures.
fn check_outputs(rel: &str, r: &OperationRecord, problems: &mut Vec<String>) {
    let Some(why) = crate::measure::inputs::verdict(&r.output_checks, &r.full_replays) else {
        return;
    };
    if r.status != crate::measure::OpStatus::Inconsistent || r.statistics.is_some() {
        problems.push(format!(
            "{rel}: status {} with figures, but its output checks show: {why}",
            r.status
        ));
    }
}

/// The witness fit is what the processes' task-clock figures give, and an
/// operation with figures claims no less per call than the kernel saw
/// (`measure::witness`). A KEX step carries no fit: its witness would be
/// whole protocols.
fn check_witness(rel: &str, r: &OperationRecord, problems: &mut Vec<String>) {
    use crate::measure::witness;
    let witnessed = r
        .processes
        .iter()
        .any(|p| p.sandbox.cpu_witness.task_clock_ns.is_some());
    let recomputed = witness::fit(
        &r.processes,
        r.plan.as_ref().map(|p| p.iterations),
        &r.trials,
    );
    match &r.witness {
        None if witnessed && r.step.is_none() && r.status.is_ok() => problems.push(format!(
            "{rel}: its trial processes were witnessed but it carries no witness fit"
        )),
        None => {}
        Some(w) => {
            if recomputed.as_ref() != Some(w) {
                let why = differ("witness", &r.witness, &recomputed)
                    .unwrap_or_else(|| "witness differs".into());
                problems.push(format!("{rel}: {why}"));
            }
            let (counter, hz) = (r.counter.as_deref(), r.counter_hz);
            let verdict = witness::judge(&r.trials, counter, hz, w);
            if let Some(why) = witness_disagrees(r.status, verdict) {
                problems.push(format!("{rel}: status {}, but {why}", r.status));
            }
        }
    }
}

/// Why a record's status is not what its witness verdict makes it: `ok`
/// needs the claims upheld (or no witness to judge them), `unwitnessed`
/// needs them undecided.
fn witness_disagrees(
    status: OpStatus,
    verdict: crate::measure::witness::Verdict,
) -> Option<String> {
    use crate::measure::witness::Verdict;
    match (status, verdict) {
        (OpStatus::Ok, Verdict::Below(why)) => Some(why),
        (OpStatus::Ok, Verdict::Undecided(why)) => Some(format!("the witness is undecided: {why}")),
        (OpStatus::Unwitnessed, Verdict::Undecided(_)) => None,
        (OpStatus::Unwitnessed, Verdict::Below(why)) => Some(why),
        (OpStatus::Unwitnessed, _) => Some("the witness upholds its claims".into()),
        _ => None,
    }
}

/// Memory figures recorded `ok` claim no lower peak than the kernel saw.
fn check_memory(rel: &str, r: &OperationRecord, problems: &mut Vec<String>) {
    let Some(m) = r.memory.as_ref().filter(|m| m.status.is_ok()) else {
        return;
    };
    if let Some(why) = crate::measure::memory::below_kernel(m.peak_rss_kib, &m.process) {
        problems.push(format!("{rel}: memory status ok, but {why}"));
    }
}

/// A record measured on a host other than the one its system accepts.
fn check_provenance(
    rel: &str,
    r: &OperationRecord,
    campaign: &CampaignRecord,
    problems: &mut Vec<String>,
) {
    let Some(fp) = &r.host_fingerprint else {
        return;
    };
    let registered = campaign
        .system_spec
        .as_ref()
        .map(|s| s.fingerprints.as_slice())
        .unwrap_or_default();
    let accepted = if registered.is_empty() {
        fp == &campaign.host_fingerprint || campaign.accepted_fingerprints.contains(fp)
    } else {
        registered.contains(fp)
    };
    if !accepted {
        problems.push(format!(
            "{rel}: measured on host {fp}, which system {} does not accept (its host is {})",
            campaign.system, campaign.host_fingerprint
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::witness::Verdict;
    use crate::records::measure::OutputCheck;

    #[test]
    fn an_output_check_that_differs_needs_an_inconsistent_record() {
        let mut r = crate::records::testutil::record("dec", "tsc", &[vec![100, 110, 120]]);
        r.statistics = crate::stats::summarize(&r.trials);
        let check = OutputCheck {
            trial: 1,
            seed: "00".repeat(32),
            pool: 3,
            warmup: 1,
            wraps: 1,
            call: 2,
            timed_hash: "0000000000000001".into(),
            replay_hash: Some("0000000000000001".into()),
            agrees: Some(true),
            repeatable: None,
        };
        r.output_checks = vec![check.clone()];
        let mut problems = Vec::new();
        check_outputs("x.json", &r, &mut problems);
        assert!(problems.is_empty(), "{problems:?}");
        r.output_checks[0].replay_hash = Some("0000000000000002".into());
        check_outputs("x.json", &r, &mut problems);
        assert!(
            problems[0].contains("timed call 2 of trial 1"),
            "{problems:?}"
        );
        problems.clear();
        r.status = OpStatus::Inconsistent;
        r.trials.clear();
        r.statistics = None;
        check_outputs("x.json", &r, &mut problems);
        assert!(problems.is_empty(), "{problems:?}");
    }

    #[test]
    fn ok_needs_an_upheld_witness_and_unwitnessed_an_undecided_one() {
        let undecided = || Verdict::Undecided("between the bounds".into());
        let below = || Verdict::Below("claims 1e-6 s".into());
        assert_eq!(witness_disagrees(OpStatus::Ok, Verdict::Upheld), None);
        assert_eq!(witness_disagrees(OpStatus::Ok, Verdict::Absent), None);
        let why = witness_disagrees(OpStatus::Ok, undecided()).unwrap();
        assert!(why.contains("undecided: between the bounds"), "{why}");
        assert_eq!(
            witness_disagrees(OpStatus::Ok, below()).unwrap(),
            "claims 1e-6 s"
        );
        assert_eq!(witness_disagrees(OpStatus::Unwitnessed, undecided()), None);
        assert!(witness_disagrees(OpStatus::Unwitnessed, Verdict::Upheld).is_some());
        assert!(witness_disagrees(OpStatus::Unwitnessed, below()).is_some());
        // Records without figures are judged by other checks.
        assert_eq!(witness_disagrees(OpStatus::Implausible, below()), None);
    }
}
