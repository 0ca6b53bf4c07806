//! Every file and folder of a dataset (`output/<campaign>/<system>/`),
//! named once. Paths inside records are relative to the dataset, so a
//! published dataset carries no machine paths; `DatasetDir` joins them to a
//! directory on this machine.

use std::path::{Path, PathBuf};

/// `campaign.json`: the run as a whole.
pub const CAMPAIGN: &str = "campaign.json";
/// `build.json`: one record per instance.
pub const BUILD: &str = "build.json";
/// `sizes.json`: sizes of every instance and the audit.
pub const SIZES: &str = "sizes.json";
/// `survey.json`: the symmetric-primitive verdicts.
pub const SURVEY: &str = "survey.json";
/// Present while a run writes the dataset's evidence: a dataset that has it
/// was left half-written by a run that stopped, and no page is made from it.
pub const WRITING: &str = ".writing";
/// A run directory's lock file.
pub const LOCK: &str = "lock.json";
/// The dataset's top-level files, in the order they are published.
pub const TOP_FILES: [&str; 4] = [CAMPAIGN, BUILD, SIZES, SURVEY];

/// Timing records, one per instance and operation.
pub const RECORDS: &str = "records";
/// Helper profiles, one per instance and operation.
pub const PROFILE: &str = "profile";
/// Instruction counts, one per instance and operation.
pub const COUNT: &str = "count";
/// Constant-time checks, one per instance and operation.
pub const CT: &str = "ct";
/// Static scans, one per instance.
pub const SCAN: &str = "scan";
/// KAT logs and generated KAT files.
pub const KAT: &str = "kat";
/// The measured libraries.
pub const LIB: &str = "lib";
/// Run directories, each with its lock and copies of its results.
pub const RUNS: &str = "runs";
/// The pages of every system of a campaign, beside the datasets.
pub const SITE: &str = "site";

/// The record of `op` of an instance in `tree` (a stage's record tree),
/// relative to the dataset.
pub fn operation_file(tree: &str, algorithm: &str, label: &str, op: &str) -> String {
    format!("{tree}/{algorithm}/{label}__{op}.json")
}

/// An instance's static scan, relative to the dataset.
pub fn scan_file(algorithm: &str, label: &str) -> String {
    format!("{SCAN}/{algorithm}/{label}.json")
}

/// An instance's KAT log, relative to the dataset.
pub fn kat_log(algorithm: &str, label: &str) -> String {
    format!("{KAT}/{algorithm}/{label}.log")
}

/// The folder of an algorithm's KAT files, relative to the dataset.
pub fn kat_folder(algorithm: &str) -> String {
    format!("{KAT}/{algorithm}")
}

/// An instance's measured library, relative to the dataset.
pub fn library(algorithm: &str, label: &str) -> String {
    format!("{LIB}/{algorithm}/{label}.so")
}

/// A dataset directory on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatasetDir(PathBuf);

impl DatasetDir {
    pub fn new(root: impl Into<PathBuf>) -> DatasetDir {
        DatasetDir(root.into())
    }

    pub fn root(&self) -> &Path {
        &self.0
    }

    pub fn campaign(&self) -> PathBuf {
        self.0.join(CAMPAIGN)
    }

    pub fn build(&self) -> PathBuf {
        self.0.join(BUILD)
    }

    pub fn sizes(&self) -> PathBuf {
        self.0.join(SIZES)
    }

    pub fn survey(&self) -> PathBuf {
        self.0.join(SURVEY)
    }

    pub fn runs(&self) -> PathBuf {
        self.0.join(RUNS)
    }

    /// One of the dataset's trees (`TREES`).
    pub fn tree(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// Whether the directory holds a dataset (it has its `campaign.json`).
    pub fn exists(&self) -> bool {
        self.campaign().is_file()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_operation_paths_keep_their_published_shape() {
        assert_eq!(
            operation_file(RECORDS, "sign-23", "SHUTTLE-128", "keygen"),
            "records/sign-23/SHUTTLE-128__keygen.json"
        );
        assert_eq!(kat_log("kem-7", "A-1"), "kat/kem-7/A-1.log");
        assert_eq!(library("kem-7", "A-1"), "lib/kem-7/A-1.so");
    }
}
