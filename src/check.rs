//! `pqbench check <dir>`: proves a dataset's figures and pages follow from
//! its raw evidence.
//!
//! - every timing record's `statistics` equals `stats::summarize` of its raw
//!   `trials`, field for field;
//! - every profile record's shares and calls per operation equal what its
//!   `shapes` give;
//! - every KAT log has the sha256 `build.json` gives it and ends with
//!   `RESULT <id> <label> <STATUS>` matching `build.json`; a published
//!   library, when present, has its recorded sha256;
//! - every page regenerated from the datasets equals the published page
//!   byte for byte, and the site holds no page rendering did not produce.
//!
//! Accepted layouts: a published dataset (`<dir>/data/<system>/…`,
//! `<dir>/site/…`, optionally `<dir>/templates/`, as `publish` writes it), a
//! campaign's output directory (`output/<campaign>/<system>/…` plus
//! `site/`), or a single run directory (records only, no pages).

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use serde::Serialize;

use crate::fsutil;
use crate::measure::profile::OpProfile;
use crate::records::analysis::{profile_path, ProfileRecord};
use crate::records::count::{count_path, CountRecord};
use crate::records::ct::{ct_path, CtRecord};
use crate::records::operation::{record_path, OperationRecord};
use crate::render::dataset::{self, Dataset};
use crate::stats::Summary;

#[derive(Debug, Clone, Default, Serialize)]
pub struct CheckReport {
    pub systems: Vec<String>,
    pub records: usize,
    pub profiles: usize,
    pub kat_logs: usize,
    /// Instruction-count and constant-time records recomputed.
    #[serde(default)]
    pub counts: usize,
    #[serde(default)]
    pub ct_records: usize,
    pub pages: usize,
    /// One line per difference: the file, then the field or line.
    pub problems: Vec<String>,
}

impl CheckReport {
    pub fn passed(&self) -> bool {
        self.problems.is_empty()
    }
}

impl std::fmt::Display for CheckReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for p in &self.problems {
            writeln!(f, "{p}")?;
        }
        let exact = if self.counts + self.ct_records > 0 {
            format!(
                ", {} instruction counts, {} constant-time checks",
                self.counts, self.ct_records
            )
        } else {
            String::new()
        };
        write!(
            f,
            "checked {} timing records, {} profiles{exact}, {} KAT logs and {} pages of system(s) {}: {}",
            self.records,
            self.profiles,
            self.kat_logs,
            self.pages,
            self.systems.join(", "),
            if self.passed() {
                "everything recomputes".to_string()
            } else {
                format!("{} difference(s)", self.problems.len())
            }
        )
    }
}

/// Where the datasets, the site and the templates of `dir` are.
struct Layout {
    datasets: Vec<PathBuf>,
    site: Option<PathBuf>,
    templates: Option<PathBuf>,
}

fn layout(dir: &Path) -> Result<Layout> {
    let data = dir.join("data");
    let published = if data.is_dir() {
        dataset::dataset_dirs_in(&data)?
    } else {
        Vec::new()
    };
    let templates = Some(dir.join("templates")).filter(|t| t.is_dir());
    if !published.is_empty() {
        return Ok(Layout {
            datasets: published,
            site: Some(dir.join(crate::records::layout::SITE)),
            templates,
        });
    }
    let campaign = dataset::dataset_dirs_in(dir)?;
    if !campaign.is_empty() {
        return Ok(Layout {
            datasets: campaign,
            site: Some(dir.join(crate::records::layout::SITE)),
            templates,
        });
    }
    if dir.join(crate::records::layout::CAMPAIGN).is_file() {
        return Ok(Layout {
            datasets: vec![dir.to_path_buf()],
            site: None,
            templates: None,
        });
    }
    bail!(
        "{}: no dataset found (expected data/<system>/campaign.json, <system>/campaign.json or campaign.json)",
        dir.display()
    )
}

/// The first field where two serialisations differ, as `a.b: x vs y`.
fn first_difference(prefix: &str, a: &serde_json::Value, b: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys = x.keys().chain(y.keys().filter(|k| !x.contains_key(*k)));
            keys.map(|k| {
                let null = Value::Null;
                let path = format!("{prefix}.{k}");
                first_difference(&path, x.get(k).unwrap_or(&null), y.get(k).unwrap_or(&null))
            })
            .find_map(|d| d)
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(&format!("{prefix}[{i}]"), p, q)),
        _ if a == b => None,
        _ => Some(format!("{prefix}: recorded {a}, recomputed {b}")),
    }
}

fn differ<T: Serialize>(field: &str, recorded: &T, recomputed: &T) -> Option<String> {
    let (a, b) = (
        serde_json::to_value(recorded).ok()?,
        serde_json::to_value(recomputed).ok()?,
    );
    first_difference(field, &a, &b)
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

fn check_record(rel: &str, r: &OperationRecord, problems: &mut Vec<String>) {
    let expected = record_path(&r.algorithm, &r.label, &r.op);
    if !rel.ends_with(&expected) {
        problems.push(format!("{rel}: holds {expected}"));
    }
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

fn check_profile(rel: &str, p: &ProfileRecord, problems: &mut Vec<String>) {
    let expected = profile_path(&p.algorithm, &p.label, &p.op);
    if !rel.ends_with(&expected) {
        problems.push(format!("{rel}: holds {expected}"));
    }
    let op = OpProfile {
        op: p.op.clone(),
        status: p.status,
        detail: p.detail.clone(),
        ops: p.ops,
        total_ticks: p.total_ticks,
        tick_hz: p.tick_hz,
        shapes: p.shapes.clone(),
        process: None,
    };
    let fields = [
        differ("hash_share", &p.hash_share, &op.hash_share()),
        differ("drng_share", &p.drng_share, &op.drng_share()),
        differ("calls_per_op", &p.calls_per_op, &op.calls_per_op()),
        differ(
            "share_per_function",
            &p.share_per_function,
            &op.share_per_function(),
        ),
    ];
    problems.extend(fields.into_iter().flatten().map(|d| format!("{rel}: {d}")));
}

fn check_build(ds: &Dataset, shown: &str, report: &mut CheckReport) {
    for b in &ds.build.instances {
        if let (Some(log), Some(sha)) = (&b.kat_log, &b.kat_log_sha256) {
            report.kat_logs += 1;
            let rel = format!("{shown}/{log}");
            let Ok(bytes) = std::fs::read(ds.dir.join(log)) else {
                report
                    .problems
                    .push(format!("{rel}: missing (named in build.json)"));
                continue;
            };
            let got = fsutil::sha256_hex(&bytes);
            if &got != sha {
                report
                    .problems
                    .push(format!("{rel}: sha256 {got}, build.json says {sha}"));
            }
            let text = String::from_utf8_lossy(&bytes);
            let last = text
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            let want = format!("RESULT {} {} {}", b.algorithm, b.label, b.kat_status);
            if last.trim() != want {
                report.problems.push(format!(
                    "{rel}: last line `{last}`, build.json says `{want}`"
                ));
            }
        }
        if let (Some(lib), Some(sha)) = (&b.library, &b.library_sha256) {
            let path = ds.dir.join(lib);
            if path.is_file() {
                match fsutil::sha256_file(&path) {
                    Ok(got) if &got == sha => {}
                    Ok(got) => report.problems.push(format!(
                        "{shown}/{lib}: sha256 {got}, build.json says {sha}"
                    )),
                    Err(e) => report.problems.push(format!("{shown}/{lib}: {e:#}")),
                }
            }
        }
    }
}

/// The first line where two texts differ, 1-based, with both lines.
fn first_line_difference(published: &[u8], regenerated: &[u8]) -> String {
    let (a, b) = (
        String::from_utf8_lossy(published),
        String::from_utf8_lossy(regenerated),
    );
    let (mut la, mut lb) = (a.split('\n'), b.split('\n'));
    let mut n = 0;
    loop {
        n += 1;
        match (la.next(), lb.next()) {
            (Some(x), Some(y)) if x == y => continue,
            (x, y) => {
                return format!(
                    "line {n} differs: published `{}`, regenerated `{}`",
                    x.unwrap_or("<end of file>"),
                    y.unwrap_or("<end of file>")
                )
            }
        }
    }
}

fn check_pages(lay: &Layout, dir: &Path, report: &mut CheckReport) -> Result<()> {
    let Some(site) = &lay.site else { return Ok(()) };
    let shown_site = dataset::relative(dir, site)?;
    let datasets = crate::render::load_datasets(&lay.datasets, site)?;
    let files = crate::render::render_files(&datasets, lay.templates.as_deref())?;
    report.pages = files.len();
    for (rel, bytes) in &files {
        match std::fs::read(site.join(rel)) {
            Err(_) => report.problems.push(format!(
                "{shown_site}/{rel}: missing (rendering produces it)"
            )),
            Ok(published) if &published != bytes => report.problems.push(format!(
                "{shown_site}/{rel}: {}",
                first_line_difference(&published, bytes)
            )),
            Ok(_) => {}
        }
    }
    for rel in crate::render::site_files(site)? {
        if !files.contains_key(&rel) {
            report.problems.push(format!(
                "{shown_site}/{rel}: not produced by rendering the datasets"
            ));
        }
    }
    Ok(())
}

/// Checks everything under `dir`; differences are collected in the report,
/// errors are reserved for unreadable input.
pub fn check_dataset(dir: &Path) -> Result<CheckReport> {
    // A dataset handed over is walked before anything of it is read: a
    // link in it, or a tree beyond the dataset limits, is an error naming
    // it (run history and hidden state files are not part of it).
    crate::fsutil::foreign::regular_files(dir, crate::fsutil::foreign::DATASET, &|n| {
        n == crate::records::layout::RUNS || n.starts_with('.')
    })?;
    let lay = layout(dir)?;
    let mut report = CheckReport::default();
    for d in &lay.datasets {
        let shown = dataset::relative(dir, d)?;
        check_system_dataset(d, &shown, &mut report)?;
    }
    check_pages(&lay, dir, &mut report)?;
    Ok(report)
}

/// Checks one system's dataset (`shown` names it in the problems): every
/// statistic and share recomputed, every KAT log against its digest, and
/// every record's provenance.
pub fn check_system_dataset(d: &Path, shown: &str, report: &mut CheckReport) -> Result<()> {
    let ds = Dataset::load(d, String::new())?;
    report.systems.push(ds.system().to_string());
    for (sub, is_record) in [("records", true), ("profile", false)] {
        if !d.join(sub).is_dir() {
            continue;
        }
        for file in dataset::json_files(&d.join(sub))? {
            let rel = format!("{shown}/{}", dataset::relative(d, &file)?);
            if is_record {
                let r: OperationRecord = fsutil::read_json(&file)?;
                report.records += 1;
                check_record(&rel, &r, &mut report.problems);
                check_provenance(&rel, &r, &ds.campaign, &mut report.problems);
            } else {
                let p: ProfileRecord = fsutil::read_json(&file)?;
                report.profiles += 1;
                check_profile(&rel, &p, &mut report.problems);
            }
        }
    }
    for (sub, is_count) in [("count", true), ("ct", false)] {
        if !d.join(sub).is_dir() {
            continue;
        }
        for file in dataset::json_files(&d.join(sub))? {
            let rel = format!("{shown}/{}", dataset::relative(d, &file)?);
            if is_count {
                let r: CountRecord = fsutil::read_json(&file)?;
                report.counts += 1;
                check_count(&rel, &r, &mut report.problems);
            } else {
                let r: CtRecord = fsutil::read_json(&file)?;
                report.ct_records += 1;
                check_ct(&rel, &r, &mut report.problems);
            }
        }
    }
    check_build(&ds, shown, report);
    Ok(())
}

/// A count record's figures are what its per-call counts give.
fn check_count(rel: &str, r: &CountRecord, problems: &mut Vec<String>) {
    let expected = count_path(&r.algorithm, &r.label, &r.op);
    if !rel.ends_with(&expected) {
        problems.push(format!("{rel}: holds {expected}"));
    }
    problems.extend(
        differ("instructions", &r.instructions, &r.recomputed()).map(|d| format!("{rel}: {d}")),
    );
}

/// A constant-time record's sites and status are what its raw errors and
/// annotations give.
fn check_ct(rel: &str, r: &CtRecord, problems: &mut Vec<String>) {
    let expected = ct_path(&r.algorithm, &r.label, &r.op);
    if !rel.ends_with(&expected) {
        problems.push(format!("{rel}: holds {expected}"));
    }
    let (status, sites, other) = r.recomputed();
    let fields = [
        differ("status", &r.status, &status),
        differ("sites", &r.sites, &sites),
        differ("other_errors", &r.other_errors, &other),
    ];
    problems.extend(fields.into_iter().flatten().map(|d| format!("{rel}: {d}")));
}

/// A record measured on a host other than the one its system accepts.
fn check_provenance(
    rel: &str,
    r: &OperationRecord,
    campaign: &crate::records::campaign::CampaignRecord,
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

    #[test]
    fn differences_name_the_field_and_line() {
        let a = serde_json::json!({"n": 5, "ci": [1.0, 2.0]});
        let b = serde_json::json!({"n": 5, "ci": [1.0, 2.5]});
        assert_eq!(
            first_difference("statistics", &a, &b).unwrap(),
            "statistics.ci[1]: recorded 2.0, recomputed 2.5"
        );
        assert_eq!(first_difference("s", &a, &a), None);
        assert_eq!(
            first_line_difference(b"a\nb\n", b"a\nc\n"),
            "line 2 differs: published `b`, regenerated `c`"
        );
        assert_eq!(
            first_line_difference(b"a\n", b"a\nx"),
            "line 2 differs: published ``, regenerated `x`"
        );
    }
}
