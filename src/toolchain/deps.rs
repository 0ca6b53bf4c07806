//! The files a compilation unit reads, as the compiler itself lists them
//! (`-MD -MF` when compiling, which is how a run learns them; `-M -MG -MF`
//! to find out without compiling, for `plan` and `status`): every
//! header at any depth of any include directory, any extension (`.inc`,
//! `.macros`, ...), force-included headers and system headers.
//!
//! A list is remembered per unit (compiler, arguments, source path) in
//! `output/.cache/deps/` with the sha256 of every file on it. It stands as
//! long as none of those files changed; otherwise (or the first time) the
//! preprocessor lists the dependencies again. So the list, and every key
//! built on it, is a function of the files as they are now: the same
//! before and after a build, and different as soon as any file the
//! compiler would read changes. The list also stands only while the
//! unit's lookup directories (its source's and its include directories,
//! recursively) hold the same names: a header added where the
//! preprocessor looks before the one it found (one that would shadow it)
//! makes it list again, and the key changes if the compiler would now read
//! that header instead — which make and ninja do not notice.

use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::Compiler;
use crate::cache::Cache;
use crate::fsutil;

/// A file that does not exist (a header the preprocessor could not find).
pub(crate) const MISSING: &str = "missing";

/// One compilation unit: a source and the compiler arguments for it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Unit {
    pub source: PathBuf,
    pub args: Vec<String>,
    /// The submission's (or a component's) code, not pqbench's.
    pub submission: bool,
}

/// A unit's dependencies: every file it reads (its source first) with its
/// sha256, or `MISSING`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Deps {
    pub files: Vec<(PathBuf, String)>,
    /// True when the list came from the compiler; false when the scan
    /// failed and every file of the include directories stands in for it.
    pub exact: bool,
}

impl Deps {
    /// A digest of every file and its contents, for object keys.
    pub(crate) fn digest(&self) -> String {
        let mut all = String::new();
        for (p, sha) in &self.files {
            all.push_str(&format!("{}\u{1f}{sha}\u{1e}", p.display()));
        }
        fsutil::sha256_hex(all.as_bytes())
    }
}

/// The record stored per unit.
#[derive(Debug, Serialize, Deserialize)]
struct Record {
    source: PathBuf,
    files: Vec<(PathBuf, String)>,
    /// Digest of the names under the lookup directories when listed.
    #[serde(default)]
    lookup: String,
}

fn unit_id(cc: &Compiler, unit: &Unit) -> String {
    let mut id = format!(
        "{}|{}|{}|{}",
        cc.binary_sha256,
        cc.version,
        unit.args.join("\u{1f}"),
        unit.source.display()
    );
    // The variables its system passes (a search path among them would
    // change what the preprocessor finds); none: the id stays as it was.
    if let Some(names) = cc.environment_identity() {
        id.push('|');
        id.push_str(&names);
    }
    fsutil::sha256_hex(id.as_bytes())
}

fn record_path(cache: &Cache, id: &str) -> PathBuf {
    cache
        .dir()
        .join("deps")
        .join(&id[..2])
        .join(format!("{id}.json"))
}

/// The dependencies of `unit` as the files are now: the remembered list
/// when every file on it is unchanged, else a fresh scan, reading only
/// beneath `reads` (see `BuildEnv::reads`).
pub(crate) fn of(cache: &Cache, cc: &Compiler, unit: &Unit, reads: &[PathBuf]) -> Result<Deps> {
    if let Some(deps) = remembered(cache, cc, unit) {
        return Ok(deps);
    }
    let id = unit_id(cc, unit);
    let scratch = super::scratch()?;
    let depfile = scratch.path().join("unit.d");
    let mut args = unit.args.clone();
    args.extend([
        "-M".into(),
        "-MG".into(),
        "-MF".into(),
        depfile.display().to_string(),
        unit.source.display().to_string(),
    ]);
    // The exit status does not matter: with -MG the preprocessor lists
    // missing headers and goes on past `#error`, so a unit that will not
    // compile still has its list (and its key changes when it is fixed).
    let scanned = cc
        .run_outcome(reads, &args, &depfile)
        .ok()
        .and_then(|_| std::fs::read_to_string(&depfile).ok())
        .map(|text| parse(&text));
    match scanned {
        Some(mut files) if !files.is_empty() => {
            if assembler_reads_files(unit, &files) {
                files.extend(lookup_files(cache, unit));
            }
            Ok(remember(cache, &id, unit, &files))
        }
        _ => Ok(fallback(cache, unit)),
    }
}

/// The remembered list of `unit`, when every file on it and the names
/// under its lookup directories are as they were when it was listed.
pub(crate) fn remembered(cache: &Cache, cc: &Compiler, unit: &Unit) -> Option<Deps> {
    let rec = fsutil::read_json::<Record>(&record_path(cache, &unit_id(cc, unit))).ok()?;
    let current: Vec<(PathBuf, String)> = rec
        .files
        .iter()
        .map(|(p, _)| (p.clone(), hash_in(cache, p)))
        .collect();
    (rec.source == unit.source && current == rec.files && rec.lookup == lookup_digest(cache, unit))
        .then_some(Deps {
            files: current,
            exact: true,
        })
}

/// True when a file on `deps` changed after `began`, or so shortly before
/// it that the kernel's coarse clock cannot tell (its change time is
/// stamped from a clock that ticks every few milliseconds), or is gone.
pub(crate) fn changed_since(deps: &Deps, began: std::time::SystemTime) -> bool {
    use std::os::unix::fs::MetadataExt;
    const TICK: std::time::Duration = std::time::Duration::from_millis(20);
    let Some(limit) = began
        .checked_sub(TICK)
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
    else {
        return true;
    };
    deps.files.iter().any(|(p, _)| {
        std::fs::metadata(p).map_or(true, |m| {
            let ctime = std::time::Duration::new(
                u64::try_from(m.ctime()).unwrap_or(0),
                u32::try_from(m.ctime_nsec()).unwrap_or(0),
            );
            ctime >= limit
        })
    })
}

/// Drops the remembered list of `unit`: it is listed again next time.
pub(crate) fn forget(cache: &Cache, cc: &Compiler, unit: &Unit) {
    let _ = std::fs::remove_file(record_path(cache, &unit_id(cc, unit)));
}

/// Records the list the compiler wrote while compiling (`-MD -MF depfile`).
pub(crate) fn compiled(cache: &Cache, cc: &Compiler, unit: &Unit, depfile: &Path) -> Result<Deps> {
    // Plain assembly is not preprocessed and no compiler lists what its
    // `.include`s read: every file of its lookup directories stands in.
    if super::assembler::plain(&unit.source) && !depfile.exists() {
        let listed = lookup_files(cache, unit);
        return Ok(remember(cache, &unit_id(cc, unit), unit, &listed));
    }
    let text = std::fs::read_to_string(depfile)
        .with_context(|| format!("reading the dependency list {}", depfile.display()))?;
    let mut listed = parse(&text);
    // The compiler lists what its preprocessor read, not what the
    // assembler reads for an `.incbin` or `.include` (in inline or
    // preprocessed assembly): where the unit's own files use them, every
    // file of its lookup directories is a dependency.
    if assembler_reads_files(unit, &listed) {
        listed.extend(lookup_files(cache, unit));
    }
    Ok(remember(cache, &unit_id(cc, unit), unit, &listed))
}

/// Whether the unit's source, or a file it read from its lookup
/// directories, holds an assembler directive that reads a file.
fn assembler_reads_files(unit: &Unit, listed: &[PathBuf]) -> bool {
    let dirs = lookup_dirs(unit);
    std::iter::once(&unit.source)
        .chain(
            listed
                .iter()
                .filter(|p| dirs.iter().any(|d| p.starts_with(d))),
        )
        .any(|p| {
            std::fs::read(p).is_ok_and(|b| {
                b.windows(7).any(|w| w == b".incbin") || b.windows(8).any(|w| w == b".include")
            })
        })
}

/// Hashes the listed files and stores the list, unless a file is missing:
/// such a list is scanned again next time, since the missing header may
/// appear anywhere on the include path.
fn remember(cache: &Cache, id: &str, unit: &Unit, listed: &[PathBuf]) -> Deps {
    let mut files: Vec<(PathBuf, String)> =
        vec![(unit.source.clone(), hash_in(cache, &unit.source))];
    for p in listed {
        if !files.iter().any(|(q, _)| q == p) {
            files.push((p.clone(), hash_in(cache, p)));
        }
    }
    if files.iter().all(|(_, h)| h != MISSING) {
        let rec = Record {
            source: unit.source.clone(),
            files: files.clone(),
            lookup: lookup_digest(cache, unit),
        };
        // A list that cannot be stored is scanned again next time.
        let _ = fsutil::write_json(&record_path(cache, id), &rec);
    }
    Deps { files, exact: true }
}

/// The directories the preprocessor looks in for the unit's own headers:
/// the source's directory and every `-I`, `-iquote`, `-isystem` and
/// `-idirafter` directory, written glued or as the next argument.
fn lookup_dirs(unit: &Unit) -> Vec<PathBuf> {
    const FLAGS: [&str; 4] = ["-I", "-iquote", "-isystem", "-idirafter"];
    let mut dirs: Vec<PathBuf> = unit
        .source
        .parent()
        .map(Path::to_path_buf)
        .into_iter()
        .collect();
    let mut args = unit.args.iter();
    while let Some(a) = args.next() {
        for flag in FLAGS {
            if a == flag {
                dirs.extend(args.next().map(PathBuf::from));
            } else if let Some(d) = a.strip_prefix(flag).filter(|d| !d.is_empty()) {
                dirs.push(PathBuf::from(d));
            }
        }
    }
    dirs
}

/// Every file under the lookup directories, sorted and unique; each
/// directory is listed once per command.
fn lookup_files(cache: &Cache, unit: &Unit) -> Vec<PathBuf> {
    let mut all = Vec::new();
    for d in lookup_dirs(unit) {
        let listed = cache.view().listing(&d, |d| {
            let mut out = Vec::new();
            walk(d, 0, &mut out);
            out
        });
        all.extend(listed.iter().cloned());
    }
    all.sort();
    all.dedup();
    all
}

/// A digest of the names (not contents) under the lookup directories.
fn lookup_digest(cache: &Cache, unit: &Unit) -> String {
    cache.view().of_listings(&lookup_dirs(unit), || {
        let mut names = String::new();
        for p in lookup_files(cache, unit) {
            names.push_str(&format!("{}\u{1e}", p.display()));
        }
        fsutil::sha256_hex(names.as_bytes())
    })
}

/// Without the compiler's list: the source and every file of every
/// lookup directory (recursively), whatever its extension.
fn fallback(cache: &Cache, unit: &Unit) -> Deps {
    let mut files = vec![(unit.source.clone(), hash_in(cache, &unit.source))];
    for p in lookup_files(cache, unit) {
        if p != unit.source {
            let h = hash_in(cache, &p);
            files.push((p, h));
        }
    }
    Deps {
        files,
        exact: false,
    }
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > 8 {
        return;
    }
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        // The directory entry's own type, without a stat; a link is
        // followed, as the preprocessor would.
        let Ok(mut kind) = e.file_type() else {
            continue;
        };
        let p = e.path();
        if kind.is_symlink() {
            match std::fs::metadata(&p) {
                Ok(m) => kind = m.file_type(),
                Err(_) => continue,
            }
        }
        if kind.is_dir() {
            walk(&p, depth + 1, out);
        } else if kind.is_file() {
            out.push(p);
        }
    }
}

/// The prerequisites of a make rule as gcc writes it (`target: a b \` on
/// continued lines, spaces escaped with `\`, `$` doubled), each path made
/// lexically normal (`a/b/../c.h` → `a/c.h`).
pub(crate) fn parse(text: &str) -> Vec<PathBuf> {
    let joined = text.replace("\\\r\n", " ").replace("\\\n", " ");
    let mut out: Vec<PathBuf> = Vec::new();
    for rule in joined.lines() {
        // The target ends at the first `: ` (a path may hold a colon).
        let Some(pos) = rule
            .find(": ")
            .or_else(|| rule.strip_suffix(':').map(str::len))
        else {
            continue;
        };
        let body = &rule[(pos + 1).min(rule.len())..];
        let mut word = String::new();
        let mut chars = body.chars().peekable();
        let mut push = |w: &mut String| {
            if !w.is_empty() {
                let p = normal(Path::new(w.as_str()));
                if !out.contains(&p) {
                    out.push(p);
                }
                w.clear();
            }
        };
        while let Some(c) = chars.next() {
            match c {
                '\\' if matches!(chars.peek(), Some(' ') | Some('#') | Some('\\')) => {
                    word.push(chars.next().unwrap_or(' '));
                }
                '$' if chars.peek() == Some(&'$') => {
                    chars.next();
                    word.push('$');
                }
                c if c.is_whitespace() => push(&mut word),
                c => word.push(c),
            }
        }
        push(&mut word);
    }
    out
}

fn normal(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// sha256 of a file as this command sees it (read once per command), or
/// `MISSING` (also for anything but a regular file).
pub(crate) fn hash_in(cache: &Cache, p: &Path) -> String {
    cache
        .view()
        .sha256_file(p)
        .unwrap_or_else(|_| MISSING.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_written_after_a_compile_began_or_gone_is_unsettled() {
        use std::time::{Duration, SystemTime};
        let dir = tempfile::tempdir().unwrap();
        let header = dir.path().join("h.h");
        let before = SystemTime::now() - Duration::from_secs(5);
        std::fs::write(&header, "#define X 1\n").unwrap();
        let deps = |p: &Path| Deps {
            files: vec![(p.to_path_buf(), "x".into())],
            exact: true,
        };
        // Written after the compile began: its object may be older.
        assert!(changed_since(&deps(&header), before));
        // Written well before: settled.
        let after = SystemTime::now() + Duration::from_secs(5);
        assert!(!changed_since(&deps(&header), after));
        // Within the clock's tick before the compile began: not known.
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(&header).unwrap();
        let ctime = SystemTime::UNIX_EPOCH + Duration::new(m.ctime() as u64, m.ctime_nsec() as u32);
        assert!(changed_since(
            &deps(&header),
            ctime + Duration::from_millis(10)
        ));
        assert!(!changed_since(
            &deps(&header),
            ctime + Duration::from_millis(30)
        ));
        assert!(changed_since(&deps(&dir.path().join("gone.h")), after));
    }

    #[test]
    fn make_rules_are_read_with_escapes_and_normal_paths() {
        let text = "unit.o: /p/a.c /p/x/../inc/b.h \\\n /p/sub/c.macros /p/with\\ space.h \\\n  missing.h /p/d$$.inc\n";
        let got = parse(text);
        let want: Vec<PathBuf> = [
            "/p/a.c",
            "/p/inc/b.h",
            "/p/sub/c.macros",
            "/p/with space.h",
            "missing.h",
            "/p/d$.inc",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn lookup_directories_come_from_every_include_flag_form() {
        let unit = Unit {
            source: PathBuf::from("/p/src/a.c"),
            args: [
                "-O2",
                "-I/p/inc",
                "-I",
                "/p/two",
                "-iquote/p/q",
                "-isystem",
                "/p/sys",
                "-include",
                "x.h",
                "-idirafter/p/late",
            ]
            .map(String::from)
            .to_vec(),
            submission: true,
        };
        let want: Vec<PathBuf> = ["/p/src", "/p/inc", "/p/two", "/p/q", "/p/sys", "/p/late"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(lookup_dirs(&unit), want);
    }
}
