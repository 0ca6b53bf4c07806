//! `pqbench check <dir>`: proves a dataset's figures and pages follow from
//! its raw evidence.
//!
//! - every record file of every stage's folder is recomputed by its stage
//!   (`engine::Records::check`): a timing record's `statistics` from its
//!   raw `trials`, a profile's shares from its `shapes`, and so on;
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

use crate::engine::Registry;
use crate::fsutil;
use crate::records::dataset::{self, Dataset};

#[derive(Debug, Clone, Default, Serialize)]
pub struct CheckReport {
    pub systems: Vec<String>,
    /// Per record folder of the registry found in the datasets, in
    /// registry order: how many of its files were recomputed.
    pub checked: Vec<Checked>,
    pub kat_logs: usize,
    pub pages: usize,
    /// One line per difference: the file, then the field or line.
    pub problems: Vec<String>,
}

/// The files of one record folder that were recomputed.
#[derive(Debug, Clone, Serialize)]
pub struct Checked {
    /// The folder (a `records::layout` name).
    pub dir: String,
    /// What the report calls its files.
    pub noun: String,
    pub files: usize,
}

impl CheckReport {
    pub fn passed(&self) -> bool {
        self.problems.is_empty()
    }

    /// How many files of the folder `dir` were recomputed.
    pub fn files_of(&self, dir: &str) -> usize {
        self.checked
            .iter()
            .find(|c| c.dir == dir)
            .map_or(0, |c| c.files)
    }

    fn count(&mut self, dir: &str, noun: &str, files: usize) {
        match self.checked.iter_mut().find(|c| c.dir == dir) {
            Some(c) => c.files += files,
            None => self.checked.push(Checked {
                dir: dir.to_string(),
                noun: noun.to_string(),
                files,
            }),
        }
    }
}

impl std::fmt::Display for CheckReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for p in &self.problems {
            writeln!(f, "{p}")?;
        }
        let mut parts: Vec<String> = self
            .checked
            .iter()
            .map(|c| format!("{} {}", c.files, c.noun))
            .collect();
        parts.push(format!("{} KAT logs", self.kat_logs));
        write!(
            f,
            "checked {} and {} pages of system(s) {}: {}",
            parts.join(", "),
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

fn check_pages(
    lay: &Layout,
    dir: &Path,
    registry: &Registry,
    report: &mut CheckReport,
) -> Result<()> {
    let Some(site) = &lay.site else { return Ok(()) };
    let shown_site = crate::fsutil::paths::relative(dir, site)?;
    let datasets = crate::render::load_datasets(&lay.datasets, site, registry)?;
    let files = crate::render::render_files(&datasets, lay.templates.as_deref(), registry)?;
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
    check_dataset_with(dir, &crate::stages::registry())
}

/// [`check_dataset`] with the record folders and page sections of
/// `registry`.
pub fn check_dataset_with(dir: &Path, registry: &Registry) -> Result<CheckReport> {
    // A dataset handed over is walked before anything of it is read: a
    // link in it, or a tree beyond the dataset limits, is an error naming
    // it (run history and hidden state files are not part of it).
    crate::fsutil::foreign::regular_files(dir, crate::fsutil::foreign::DATASET, &|n| {
        n == crate::records::layout::RUNS || n.starts_with('.')
    })?;
    let lay = layout(dir)?;
    let mut report = CheckReport::default();
    for d in &lay.datasets {
        let shown = crate::fsutil::paths::relative(dir, d)?;
        check_system_dataset(d, &shown, registry, &mut report)?;
    }
    check_pages(&lay, dir, registry, &mut report)?;
    Ok(report)
}

/// Checks one system's dataset (`shown` names it in the problems): every
/// record file of every stage's folder recomputed by its stage, every KAT
/// log against its digest.
pub fn check_system_dataset(
    d: &Path,
    shown: &str,
    registry: &Registry,
    report: &mut CheckReport,
) -> Result<()> {
    let ds = Dataset::load(d, String::new(), &registry.folders())?;
    report.systems.push(ds.system().to_string());
    check_loaded(&ds, shown, registry, report)
}

/// [`check_system_dataset`] over a loaded dataset and each of its further
/// datasets (a matrix's combinations, or another dimension's, loaded with
/// it).
fn check_loaded(
    primary: &Dataset,
    shown: &str,
    registry: &Registry,
    report: &mut CheckReport,
) -> Result<()> {
    for ds in primary.all() {
        let d = &ds.dir;
        let shown = match crate::fsutil::paths::relative(&primary.dir, d)?.as_str() {
            "." => shown.to_string(),
            rel => format!("{shown}/{rel}"),
        };
        for records in registry.records() {
            let dir = d.join(records.dir());
            if !dir.is_dir() {
                continue;
            }
            let files = crate::records::folder::json_files(&dir)?;
            for file in &files {
                let rel = format!("{shown}/{}", crate::fsutil::paths::relative(d, file)?);
                let problems = records.check(file, &rel, &ds.campaign)?;
                report.problems.extend(problems);
            }
            report.count(records.dir(), records.noun(), files.len());
        }
        check_build(ds, &shown, report);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_name_the_line() {
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
