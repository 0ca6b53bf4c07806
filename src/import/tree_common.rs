//! The shared parts of a public tree as an implementation sees them: which
//! `common/` headers its `#include`s reach (directly or through other
//! common headers), the common sources behind them (each a component,
//! compiled with the flags of the implementation that uses it), the link
//! symbol `randombytes.h` renames the call to, and the scheme's own KAT
//! RNG (`nistkat-rng`) with its init function and argument shape.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::csource::CFile;
use super::folder::Folder;
use crate::config::algorithm::InitArgs;

/// `common/`, scanned once.
pub(super) struct Common {
    pub dir: PathBuf,
    /// Every `.c` and `.h` in it and in its subfolders (`keccak4x/`), by
    /// path in `common/`.
    pub files: Vec<CFile>,
    /// Assembly sources (`keccak2x/feat.S`) with the symbols they export.
    pub asm: Vec<(String, BTreeSet<String>)>,
}

impl Common {
    pub(super) fn scan(dir: &Path) -> Common {
        let mut common = Common {
            dir: dir.to_path_buf(),
            files: Vec::new(),
            asm: Vec::new(),
        };
        common.scan_dir(dir, 0);
        common.files.sort_by(|a, b| a.rel.cmp(&b.rel));
        common.asm.sort();
        common
    }

    fn scan_dir(&mut self, dir: &Path, depth: usize) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = e.path();
            let rel = path
                .strip_prefix(&self.dir)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            if path.is_dir() && depth < 2 {
                self.scan_dir(&path, depth + 1);
            } else if !path.is_file() {
            } else if rel.ends_with(".c") || rel.ends_with(".h") {
                if let Ok(f) = CFile::read(&path, &rel) {
                    self.files.push(f);
                }
            } else if rel.ends_with(".S") || rel.ends_with(".s") {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                self.asm.push((rel, asm_globals(&text)));
            }
        }
    }

    fn file(&self, name: &str) -> Option<&CFile> {
        self.files.iter().find(|f| f.rel == name)
    }

    /// What `#include "name"` in common file `from` reaches: beside `from`
    /// first, as the compiler looks, then from `common/` itself.
    fn resolve(&self, from: &str, name: &str) -> Option<String> {
        let beside = match from.rsplit_once('/') {
            Some((dir, _)) => format!("{dir}/{name}"),
            None => name.to_string(),
        };
        [beside, name.to_string()]
            .into_iter()
            .find(|n| self.file(n).is_some())
    }

    /// The common headers the folder's files include, and the headers
    /// those include in turn.
    pub(super) fn headers_used(
        &self,
        folder: &Folder,
        include_dirs: &[String],
    ) -> BTreeSet<String> {
        let mut wanted: Vec<String> = Vec::new();
        for f in &folder.files {
            let dir = folder
                .path
                .join(&f.rel)
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default();
            for name in quoted_includes(f) {
                let local = dir.join(&name).is_file()
                    || folder.path.join(&name).is_file()
                    || include_dirs
                        .iter()
                        .any(|d| folder.path.join(d).join(&name).is_file());
                if !local && self.file(&name).is_some() {
                    wanted.push(name);
                }
            }
        }
        self.close(wanted)
    }

    /// `wanted` with every common header they include, transitively.
    fn close(&self, mut wanted: Vec<String>) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        while let Some(h) = wanted.pop() {
            if !seen.insert(h.clone()) {
                continue;
            }
            if let Some(f) = self.file(&h) {
                wanted.extend(quoted_includes(f).filter_map(|n| self.resolve(&h, &n)));
            }
        }
        seen
    }

    /// The common sources the headers stand for (`x.h` → `x.c`), and the
    /// ones those sources need in turn; a source that provides the
    /// randomness call (`symbol`) is left out: pqbench's KAT RNG (or the
    /// scheme's own) provides it.
    pub(super) fn sources_for(
        &self,
        headers: &BTreeSet<String>,
        symbol: Option<&str>,
    ) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut todo: Vec<String> = headers.iter().cloned().collect();
        let mut headers_seen: BTreeSet<String> = headers.clone();
        while let Some(h) = todo.pop() {
            let Some(stem) = h.strip_suffix(".h") else {
                continue;
            };
            let c = format!("{stem}.c");
            let Some(f) = self.file(&c) else { continue };
            if out.contains(&c) || self.provides_randomness(f, symbol) {
                continue;
            }
            out.push(c.clone());
            for n in quoted_includes(f).filter_map(|n| self.resolve(&c, &n)) {
                if headers_seen.insert(n.clone()) {
                    todo.push(n);
                }
            }
        }
        out.sort();
        out
    }

    /// Common sources reached only by the link, as a Makefile adds them
    /// (PQClean's AVX2 code calls the 4-way Keccak of `keccak4x/` through a
    /// `#define` and an `extern`; no header of its names the file): the
    /// files defining a function the library calls and nothing it compiles
    /// defines, then what those call in turn. Assembly counts by the
    /// symbols it exports.
    pub(super) fn link_sources(
        &self,
        library: &[&CFile],
        chosen: &[String],
        symbol: Option<&str>,
    ) -> Vec<String> {
        let mut files: Vec<&CFile> = library.to_vec();
        files.extend(chosen.iter().filter_map(|c| self.file(c)));
        let mut added: Vec<String> = Vec::new();
        loop {
            let defined: BTreeSet<&str> = files
                .iter()
                .flat_map(|f| f.defs.iter().map(|d| d.name.as_str()))
                .chain(added.iter().flat_map(|a| self.globals(a)))
                .collect();
            let renames = renames(&files);
            let missing: BTreeSet<&str> = files
                .iter()
                .flat_map(|f| f.calls.iter())
                .map(|c| renames.get(c.as_str()).copied().unwrap_or(c.as_str()))
                .filter(|c| !defined.contains(c))
                .collect();
            let next = missing
                .iter()
                .filter_map(|m| self.definer(m, symbol))
                .find(|n| !added.contains(n) && !chosen.contains(n));
            let Some(next) = next else { break };
            if let Some(f) = self.file(&next) {
                files.push(f);
            }
            added.push(next);
        }
        added.sort();
        added
    }

    /// The common source (not header) defining `name`, C or assembly.
    fn definer(&self, name: &str, symbol: Option<&str>) -> Option<String> {
        let c = self
            .files
            .iter()
            .find(|f| !f.is_header() && f.defines_fn(name) && !self.provides_randomness(f, symbol));
        c.map(|f| f.rel.clone()).or_else(|| {
            self.asm
                .iter()
                .find(|(_, g)| g.contains(name))
                .map(|(rel, _)| rel.clone())
        })
    }

    fn globals<'a>(&'a self, rel: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.asm
            .iter()
            .filter(move |(r, _)| r == rel)
            .flat_map(|(_, g)| g.iter().map(String::as_str))
    }

    fn provides_randomness(&self, f: &CFile, symbol: Option<&str>) -> bool {
        f.defs
            .iter()
            .any(|d| d.name == "randombytes" || Some(d.name.as_str()) == symbol)
    }

    /// The link symbol a common header renames `randombytes` to
    /// (`#define randombytes PREFIX_randombytes`), with the header's name.
    pub(super) fn randombytes_symbol(
        &self,
        headers: &BTreeSet<String>,
    ) -> Option<(String, String)> {
        headers.iter().find_map(|h| {
            let f = self.file(h)?;
            let m = f
                .macros
                .iter()
                .find(|m| m.name == "randombytes" && m.params.is_none())?;
            let body = m.body.trim();
            crate::plan::names::is_c_identifier(body).then(|| (body.to_string(), h.clone()))
        })
    }
}

/// Object-like macros that rename one identifier to another
/// (`#define KeccakF1600_StatePermute4x KeccakP1600times4_PermuteAll_24rounds`).
fn renames<'a>(files: &[&'a CFile]) -> std::collections::BTreeMap<&'a str, &'a str> {
    files
        .iter()
        .flat_map(|f| f.macros.iter())
        .filter(|m| m.params.is_none())
        .map(|m| (m.name.as_str(), m.body.trim()))
        .filter(|(_, body)| crate::plan::names::is_c_identifier(body))
        .collect()
}

/// The symbols an assembly file exports: `.global`/`.globl` names, with a
/// naming macro such as `cdecl(NAME)` unwrapped to `NAME`.
fn asm_globals(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let rest = l
                .strip_prefix(".globl")
                .or_else(|| l.strip_prefix(".global"))?;
            let name = rest.trim().trim_end_matches(';');
            let name = match name.split_once('(') {
                Some((_, inner)) => inner.trim_end_matches(')'),
                None => name,
            };
            crate::plan::names::is_c_identifier(name).then(|| name.to_string())
        })
        .collect()
}

/// The `"name"` includes of a file (system `<...>` ones left out).
pub(super) fn quoted_includes(f: &CFile) -> impl Iterator<Item = String> + '_ {
    f.directives
        .iter()
        .filter(|d| d.kind == "include")
        .filter_map(|d| {
            let r = d.rest.trim();
            let inner = r.strip_prefix('"')?;
            Some(inner.split('"').next()?.to_string())
        })
}

/// The scheme's own KAT RNG: its source file, init function and shape.
#[derive(Debug, Clone)]
pub(super) struct KatRng {
    pub source: PathBuf,
    pub init: String,
    pub args: InitArgs,
}

/// Finds the KAT RNG `name` (META.yml `nistkat-rng`): `<name>.c` in the
/// scheme folder outside its implementations, else `<name>.c` or
/// `<name>katrng.c` in `common/` or in the tree's `test/common/` (where
/// PQClean keeps `hqckatrng.c` beside its NIST generator). Returns it, or
/// why it could not be used.
pub(super) fn find_kat_rng(
    scheme: &Path,
    implementations: &[PathBuf],
    common: Option<&Path>,
    name: &str,
) -> Result<KatRng, String> {
    let stem = name.trim_end_matches(".c");
    let file = format!("{stem}.c");
    let mut found = Vec::new();
    search(scheme, implementations, &file, 0, &mut found);
    if found.is_empty() {
        let dirs = common
            .into_iter()
            .flat_map(|c| [c.to_path_buf(), c.with_file_name("test").join("common")]);
        let files = [file.clone(), format!("{stem}katrng.c")];
        found.extend(
            dirs.flat_map(|d| files.clone().map(|f| d.join(f)))
                .filter(|p| p.is_file())
                .take(1),
        );
    }
    let Some(source) = found.into_iter().next() else {
        return Err(format!(
            "no {file} in the scheme folder, and no {file} or {stem}katrng.c in common/ or \
             test/common/, for `nistkat-rng: {name}`"
        ));
    };
    let text =
        std::fs::read_to_string(&source).map_err(|e| format!("{}: {e}", source.display()))?;
    let f = CFile::parse(&file, &text);
    let mut inits: Vec<&str> = f
        .defs
        .iter()
        .map(|d| d.name.as_str())
        .filter(|n| n.to_ascii_lowercase().contains("init"))
        .collect();
    inits.sort_by_key(|n| !n.ends_with("_init"));
    let Some(init) = inits.first() else {
        return Err(format!("{file} defines no init function"));
    };
    let params = parameters(&f.code, init).unwrap_or_default();
    let args = match params.as_slice() {
        [_] => InitArgs::Entropy,
        [_, p] if p.contains('*') || p.contains('[') => InitArgs::EntropyPersonalization,
        [_, _] => InitArgs::EntropyLength,
        [_, _, _] => InitArgs::Classic,
        _ => {
            return Err(format!(
                "{init} in {file} takes {} parameters: not a known init shape",
                params.len()
            ))
        }
    };
    Ok(KatRng {
        source,
        init: init.to_string(),
        args,
    })
}

fn search(dir: &Path, skip: &[PathBuf], file: &str, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > 3 || skip.iter().any(|s| s == dir) {
        return;
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            search(&p, skip, file, depth + 1, out);
        } else if p.file_name().is_some_and(|n| n == file) {
            out.push(p);
        }
    }
}

/// The parameters of the first `name(...)` in the code, split at the top
/// level commas (`void` or nothing: none).
fn parameters(code: &str, name: &str) -> Option<Vec<String>> {
    let mut from = 0;
    while let Some(at) = code[from..].find(name) {
        let start = from + at;
        from = start + name.len();
        let before = code[..start].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let rest = code[from..].trim_start();
        let Some(inner) = rest.strip_prefix('(') else {
            continue;
        };
        let mut depth = 0usize;
        let mut end = None;
        for (i, c) in inner.char_indices() {
            match c {
                '(' => depth += 1,
                ')' if depth == 0 => {
                    end = Some(i);
                    break;
                }
                ')' => depth -= 1,
                _ => {}
            }
        }
        let list = inner[..end?].trim();
        if list.is_empty() || list == "void" {
            return Some(Vec::new());
        }
        return Some(list.split(',').map(|p| p.trim().to_string()).collect());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_shapes_are_read_from_the_definition() {
        let dir = tempfile::tempdir().unwrap();
        let scheme = dir.path();
        std::fs::create_dir(scheme.join("clean")).unwrap();
        std::fs::create_dir(scheme.join("kat")).unwrap();
        let cases = [
            (
                "void r_init(unsigned char *e, unsigned char *p, int s) { }",
                InitArgs::Classic,
            ),
            (
                "void r_init(const unsigned char e[48]) { }",
                InitArgs::Entropy,
            ),
            (
                "void r_init(const uint8_t *e, size_t n) { }",
                InitArgs::EntropyLength,
            ),
            (
                "void r_init(const uint8_t *e, const uint8_t *p) { }",
                InitArgs::EntropyPersonalization,
            ),
        ];
        for (code, want) in cases {
            std::fs::write(scheme.join("kat/myrng.c"), format!("int randombytes(unsigned char *x, unsigned long long n) {{ return 0; }}\n{code}\n")).unwrap();
            let r = find_kat_rng(scheme, &[scheme.join("clean")], None, "myrng").unwrap();
            assert_eq!((r.init.as_str(), r.args), ("r_init", want), "{code}");
        }
        assert!(find_kat_rng(scheme, &[], None, "other").is_err());
    }
}
