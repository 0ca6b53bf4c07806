//! The API header a parameter set's generator (or checker) calls the
//! library through: of the headers its `main` file includes by quoted
//! name, the one that declares a NIST key-generation function. Code with
//! one header per set whose functions carry the set's name
//! (`crypto_kem_keypair_Frodo640` in `api_frodo640.h`) is bound through
//! it: the draft names that header and the name's tail for the set.

use std::path::{Path, PathBuf};

use super::graph::Unit;
use crate::config::algorithm::Kind;
use crate::import::csource::{quoted_includes, CFile};

/// A set's API header (relative to the build's root) and the key-pair
/// function it declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ApiHeader {
    pub rel: String,
    pub keypair: String,
}

impl ApiHeader {
    /// The namespace and suffix around the kind's key-pair name
    /// (`crypto_kem_keypair_Frodo640` → `("", "_Frodo640")`).
    pub(crate) fn affixes(&self) -> Option<(String, String)> {
        Kind::ALL.into_iter().find_map(|k| {
            let kp = k.def().nist_keypair()?;
            let at = self.keypair.find(kp)?;
            let tail = &self.keypair[at + kp.len()..];
            (tail.is_empty() || tail.starts_with('_'))
                .then(|| (self.keypair[..at].to_string(), tail.to_string()))
        })
    }
}

/// The header `main` includes that declares a key-pair function, looked
/// up as the compiler does for a quoted name: beside `main`, then in its
/// call's include directories. Only files inside `copy` (the build's
/// canonical root) are read.
pub(super) fn api_header(main: &Unit, copy: &Path) -> Option<ApiHeader> {
    let text = read(&main.source)?;
    let dirs: Vec<&Path> = main
        .source
        .parent()
        .into_iter()
        .chain(main.call.includes.iter().map(|p| p.as_path()))
        .collect();
    for name in quoted_includes(&text) {
        let Some(path) = dirs.iter().map(|d| d.join(&name)).find(|p| {
            p.canonicalize()
                .is_ok_and(|c| c.starts_with(copy) && c.is_file())
        }) else {
            continue;
        };
        let Some(code) = read(&path) else { continue };
        let rel = path
            .canonicalize()
            .ok()?
            .strip_prefix(copy)
            .ok()?
            .to_string_lossy()
            .replace('\\', "/");
        let file = CFile::parse(&rel, &code);
        let keypair = file.decls.iter().map(|d| &d.name).find(|n| {
            Kind::ALL
                .into_iter()
                .filter_map(|k| k.def().nist_keypair())
                .any(|kp| n.contains(kp))
        });
        if let Some(keypair) = keypair {
            return Some(ApiHeader {
                rel,
                keypair: keypair.clone(),
            });
        }
    }
    None
}

/// Whether `file`, or a header it includes by quoted name from the tree
/// (beside it or in `dirs`, a few levels deep, never outside `tree`), has
/// one of `marks` in an include line.
pub(super) fn includes_any(file: &Path, dirs: &[PathBuf], tree: &Path, marks: &[&str]) -> bool {
    let Ok(tree) = tree.canonicalize() else {
        return false;
    };
    let mut queue = vec![(file.to_path_buf(), 0)];
    let mut seen = std::collections::BTreeSet::new();
    while let Some((f, depth)) = queue.pop() {
        if !seen.insert(f.clone()) {
            continue;
        }
        let Some(text) = read(&f) else { continue };
        let hit = text.lines().any(|l| {
            let l = l.trim_start();
            l.starts_with('#') && l.contains("include") && marks.iter().any(|m| l.contains(m))
        });
        if hit {
            return true;
        }
        if depth >= 4 {
            continue;
        }
        for name in quoted_includes(&text) {
            let found = f
                .parent()
                .into_iter()
                .chain(dirs.iter().map(PathBuf::as_path))
                .map(|d| d.join(&name))
                .find(|p| {
                    p.canonicalize()
                        .is_ok_and(|c| c.starts_with(&tree) && c.is_file())
                });
            queue.extend(found.map(|p| (p, depth + 1)));
        }
    }
    false
}

/// Whether a file that the source includes by quoted name, beside it and
/// inside `copy`, defines `main` (a checker whose body is a shared
/// header).
pub(super) fn includes_main(source: &Path, copy: &Path) -> bool {
    let Some(text) = read(source) else {
        return false;
    };
    quoted_includes(&text).iter().any(|name| {
        let Some(p) = source.parent().map(|d| d.join(name)) else {
            return false;
        };
        let inside = p
            .canonicalize()
            .is_ok_and(|c| c.starts_with(copy) && c.is_file());
        inside && read(&p).is_some_and(|code| CFile::parse(name, &code).defines_fn("main"))
    })
}

fn read(p: &Path) -> Option<String> {
    let bytes = crate::fsutil::foreign::read_regular(p, 16 << 20).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_with_the_set_in_its_tail_splits_into_namespace_and_suffix() {
        let h = |k: &str| ApiHeader {
            rel: "src/api.h".into(),
            keypair: k.into(),
        };
        assert_eq!(
            h("crypto_kem_keypair_Frodo640").affixes(),
            Some((String::new(), "_Frodo640".into()))
        );
        assert_eq!(
            h("PQCLEAN_X_crypto_sign_keypair").affixes(),
            Some(("PQCLEAN_X_".into(), String::new()))
        );
        // A longer word is no suffix.
        assert_eq!(h("crypto_kem_keypairs").affixes(), None);
    }
}
