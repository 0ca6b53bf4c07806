//! From the recorded calls to the KAT generators the build linked: for
//! each, every source compiled into it (directly, as an object or through
//! an archive) with the call that compiled it, and the libraries its link
//! named.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::argv::{self, CompilerCall};
use super::record::Call;

/// A source and the call that compiled it.
#[derive(Debug, Clone)]
pub(super) struct Unit {
    pub source: PathBuf,
    pub call: CompilerCall,
    /// The call's working directory (a preprocessor run for the label
    /// repeats the call there).
    pub cwd: PathBuf,
}

/// One linked KAT generator.
#[derive(Debug, Clone)]
pub(super) struct Generator {
    pub output: PathBuf,
    pub units: Vec<Unit>,
    pub libraries: Vec<String>,
    /// Objects the link used that no recorded call made (shipped objects).
    pub foreign_objects: Vec<PathBuf>,
}

fn is_compiler(tool: &str) -> bool {
    !matches!(tool, "as" | "ld" | "ar")
}

/// The generators among the links of `calls`: the programs whose name says
/// KAT (`PQCgenKAT_sign`, `nistkat`, `kat_kem`…), or the only program the
/// build linked.
pub(super) fn generators(calls: &[Call], members: &dyn Fn(&Path) -> Vec<String>) -> Vec<Generator> {
    let rank = |p: &Path| generator_rank(&file_name(p));
    let all = programs(calls, members, &|_| true);
    let best = all.iter().map(|g| rank(&g.output)).max().unwrap_or(0);
    all.into_iter()
        .filter(|g| rank(&g.output) == best)
        .collect()
}

/// The KAT checkers the build linked (`PQCtestKAT_kem`: programs that read
/// KAT files and compare the library's output with them), for a tree
/// that ships checkers and no generator.
pub(super) fn checkers(calls: &[Call], members: &dyn Fn(&Path) -> Vec<String>) -> Vec<Generator> {
    programs(calls, members, &|o| is_checker(&file_name(o)))
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

/// The programs among the links of `calls` whose output `keep` accepts,
/// each with what was compiled into it.
fn programs(
    calls: &[Call],
    members: &dyn Fn(&Path) -> Vec<String>,
    keep: &dyn Fn(&Path) -> bool,
) -> Vec<Generator> {
    let mut objects: BTreeMap<PathBuf, Unit> = BTreeMap::new();
    let mut archives: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    let mut links: Vec<(PathBuf, CompilerCall, PathBuf)> = Vec::new();
    for call in calls {
        if call.tool == "ar" {
            if let Some((a, members)) = argv::archiver(&call.cwd, &call.args) {
                let a = argv::normal(&a);
                archives
                    .entry(a)
                    .or_default()
                    .extend(members.iter().map(|m| argv::normal(m)));
            }
            continue;
        }
        if !is_compiler(&call.tool) {
            continue;
        }
        let c = argv::compiler(&call.cwd, &call.args);
        if c.query {
            continue;
        }
        if c.no_link {
            for src in &c.sources {
                let out = match (&c.output, c.sources.len()) {
                    (Some(o), 1) => o.clone(),
                    _ => call.cwd.join(object_name(src)),
                };
                objects.insert(
                    argv::normal(&out),
                    Unit {
                        source: argv::normal(src),
                        call: c.clone(),
                        cwd: call.cwd.clone(),
                    },
                );
            }
        } else {
            // A shared library is no program; `cc -v` (no input) no link.
            let shared = call.args.iter().any(|a| a == "-shared");
            if shared || (c.sources.is_empty() && c.objects.is_empty()) {
                continue;
            }
            let out = c.output.clone().unwrap_or_else(|| call.cwd.join("a.out"));
            links.push((argv::normal(&out), c, call.cwd.clone()));
        }
    }
    links
        .into_iter()
        .filter(|(o, _, _)| keep(o))
        .map(|(output, link, cwd)| {
            let made = Made {
                objects: &objects,
                archives: &archives,
                members,
            };
            closure(output, &link, &cwd, &made)
        })
        .collect()
}

/// What the build made: objects by path, archives by the calls that wrote
/// them, and the members of an archive no recorded call wrote (an `ar` the
/// build names by its full path), read from the file.
struct Made<'a> {
    objects: &'a BTreeMap<PathBuf, Unit>,
    archives: &'a BTreeMap<PathBuf, Vec<PathBuf>>,
    members: &'a dyn Fn(&Path) -> Vec<String>,
}

impl Made<'_> {
    /// The objects of an archive: as recorded, else the compiled objects
    /// whose file names its members have.
    fn archive(&self, a: &Path) -> Option<Vec<PathBuf>> {
        if let Some(m) = self.archives.get(a) {
            return Some(m.clone());
        }
        if a.extension().is_none_or(|e| e != "a") {
            return None;
        }
        let names = (self.members)(a);
        let found: Vec<PathBuf> = self
            .objects
            .keys()
            .filter(|o| {
                o.file_name()
                    .is_some_and(|n| names.iter().any(|m| m.as_str() == n.to_string_lossy()))
            })
            .cloned()
            .collect();
        (!found.is_empty()).then_some(found)
    }
}

/// How surely a program's name says it writes KAT files: NIST's generator
/// (`PQCgenKAT_sign`, `kat_gen`, `nistkat`) over a name with `kat` in it
/// that is not a checker (`PQCtestKAT_kem` reads them), over any program
/// (the build's only link, or a benchmark, tried last).
fn generator_rank(name: &str) -> u8 {
    let n = name.to_ascii_lowercase();
    if n.contains("genkat")
        || n.contains("kat_gen")
        || n.contains("katgen")
        || n.contains("nistkat")
    {
        3
    } else if n.contains("kat") && !n.contains("test") && !n.contains("check") {
        2
    } else if n.contains("kat") {
        0
    } else {
        1
    }
}

/// A program whose name says it checks KAT files (`PQCtestKAT_kem`,
/// `kat_check`).
fn is_checker(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.contains("kat") && (n.contains("test") || n.contains("check"))
}

/// `dir/x.c` → `x.o`, as a compiler names the object of `-c` without `-o`.
fn object_name(src: &Path) -> PathBuf {
    let mut n = PathBuf::from(src.file_name().unwrap_or_default());
    n.set_extension("o");
    n
}

fn closure(output: PathBuf, link: &CompilerCall, cwd: &Path, made: &Made) -> Generator {
    let mut units: Vec<Unit> = link
        .sources
        .iter()
        .map(|s| Unit {
            source: argv::normal(s),
            call: link.clone(),
            cwd: cwd.to_path_buf(),
        })
        .collect();
    let mut foreign = Vec::new();
    let mut add = |o: &Path, units: &mut Vec<Unit>| match made.objects.get(o) {
        Some(u) if !units.iter().any(|x| x.source == u.source) => units.push(u.clone()),
        Some(_) => {}
        None => foreign.push(o.to_path_buf()),
    };
    let mut libraries = Vec::new();
    for o in link.objects.iter().map(|o| argv::normal(o)) {
        match (made.archive(&o), system_library(&o)) {
            (Some(members), _) => members.iter().for_each(|m| add(m, &mut units)),
            // CMake links a found library by its path.
            (None, Some(name)) => libraries.push(name),
            (None, None) => add(&o, &mut units),
        }
    }
    // `-L dir -lname` of an archive the build made is the archive's code.
    for l in &link.libraries {
        let made_here = link
            .library_dirs
            .iter()
            .map(|d| argv::normal(&d.join(format!("lib{l}.a"))))
            .find_map(|a| made.archive(&a));
        match made_here {
            Some(members) => members.iter().for_each(|m| add(m, &mut units)),
            None => libraries.push(l.clone()),
        }
    }
    Generator {
        output,
        units,
        libraries,
        foreign_objects: foreign,
    }
}

/// `/usr/lib/…/libgmp.so` (or `.so.10`, `.a`) given to a link by its
/// path, outside the build: the system library `gmp`.
fn system_library(p: &Path) -> Option<String> {
    if !p.starts_with("/usr") && !p.starts_with("/lib") {
        return None;
    }
    let name = p.file_name()?.to_str()?.strip_prefix("lib")?;
    let stem = name
        .split_once(".so")
        .map(|(s, _)| s)
        .or_else(|| name.strip_suffix(".a"))?;
    (!stem.is_empty()).then(|| stem.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(tool: &str, cwd: &str, args: &[&str]) -> Call {
        Call {
            tool: tool.into(),
            cwd: cwd.into(),
            args: args.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn the_generator_is_the_program_named_for_it_and_a_checker_is_not() {
        assert!(generator_rank("PQCgenKAT_sign") > generator_rank("PQCtestKAT_kem"));
        assert!(generator_rank("kat_gen") > generator_rank("bench"));
        assert!(generator_rank("bench") > generator_rank("PQCtestKAT_kem"));
        let calls = [
            call("cc", "/t", &["-v"]),
            call("cc", "/t", &["-o", "bench", "b.c"]),
            call("cc", "/t", &["-o", "kat_gen", "g.c"]),
        ];
        let g = generators(&calls, &|_| Vec::new());
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].output, PathBuf::from("/t/kat_gen"));
    }

    #[test]
    fn a_generator_gathers_its_objects_archive_members_and_own_sources() {
        let calls = [
            call("cc", "/t/src", &["-DX=1", "-c", "a.c", "-o", "../obj/a.o"]),
            call("cc", "/t/src", &["-DX=2", "-c", "b.c"]),
            call("ar", "/t/src", &["rcs", "libq.a", "b.o"]),
            call(
                "cc",
                "/t",
                &["-o", "test_speed", "obj/a.o", "src/libq.a", "speed.c"],
            ),
            call(
                "cc",
                "/t",
                &[
                    "-o",
                    "PQCgenKAT_kem",
                    "obj/a.o",
                    "-Lsrc",
                    "-lq",
                    "gen.c",
                    "-lcrypto",
                ],
            ),
        ];
        let g = generators(&calls, &|_| Vec::new());
        assert_eq!(g.len(), 1, "only the KAT program: {g:?}");
        let g = &g[0];
        assert_eq!(g.output, PathBuf::from("/t/PQCgenKAT_kem"));
        let srcs: Vec<&Path> = g.units.iter().map(|u| u.source.as_path()).collect();
        assert_eq!(
            srcs,
            [
                Path::new("/t/gen.c"),
                Path::new("/t/src/a.c"),
                Path::new("/t/src/b.c")
            ]
        );
        assert_eq!(g.units[2].call.defines, [("X".into(), Some("2".into()))]);
        assert_eq!(g.libraries, ["crypto"]);
        assert_eq!(
            system_library(Path::new("/usr/lib/x86_64-linux-gnu/libgmp.so.10")).as_deref(),
            Some("gmp")
        );
        assert_eq!(system_library(Path::new("/t/libq.a")), None);
        assert!(g.foreign_objects.is_empty());
    }
}
