//! Every file and folder of a dataset (`output/<campaign>/<system>/`),
//! named once. Paths inside records are relative to the dataset, so a
//! published dataset carries no machine paths.

/// `campaign.json`: the run as a whole.
pub(crate) const CAMPAIGN: &str = "campaign.json";
/// `build.json`: one record per instance.
pub(crate) const BUILD: &str = "build.json";
/// `sizes.json`: sizes of every instance and the audit.
pub(crate) const SIZES: &str = "sizes.json";
/// `survey.json`: the symmetric-primitive verdicts.
pub(crate) const SURVEY: &str = "survey.json";
/// Present while a run writes the dataset's evidence: a dataset that has it
/// was left half-written by a run that stopped, and no page is made from it.
pub(crate) const WRITING: &str = ".writing";
/// A run directory's lock file.
pub(crate) const LOCK: &str = "lock.json";
/// The dataset's top-level files, in the order they are published.
pub(crate) const TOP_FILES: [&str; 4] = [CAMPAIGN, BUILD, SIZES, SURVEY];

/// Timing records, one per instance and operation.
pub(crate) const RECORDS: &str = "records";
/// Helper profiles, one per instance and operation.
pub(crate) const PROFILE: &str = "profile";
/// Instruction counts, one per instance and operation.
pub(crate) const COUNT: &str = "count";
/// Constant-time checks, one per instance and operation.
pub(crate) const CT: &str = "ct";
/// Timing tests of a secret key's influence, one per instance and operation.
pub(crate) const LEAK: &str = "leak";
/// Static scans, one per instance.
pub(crate) const SCAN: &str = "scan";
/// Differential checks on a fresh start, one per parameter set.
pub(crate) const DIFFERENTIAL: &str = "differential";
/// KAT logs and generated KAT files.
pub(crate) const KAT: &str = "kat";
/// The measured libraries.
pub(crate) const LIB: &str = "lib";
/// Run directories, each with its lock and copies of its results.
pub(crate) const RUNS: &str = "runs";
/// The dimension of a campaign's further compiler × flag-profile
/// combinations, and so the folder of their datasets
/// (`matrix/<compiler>.<profile>/`, see [`child_dir`]).
pub(crate) const MATRIX: &str = "matrix";
/// The pages of every system of a campaign, beside the datasets.
pub(crate) const SITE: &str = "site";
/// A dataset's folders that are neither a stage's records nor a further
/// dataset's: no dimension may take their names.
pub(crate) const RESERVED: [&str; 4] = [KAT, LIB, RUNS, SITE];

/// The folder of a further dataset, relative to the dataset of the run
/// that made it: `<dimension>/<name>`. Names that could leave the dataset
/// are refused.
pub(crate) fn child_dir(dimension: &str, name: &str) -> anyhow::Result<String> {
    safe_component(dimension)?;
    safe_component(name)?;
    Ok(format!("{dimension}/{name}"))
}

/// The record of `op` of an instance in `tree` (a stage's record tree),
/// relative to the dataset.
pub(crate) fn operation_file(tree: &str, algorithm: &str, label: &str, op: &str) -> String {
    format!("{tree}/{algorithm}/{label}__{op}.json")
}

/// An instance's static scan, relative to the dataset.
pub(crate) fn scan_file(algorithm: &str, label: &str) -> String {
    format!("{SCAN}/{algorithm}/{label}.json")
}

/// The differential check of a parameter set, under its first instance.
pub(crate) fn differential_file(algorithm: &str, label: &str) -> String {
    format!("{DIFFERENTIAL}/{algorithm}/{label}.json")
}

/// An instance's KAT log, relative to the dataset.
pub(crate) fn kat_log(algorithm: &str, label: &str) -> String {
    format!("{KAT}/{algorithm}/{label}.log")
}

/// The folder of an algorithm's KAT files, relative to the dataset.
pub(crate) fn kat_folder(algorithm: &str) -> String {
    format!("{KAT}/{algorithm}")
}

/// An instance's measured library, relative to the dataset.
pub(crate) fn library(algorithm: &str, label: &str) -> String {
    format!("{LIB}/{algorithm}/{label}.so")
}

/// Names from records become file names: refuse anything that could leave
/// the site directory or hide a file.
pub(crate) fn safe_component(name: &str) -> anyhow::Result<()> {
    let ok = !name.is_empty()
        && !name.starts_with('.')
        && !name.contains(['/', '\\', '\0'])
        && std::path::Path::new(name).components().count() == 1;
    if !ok {
        anyhow::bail!("`{name}` cannot be used as a file name in the site");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_names_are_refused() {
        for bad in ["", "..", ".x", "a/b", "a\\b"] {
            assert!(safe_component(bad).is_err(), "{bad}");
        }
        assert!(safe_component("sign-23").is_ok());
    }

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
