//! Where a project's directories are: the root given with `-C` and the
//! folders under it that a plan reads.

use std::path::{Path, PathBuf};

/// Where a project's directories are.
#[derive(Debug, Clone)]
pub struct Project {
    pub root: PathBuf,
}

impl Project {
    pub fn new(root: &Path) -> std::io::Result<Project> {
        Ok(Project {
            root: root.canonicalize()?,
        })
    }
    pub(crate) fn algorithms_dir(&self) -> PathBuf {
        self.root.join("algorithms")
    }
    pub(crate) fn campaign_file(&self, name: &str) -> PathBuf {
        self.root.join("campaigns").join(format!("{name}.toml"))
    }
    pub(crate) fn output_dir(&self) -> PathBuf {
        self.root.join("output")
    }
    /// Every algorithm id with a TOML in `algorithms/`.
    pub(crate) fn algorithm_ids(&self) -> Vec<String> {
        list_stems(&self.algorithms_dir())
    }
}

/// The stems of the TOML files in `dir`, sorted.
pub(super) fn list_stems(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let p = e.path();
            (p.extension()? == "toml" && p.is_file())
                .then(|| p.file_stem().map(|s| s.to_string_lossy().into_owned()))?
        })
        .collect();
    v.sort();
    v
}

/// `p` relative to the project root, for messages.
pub(super) fn project_rel(project: &Project, p: &Path) -> String {
    p.strip_prefix(&project.root)
        .unwrap_or(p)
        .display()
        .to_string()
}
