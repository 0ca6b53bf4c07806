//! What building an instance works with: the environment of a build (its
//! compiler, the support sources, the cache, what its jobs may read) and
//! the objects a build links, shared by the library build and the CMake
//! backend.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Compiler;
use crate::cache::Cache;
use crate::plan::Instance;

/// What building needs: the compiler, the support code, the cache, and the
/// project root (stripped from logs, which are published).
#[derive(Clone, Copy)]
pub(crate) struct BuildEnv<'a> {
    pub compiler: &'a Compiler,
    /// pqbench's support sources (adapters, DRBG): written out, never
    /// compiled as tools for a build.
    pub support_dir: &'a Path,
    pub cache: &'a Cache,
    pub project_root: &'a Path,
}

/// What a compiler job of `inst` may read besides the system's toolchain
/// and its scratch folder: the folders of the instance's sources, its
/// include directories and its CMake root (each with everything beneath
/// it) and pqbench's support sources. Not the rest of the machine, nor the
/// project's other submissions, its output or the cache.
pub(crate) fn compiler_reads(project_root: &Path, inst: &Instance, support: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = inst
        .sources
        .iter()
        .filter_map(|s| s.path.parent().map(Path::to_path_buf))
        .chain(inst.include_dirs.iter().cloned())
        .chain(inst.cmake.iter().map(|c| c.root.clone()))
        .collect();
    if dirs.is_empty() {
        dirs.push(project_root.to_path_buf());
    }
    dirs.sort();
    dirs.dedup();
    // A folder inside another adds nothing to it.
    let mut roots: Vec<PathBuf> = Vec::new();
    for d in dirs {
        if !roots.iter().any(|r| d.starts_with(r)) {
            roots.push(d);
        }
    }
    roots.push(support.to_path_buf());
    roots
}

impl BuildEnv<'_> {
    /// What a compiler job of this build may read besides the system's
    /// toolchain and its scratch folder (`compiler_reads`).
    pub(crate) fn reads(&self, inst: &Instance) -> Vec<PathBuf> {
        compiler_reads(self.project_root, inst, self.support_dir)
    }

    /// A path relative to the project root, for records.
    pub(crate) fn display_path(&self, path: &Path) -> String {
        path.strip_prefix(self.project_root)
            .unwrap_or(path)
            .display()
            .to_string()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObjectRef {
    /// The source file, relative to the project root (support files by name).
    pub source: String,
    /// Key of the object in the cache (`Cache::object_path`).
    pub key: String,
    /// True for the submission's (and its components') own code; false for
    /// pqbench's adapter and DRBG.
    pub submission: bool,
}
