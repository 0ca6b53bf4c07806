//! Does an instance's source define every API function the adapter calls?
//! A textual check (`csource`), with namespacing macros expanded, used by
//! `pqbench validate` before anything is compiled.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::csource::{self, CFile, Macro};
use crate::plan::Instance;

/// An API function no source defines, and where it was expected.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Missing {
    pub symbol: String,
    /// `expected in <file>…` / `declared in <file>…`, plus a namespace hint.
    pub detail: String,
}

/// Scanned files, shared between the instances of one algorithm.
pub(crate) type Cache = BTreeMap<PathBuf, CFile>;

fn scan<'a>(cache: &'a mut Cache, p: &Path) -> Option<&'a CFile> {
    if !cache.contains_key(p) {
        let rel = p.file_name()?.to_string_lossy().into_owned();
        let f = CFile::read(p, &rel).ok()?;
        cache.insert(p.to_path_buf(), f);
    }
    cache.get(p)
}

/// The C files the sources include by quoted name (FrodoKEM's
/// `frodo640.c` renames the API with macros, then `#include "kem.c"`):
/// their definitions are the including file's, a few levels deep.
fn included_sources(sources: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut queue: Vec<(PathBuf, u8)> = sources.iter().map(|p| (p.clone(), 0)).collect();
    while let Some((file, depth)) = queue.pop() {
        if depth >= 3 {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        // Beside the file or below it: a name that climbs out (`..`) or is
        // absolute is not followed.
        let below = |n: &&String| {
            Path::new(n.as_str())
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)))
        };
        for name in csource::quoted_includes(&text)
            .iter()
            .filter(|n| n.ends_with(".c"))
            .filter(below)
        {
            let Some(p) = file.parent().map(|d| d.join(name)).filter(|p| p.is_file()) else {
                continue;
            };
            if !sources.contains(&p) && !out.contains(&p) {
                out.push(p.clone());
                queue.push((p, depth + 1));
            }
        }
    }
    out
}

const NIST_FUNCTIONS: [&str; 6] = [
    "crypto_sign_keypair",
    "crypto_sign_open",
    "crypto_sign",
    "crypto_kem_keypair",
    "crypto_kem_enc",
    "crypto_kem_dec",
];

/// The API functions (`stages::build::api_symbols`) that no source of
/// `inst` defines. Macros come from the sources and the headers of every
/// include directory. `show` renders a path for the message.
pub(crate) fn missing(
    inst: &Instance,
    cache: &mut Cache,
    show: &dyn Fn(&Path) -> String,
) -> Vec<Missing> {
    let mut files: Vec<PathBuf> = inst.sources.iter().map(|s| s.path.clone()).collect();
    files.extend(included_sources(&files));
    for d in &inst.include_dirs {
        let mut hs: Vec<PathBuf> = std::fs::read_dir(d)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "h"))
            .collect();
        hs.sort();
        files.extend(hs);
    }
    let scanned: Vec<(PathBuf, CFile)> = files
        .iter()
        .filter_map(|p| scan(cache, p).map(|f| (p.clone(), f.clone())))
        .collect();
    let macros: Vec<&Macro> = scanned.iter().flat_map(|(_, f)| f.macros.iter()).collect();
    let mut defined: BTreeMap<String, PathBuf> = BTreeMap::new();
    for (p, f) in scanned.iter().filter(|(_, f)| !f.is_header()) {
        for d in &f.defs {
            for n in csource::expansions(&d.name, d.via.as_deref(), &macros) {
                defined.entry(n).or_insert_with(|| p.clone());
            }
        }
    }
    let wanted = crate::toolchain::library::api_symbols(inst);
    let sibling = wanted.iter().find_map(|w| defined.get(w)).cloned();
    // A header may name an API function as a function-like macro over a
    // defined one (PQClean's ML-DSA: `crypto_sign(...)` is
    // `crypto_sign_ctx(..., NULL, 0, ...)`); the adapter includes the
    // header, so its calls reach the defined function.
    let by_macro = |sym: &str| {
        macros.iter().any(|m| {
            m.name == sym
                && m.params.is_some()
                && m.body
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .any(|w| defined.contains_key(w))
        })
    };
    let mut out = Vec::new();
    for sym in wanted
        .iter()
        .filter(|s| !defined.contains_key(*s) && !by_macro(s))
    {
        let declared = scanned.iter().find(|(_, f)| {
            f.decls
                .iter()
                .any(|d| csource::expansions(&d.name, d.via.as_deref(), &macros).contains(sym))
        });
        let mut detail = match (&sibling, declared) {
            (Some(p), _) => format!("expected in {}, beside the other API functions", show(p)),
            (None, Some((p, _))) => format!("declared in {}, defined in no source", show(p)),
            (None, None) => format!("looked in {} source files", inst.sources.len()),
        };
        // A namespace typo: the same function under another prefix.
        let base = NIST_FUNCTIONS.into_iter().find(|b| sym.ends_with(b));
        let mut others: Vec<&String> = base
            .map(|b| defined.keys().filter(|k| k.ends_with(b)).collect())
            .unwrap_or_default();
        // Macro-wrapped definitions also yield the bare name; show it only
        // when it is all there is.
        if others.len() > 1 {
            others.retain(|k| Some(k.as_str()) != base);
        }
        if !others.is_empty() {
            let names: Vec<&str> = others.iter().map(|s| s.as_str()).collect();
            detail.push_str(&format!(
                "; the sources define {}: check `namespace`",
                names.join(", ")
            ));
        }
        out.push(Missing {
            symbol: sym.clone(),
            detail,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::algorithm::{ApiFamily, RawAlgorithm};
    use crate::plan::{Binding, KatRng, LengthType, SourceFile};

    /// A plan instance built by hand from raw TOML pieces.
    fn instance(
        a: &RawAlgorithm,
        ns: Option<&str>,
        label: &str,
        sources: Vec<PathBuf>,
        include_dirs: Vec<PathBuf>,
    ) -> Instance {
        let binding = match (a.api, &a.ngcc, &a.nist) {
            (ApiFamily::Ngcc, n, _) => Binding::Ngcc {
                headers: n
                    .as_ref()
                    .map_or_else(|| vec!["api.h".into()], |n| n.headers.clone()),
            },
            (ApiFamily::Nist, _, n) => Binding::Nist {
                header: n
                    .as_ref()
                    .map_or_else(|| "api.h".into(), |n| n.header.clone()),
                namespace: ns
                    .map(String::from)
                    .or_else(|| n.as_ref().map(|n| n.namespace.clone()))
                    .unwrap_or_default(),
                suffix: String::new(),
                randombytes: n
                    .as_ref()
                    .map_or_else(|| "randombytes".into(), |n| n.randombytes.clone()),
                lengths: n
                    .as_ref()
                    .map_or(LengthType::UnsignedLongLong, |n| n.lengths),
                kat_rng: n.as_ref().map_or(KatRng::Builtin, |n| n.kat_rng),
                rng_init: None,
                signature_api: n
                    .as_ref()
                    .and_then(|n| n.signature_api.as_ref())
                    .map_or_else(Default::default, |s| *s.get_ref()),
            },
        };
        Instance {
            algorithm: a.id.get_ref().clone(),
            label: label.to_string(),
            implementation: String::new(),
            kind: a.kind,
            api: a.api,
            sources: sources
                .into_iter()
                .map(|p| SourceFile {
                    display: p.display().to_string(),
                    path: p,
                    ..SourceFile::default()
                })
                .collect(),
            include_dirs,
            defines: Vec::new(),
            binding,
            cpu_features: Vec::new(),
            libraries: Vec::new(),
            arch: Vec::new(),
            submitter_cflags: None,
            kat_records: 0,
            cmake: None,
            spec: Default::default(),
        }
    }

    #[test]
    fn namespaced_definitions_through_macros_count() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::write(p.join("ns.h"), "#define NS(x) P1_##x\n").unwrap();
        std::fs::write(
            p.join("s.c"),
            "#include \"ns.h\"\nint NS(crypto_sign_keypair)(unsigned char *a, unsigned char *b) { return 0; }\nint P1_crypto_sign(void) { return 0; }\n",
        )
        .unwrap();
        let raw: RawAlgorithm = crate::config::parse(
            Path::new("a.toml"),
            "id = \"a\"\nname = \"A\"\nkind = \"sign\"\napi = \"nist\"\n[nist]\nnamespace = \"P1_\"\n",
        )
        .unwrap();
        let inst = instance(
            &raw,
            None,
            "A-1",
            vec![p.join("s.c")],
            vec![p.to_path_buf()],
        );
        let show = |q: &Path| q.file_name().unwrap().to_string_lossy().into_owned();
        let m = missing(&inst, &mut Cache::new(), &show);
        assert_eq!(m.len(), 1, "{m:?}");
        assert_eq!(m[0].symbol, "P1_crypto_sign_open");
        assert!(
            m[0].detail.starts_with("expected in s.c"),
            "{}",
            m[0].detail
        );
    }

    #[test]
    fn an_api_function_named_by_a_macro_over_a_defined_one_counts() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::write(
            p.join("api.h"),
            "#define P1_crypto_sign(sm, smlen, m, mlen, sk) P1_crypto_sign_ctx(sm, smlen, m, mlen, 0, 0, sk)\n\
             #define P1_crypto_sign_open(m, ml, sm, sml, pk) P1_missing_ctx(m, ml, sm, sml, 0, 0, pk)\n",
        )
        .unwrap();
        std::fs::write(
            p.join("s.c"),
            "int P1_crypto_sign_keypair(void) { return 0; }\nint P1_crypto_sign_ctx(void) { return 0; }\n",
        )
        .unwrap();
        let raw: RawAlgorithm = crate::config::parse(
            Path::new("a.toml"),
            "id = \"a\"\nname = \"A\"\nkind = \"sign\"\napi = \"nist\"\n[nist]\nnamespace = \"P1_\"\n",
        )
        .unwrap();
        let inst = instance(
            &raw,
            None,
            "A-1",
            vec![p.join("s.c")],
            vec![p.to_path_buf()],
        );
        let show = |q: &Path| q.file_name().unwrap().to_string_lossy().into_owned();
        let m = missing(&inst, &mut Cache::new(), &show);
        // crypto_sign reaches a defined function; crypto_sign_open's macro
        // names one that nothing defines, so it is still missing.
        let names: Vec<&str> = m.iter().map(|x| x.symbol.as_str()).collect();
        assert_eq!(names, ["P1_crypto_sign_open"], "{m:?}");
    }
}
