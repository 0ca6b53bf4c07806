//! Sources the build wrote itself (a packaging script that makes one
//! folder per set, a configured header): read from the build's copy
//! without following a link, so that the draft can name them and the
//! import keeps them beside the tree.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::fsutil::foreign;

/// Path relative to the tree → bytes.
pub(crate) type Files = BTreeMap<String, Vec<u8>>;

/// What a build may add to an import: more is a build that writes data,
/// not sources.
const MAX_BYTES: u64 = 64 << 20;
const MAX_FILES: usize = 20_000;

const SOURCE: &[&str] = &[
    "c", "h", "s", "S", "inc", "cc", "cpp", "cxx", "hh", "hpp", "hxx",
];
const HEADER: &[&str] = &["h", "inc", "hh", "hpp", "hxx"];

/// The source files the build wrote that `tree` lacks: for a compiled unit
/// the build made, every source under the topmost folder the build made
/// above it (or, in a folder of the tree, that folder's new files); for an
/// include directory, its new headers. `copy` is the build's copy of the
/// tree; paths are relative to both.
pub(super) fn collect(
    copy: &Path,
    tree: &Path,
    units: &[String],
    includes: &[String],
    notes: &mut Vec<String>,
) -> Files {
    let mut roots: Vec<(PathBuf, bool)> = Vec::new();
    for u in units.iter().filter(|u| !tree.join(u).exists()) {
        let mut dir = Path::new(u).parent().unwrap_or(Path::new("")).to_path_buf();
        if dir.as_os_str().is_empty() || tree.join(&dir).is_dir() {
            roots.push((dir, false));
            continue;
        }
        while let Some(up) = dir
            .parent()
            .filter(|p| !p.as_os_str().is_empty() && !tree.join(p).is_dir())
        {
            dir = up.to_path_buf();
        }
        roots.push((dir, true));
    }
    // Many units share a folder: each is walked once.
    roots.sort();
    roots.dedup();
    let mut out = Files::new();
    let mut budget = Budget {
        files: MAX_FILES,
        bytes: MAX_BYTES,
        over: false,
    };
    for (dir, deep) in roots {
        gather(copy, tree, &dir, deep, SOURCE, &mut out, &mut budget);
    }
    for inc in includes {
        gather(
            copy,
            tree,
            Path::new(inc),
            false,
            HEADER,
            &mut out,
            &mut budget,
        );
    }
    if budget.over {
        notes.push(format!(
            "the build wrote more sources than an import keeps ({MAX_FILES} files, {} MiB): the rest are left out",
            MAX_BYTES >> 20
        ));
    }
    out
}

/// What is left of what an import keeps.
struct Budget {
    files: usize,
    bytes: u64,
    /// A file was left out for want of it.
    over: bool,
}

/// Adds the new files of `dir` (and of its folders when `deep`) whose
/// extension is one of `exts`, within `budget`.
fn gather(
    copy: &Path,
    tree: &Path,
    dir: &Path,
    deep: bool,
    exts: &[&str],
    out: &mut Files,
    budget: &mut Budget,
) {
    // A hidden folder is the build's own (meson's, CMake's), and the
    // import copies no hidden file.
    let hidden = dir
        .components()
        .any(|c| c.as_os_str().to_string_lossy().starts_with('.'));
    let Ok(rd) = std::fs::read_dir(copy.join(dir)) else {
        return;
    };
    if hidden {
        return;
    }
    let mut entries: Vec<_> = rd.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries
        .iter()
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
    {
        let rel = dir.join(e.file_name());
        // The build's own links are never followed.
        let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        if meta.is_dir() && deep {
            gather(copy, tree, &rel, deep, exts, out, budget);
            continue;
        }
        let wanted = rel
            .extension()
            .is_some_and(|x| exts.contains(&x.to_string_lossy().as_ref()));
        if !meta.is_file() || !wanted || tree.join(&rel).exists() {
            continue;
        }
        let key = rel.to_string_lossy().replace('\\', "/");
        if out.contains_key(&key) {
            continue;
        }
        if budget.files == 0 || meta.len() > budget.bytes {
            budget.over = true;
            continue;
        }
        if let Ok(bytes) = foreign::read_regular(&e.path(), budget.bytes) {
            budget.files -= 1;
            budget.bytes -= bytes.len() as u64;
            out.insert(key, bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_the_build_made_is_kept_whole_and_a_folder_of_the_tree_gives_its_new_files() {
        let tree = tempfile::tempdir().unwrap();
        let copy = tempfile::tempdir().unwrap();
        for (root, files) in [
            (tree.path(), &["src/a.c", "Makefile"][..]),
            (
                copy.path(),
                &[
                    "src/a.c",
                    "src/gen.c",
                    "src/gen.o",
                    "Makefile",
                    "out/set1/x.c",
                    "out/set1/inc/p.h",
                    "out/set1/x.o",
                    "out/set2/x.c",
                    "cfg/config.h",
                    "cfg/other.c",
                ][..],
            ),
        ] {
            for f in files {
                let p = root.join(f);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, f.as_bytes()).unwrap();
            }
        }
        std::os::unix::fs::symlink("/etc/hostname", copy.path().join("out/set1/link.h")).unwrap();
        let units = ["src/a.c", "src/gen.c", "out/set1/x.c"].map(String::from);
        let mut notes = Vec::new();
        let got = collect(
            copy.path(),
            tree.path(),
            &units,
            &["cfg".into()],
            &mut notes,
        );
        let names: Vec<&str> = got.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "cfg/config.h",
                "out/set1/inc/p.h",
                "out/set1/x.c",
                "out/set2/x.c",
                "src/gen.c"
            ]
        );
        assert_eq!(got["src/gen.c"], b"src/gen.c");
        assert!(notes.is_empty());
    }
}
