//! What a stage owns of a run's evidence beyond its result: its verdict on
//! an instance for the run's summary, and the folder of record files it
//! publishes, which the run directory keeps, `check` recomputes and
//! `publish`, `merge` and the executors carry. The engine and the run
//! layer only walk the registry; they name no stage and no record.

use std::path::Path;

use anyhow::Result;

use crate::plan::Instance;
use crate::records::campaign::CampaignRecord;
use crate::records::folder::{Contents, FolderOf, FolderRecord, RecordFolder};

/// What a stage's result says about its instance in the run's summary.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Verdict {
    /// The instance's conformance status, counted by status.
    pub status: Option<String>,
    /// The instance was not built on this host: it neither passed nor
    /// failed, and no failure of it is reported.
    pub skipped: bool,
    /// Why the instance was not built, when this stage knows.
    pub skip_reason: Option<String>,
    /// What failed, with its detail.
    pub failures: Vec<(String, Option<String>)>,
}

impl Verdict {
    /// A verdict of one failure.
    pub(crate) fn failed(what: impl Into<String>, detail: Option<String>) -> Verdict {
        Verdict {
            failures: vec![(what.into(), detail)],
            ..Verdict::default()
        }
    }
}

/// A folder of the dataset holding one stage's record files: what the
/// dataset loads of it, and what `check` recomputes beside.
pub trait Records: RecordFolder {
    /// What `check` calls the files it recomputed ("timing records").
    fn noun(&self) -> &'static str;

    /// The dataset paths of every file it may hold for `inst`.
    fn files(&self, inst: &Instance) -> Vec<String>;

    /// Recomputes one of its files from the raw data the file holds:
    /// every difference, one line each, prefixed with `shown` (the file as
    /// the reader names it). `campaign` is the dataset's campaign record.
    fn check(&self, file: &Path, shown: &str, campaign: &CampaignRecord) -> Result<Vec<String>>;
}

/// The per-operation files of folder `dir` for every operation of `inst`'s
/// kind (`records::layout::operation_file`).
pub fn operation_files(dir: &str, inst: &Instance) -> Vec<String> {
    inst.kind
        .operations()
        .iter()
        .map(|op| crate::records::layout::operation_file(dir, &inst.algorithm, &inst.label, op))
        .collect()
}

/// A file found at `shown` holding the record of another operation or
/// instance (a record copied over another).
pub fn misplaced(shown: &str, dir: &str, algorithm: &str, label: &str, op: &str) -> Option<String> {
    let expected = crate::records::layout::operation_file(dir, algorithm, label, op);
    (!shown.ends_with(&expected)).then(|| format!("{shown}: holds {expected}"))
}

/// Recomputes one record file: its path, the file as the reader names it,
/// the dataset's campaign record; every difference, one line each.
pub type Recompute = fn(&Path, &str, &CampaignRecord) -> Result<Vec<String>>;

/// The usual record folder: one file per operation of each instance
/// (`records::layout::operation_file`) holding a `T`, each recomputed by
/// `recompute`.
pub struct OperationRecords<T> {
    noun: &'static str,
    recompute: Recompute,
    folder: FolderOf<T>,
}

impl<T> OperationRecords<T> {
    pub const fn new(noun: &'static str, recompute: Recompute) -> Self {
        OperationRecords {
            noun,
            recompute,
            folder: FolderOf::new(),
        }
    }
}

impl<T: FolderRecord> RecordFolder for OperationRecords<T> {
    fn dir(&self) -> &'static str {
        T::DIR
    }

    fn load(&self, dataset_dir: &Path) -> Result<Contents> {
        self.folder.load(dataset_dir)
    }
}

impl<T: FolderRecord> Records for OperationRecords<T> {
    fn noun(&self) -> &'static str {
        self.noun
    }

    fn files(&self, inst: &Instance) -> Vec<String> {
        operation_files(T::DIR, inst)
    }

    fn check(&self, file: &Path, shown: &str, campaign: &CampaignRecord) -> Result<Vec<String>> {
        (self.recompute)(file, shown, campaign)
    }
}
