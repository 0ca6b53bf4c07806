//! Path checks for user-written TOML: relative paths that stay inside their
//! root, and source globs with excludes.

use std::path::{Component, Path, PathBuf};

/// Joins `rel` onto `base` lexically and checks the result stays inside
/// `root`. Symlinks are resolved when the path exists, so a link pointing
/// outside is caught too.
pub(crate) fn contained(root: &Path, base: &Path, rel: &str) -> Result<PathBuf, String> {
    let relp = Path::new(rel);
    if relp.is_absolute() {
        return Err(format!("`{rel}` is an absolute path"));
    }
    let mut out = base.to_path_buf();
    for comp in relp.components() {
        match comp {
            Component::ParentDir => {
                if !out.pop() {
                    return Err(format!("`{rel}` leaves the file system root"));
                }
            }
            Component::Normal(c) => out.push(c),
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => {
                return Err(format!("`{rel}` is an absolute path"))
            }
        }
    }
    if !out.starts_with(root) {
        return Err(format!("`{rel}` points outside {}", root.display()));
    }
    // Links are followed as far as the path exists, so a link anywhere on
    // the way out is caught even before the rest is created.
    if !super::names::resolves_inside(root, &out) {
        return Err(format!(
            "`{rel}` resolves through a link to a place outside {}",
            root.display()
        ));
    }
    Ok(out)
}

/// Expands source patterns under `dir` (sorted, deduplicated), dropping
/// those matching an exclude pattern (matched against the path relative to
/// `dir` and against the bare file name). A match that resolves through a
/// link to a place outside `within` is refused before anything reads it:
/// pqbench hashes sources with its own rights, and would record the
/// digest, size and times of a file the submission may not read.
pub(crate) fn expand_sources(
    dir: &Path,
    within: &Path,
    patterns: &[String],
    excludes: &[String],
) -> Result<Vec<PathBuf>, String> {
    let excludes = excludes
        .iter()
        .map(|p| glob::Pattern::new(p).map_err(|e| format!("bad exclude pattern `{p}`: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let mut found = Vec::new();
    for pattern in patterns {
        let full = dir.join(pattern);
        let full = full.to_string_lossy();
        let matches: Vec<PathBuf> = glob::glob(&full)
            .map_err(|e| format!("bad source pattern `{pattern}`: {e}"))?
            .filter_map(|r| r.ok())
            .filter(|p| p.is_file())
            .collect();
        if matches.is_empty() {
            return Err(format!("`{pattern}` matches no file in {}", dir.display()));
        }
        found.extend(matches);
    }
    found.retain(|p| {
        let rel = p.strip_prefix(dir).unwrap_or(p);
        let name = p.file_name().map(Path::new).unwrap_or(rel);
        !excludes
            .iter()
            .any(|x| x.matches_path(rel) || x.matches_path(name))
    });
    found.sort();
    found.dedup();
    if let Some(out) = found
        .iter()
        .find(|p| !super::names::resolves_inside(within, p))
    {
        return Err(format!(
            "`{}` resolves through a link to a place outside {}; sources stay inside it (copy the file in, or exclude it)",
            out.strip_prefix(dir).unwrap_or(out).display(),
            within.display()
        ));
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parent_dirs_may_not_escape_the_root() {
        let root = Path::new("/p/algorithms");
        let base = Path::new("/p/algorithms");
        assert_eq!(
            contained(root, base, "x/./y").unwrap(),
            PathBuf::from("/p/algorithms/x/y")
        );
        assert!(contained(root, base, "x/../y").is_ok());
        assert!(contained(root, base, "../secrets").is_err());
        assert!(contained(root, base, "/etc").is_err());
    }
}
