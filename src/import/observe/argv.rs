//! What one recorded compiler or archiver call did: its inputs, output,
//! defines, include directories, feature flags and libraries, read from
//! its arguments the way gcc and clang read them.

use std::path::{Path, PathBuf};

/// A compiler call (`cc`, `gcc`, `clang`, `c++`…).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CompilerCall {
    /// `-c`, `-S` or `-E`: no link.
    pub no_link: bool,
    /// `-E`, `-M`, `-MM`: a query, no output file of code.
    pub query: bool,
    pub output: Option<PathBuf>,
    /// Source files (`.c`, `.s`, `.S`, C++), resolved against the call's
    /// directory.
    pub sources: Vec<PathBuf>,
    /// Objects and archives given to a link.
    pub objects: Vec<PathBuf>,
    /// `-D` in order (`-U` removes): name and value (`None`: bare).
    pub defines: Vec<(String, Option<String>)>,
    /// `-I`, `-iquote`, `-isystem`, resolved.
    pub includes: Vec<PathBuf>,
    /// `-include <file>`, resolved.
    pub forced_includes: Vec<PathBuf>,
    /// `-m…` options (target features, `-march=`).
    pub machine: Vec<String>,
    /// `-l<name>`.
    pub libraries: Vec<String>,
    /// `-L<dir>`, resolved.
    pub library_dirs: Vec<PathBuf>,
}

/// Options whose value is the next argument and that the draft does not
/// need.
const SKIPPED_WITH_VALUE: &[&str] = &[
    "-MF",
    "-MT",
    "-MQ",
    "-x",
    "-Xlinker",
    "-Xassembler",
    "-Xpreprocessor",
    "-u",
    "-T",
    "-z",
    "-arch",
    "-target",
    "--target",
    "-idirafter",
    "-imacros",
    "-iprefix",
    "-isysroot",
    "--sysroot",
    "-aux-info",
    "-dumpbase",
    "-dumpdir",
];

const SOURCE_EXTS: &[&str] = &["c", "s", "S", "cc", "cpp", "cxx", "C"];

pub(super) fn is_source(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| SOURCE_EXTS.contains(&e))
}

/// Reads a compiler call's arguments run in `cwd`.
pub(super) fn compiler(cwd: &Path, args: &[String]) -> CompilerCall {
    let mut c = CompilerCall::default();
    let at = |p: &str| cwd.join(p);
    let mut it = args.iter().peekable();
    while let Some(a) = it.next() {
        let mut value = |flag: &str| -> Option<String> {
            match a.strip_prefix(flag) {
                Some("") => it.next().cloned(),
                Some(v) => Some(v.to_string()),
                None => None,
            }
        };
        if a == "-c" || a == "-S" {
            c.no_link = true;
        } else if a == "-E" || a == "-M" || a == "-MM" {
            c.no_link = true;
            c.query = true;
        } else if a == "-o" {
            c.output = it.next().map(|o| at(o));
        } else if let Some(o) = a.strip_prefix("-o") {
            c.output = Some(at(o));
        } else if a.starts_with("-D") {
            if let Some(d) = value("-D") {
                let (name, v) = match d.split_once('=') {
                    Some((n, v)) => (n.to_string(), Some(v.to_string())),
                    None => (d.clone(), None),
                };
                c.defines.retain(|(n, _)| *n != name);
                c.defines.push((name, v));
            }
        } else if a.starts_with("-U") {
            if let Some(name) = value("-U") {
                c.defines.retain(|(n, _)| *n != name);
            }
        } else if a == "-include" {
            if let Some(f) = it.next() {
                c.forced_includes.push(at(f));
            }
        } else if a.starts_with("-isystem") || a.starts_with("-iquote") {
            let flag = if a.starts_with("-isystem") {
                "-isystem"
            } else {
                "-iquote"
            };
            if let Some(d) = value(flag) {
                c.includes.push(at(&d));
            }
        } else if a.starts_with("-I") {
            if let Some(d) = value("-I") {
                c.includes.push(at(&d));
            }
        } else if a.starts_with("-L") {
            if let Some(d) = value("-L") {
                c.library_dirs.push(at(&d));
            }
        } else if a.starts_with("-l") {
            if let Some(l) = value("-l") {
                c.libraries.push(l);
            }
        } else if a.starts_with("-m") {
            c.machine.push(a.clone());
        } else if SKIPPED_WITH_VALUE.contains(&a.as_str()) {
            it.next();
        } else if a.starts_with('-') {
            // Optimisation, warnings, `-std=`, `-f…`: pqbench's own flag
            // profiles decide those.
        } else {
            let p = at(a);
            if is_source(&p) {
                c.sources.push(p);
            } else {
                c.objects.push(p);
            }
        }
    }
    c
}

/// An `ar` call that writes an archive: the archive and the members it
/// adds (`ar rcs lib.a a.o b.o`, `ar qc …`).
pub(super) fn archiver(cwd: &Path, args: &[String]) -> Option<(PathBuf, Vec<PathBuf>)> {
    // `gcc-ar` (CMake with link-time optimisation) passes `--plugin <so>`.
    let mut kept = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--plugin" || a == "--target" {
            it.next();
        } else if !a.starts_with("--") {
            kept.push(a);
        }
    }
    let mut words = kept.into_iter();
    let ops = words.next()?.trim_start_matches('-');
    if !ops.contains(['r', 'q']) {
        return None;
    }
    let archive = cwd.join(words.next()?);
    Some((archive, words.map(|m| cwd.join(m)).collect()))
}

/// `a/./b/../c` → `a/c`, without touching the file system (the paths are
/// those of a scratch tree that may be gone).
pub(super) fn normal(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn a_compile_reads_defines_includes_and_output_in_both_spellings() {
        let c = compiler(
            Path::new("/t/src"),
            &s(&[
                "-O3",
                "-DA",
                "-D",
                "B=2",
                "-DA=3",
                "-I../inc",
                "-I",
                "/usr/include/x",
                "-mavx2",
                "-c",
                "x.c",
                "-o",
                "x.o",
                "-MF",
                "x.d",
                "-UB",
            ]),
        );
        assert!(c.no_link && !c.query);
        assert_eq!(c.output.as_deref(), Some(Path::new("/t/src/x.o")));
        assert_eq!(c.sources, [PathBuf::from("/t/src/x.c")]);
        assert_eq!(c.defines, [("A".to_string(), Some("3".to_string()))]);
        assert_eq!(
            c.includes,
            [
                PathBuf::from("/t/src/../inc"),
                PathBuf::from("/usr/include/x")
            ]
        );
        assert_eq!(c.machine, ["-mavx2"]);
        assert!(c.objects.is_empty(), "x.d is the value of -MF");
    }

    #[test]
    fn a_link_reads_objects_archives_and_libraries() {
        let c = compiler(
            Path::new("/t"),
            &s(&[
                "-o",
                "gen",
                "a.o",
                "lib/libx.a",
                "gen.c",
                "-L/opt",
                "-lcrypto",
                "-l",
                "m",
            ]),
        );
        assert!(!c.no_link);
        assert_eq!(
            c.objects,
            [PathBuf::from("/t/a.o"), PathBuf::from("/t/lib/libx.a")]
        );
        assert_eq!(c.sources, [PathBuf::from("/t/gen.c")]);
        assert_eq!(c.libraries, ["crypto", "m"]);
        assert_eq!(normal(Path::new("/t/a/./b/../c")), PathBuf::from("/t/a/c"));
    }

    #[test]
    fn an_archive_call_names_its_members() {
        let (a, m) = archiver(Path::new("/t"), &s(&["rcs", "libx.a", "a.o", "b.o"])).unwrap();
        assert_eq!(a, PathBuf::from("/t/libx.a"));
        assert_eq!(m.len(), 2);
        assert!(archiver(Path::new("/t"), &s(&["t", "libx.a"])).is_none());
        let (a, m) = archiver(
            Path::new("/t"),
            &s(&["--plugin", "/usr/lib/lto.so", "-cr", "libx.a", "a.o"]),
        )
        .unwrap();
        assert_eq!((a, m.len()), (PathBuf::from("/t/libx.a"), 1));
    }
}
