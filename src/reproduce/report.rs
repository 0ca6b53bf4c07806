//! The reproduction report: per instance whether the library is
//! bit-identical and the KAT unchanged, per operation the timing verdict,
//! and why the reproduction failed if it did. Written as Markdown, HTML
//! (every string escaped) and JSON into the reproducing run's directory
//! by the exporters.

use serde::{Deserialize, Serialize};

use crate::compare::{CompareReport, RunData, Verdict};
use crate::records::lock::{InstanceLock, Lock};
use crate::records::operation::OperationRecord;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReproductionReport {
    pub original: String,
    pub reproduction: String,
    pub campaign: String,
    pub system: String,
    /// Inputs that differed from the lock (run anyway: `--allow-changed`).
    pub input_differences: Vec<String>,
    pub instances: Vec<InstanceCheck>,
    pub timing: CompareReport,
    /// Figures that should not vary for an identical library (lengths
    /// returned, ELF load bytes, stack and heap high-water marks, heap
    /// allocations): how many matched, and each that did not. Shown, not
    /// part of the exit code (RSS and timings vary and are left out here).
    pub fixed_figures_identical: usize,
    pub fixed_figures_differing: Vec<String>,
    /// Stage errors of the reproducing run.
    pub stage_errors: Vec<String>,
    /// Why the reproduction failed; empty when it succeeded.
    pub failures: Vec<String>,
    pub exit_code: i32,
    /// The reproductions of the further datasets (a `[matrix]`'s
    /// combinations, or another dimension's), each against its recorded
    /// run; their failures are also this report's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<ReproductionReport>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstanceCheck {
    pub instance: String,
    /// `bit-identical`, `differs` or `missing`.
    pub library: String,
    pub library_original: Option<String>,
    pub library_reproduced: Option<String>,
    /// `identical` (same log bytes), `equivalent` (same status and
    /// generated KAT file, the log differs only e.g. in the library hash),
    /// `changed` or `missing`.
    pub kat: String,
    pub kat_status_original: Option<String>,
    pub kat_status_reproduced: Option<String>,
}

fn check(old: Option<&InstanceLock>, new: Option<&InstanceLock>, key: &str) -> InstanceCheck {
    let lib = |i: Option<&InstanceLock>| i.and_then(|i| i.library_sha256.clone());
    let status = |i: Option<&InstanceLock>| i.and_then(|i| i.kat_status.clone());
    let (la, lb) = (lib(old), lib(new));
    let library = match (&la, &lb) {
        (Some(a), Some(b)) if a == b => "bit-identical",
        (Some(_), Some(_)) => "differs",
        _ => "missing",
    };
    let kat = match (old, new) {
        (Some(a), Some(b))
            if a.kat_log_sha256.is_some() && a.kat_log_sha256 == b.kat_log_sha256 =>
        {
            "identical"
        }
        (Some(a), Some(b))
            if a.kat_status.is_some()
                && a.kat_status == b.kat_status
                && a.kat_output_sha256 == b.kat_output_sha256 =>
        {
            "equivalent"
        }
        (Some(a), Some(_)) if a.kat_status.is_none() => "missing",
        (Some(_), Some(_)) => "changed",
        _ => "missing",
    };
    InstanceCheck {
        instance: key.to_string(),
        library: library.into(),
        library_original: la,
        library_reproduced: lb,
        kat: kat.into(),
        kat_status_original: status(old),
        kat_status_reproduced: status(new),
    }
}

/// Builds the report and decides the exit code: 1 when a KAT changed, an
/// operation is `slower`, or a library differs although no input did.
/// Per operation, the figures a bit-identical library must reproduce
/// exactly: (name, value) pairs.
fn fixed_figures(r: &OperationRecord) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = r
        .lengths
        .iter()
        .map(|(k, n)| (format!("{k} length"), *n))
        .collect();
    if let Some(m) = &r.memory {
        let named = [
            ("load bytes", m.load_bytes),
            ("stack bytes", m.stack_bytes),
            ("heap peak bytes", m.heap_peak_bytes),
            ("heap allocations", m.heap_allocs),
        ];
        v.extend(
            named
                .iter()
                .filter_map(|(k, x)| Some((k.to_string(), (*x)?))),
        );
    }
    v
}

fn compare_fixed(a: &RunData, b: &RunData) -> (usize, Vec<String>) {
    let (mut same, mut differ) = (0, Vec::new());
    for (key, ra) in &a.records {
        let Some(rb) = b.records.get(key) else {
            continue;
        };
        let fb = fixed_figures(rb);
        for (name, va) in fixed_figures(ra) {
            match fb.iter().find(|(n, _)| *n == name) {
                Some((_, vb)) if *vb == va => same += 1,
                Some((_, vb)) => differ.push(format!("{} {} {name}: {va} → {vb}", key.0, key.1)),
                None => {}
            }
        }
    }
    (same, differ)
}

pub fn build(
    old: &Lock,
    new: &Lock,
    runs: (&RunData, &RunData),
    input_differences: Vec<String>,
    timing: CompareReport,
    stage_errors: Vec<String>,
) -> ReproductionReport {
    let (fixed_same, fixed_differ) = compare_fixed(runs.0, runs.1);
    let mut keys: Vec<&str> = old.instances.iter().map(|i| i.instance.as_str()).collect();
    keys.extend(new.instances.iter().map(|i| i.instance.as_str()));
    keys.sort();
    keys.dedup();
    let find = |l: &'_ Lock, k: &str| -> Option<InstanceLock> {
        l.instances.iter().find(|i| i.instance == k).cloned()
    };
    let instances: Vec<InstanceCheck> = keys
        .iter()
        .map(|k| check(find(old, k).as_ref(), find(new, k).as_ref(), k))
        .collect();
    let mut failures = Vec::new();
    for i in &instances {
        if i.kat == "changed" || (i.kat == "missing" && i.kat_status_original.is_some()) {
            failures.push(format!(
                "KAT changed: {} ({} → {})",
                i.instance,
                i.kat_status_original.as_deref().unwrap_or("none"),
                i.kat_status_reproduced.as_deref().unwrap_or("none")
            ));
        }
        if i.library == "differs" && input_differences.is_empty() {
            failures.push(format!(
                "library not bit-identical although no input changed: {}",
                i.instance
            ));
        }
    }
    // An operation the original run timed must be timed again.
    let timed = |r: &OperationRecord| r.status.is_ok() && r.trials.iter().any(|t| t.calls > 0);
    for (key, r) in &runs.0.records {
        if timed(r) && !runs.1.records.get(key).is_some_and(timed) {
            failures.push(format!("not timed again: {} {}", key.0, key.1));
        }
    }
    // Instruction counts are exact: the same library on the same host
    // must execute exactly as many instructions again.
    for c in &timing.instructions {
        use crate::compare::counts::CountVerdict;
        let counted_before = runs
            .0
            .counts
            .get(&(c.instance.clone(), c.op.clone()))
            .is_some_and(|r| r.status == crate::records::count::ExactStatus::Ok);
        match c.verdict {
            CountVerdict::More | CountVerdict::Fewer => failures.push(format!(
                "instruction count changed: {} {} ({} → {} per call)",
                c.instance,
                c.op,
                c.per_call_a.unwrap_or(f64::NAN),
                c.per_call_b.unwrap_or(f64::NAN)
            )),
            CountVerdict::Incomparable if counted_before => failures.push(format!(
                "not counted again: {} {} ({})",
                c.instance,
                c.op,
                c.reason.as_deref().unwrap_or("no count")
            )),
            _ => {}
        }
    }
    for o in timing
        .operations
        .iter()
        .filter(|o| o.verdict == Verdict::Slower)
    {
        failures.push(format!(
            "slower: {} {} (ratio {:.3})",
            o.instance,
            o.op,
            o.ratio.unwrap_or(f64::NAN)
        ));
    }
    let exit_code = if failures.is_empty() {
        crate::error::exit::OK
    } else {
        crate::error::exit::ITEM_FAILURES
    };
    ReproductionReport {
        original: old.run_id.clone(),
        reproduction: new.run_id.clone(),
        campaign: new.campaign.clone(),
        system: new.system.clone(),
        input_differences,
        instances,
        timing,
        fixed_figures_identical: fixed_same,
        fixed_figures_differing: fixed_differ,
        stage_errors,
        failures,
        exit_code,
        children: Vec::new(),
    }
}

pub(crate) const MARKDOWN_FILE: &str = "reproduction.md";
pub(crate) const HTML_FILE: &str = "reproduction.html";
pub(crate) const JSON_FILE: &str = "reproduction.json";

#[cfg(test)]
#[path = "report_tests.rs"]
pub(crate) mod tests;
