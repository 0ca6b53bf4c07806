//! `differential/<id>/<label>.json`: the KAT files of every implementation
//! of one parameter set, generated from one fresh start drawn for the run
//! (stage `differential`), their digests, and whether they agree. The
//! record sits under the parameter set's first implementation; `pqbench
//! check` recomputes the verdict from the recorded digests.

use serde::{Deserialize, Serialize};

/// The differential check of one parameter set on one system.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DifferentialRecord {
    pub algorithm: String,
    pub parameter_set: String,
    /// The 48 bytes replacing the KAT file's fixed start, in hex.
    pub start: String,
    /// KAT records generated per implementation.
    pub records: u32,
    /// Every implementation's file, the record's own instance first.
    pub files: Vec<FreshKat>,
    pub agree: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_difference: Option<Difference>,
}

/// One implementation's KAT file from the fresh start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FreshKat {
    pub label: String,
    pub implementation: String,
    /// The KAT runner's status (`PASS` when every record's checks passed).
    pub status: String,
    pub bytes: u64,
    pub sha256: String,
    /// sha256 of each KAT record (the blocks holding a count), in order.
    pub record_sha256: Vec<String>,
}

/// The first disagreement: two implementations and the first record
/// (count) whose digests differ.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Difference {
    pub labels: [String; 2],
    pub count: u64,
}

/// The first disagreement of `files` with the first of them, or None when
/// every file has the same digest and length. A file that agrees on every
/// record it shares with the first but is longer or shorter differs at the
/// first record only one of them has.
pub fn first_difference(files: &[FreshKat]) -> Option<Difference> {
    let first = files.first()?;
    files.iter().skip(1).find_map(|f| {
        if f.sha256 == first.sha256 && f.bytes == first.bytes {
            return None;
        }
        let shared = f.record_sha256.len().min(first.record_sha256.len());
        let count = (0..shared)
            .find(|&i| f.record_sha256[i] != first.record_sha256[i])
            .unwrap_or(shared);
        Some(Difference {
            labels: [first.label.clone(), f.label.clone()],
            count: count as u64,
        })
    })
}

impl super::folder::FolderRecord for DifferentialRecord {
    const DIR: &'static str = super::layout::DIFFERENTIAL;

    /// Filed under the instance whose file it is: the group's first.
    fn key(&self) -> super::folder::OpKey {
        let owner = self.files.first().map_or("", |f| f.label.as_str());
        (self.algorithm.clone(), owner.to_string(), String::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(label: &str, records: &[&str]) -> FreshKat {
        FreshKat {
            label: label.into(),
            implementation: label.into(),
            status: "PASS".into(),
            bytes: records.len() as u64,
            sha256: records.concat(),
            record_sha256: records.iter().map(|r| r.to_string()).collect(),
        }
    }

    #[test]
    fn the_first_difference_names_the_pair_and_the_first_differing_count() {
        let a = file("A", &["r0", "r1", "r2"]);
        assert_eq!(
            first_difference(&[a.clone(), file("B", &["r0", "r1", "r2"])]),
            None
        );
        let d = first_difference(&[
            a.clone(),
            file("B", &["r0", "r1", "r2"]),
            file("C", &["r0", "x1", "r2"]),
        ]);
        assert_eq!(
            d,
            Some(Difference {
                labels: ["A".into(), "C".into()],
                count: 1
            })
        );
        // A shorter file that agrees on what it has differs where it ends.
        let d = first_difference(&[a, file("B", &["r0", "r1"])]).unwrap();
        assert_eq!(d.count, 2);
        assert_eq!(first_difference(&[]), None);
    }
}
