//! One source folder of a submission: its C files, which of them are not
//! part of the library (KAT generators, mains, benchmarks, tests, NIST's
//! `rng.c`), and what the rest defines, declares and calls.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::csource::{self, CFile, Macro};

/// Folders never compiled into the library.
const SKIP_DIRS: &[&str] = &[
    "test",
    "tests",
    "bench",
    "benchmark",
    "benchmarks",
    "kat",
    // Upstream reference code keeps its KAT generator and NIST's DRBG here.
    "nistkat",
    "example",
    "examples",
    "doc",
    "docs",
    "build",
];

#[derive(Debug, Clone)]
pub(super) struct Folder {
    pub path: PathBuf,
    /// Every scanned `.c` and `.h` file.
    pub files: Vec<CFile>,
    /// Assembly sources (`.S`, `.s`), by path in the folder: part of the
    /// library like its `.c` files (AVX2 and NEON code ships its NTTs so).
    pub asm: Vec<String>,
    /// `.c` files left out of the library: (file name, why).
    pub excluded: Vec<(String, String)>,
    pub readme: Option<String>,
}

impl Folder {
    pub(super) fn scan(path: &Path) -> Folder {
        let mut found = Found::default();
        scan_into(path, path, 0, MAX_DEPTH, &mut found);
        Folder::of(path, found)
    }

    /// One variant of a project that keeps each variant in its own folder
    /// beside shared code: the files of `variant` (and below) and of each
    /// `shared` folder (not below), named relative to `root`, so that
    /// `source_patterns` and `include_dirs` are the variant's whole build.
    pub(super) fn scan_variant(root: &Path, variant: &Path, shared: &[PathBuf]) -> Folder {
        let mut found = Found::default();
        for dir in shared {
            scan_into(root, dir, 0, 0, &mut found);
        }
        scan_into(root, variant, 0, MAX_DEPTH, &mut found);
        Folder::of(variant, found)
    }

    /// The shared folders alone (not below), named relative to `root`.
    pub(super) fn scan_shared(root: &Path, shared: &[PathBuf]) -> Folder {
        let mut found = Found::default();
        for dir in shared {
            scan_into(root, dir, 0, 0, &mut found);
        }
        Folder::of(root, found)
    }

    /// The files a build compiled, named relative to `root`: `sources`,
    /// with the headers of the root and of each of `header_dirs`.
    /// `written`: files the build wrote, by path relative to `root`, read
    /// from memory (they are not on disk yet).
    pub(super) fn of_files(
        root: &Path,
        sources: &[String],
        header_dirs: &[String],
        written: &std::collections::BTreeMap<String, Vec<u8>>,
    ) -> Folder {
        let mut found = Found::default();
        let from_memory = |rel: &str| {
            written
                .get(rel)
                .map(|b| CFile::parse(rel, &String::from_utf8_lossy(b)))
        };
        for s in sources {
            if let Some(f) = CFile::read(&root.join(s), s)
                .ok()
                .or_else(|| from_memory(s))
            {
                found.files.push(f);
            }
        }
        let dirs = std::iter::once(String::new()).chain(header_dirs.iter().cloned());
        for d in dirs {
            for rel in written.keys().filter(|r| r.ends_with(".h")) {
                let parent = rel.rsplit_once('/').map_or("", |(p, _)| p);
                if parent == d && !found.files.iter().any(|f| &f.rel == rel) {
                    found.files.extend(from_memory(rel));
                }
            }
            let Ok(rd) = std::fs::read_dir(root.join(&d)) else {
                continue;
            };
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let rel = if d.is_empty() {
                    name.clone()
                } else {
                    format!("{d}/{name}")
                };
                if name.ends_with(".h") && !found.files.iter().any(|f| f.rel == rel) {
                    if let Ok(f) = CFile::read(&e.path(), &rel) {
                        found.files.push(f);
                    }
                }
            }
        }
        Folder::of(root, found)
    }

    fn of(path: &Path, found: Found) -> Folder {
        let Found { mut files, mut asm } = found;
        files.sort_by(|a: &CFile, b| a.rel.cmp(&b.rel));
        asm.sort();
        let excluded = files
            .iter()
            .filter(|f| !f.is_header())
            .filter_map(|f| exclusion(f).map(|why| (f.name().to_string(), why.to_string())))
            .collect();
        let readme = ["README.md", "README", "readme.md", "README.txt"]
            .iter()
            .find_map(|n| std::fs::read_to_string(path.join(n)).ok());
        Folder {
            path: path.to_path_buf(),
            files,
            asm,
            excluded,
            readme,
        }
    }

    pub(super) fn is_excluded(&self, f: &CFile) -> bool {
        self.excluded.iter().any(|(n, _)| n == f.name())
    }

    /// Files that go into the library: kept `.c` files and every header.
    pub(super) fn library(&self) -> Vec<&CFile> {
        self.files
            .iter()
            .filter(|f| f.is_header() || !self.is_excluded(f))
            .collect()
    }

    pub(super) fn macros(&self) -> Vec<&Macro> {
        self.files.iter().flat_map(|f| f.macros.iter()).collect()
    }

    /// The functions the kept `.c` files call, also through the macros
    /// they call by (`hash_h(...)` defined as `sha3_256(...)`), a few
    /// levels deep.
    pub(super) fn calls_through_macros(&self) -> BTreeSet<String> {
        let macros = self.macros();
        let mut calls = self.calls();
        let mut fresh: Vec<String> = calls.iter().cloned().collect();
        for _ in 0..3 {
            let next: Vec<String> = fresh
                .iter()
                .flat_map(|c| macros.iter().filter(move |m| &m.name == c))
                .flat_map(|m| {
                    m.body
                        .split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
                        .filter(|w| w.starts_with(|ch: char| ch.is_ascii_alphabetic() || ch == '_'))
                        .map(String::from)
                        .collect::<Vec<_>>()
                })
                .filter(|w| !calls.contains(w))
                .collect();
            calls.extend(next.iter().cloned());
            fresh = next;
        }
        calls
    }

    /// Every name the library defines, with namespacing macros expanded.
    pub(super) fn defined(&self) -> BTreeSet<String> {
        let macros = self.macros();
        self.library()
            .iter()
            .flat_map(|f| f.defs.iter())
            .flat_map(|d| csource::expansions(&d.name, d.via.as_deref(), &macros))
            .collect()
    }

    /// Every name the library defines or declares (prototypes included).
    pub(super) fn known(&self) -> BTreeSet<String> {
        let macros = self.macros();
        let mut out = self.defined();
        for f in self.library() {
            for d in &f.decls {
                out.extend(csource::expansions(&d.name, d.via.as_deref(), &macros));
            }
        }
        out
    }

    /// Functions the kept `.c` files call.
    pub(super) fn calls(&self) -> BTreeSet<String> {
        self.library()
            .iter()
            .filter(|f| !f.is_header())
            .flat_map(|f| f.calls.iter().cloned())
            .collect()
    }

    /// The header that declares `name` (else the file that defines it).
    pub(super) fn declaring(&self, name: &str) -> Option<&CFile> {
        let macros = self.macros();
        let hit = |f: &&CFile| {
            f.decls
                .iter()
                .any(|d| csource::expansions(&d.name, d.via.as_deref(), &macros).contains(name))
        };
        let lib = self.library();
        lib.iter()
            .copied()
            .find(|f| f.is_header() && hit(f))
            .or_else(|| lib.iter().copied().find(|f| hit(f)))
    }

    /// `sources` patterns: `*.c` per directory holding kept `.c` files,
    /// and `*.S` / `*.s` per directory holding assembly.
    pub(super) fn source_patterns(&self) -> Vec<String> {
        let mut patterns: Vec<String> = self
            .library()
            .iter()
            .filter(|f| !f.is_header())
            .map(|f| pattern(&dir_of(&f.rel), "c"))
            .collect();
        for a in &self.asm {
            let ext = a.rsplit('.').next().unwrap_or("S");
            patterns.push(pattern(&dir_of(a), ext));
        }
        patterns.sort();
        patterns.dedup();
        patterns
    }

    /// Subdirectories holding headers (the folder itself is always one).
    pub(super) fn include_dirs(&self) -> Vec<String> {
        let mut dirs: Vec<String> = self
            .files
            .iter()
            .filter(|f| f.is_header())
            .map(|f| dir_of(&f.rel))
            .filter(|d| !d.is_empty())
            .collect();
        dirs.sort();
        dirs.dedup();
        dirs
    }

    /// CPU features implied by the intrinsics the kept code uses.
    pub(super) fn cpu_features(&self) -> Vec<String> {
        let marks: &[(&str, &str)] = &[
            ("_mm512_", "avx512f"),
            ("_mm256_", "avx2"),
            ("_mm_aes", "aes"),
            ("_mm_clmulepi64", "pclmul"),
            ("_pdep_u", "bmi2"),
            ("_pext_u", "bmi2"),
            ("_mm_popcnt", "popcnt"),
        ];
        let mut out: Vec<String> = Vec::new();
        for f in self.library() {
            for (mark, feature) in marks {
                if f.code.contains(mark) && !out.iter().any(|o| o == feature) {
                    out.push(feature.to_string());
                }
            }
        }
        out
    }

    pub(super) fn uses_neon(&self) -> bool {
        self.library().iter().any(|f| f.code.contains("arm_neon.h"))
    }
}

fn dir_of(rel: &str) -> String {
    rel.rsplit_once('/')
        .map(|(d, _)| d.to_string())
        .unwrap_or_default()
}

#[derive(Default)]
struct Found {
    files: Vec<CFile>,
    asm: Vec<String>,
}

/// How deep below a folder its sources are looked for.
const MAX_DEPTH: usize = 4;

/// Whether a subfolder (by name) is never library code.
pub(super) fn skipped_dir(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    name.starts_with('.') || SKIP_DIRS.contains(&lower.as_str()) || lower.starts_with("kat")
}

fn scan_into(root: &Path, dir: &Path, depth: usize, max_depth: usize, out: &mut Found) {
    if depth > max_depth {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().to_string();
        if name.starts_with('.') {
            continue;
        }
        let rel = || {
            p.strip_prefix(root)
                .unwrap_or(&p)
                .to_string_lossy()
                .replace('\\', "/")
        };
        if p.is_dir() {
            if !skipped_dir(&name) {
                scan_into(root, &p, depth + 1, max_depth, out);
            }
        } else if name.ends_with(".c") || name.ends_with(".h") {
            if let Ok(f) = CFile::read(&p, &rel()) {
                out.files.push(f);
            }
        } else if (name.ends_with(".S") || name.ends_with(".s")) && p.is_file() {
            out.asm.push(rel());
        }
    }
}

/// `<dir>/*.<ext>`, or `*.<ext>` for the folder itself.
fn pattern(dir: &str, ext: &str) -> String {
    if dir.is_empty() {
        format!("*.{ext}")
    } else {
        format!("{dir}/*.{ext}")
    }
}

/// Why a `.c` file is not part of the library, if it is not.
pub(super) fn exclusion(f: &CFile) -> Option<&'static str> {
    let n = f.name().to_ascii_lowercase();
    if n.starts_with("pqcgenkat") {
        return Some("NIST KAT generator");
    }
    if n.starts_with("pqctestkat") {
        return Some("NIST KAT checker");
    }
    // NGCC's shipped generators: KAT_SIG.c, KAT_KEM.c, KAT_KEX.c, KAT_Hash.c.
    if n.starts_with("kat_") || n.starts_with("genkat") {
        return Some("NGCC KAT generator");
    }
    if f.defines_fn("main") {
        return Some("a program: defines main()");
    }
    // `*main*` by whole word only: `domain.c` is library code.
    let stem = n.trim_end_matches(".c");
    if stem.split(['_', '-', '.']).any(|w| w == "main") {
        return Some("a main program, by its name");
    }
    if n.starts_with("bench") || n.starts_with("speed") {
        return Some("benchmark");
    }
    if n.starts_with("test") || n.ends_with("_test.c") {
        return Some("test");
    }
    if n == "rng.c" && (f.defines_fn("randombytes_init") || f.defines_fn("randombytes")) {
        return Some("NIST's rng.c: pqbench's builtin KAT DRBG provides the randomness");
    }
    // Upstream code ships the operating system's randomness under the
    // name the library calls; the adapter defines that name.
    if f.defines_fn("randombytes") {
        return Some(
            "defines randombytes (the system's randomness): pqbench's adapter provides it",
        );
    }
    None
}

/// Whether a directory holds `.c` files (within two levels).
pub(super) fn has_c(dir: &Path, depth: usize) -> bool {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return false;
    };
    rd.flatten().any(|e| {
        let p = e.path();
        if p.is_dir() {
            depth < 2 && has_c(&p, depth + 1)
        } else {
            p.extension().is_some_and(|x| x == "c")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generators_mains_and_nist_rng_are_excluded() {
        let dir = tempfile::tempdir().unwrap();
        let w = |n: &str, t: &str| std::fs::write(dir.path().join(n), t).unwrap();
        w("PQCgenKAT_sign.c", "int x;\n");
        w("driver.c", "int main(void) { return 0; }\n");
        w("rng.c", "void randombytes_init(unsigned char *e) { }\nint randombytes(unsigned char *x, unsigned long long n) { return 0; }\n");
        w(
            "randombytes.c",
            "#include <sys/random.h>\nvoid randombytes(unsigned char *x, unsigned long n) { getrandom(x, n, 0); }\n",
        );
        std::fs::create_dir(dir.path().join("nistkat")).unwrap();
        w(
            "nistkat/rng.h",
            "void randombytes_init(unsigned char *e);\n",
        );
        w("sign.c", "int crypto_sign_keypair(unsigned char *pk, unsigned char *sk) { return randombytes(pk, 1); }\n");
        w(
            "api.h",
            "int crypto_sign_keypair(unsigned char *pk, unsigned char *sk);\n",
        );
        std::fs::create_dir(dir.path().join("tests")).unwrap();
        w("tests/t.c", "int y;\n");
        let f = Folder::scan(dir.path());
        let names: Vec<&str> = f.excluded.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            vec!["PQCgenKAT_sign.c", "driver.c", "randombytes.c", "rng.c"]
        );
        assert_eq!(f.source_patterns(), vec!["*.c"]);
        assert!(f.include_dirs().is_empty(), "{:?}", f.include_dirs());
        assert!(f.calls().contains("randombytes"));
        assert!(!f.defined().contains("randombytes"));
        assert_eq!(f.declaring("crypto_sign_keypair").unwrap().rel, "api.h");
    }
}
