//! Leak stage (opt-in): a timing test of every operation whose input holds
//! the secret key (sign, dec), run natively on the measuring core, as
//! dudect does: calls with one fixed key and calls with other keys of the
//! library's own keygen, interleaved at random, and Welch's t between the
//! two classes (`stats::welch`). It corroborates the `ct` stage, whose
//! memcheck run a library that tells Valgrind apart can pass with code it
//! never runs otherwise; its page section says, per operation, which
//! evidence the constant-time verdict rests on.
//!
//! The key pair's public operation (verify, enc) gets the same test as a
//! control: honest code whose time follows the key's public part (ML-KEM
//! expands a matrix from the public seed its secret key also holds, by
//! rejection sampling) shows the difference there too, and is not set
//! against memcheck for it.

use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::kat::KatStage;
use crate::engine::{Job, Manifest, PageSection, Policy, Publication, Results, Section, Stage};
use crate::measure::{driver, measured_library_path, measurement_manifest};
use crate::plan::Instance;
use crate::records::ct::{CtRecord, CtStatus};
use crate::records::dataset::Dataset;
use crate::records::leak::{leak_path, LeakRecord, LeakStatus, NO_DIFFERENCE_T};

pub(crate) struct LeakStage;

/// The campaign's `[stage.leak]` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LeakSettings {
    /// Calls per operation, both classes together (the driver also stops
    /// after 30 s of calls).
    #[serde(default = "default_calls")]
    pub calls: u32,
}

fn default_calls() -> u32 {
    10_000
}

impl Default for LeakSettings {
    fn default() -> Self {
        LeakSettings {
            calls: default_calls(),
        }
    }
}

fn parse_settings(table: &serde_json::Value) -> std::result::Result<LeakSettings, String> {
    let s: LeakSettings = serde_json::from_value(table.clone()).map_err(|e| e.to_string())?;
    if !(200..=10_000_000).contains(&s.calls) {
        return Err(format!(
            "`calls` is {}; give 200 to 10000000 (each class needs at least 50 calls per test)",
            s.calls
        ));
    }
    Ok(s)
}

/// Each operation with the secret key as input, and its public control.
const TESTED: [(&str, &str); 2] = [("sign", "verify"), ("dec", "enc")];

/// The operations of `inst` the stage tests: those with the secret key as
/// input and their public controls.
fn tested_operations(inst: &Instance, kat: Option<&crate::kat::KatOutput>) -> Vec<&'static str> {
    crate::measure::instance_operations(inst, kat)
        .into_iter()
        .filter(|op| TESTED.iter().any(|(s, p)| op == s || op == p))
        .collect()
}

/// What differs between the classes of `op`'s calls.
fn key_part(op: &str) -> &'static str {
    match TESTED.iter().any(|(s, _)| *s == op) {
        true => "secret-key",
        false => "public-key",
    }
}

impl Stage for LeakStage {
    type Output = Vec<LeakRecord>;
    const NAME: &'static str = "leak";
    const REQUIRES: &'static [&'static str] = &["build", "kat"];
    const POLICY: Policy = Policy::Measuring;
    const OPT_IN: bool = true;

    fn manifest(&self, job: &Job) -> Result<Option<Manifest>> {
        let kat = job.prior.get::<KatStage>();
        if job.cx.emulated() || tested_operations(job.inst, kat).is_empty() {
            // An emulator's time says nothing of the code's.
            return Ok(None);
        }
        let settings: LeakSettings = crate::engine::settings(job.cx.plan, Self::NAME)?;
        Ok(measurement_manifest(job, kat).map(|mut m| {
            m.set("leak", settings);
            m
        }))
    }

    fn run(&self, job: &Job) -> Result<Vec<LeakRecord>> {
        let cx = job.cx;
        let kat = job.prior.get::<KatStage>();
        let lib = measured_library_path(&cx.cache, cx.plan, job.inst, kat)?;
        let settings: LeakSettings = crate::engine::settings(cx.plan, Self::NAME)?;
        let mut out = Vec::new();
        for op in tested_operations(job.inst, kat) {
            let r = test_op(job, &lib, op, settings.calls)?;
            let summary = format!("{} ({})", r.status, r.figure());
            cx.progress
                .operation(Self::NAME, &job.inst.key(), op, &summary);
            out.push(r);
        }
        Ok(out)
    }

    fn estimate_seconds(&self, job: &Job) -> Option<f64> {
        let ops = tested_operations(job.inst, job.prior.get::<KatStage>());
        Some(5.0 * ops.len() as f64)
    }

    fn check_settings(&self, table: &serde_json::Value) -> std::result::Result<(), String> {
        parse_settings(table).map(drop)
    }

    fn verdict(&self, out: &Vec<LeakRecord>) -> crate::engine::Verdict {
        let failures = out
            .iter()
            .filter(|r| r.status == LeakStatus::Error)
            .map(|r| (format!("leak {}: error", r.op), r.detail.clone()))
            .collect();
        crate::engine::Verdict {
            failures,
            ..Default::default()
        }
    }

    fn records(&self) -> Option<&dyn crate::engine::Records> {
        Some(&RECORDS)
    }

    fn page_section(&self) -> Option<&dyn PageSection> {
        Some(&LeakSection)
    }

    fn publish(
        &self,
        p: &mut Publication,
        _: &Instance,
        out: &Vec<LeakRecord>,
        _: &Results,
    ) -> Result<()> {
        // Derived again from the cycles: a result cached by a run whose
        // thresholds differed is published with this pqbench's.
        for r in out {
            let r = r.clone().derive();
            p.write(&leak_path(&r.algorithm, &r.label, &r.op), &r)?;
        }
        Ok(())
    }
}

/// One driver process testing `op` with `calls` calls.
fn test_op(job: &Job, lib: &Path, op: &str, calls: u32) -> Result<LeakRecord> {
    let cx = job.cx;
    let args: Vec<String> = ["--op", op, "--mode", "leak", "--iters", &calls.to_string()]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let timeout = Duration::from_secs_f64(cx.plan.timing.timeout_seconds);
    let (process, samples) = driver::run(cx, lib, &args, job.cpu, timeout)?;
    let line = process.line("leak");
    let fixed = line.and_then(|l| l.u64("fixed")).unwrap_or(0) as usize;
    let split = fixed.min(samples.len());
    let mut r = LeakRecord {
        algorithm: job.inst.algorithm.clone(),
        label: job.inst.label.clone(),
        op: op.to_string(),
        status: LeakStatus::Inconclusive,
        detail: None,
        secret: key_part(op).into(),
        keys: line.and_then(|l| l.u64("keys")).unwrap_or(0) as u32,
        counter: process
            .line("meta")
            .and_then(|l| l.get("counter"))
            .map(String::from),
        fixed_cycles: samples[..split].to_vec(),
        random_cycles: samples[split..].to_vec(),
        tests: Vec::new(),
        max_t: None,
        shift_cycles: None,
        fixed_mean_cycles: None,
        process: None,
    };
    if let Some((_, why)) = process.failure() {
        r.status = LeakStatus::Error;
        r.detail = Some(why);
    } else if line.is_none() || fixed > samples.len() {
        r.status = LeakStatus::Error;
        r.detail = Some("the driver reported no leak line matching its samples".into());
    }
    let mut r = r.derive();
    r.process = Some(process);
    Ok(r)
}

/// The stage's record folder: one file per tested operation.
static RECORDS: crate::engine::OperationRecords<LeakRecord> =
    crate::engine::OperationRecords::new("timing tests", recompute_leak);

fn recompute_leak(
    file: &Path,
    rel: &str,
    _: &crate::records::campaign::CampaignRecord,
) -> Result<Vec<String>> {
    // The tests and the status are what the recorded cycles give.
    let r: LeakRecord = crate::fsutil::read_json(file)?;
    let dir = crate::records::layout::LEAK;
    let mut problems: Vec<String> =
        crate::engine::misplaced(rel, dir, &r.algorithm, &r.label, &r.op)
            .into_iter()
            .collect();
    let d = r.recomputed();
    use crate::records::diff::differ;
    let fields = [
        differ("status", &r.status, &d.status),
        differ("tests", &r.tests, &d.tests),
        differ("max_t", &r.max_t, &d.max_t),
        differ("shift_cycles", &r.shift_cycles, &d.shift_cycles),
        differ(
            "fixed_mean_cycles",
            &r.fixed_mean_cycles,
            &d.fixed_mean_cycles,
        ),
    ];
    problems.extend(fields.into_iter().flatten().map(|d| format!("{rel}: {d}")));
    Ok(problems)
}

/// The page section: each tested operation, its figure, and what the
/// constant-time verdict rests on.
struct LeakSection;

impl PageSection for LeakSection {
    fn section(&self, ds: &Dataset, algorithm: &str, labels: &[String]) -> Result<Option<Section>> {
        let leaks = ds.folder::<LeakRecord>();
        let cts = ds.folder::<CtRecord>();
        let mut rows = Vec::new();
        for label in labels {
            for (op, control) in TESTED {
                let Some(r) = leaks.get(algorithm, label, op) else {
                    continue;
                };
                let public = leaks.get(algorithm, label, control);
                let ct = cts.get(algorithm, label, op);
                rows.push(vec![
                    label.clone(),
                    op.to_string(),
                    format!("{} ({})", r.status, r.figure()),
                    public.map_or_else(
                        || "not run".to_string(),
                        |p| format!("{}: {} ({})", p.op, p.status, p.figure()),
                    ),
                    ct.map_or_else(|| "not run".to_string(), CtRecord::status_text),
                    rests_on(ct.map(|c| c.status), r, public),
                ]);
            }
        }
        Ok((!rows.is_empty()).then(|| Section {
            title: "Timing test of the secret key".into(),
            note: "Each operation whose input holds the secret key, run natively on the measuring core: calls with one fixed key and calls with 16 other keys of the library's own keygen, interleaved at random, the other input drawn alike; Welch's t between the two classes' cycles over every call and over the calls below ten percentiles, as dudect does. A difference is |t| ≥ 10 with the classes' trimmed means at least 1 % and 100 cycles apart (closer: slight), no difference |t| < 4.5. The key pair's public operation, tested the same way, is the control: a difference there too, at least a quarter as large, follows the key's public part (a public seed's rejection sampling). The test corroborates the constant-time check under memcheck and cannot replace it: no difference at this number of calls proves none.".into(),
            columns: [
                "instance",
                "operation",
                "timing test",
                "public control",
                "constant-time check",
                "the verdict rests on",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }))
    }
}

/// Whether the public control explains the difference of `r`: its time
/// follows the same keys clearly (|t| ≥ 4.5), by at least a quarter of
/// `r`'s shift. A secret operation that differs by far more than the
/// public one is not explained by the key's public part.
fn explained_by(r: &LeakRecord, control: Option<&LeakRecord>) -> bool {
    let Some(c) = control else {
        return false;
    };
    let clear = c.max_t.is_some_and(|t| t >= NO_DIFFERENCE_T);
    let shift = |x: &LeakRecord| x.shift_cycles.map_or(0.0, f64::abs);
    clear && shift(c) >= shift(r) / 4.0
}

/// Which evidence the constant-time verdict of an operation rests on,
/// from memcheck's status, the timing test's and its public control's.
pub(crate) fn rests_on(
    ct: Option<CtStatus>,
    r: &LeakRecord,
    control: Option<&LeakRecord>,
) -> String {
    use CtStatus as C;
    use LeakStatus as L;
    let public = explained_by(r, control);
    let text = match (ct, r.status) {
        (Some(C::Clean), L::NoDifference) => {
            "memcheck and the timing test: neither sees the key's influence"
        }
        (Some(C::Clean), L::Slight) => {
            "memcheck; the timing test sees the key move the time only slightly \
             (under 1 % or 100 cycles)"
        }
        (Some(C::Clean), L::Difference) if public => {
            "memcheck; the time follows the key in the public control too, so its public part \
             explains the timing test's difference"
        }
        (Some(C::Clean), L::Difference) => {
            "⚠ memcheck alone, and the timing test disagrees: the time follows the secret key, \
             and far less or not in the public control"
        }
        (Some(C::Clean), _) => "memcheck alone (the timing test is not conclusive)",
        (Some(C::Flagged), L::Difference) if !public => {
            "memcheck's sites, corroborated by the timing test"
        }
        (Some(C::Flagged), _) => "memcheck's sites",
        (Some(C::Suspicious), _) => {
            "no verdict: the code makes Valgrind client requests; the timing test stands alone"
        }
        (Some(C::Error | C::Skipped) | None, L::Difference) if !public => {
            "the timing test alone: the time follows the secret key"
        }
        (Some(C::Error | C::Skipped) | None, _) => {
            "the timing test alone, which proves nothing by seeing no difference"
        }
    };
    text.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use CtStatus as C;
    use LeakStatus as L;

    fn rec(status: L, t: f64, shift: f64) -> LeakRecord {
        LeakRecord {
            algorithm: "a".into(),
            label: "L".into(),
            op: "dec".into(),
            status,
            detail: None,
            secret: "secret-key".into(),
            keys: 16,
            counter: None,
            fixed_cycles: Vec::new(),
            random_cycles: Vec::new(),
            tests: Vec::new(),
            max_t: Some(t),
            shift_cycles: Some(shift),
            fixed_mean_cycles: Some(100_000.0),
            process: None,
        }
    }

    #[test]
    fn a_disagreement_is_marked_only_where_the_public_control_does_not_explain_it() {
        let warned =
            |ct, r: &LeakRecord, c: Option<&LeakRecord>| rests_on(ct, r, c).starts_with('⚠');
        let dec = rec(L::Difference, 40.0, 4000.0);
        // ML-KEM-1024's dec beside its enc: both follow the key's seed.
        let enc = rec(L::Difference, 48.0, 2900.0);
        assert!(!warned(Some(C::Clean), &dec, Some(&enc)));
        // A public control that barely moves, or none, explains nothing.
        let still = rec(L::Slight, 16.0, 26.0);
        assert!(warned(Some(C::Clean), &dec, Some(&still)));
        assert!(warned(Some(C::Clean), &dec, None));
        let quiet = rec(L::NoDifference, 1.0, 3000.0);
        assert!(warned(Some(C::Clean), &dec, Some(&quiet)));
        // No difference, or memcheck's own sites: nothing to mark.
        assert!(!warned(Some(C::Clean), &rec(L::Slight, 20.0, 50.0), None));
        assert!(!warned(Some(C::Flagged), &dec, None));
        assert!(!warned(None, &dec, None));
        assert!(rests_on(Some(C::Flagged), &dec, Some(&still)).contains("corroborated"));
    }
}
