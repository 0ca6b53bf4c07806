//! Sections 4 and 5 of the algorithm page: the timing and distribution
//! tables with their warnings, the campaigns lending figures, the memory
//! table, the measuring CPUs and the chart.

use crate::kinds::Chart;
use crate::records::campaign::{AlgorithmInfo, KnownIssueInfo};
use crate::records::operation::OperationRecord;

use super::super::chart;
use super::super::model::{DistRow, PerfRow};
use super::super::rows::{op_rows, Inst, DASH};
use crate::records::dataset::Dataset;

/// An instance's timing records, in operation order.
pub(super) fn timed_records<'d>(
    ds: &'d Dataset,
    a: &AlgorithmInfo,
    label: &str,
) -> Vec<(&'static str, &'d OperationRecord)> {
    a.kind
        .operations()
        .iter()
        .filter_map(|op| ds.record(&a.id, label, op).map(|r| (*op, r)))
        .collect()
}

/// Section 4: the timing table, the distribution table and what the page
/// warns about above them.
pub(super) struct TimingTable {
    pub perf_rows: Vec<PerfRow>,
    pub dist_rows: Vec<DistRow>,
    pub warnings: Vec<String>,
    /// Instances whose figures are not yet this run's measurements.
    pub preliminary: Vec<String>,
}

pub(super) fn table(ds: &Dataset, a: &AlgorithmInfo, insts: &[Inst]) -> TimingTable {
    let mut t = TimingTable {
        perf_rows: Vec::new(),
        dist_rows: Vec::new(),
        warnings: Vec::new(),
        preliminary: Vec::new(),
    };
    for inst in insts {
        let recs = timed_records(ds, a, inst.label);
        let (issue_mark, warnings) = issue_marker(inst, !recs.is_empty());
        t.warnings.extend(warnings);
        let schedule = Schedule::of(ds, a, inst.label);
        let mark = match schedule.preliminary_note() {
            Some(note) => {
                t.preliminary.push(inst.label.to_string());
                [issue_mark.as_str(), note]
                    .iter()
                    .filter(|s| !s.is_empty())
                    .copied()
                    .collect::<Vec<_>>()
                    .join("; ")
            }
            None => issue_mark,
        };
        if recs.is_empty() {
            t.perf_rows.push(not_timed_row(inst, &schedule));
        }
        for (op, rec) in &recs {
            let (p, d) = op_rows(inst, op, rec, &mark);
            t.perf_rows.push(p);
            t.dist_rows.extend(d);
        }
    }
    t
}

/// The mark on a timed instance's rows when it has a known issue it is
/// measured despite, or failed its KAT; with the page's warnings for the
/// known issues.
fn issue_marker(inst: &Inst, timed: bool) -> (String, Vec<String>) {
    let measured: Vec<&&KnownIssueInfo> = inst
        .issues
        .iter()
        .filter(|k| k.action == "measure")
        .collect();
    if timed && !measured.is_empty() {
        let refs: Vec<String> = inst.issue_notes.iter().map(|n| format!("[{n}]")).collect();
        let warnings = measured
            .iter()
            .map(|k| {
                format!(
                    "{} (KAT {}): timed despite a known issue: {}",
                    inst.label,
                    inst.kat_status(),
                    k.cause
                )
            })
            .collect();
        (format!("⚠ {}", refs.join(" ")), warnings)
    } else if timed && !inst.passed() {
        (
            format!("⚠ timed despite KAT {}", inst.kat_status()),
            Vec::new(),
        )
    } else {
        (String::new(), Vec::new())
    }
}

/// Whether the campaign deferred the instance and whether its figures are
/// preliminary (not measured by this run).
struct Schedule {
    deferred: bool,
    preliminary: bool,
}

impl Schedule {
    fn of(ds: &Dataset, a: &AlgorithmInfo, label: &str) -> Schedule {
        let key = format!("{}/{label}", a.id);
        Schedule {
            deferred: ds.campaign.deferred.contains(&key),
            preliminary: ds.campaign.preliminary.contains(&key),
        }
    }

    fn preliminary_note(&self) -> Option<&'static str> {
        match (self.preliminary, self.deferred) {
            (false, _) => None,
            (true, true) => Some("preliminary: deferred, not yet measured by this run"),
            (true, false) => Some("preliminary: not measured by this run"),
        }
    }
}

/// The single row of an instance without timing records, saying why.
fn not_timed_row(inst: &Inst, schedule: &Schedule) -> PerfRow {
    let why = if schedule.preliminary && schedule.deferred {
        "deferred: not yet measured".to_string()
    } else if inst.build.is_none() {
        "not built".to_string()
    } else if inst.issues.iter().any(|k| k.action == "exclude") {
        "excluded by a known issue".to_string()
    } else {
        format!("KAT {}", inst.kat_status())
    };
    PerfRow {
        label: inst.label.into(),
        op: DASH.into(),
        mean_cycles: format!("not timed ({why})"),
        mean_time: DASH.into(),
        ops_per_sec: DASH.into(),
        median_trial: DASH.into(),
        n: DASH.into(),
        median_cycles: DASH.into(),
        ci_median: DASH.into(),
        notes: String::new(),
    }
}

/// The campaigns whose measurements (timing or profile) the page shows,
/// in order of first use.
pub(super) fn lenders(ds: &Dataset, a: &AlgorithmInfo, insts: &[Inst]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for inst in insts {
        for (op, rec) in timed_records(ds, a, inst.label) {
            let profile = ds.profile(&a.id, inst.label, op);
            for by in [
                rec.measured_by.as_ref(),
                profile.and_then(|p| p.measured_by.as_ref()),
            ]
            .into_iter()
            .flatten()
            {
                if !out.contains(by) {
                    out.push(by.clone());
                }
            }
        }
    }
    out
}

/// The CPUs the records were measured on (the campaign's when none says).
pub(super) fn measuring_cpus(ds: &Dataset, a: &AlgorithmInfo, insts: &[Inst]) -> Vec<usize> {
    let mut cpus: Vec<usize> = Vec::new();
    for inst in insts {
        for (_, rec) in timed_records(ds, a, inst.label) {
            cpus.extend(rec.cpu.filter(|c| !cpus.contains(c)));
        }
    }
    if cpus.is_empty() {
        cpus = ds.campaign.cpus.clone();
    }
    cpus
}

/// The chart's bars: every timed operation with statistics.
pub(super) fn chart_bars(ds: &Dataset, a: &AlgorithmInfo, insts: &[Inst]) -> Vec<chart::Bar> {
    let ops = a.kind.operations();
    let mut bars = Vec::new();
    for inst in insts {
        for (op, rec) in timed_records(ds, a, inst.label) {
            if let Some(s) = &rec.statistics {
                // Table 4's headline is the mean: the chart shows it with
                // the mean's own interval.
                bars.push(chart::Bar::of(
                    chart::HEADLINE,
                    format!("{} {op}", inst.label),
                    s,
                    ops.iter().position(|o| *o == op).unwrap_or(0),
                ));
            }
        }
    }
    bars
}

pub(super) fn chart_svg(ds: &Dataset, a: &AlgorithmInfo, mut bars: Vec<chart::Bar>) -> String {
    let ops = a.kind.operations();
    let title = format!("{} {} cycles per call", a.id, chart::HEADLINE.name());
    match a.kind.def().chart() {
        Chart::ByMessageSize => super::super::kinds::hash_chart(ds, a),
        Chart::Steps => {
            // The legend names the operations this protocol has.
            let present: Vec<&str> = ops
                .iter()
                .copied()
                .filter(|op| {
                    ds.folder::<OperationRecord>()
                        .iter()
                        .any(|(k, _)| k.0 == a.id && k.2 == *op)
                })
                .collect();
            for b in &mut bars {
                let op = ops.get(b.series).copied().unwrap_or_default();
                b.series = present.iter().position(|o| *o == op).unwrap_or(0);
            }
            chart::svg(&title, chart::HEADLINE, &present, &bars)
        }
        Chart::Operations => chart::svg(&title, chart::HEADLINE, ops, &bars),
    }
}
