//! Rules for names that become file names, directory names or URLs
//! (campaigns, systems, algorithm ids, labels, implementations, components),
//! for names pasted into C (defines, symbols), and the check that every
//! output path stays inside `output/`.

use std::path::{Component, Path, PathBuf};

use crate::error::ConfigError;

/// How a name may be written, for help lines.
pub(crate) const NAME_RULE: &str =
    "use letters, digits and - _ . + (at most 64), starting with a letter or digit";

const MAX_NAME: usize = 64;

/// Why `name` cannot be a file or directory name, if it cannot: only
/// letters, digits and `-_.+`, starting with a letter or digit (so never
/// `.`, `..`, a hidden file, an absolute path, a `/` or a `|` that would
/// break a page's tables).
pub(crate) fn name_problem(name: &str) -> Option<String> {
    let first = name.chars().next()?;
    if name.chars().count() > MAX_NAME {
        return Some(format!("is longer than {MAX_NAME} characters"));
    }
    let bad: String = name
        .chars()
        .filter(|c| !(c.is_ascii_alphanumeric() || "-_.+".contains(*c)))
        .collect();
    if !bad.is_empty() {
        let mut shown: Vec<char> = bad.chars().collect();
        shown.dedup();
        let shown: String = shown.into_iter().collect();
        return Some(format!(
            "has characters unsafe in file names ({})",
            shown.escape_debug()
        ));
    }
    if !first.is_ascii_alphanumeric() {
        return Some("must start with a letter or digit".into());
    }
    None
}

/// `name_problem`, counting the empty name as a problem.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("is empty".into());
    }
    name_problem(name).map_or(Ok(()), Err)
}

/// Checks a campaign name given on the command line (it names
/// `campaigns/<name>.toml` and `output/<name>/`).
pub(crate) fn check_campaign_name(name: &str) -> Result<(), ConfigError> {
    check_name(name).map_err(|why| {
        ConfigError::new(format!("campaign name `{name}` {why}")).help(format!(
            "give the name of a file in campaigns/ without `.toml`; {NAME_RULE}"
        ))
    })
}

/// Letters, digits and `_`, not starting with a digit: what is pasted into
/// C as a symbol or macro name.
pub(crate) fn is_c_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// True when `path`, with every link in its existing part resolved, lies
/// inside `root` (also resolved). A path not yet created is judged by its
/// deepest existing ancestor plus the rest, which must be plain names.
pub(crate) fn resolves_inside(root: &Path, path: &Path) -> bool {
    let (Some(real_root), Some(real)) = (resolve(root), resolve(path)) else {
        return false;
    };
    real.starts_with(real_root)
}

fn resolve(path: &Path) -> Option<PathBuf> {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    while existing.symlink_metadata().is_err() {
        rest.push(existing.file_name()?.to_os_string());
        if !existing.pop() {
            return None;
        }
    }
    let mut out = existing.canonicalize().ok()?;
    for part in rest.iter().rev() {
        match Path::new(part).components().next() {
            Some(Component::Normal(_)) => out.push(part),
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_would_leave_their_directory_are_refused() {
        for good in ["demo", "x86_1", "SIGN-1.avx2", "a+b", "9lives"] {
            assert_eq!(check_name(good), Ok(()), "{good}");
        }
        for bad in [
            "", "..", ".hidden", "../x", "/tmp/x", "a/b", "a|b", "a b", "-x",
        ] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        assert!(check_name(&"a".repeat(65)).is_err());
        assert_eq!(
            check_name("a|b/c").unwrap_err(),
            "has characters unsafe in file names (|/)"
        );
    }

    #[test]
    fn c_identifiers() {
        assert!(is_c_identifier("PQB_X1"));
        assert!(is_c_identifier("_x"));
        for bad in ["", "1x", "a-b", "a b", "x); y("] {
            assert!(!is_c_identifier(bad), "{bad}");
        }
    }

    #[test]
    fn paths_through_links_are_judged_where_they_lead() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("output");
        std::fs::create_dir_all(out.join("c")).unwrap();
        assert!(resolves_inside(&out, &out.join("c/local/records")));
        assert!(!resolves_inside(&out, &d.path().join("elsewhere")));
        std::os::unix::fs::symlink(d.path(), out.join("c/escape")).unwrap();
        assert!(!resolves_inside(&out, &out.join("c/escape/x")));
    }
}
