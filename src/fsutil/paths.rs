//! Path arithmetic over folders: sorted listings and lexical relative
//! paths (pages link datasets, bundles name files, both by relative path).

use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result};

/// The entries of `dir`, sorted.
pub(crate) fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()
        .with_context(|| format!("reading {}", dir.display()))?;
    v.sort();
    Ok(v)
}

/// Lexical absolute form: `..` and `.` resolved without touching the file
/// system, so paths that do not exist yet (the site) work too.
fn normalized(p: &Path) -> Result<PathBuf> {
    let abs = std::path::absolute(p).with_context(|| format!("resolving {}", p.display()))?;
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Ok(out)
}

/// `to` relative to the directory `from`, `/`-separated.
pub(crate) fn relative(from: &Path, to: &Path) -> Result<String> {
    let (from, to) = (normalized(from)?, normalized(to)?);
    let f: Vec<Component> = from.components().collect();
    let t: Vec<Component> = to.components().collect();
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_string(); f.len() - common];
    parts.extend(
        t[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    Ok(if parts.is_empty() {
        ".".into()
    } else {
        parts.join("/")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        let r = |a: &str, b: &str| relative(Path::new(a), Path::new(b)).unwrap();
        assert_eq!(r("/o/demo/site", "/o/demo/local"), "../local");
        assert_eq!(r("/p/site", "/p/data/x86_1"), "../data/x86_1");
        assert_eq!(r("/p/site/", "/p/site/../data/./a"), "../data/a");
        assert_eq!(r("/p", "/p"), ".");
    }
}
