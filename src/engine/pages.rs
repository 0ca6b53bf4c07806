//! What a stage puts on the pages: a table section at the end of each
//! algorithm page, or a part of the page in its own template at a stated
//! place; its column in the summary; its section and limitations on the
//! method page; its files in the evidence index. The pages walk the
//! registry's presenters in registry order and name no stage.

use anyhow::Result;
use serde::Serialize;

use crate::records::dataset::Dataset;
use crate::records::folder::FolderRecord;

/// A section a stage adds to each algorithm page: a table built from the
/// stage's records in one system's dataset. Cells are plain text, escaped
/// by the templates like every other value.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Section {
    /// Heading, also the anchor's base.
    pub title: String,
    /// The sentence under the heading: what the table shows.
    pub note: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// Where on an algorithm page a stage's [`Part`] goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Slot {
    /// The end of section 4, after the performance tables.
    Performance,
    /// The body of section 5 (resource consumption).
    Resources,
    /// Under "Symmetric primitives", after the survey verdict.
    Symmetric,
    /// After the profile section, before the stages' table sections and
    /// the evidence index.
    BeforeEvidence,
}

/// A stage's own part of an algorithm page: its template
/// (`<template>.md`, `<template>.html`, overridable like every page
/// template) reads `p.view`.
#[derive(Debug, Clone, Serialize)]
pub struct Part {
    pub slot: Slot,
    pub template: &'static str,
    pub view: serde_json::Value,
}

impl Part {
    /// `view` serialised for the template.
    pub fn new(slot: Slot, template: &'static str, view: &impl Serialize) -> Result<Part> {
        Ok(Part {
            slot,
            template,
            view: serde_json::to_value(view)?,
        })
    }
}

/// A file of the evidence index: what it holds and its path in the
/// dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct EvidenceFile {
    pub item: String,
    pub path: String,
}

impl EvidenceFile {
    /// The file of operation `op`'s `T` record when `ds` holds one, as
    /// `<noun> <op>` (the usual per-operation folder).
    pub fn of_operation<T: FolderRecord>(
        ds: &Dataset,
        noun: &str,
        algorithm: &str,
        label: &str,
        op: &str,
    ) -> Vec<EvidenceFile> {
        if !ds.folder::<T>().contains(algorithm, label, op) {
            return Vec::new();
        }
        vec![EvidenceFile {
            item: format!("{noun} {op}"),
            path: crate::records::layout::operation_file(T::DIR, algorithm, label, op),
        }]
    }
}

/// A section of the method page. Adjacent stages that name the same
/// title share one section, each adding its bullets in registry order.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodText {
    pub title: &'static str,
    pub bullets: Vec<String>,
}

/// What a stage puts on the pages; every hook defaults to nothing.
pub trait PageSection: Sync {
    /// The section of `algorithm`'s page from one system's dataset `ds`,
    /// whose instances of that algorithm are `labels` (in page order); None
    /// when the dataset holds nothing of the stage for it.
    fn section(&self, ds: &Dataset, algorithm: &str, labels: &[String]) -> Result<Option<Section>> {
        let _ = (ds, algorithm, labels);
        Ok(None)
    }

    /// The stage's own part of `algorithm`'s page, over the operations
    /// `ops` of its instances `labels`; None when there is nothing to show.
    fn part(
        &self,
        ds: &Dataset,
        algorithm: &str,
        labels: &[String],
        ops: &[&str],
    ) -> Result<Option<Part>> {
        let _ = (ds, algorithm, labels, ops);
        Ok(None)
    }

    /// The heading of the stage's column in the summary tables.
    fn summary_column(&self) -> Option<&'static str> {
        None
    }

    /// The stage's summary cell for one instance over `ops`; None without
    /// records (the cell then reads `–` when another instance has one).
    fn summary_cell(
        &self,
        ds: &Dataset,
        algorithm: &str,
        label: &str,
        ops: &[&str],
    ) -> Option<String> {
        let _ = (ds, algorithm, label, ops);
        None
    }

    /// The stage's files of one operation of an instance, for the
    /// evidence index.
    fn evidence(&self, ds: &Dataset, algorithm: &str, label: &str, op: &str) -> Vec<EvidenceFile> {
        let _ = (ds, algorithm, label, op);
        Vec::new()
    }

    /// How the stage worked on this system, for the method page.
    fn method(&self, ds: &Dataset) -> Option<MethodText> {
        let _ = ds;
        None
    }

    /// What the stage's figures cannot show, for the method page.
    fn limitations(&self, ds: &Dataset) -> Vec<String> {
        let _ = ds;
        Vec::new()
    }

    /// The stage's built-in templates, by name (`count.html`): a project's
    /// template folder overrides them like the pages' own.
    fn templates(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }
}
