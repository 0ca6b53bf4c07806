//! Which folders of a submission are its implementations: competition
//! packages (`Reference_Implementation/`, `Optimized_Implementation/`,
//! `Additional_Implementations/<x>/`), one folder per parameter set or one
//! for all, and variant folders beside shared code.

use std::path::{Path, PathBuf};

use super::folder::{has_c, Folder};

/// One implementation: its name, directory and source folders (one per
/// parameter set, or the directory itself).
pub(super) struct Impl {
    pub name: String,
    pub dir: PathBuf,
    pub per_set: bool,
    pub folders: Vec<Folder>,
    /// Set when each variant has a folder beside shared code (the folders
    /// then hold the shared files too, and sets keep the implementation's
    /// root).
    pub shared: Option<Shared>,
}

/// The code every variant of a variant-per-folder project builds.
pub(super) struct Shared {
    /// `sources` patterns of the shared folders, relative to the root.
    pub sources: Vec<String>,
    pub include_dirs: Vec<String>,
    pub notes: Vec<String>,
}

pub(super) fn implementations(dir: &Path) -> Vec<Impl> {
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    for (name, path) in subdirs(dir) {
        let lower = name.to_ascii_lowercase().replace([' ', '-'], "_");
        if lower.starts_with("reference_impl") {
            found.insert(0, ("reference".into(), path));
        } else if lower.starts_with("optimi") && lower.contains("impl") {
            found.push(("optimized".into(), path));
        } else if lower.starts_with("additional_impl") {
            for (sub, p) in subdirs(&path) {
                found.push((sanitize(&sub), p));
            }
        }
    }
    if found.is_empty() {
        if let Some(imp) = variant_folders(dir) {
            return vec![imp];
        }
        found.push(("reference".into(), dir.to_path_buf()));
    }
    found
        .into_iter()
        .map(|(name, dir)| {
            let sets: Vec<PathBuf> = subdirs(&dir)
                .into_iter()
                .map(|(_, p)| p)
                .filter(|p| has_c(p, 0))
                .collect();
            let direct = std::fs::read_dir(&dir)
                .into_iter()
                .flatten()
                .flatten()
                .any(|e| e.path().extension().is_some_and(|x| x == "c"));
            let per_set = !direct && !sets.is_empty();
            let folders = if per_set {
                sets.iter().map(|p| Folder::scan(p)).collect()
            } else {
                vec![Folder::scan(&dir)]
            };
            Impl {
                name,
                dir,
                per_set,
                folders,
                shared: None,
            }
        })
        .collect()
}

/// Folders (three levels deep at most, programs and tests aside) holding
/// an `api.h` and C code: the variants of a project that builds each
/// from its own folder.
fn api_folders(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    for (name, path) in subdirs(dir) {
        if super::folder::skipped_dir(&name) || path.is_symlink() {
            continue;
        }
        let has = |ext: &str| {
            std::fs::read_dir(&path)
                .into_iter()
                .flatten()
                .flatten()
                .any(|e| e.path().extension().is_some_and(|x| x == ext))
        };
        if path.join("api.h").is_file() && has("c") {
            out.push(path.clone());
        } else if depth < 2 {
            api_folders(&path, depth + 1, out);
        }
    }
}

/// A project with one folder per variant below its root (`src/<variant>/`
/// with `api.h`), beside code they share: the `.c` files of the folders
/// between the root and the variants, and the header folders there
/// (`include/`). None when the variants are the root's own subfolders
/// (a package with one folder per set, which needs nothing shared).
fn variant_folders(dir: &Path) -> Option<Impl> {
    let mut found = Vec::new();
    api_folders(dir, 0, &mut found);
    let parent = found.first()?.parent()?.to_path_buf();
    if found.len() < 2 || parent == dir || found.iter().any(|f| f.parent() != Some(&parent)) {
        return None;
    }
    let rel = |p: &Path| p.strip_prefix(dir).unwrap_or(p).display().to_string();
    let mut shared_dirs: Vec<PathBuf> = parent
        .ancestors()
        .take_while(|a| a.starts_with(dir))
        .map(Path::to_path_buf)
        .collect();
    for base in [dir, parent.as_path()] {
        for (name, path) in subdirs(base) {
            if ["include", "inc"].contains(&name.to_ascii_lowercase().as_str())
                && !shared_dirs.contains(&path)
            {
                shared_dirs.push(path);
            }
        }
    }
    let common = Folder::scan_shared(dir, &shared_dirs);
    let mut notes = Vec::new();
    for (name, path) in subdirs(&parent) {
        if !found.contains(&path) && has_c(&path, 0) && !super::folder::skipped_dir(&name) {
            notes.push(format!(
                "{}/ is not drafted: it has no api.h (a backend or helper the project's build may add; add its sources to each set's `sources` where it does)",
                rel(&path)
            ));
        }
    }
    let folders = found
        .iter()
        .map(|v| Folder::scan_variant(dir, v, &shared_dirs))
        .collect();
    Some(Impl {
        name: "reference".into(),
        dir: dir.to_path_buf(),
        per_set: true,
        folders,
        shared: Some(Shared {
            sources: common.source_patterns(),
            include_dirs: common.include_dirs(),
            notes,
        }),
    })
}

pub(super) fn subdirs(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut v: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .filter(|(n, _)| !n.starts_with('.'))
        .collect();
    v.sort();
    v
}

/// Letters, digits and `-_.+`, as labels and ids allow.
pub(crate) fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.+".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect()
}
