//! Scan stage: a static scan of each instance's own objects (its sources
//! and components, not pqbench's adapter) and of its library for code that
//! could reach outside the operation being measured (`objscan::tamper`).
//! A finding the campaign's `[stage.scan]` table does not allow, with a
//! reason, makes the instance `suspicious`: it is still measured, but
//! flagged on every page that shows it and reported in the run's summary.

use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::build::BuildStage;
use crate::engine::{Job, Manifest, Policy, Stage};
use crate::engine::{PageSection, Publication, Records, Results, Section, Verdict};
use crate::objscan::tamper;
use crate::plan::Instance;
use crate::records::campaign::CampaignRecord;
use crate::records::dataset::Dataset;
use crate::records::folder::{Contents, FolderOf, RecordFolder};
use crate::records::layout;
use crate::records::scan::{Finding, FindingClass, ScanRecord, ScanStatus};

pub(crate) struct ScanStage;

/// The campaign's `[stage.scan]` table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScanSettings {
    /// Findings the campaign accepts, each with the reason it is honest.
    #[serde(default)]
    pub allow: Vec<Allow>,
}

/// One allowed finding: of an algorithm, of a class, optionally only with
/// that detail (the function called, the string) or in that symbol.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Allow {
    pub algorithm: String,
    pub finding: FindingClass,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    pub reason: String,
}

impl Allow {
    fn covers(&self, algorithm: &str, f: &Finding) -> bool {
        self.algorithm == algorithm
            && self.finding == f.class
            && self.detail.as_ref().is_none_or(|d| *d == f.detail)
            && self
                .symbol
                .as_ref()
                .is_none_or(|s| Some(s) == f.symbol.as_ref())
    }
}

/// The settings, each entry checked: an allowance needs its reason.
fn parse_settings(table: &serde_json::Value) -> std::result::Result<ScanSettings, String> {
    let s: ScanSettings = serde_json::from_value(table.clone()).map_err(|e| e.to_string())?;
    for (i, a) in s.allow.iter().enumerate() {
        if a.reason.trim().is_empty() {
            return Err(format!(
                "allow[{i}] (`{}` of {}): `reason` is empty; say why the finding is honest",
                a.finding, a.algorithm
            ));
        }
    }
    Ok(s)
}

/// The allowances of `algorithm` in the campaign.
fn allowances(job: &Job) -> Result<Vec<Allow>> {
    let s: ScanSettings = crate::engine::settings(job.cx.plan, ScanStage::NAME)?;
    Ok(s.allow
        .into_iter()
        .filter(|a| a.algorithm == job.inst.algorithm)
        .collect())
}

/// Marks the findings `allow` covers with its reason; the status follows.
pub(crate) fn apply(algorithm: &str, findings: &mut [Finding], allow: &[Allow]) -> ScanStatus {
    for f in findings.iter_mut() {
        f.allowed = allow
            .iter()
            .find(|a| a.covers(algorithm, f))
            .map(|a| a.reason.clone());
    }
    ScanStatus::of(findings)
}

impl Stage for ScanStage {
    type Output = ScanRecord;
    const NAME: &'static str = "scan";
    const REQUIRES: &'static [&'static str] = &["build"];
    const POLICY: Policy = Policy::Parallel;

    fn manifest(&self, job: &Job) -> Result<Option<Manifest>> {
        let Some(a) = job.prior.get::<BuildStage>().and_then(|b| b.built()) else {
            return Ok(None);
        };
        let mut m = Manifest::new();
        m.set("objects", &a.objects)
            .set("library", &a.library_sha256)
            .set("allow", allowances(job)?)
            .set("pqbench", crate::STAGE_LOGIC_VERSION);
        Ok(Some(m))
    }

    fn run(&self, job: &Job) -> Result<ScanRecord> {
        let (cx, inst) = (job.cx, job.inst);
        let a = job
            .prior
            .get::<BuildStage>()
            .and_then(|b| b.built())
            .context("nothing built")?;
        let (own, paths) = a.own_objects(&cx.cache);
        let names: Vec<String> = own.iter().map(|o| file_name(&o.source)).collect();
        let from_objects = tamper::scan_objects(&paths, &names)?;
        let from_library = match &a.library_sha256 {
            Some(sha) => tamper::scan_library(&cx.cache.blob_path(sha))?,
            None => Vec::new(),
        };
        let mut findings = tamper::merge(from_objects, from_library);
        let status = apply(&inst.algorithm, &mut findings, &allowances(job)?);
        Ok(ScanRecord {
            algorithm: inst.algorithm.clone(),
            label: inst.label.clone(),
            status,
            objects: own.iter().map(|o| o.source.clone()).collect(),
            library: a.library_sha256.is_some(),
            findings,
        })
    }

    fn check_settings(&self, table: &serde_json::Value) -> std::result::Result<(), String> {
        parse_settings(table).map(drop)
    }

    fn records(&self) -> Option<&dyn Records> {
        Some(&ScanRecords)
    }

    fn page_section(&self) -> Option<&dyn PageSection> {
        Some(&ScanRecords)
    }

    /// A suspicious instance is reported, with what was not allowed.
    fn verdict(&self, out: &ScanRecord) -> Verdict {
        match out.status {
            ScanStatus::Clean => Verdict::default(),
            ScanStatus::Suspicious => {
                let denied: Vec<String> = out
                    .findings
                    .iter()
                    .filter(|f| f.allowed.is_none())
                    .map(describe)
                    .collect();
                Verdict::failed("scan suspicious", Some(denied.join("; ")))
            }
        }
    }

    fn publish(
        &self,
        p: &mut Publication,
        inst: &Instance,
        out: &ScanRecord,
        _: &Results,
    ) -> Result<()> {
        p.write(&layout::scan_file(&inst.algorithm, &inst.label), out)
    }
}

fn file_name(source: &str) -> String {
    source.rsplit('/').next().unwrap_or(source).to_string()
}

/// A finding in one line: `call dup2 in setup (x.c)`.
pub(crate) fn describe(f: &Finding) -> String {
    let place = match &f.symbol {
        Some(s) => format!("{s} ({})", f.file),
        None => f.file.clone(),
    };
    format!("{} {} in {place}", f.class, f.detail)
}

/// The stage's record folder (one file per instance) and its page section.
struct ScanRecords;

impl RecordFolder for ScanRecords {
    fn dir(&self) -> &'static str {
        layout::SCAN
    }

    fn load(&self, dataset_dir: &Path) -> Result<Contents> {
        FolderOf::<ScanRecord>::new().load(dataset_dir)
    }
}

impl Records for ScanRecords {
    fn noun(&self) -> &'static str {
        "static scans"
    }

    fn files(&self, inst: &Instance) -> Vec<String> {
        vec![layout::scan_file(&inst.algorithm, &inst.label)]
    }

    /// A record's status is what its findings and their allowances give,
    /// and an allowance carries its reason.
    fn check(&self, file: &Path, shown: &str, _: &CampaignRecord) -> Result<Vec<String>> {
        let r: ScanRecord = crate::fsutil::read_json(file)?;
        let mut problems = Vec::new();
        let expected = layout::scan_file(&r.algorithm, &r.label);
        if !shown.ends_with(&expected) {
            problems.push(format!("{shown}: holds {expected}"));
        }
        let status = ScanStatus::of(&r.findings);
        if status != r.status {
            problems.push(format!(
                "{shown}: status {} but its findings give {status}",
                r.status
            ));
        }
        if r.findings
            .iter()
            .any(|f| f.allowed.as_ref().is_some_and(|a| a.trim().is_empty()))
        {
            problems.push(format!("{shown}: a finding is allowed without a reason"));
        }
        if !r.findings.is_sorted() {
            problems.push(format!("{shown}: findings are not in order"));
        }
        Ok(problems)
    }
}

impl PageSection for ScanRecords {
    /// Only instances with findings appear: an algorithm whose scans found
    /// nothing gets no section.
    fn section(&self, ds: &Dataset, algorithm: &str, labels: &[String]) -> Result<Option<Section>> {
        let mut rows = Vec::new();
        for label in labels {
            let Some(r) = ds.folder::<ScanRecord>().get(algorithm, label, "") else {
                continue;
            };
            for f in &r.findings {
                rows.push(vec![
                    label.clone(),
                    match &f.allowed {
                        Some(_) => "allowed".to_string(),
                        None => format!("⚠ {}", ScanStatus::Suspicious),
                    },
                    f.class.to_string(),
                    f.detail.clone(),
                    f.symbol.clone().unwrap_or_else(|| "–".into()),
                    f.file.clone(),
                    f.allowed.clone().unwrap_or_else(|| "–".into()),
                ]);
            }
        }
        Ok((!rows.is_empty()).then(|| Section {
            title: "Static scan".into(),
            note: "What the static scan of the instance's own objects and library found: code run at load or unload, references to functions that reach outside the operation, raw system calls, /proc/ paths, Valgrind client requests. A finding the campaign does not allow, with a reason, makes the instance suspicious: its figures are shown but flagged, and the summary leaves it out of comparisons.".into(),
            columns: ["instance", "status", "class", "detail", "symbol", "file", "allowed because"]
                .map(String::from)
                .to_vec(),
            rows,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(class: FindingClass, detail: &str, symbol: &str) -> Finding {
        Finding {
            class,
            detail: detail.into(),
            symbol: Some(symbol.into()),
            file: "x.c".into(),
            allowed: None,
        }
    }

    #[test]
    fn an_allowance_covers_its_algorithm_class_detail_and_symbol_only() {
        let table = serde_json::json!({"allow": [
            {"algorithm": "kem-91", "finding": "constructor", "symbol": "init_tables",
             "reason": "fills its tables at load"},
            {"algorithm": "kem-91", "finding": "call", "detail": "mmap", "reason": "maps its buffer"},
        ]});
        let allow = parse_settings(&table).unwrap().allow;
        let mut found = vec![
            finding(FindingClass::Constructor, ".init_array", "init_tables"),
            finding(FindingClass::Call, "mmap", "setup"),
        ];
        assert_eq!(apply("kem-91", &mut found, &allow), ScanStatus::Clean);
        assert_eq!(
            found[0].allowed.as_deref(),
            Some("fills its tables at load")
        );
        // Another algorithm, symbol or detail is not covered.
        assert_eq!(apply("sign-90", &mut found, &allow), ScanStatus::Suspicious);
        let mut other = vec![
            finding(FindingClass::Constructor, ".init_array", "steal"),
            finding(FindingClass::Call, "dup2", "setup"),
        ];
        assert_eq!(apply("kem-91", &mut other, &allow), ScanStatus::Suspicious);
        assert!(other.iter().all(|f| f.allowed.is_none()));
    }

    #[test]
    fn settings_name_a_misspelt_key_an_unknown_class_and_an_empty_reason() {
        let bad = |v: serde_json::Value| parse_settings(&v).unwrap_err();
        let e = bad(serde_json::json!({"alow": []}));
        assert!(e.contains("alow"), "{e}");
        let e = bad(
            serde_json::json!({"allow": [{"algorithm": "a", "finding": "ctor", "reason": "r"}]}),
        );
        assert!(e.contains("ctor") && e.contains("constructor"), "{e}");
        let e = bad(
            serde_json::json!({"allow": [{"algorithm": "a", "finding": "call", "reason": ""}]}),
        );
        assert!(e.contains("`reason` is empty"), "{e}");
    }
}
