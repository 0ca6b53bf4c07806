//! The draft from the recorded builds: the library's sources, defines,
//! include directories and target features as the authors' build compiled
//! them, what all sets share on the implementation and the rest on each
//! set, and each set's KAT reference from its own generator.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::argv::CompilerCall;
use super::ObservedSet;
use crate::config::algorithm::ApiFamily;
use crate::import::emit::{Draft, ImplDraft, SetDraft};
use crate::import::folder::Folder;
use crate::import::katfiles;
use crate::import::params::{self, SetGuess};
use crate::import::submission;

/// One KAT reference file to write under `kat/<id>/<label>/`.
#[derive(Debug, Clone)]
pub(crate) struct KatFile {
    pub label: String,
    pub file: String,
    pub bytes: Vec<u8>,
    pub line: String,
}

type Define = (String, Option<String>);

/// What proves each set: the KAT files the tree's generators wrote, or
/// the tree's checkers, which judge pqbench's own file.
#[derive(Debug, Default)]
pub(crate) struct References {
    pub files: Vec<KatFile>,
    pub checkers: Vec<crate::import::Checker>,
}

/// Rewrites the statically drafted `draft` (kept for the API binding) from
/// the observed `sets`: one implementation rooted at `root` (the copied
/// tree), one parameter set per generator (or checker).
pub(crate) fn apply(draft: &mut Draft, sets: &[ObservedSet], at: &Placement) -> References {
    let per_set: Vec<SetBuild> = sets.iter().map(|o| SetBuild::of(o, at.tree)).collect();
    let Some(first) = per_set.first() else {
        return References::default();
    };
    rebind(draft, first, &sets[0], at);
    let shared_defines = common(per_set.iter().map(|s| s.defines.clone()));
    let shared_includes = common(per_set.iter().map(|s| s.includes.clone()));
    let shared_sources = common(per_set.iter().map(|s| s.sources.clone()));
    let same_sources = per_set.iter().all(|s| s.sources == shared_sources);
    // What every file of every set was compiled with; the rest is a file's
    // own (the AVX2 file of a library that dispatches at run time), never
    // the whole library's, which would let the compiler use AVX2 in the
    // code that checks for it.
    let shared_features = common(
        per_set
            .iter()
            .flat_map(|s| s.features.values().cloned())
            .map(|f| f.into_iter().collect::<Vec<String>>()),
    );
    let imp = ImplDraft {
        name: "reference".into(),
        root: at.root.clone(),
        notes: build_notes(sets),
        sources: shared_sources.clone(),
        include_dirs: shared_includes.clone(),
        defines: values(&shared_defines),
        libraries: libraries(sets).0,
        cpu_features: shared_features.clone(),
        units: units(&per_set, &shared_features),
        ..ImplDraft::default()
    };
    draft.implementations = vec![imp];
    let mut labels: Vec<String> = Vec::new();
    let mut kats = References::default();
    draft.sets = sets
        .iter()
        .zip(&per_set)
        .map(|(o, b)| {
            let label = unique(&o.label, &labels);
            labels.push(label.clone());
            let mut todos = b.todos.clone();
            if label != o.label {
                todos.push(format!(
                    "two builds are labelled `{}`: name this set (its label must be unique)",
                    o.label
                ));
            }
            if !o.evaluated {
                todos.push(format!(
                    "label = \"...\"  (the build defines no CRYPTO_ALGNAME; named after its program {})",
                    o.generator
                ));
            }
            let role = if o.checker.is_some() {
                "KAT checker"
            } else {
                "generator"
            };
            let mut notes = vec![format!(
                "built by `{}` ({role} {})",
                o.command, o.generator
            )];
            notes.extend(o.notes.iter().cloned());
            notes.extend(b.notes.iter().cloned());
            let (kat_records, file) = kat_of(o, &label, draft.api, &mut notes);
            kats.files.extend(file);
            if let Some(bytes) = &o.checker {
                kats.checkers.push(crate::import::Checker {
                    label: label.clone(),
                    program: o.generator.clone(),
                    command: o.command.clone(),
                    bytes: bytes.clone(),
                });
            }
            let (header, suffix) = own_api(o, b).unzip();
            SetDraft {
                header,
                suffix,
                guess: SetGuess {
                    label,
                    defines: values(&minus(&b.defines, &shared_defines)),
                    namespace: None,
                    notes,
                    todos,
                },
                sources: (!same_sources).then(|| b.sources.clone()),
                include_dirs: Some(minus(&b.includes, &shared_includes))
                    .filter(|v| !v.is_empty()),
                kat_records,
                ..SetDraft::default()
            }
        })
        .collect();
    kats
}

/// Where the draft puts the tree and how it was asked for.
pub(crate) struct Placement<'a> {
    /// The implementation's root, relative to `algorithms/`.
    pub root: String,
    /// The imported tree.
    pub tree: &'a Path,
    pub alg_dir: &'a Path,
    pub forced: Option<ApiFamily>,
}

/// The API binding read again from what the build compiled: the static
/// reading of the whole tree may have looked at other folders.
fn rebind(draft: &mut Draft, first: &SetBuild, o: &ObservedSet, at: &Placement) {
    // The header the generator calls the library through declares the
    // API even where no compiled file does (a set's file that includes
    // the code, `#include "kem.c"`, behind renaming macros).
    let mut files = first.sources.clone();
    files.extend(o.api_header.as_ref().map(|h| h.rel.clone()));
    let folder = Folder::of_files(at.tree, &files, &first.includes, &o.generated);
    let b = submission::bind(&folder, at.alg_dir, at.forced);
    draft.kind = b.kind;
    draft.api = b.family;
    draft.uses = b.uses;
    draft.uses_note = b.uses_note;
    draft.ngcc_headers = b.ngcc_headers;
    draft.todos = b.todos;
    let own = own_api(o, first);
    draft.nist = b.nist.map(|mut n| {
        if let Some((header, _)) = &own {
            // Each set names its own; the first stands for them all.
            n.header = header.clone();
        }
        // A header in an include directory is found by its name.
        if let Some((dir, name)) = n.header.rsplit_once('/') {
            if first.includes.iter().any(|i| i == dir) {
                n.header = name.to_string();
            }
        }
        n
    });
    draft.header.extend(b.notes);
}

/// A set whose API functions carry its name (`crypto_kem_keypair_Frodo640`
/// in `api_frodo640.h`): its header, by name when an include directory of
/// the set holds it, and the names' suffix. `None` for the usual API.
fn own_api(o: &ObservedSet, b: &SetBuild) -> Option<(String, String)> {
    let h = o.api_header.as_ref()?;
    let (_, suffix) = h.affixes().filter(|(_, s)| !s.is_empty())?;
    let header = match h.rel.rsplit_once('/') {
        Some((dir, name)) if b.includes.iter().any(|i| i == dir) => name.to_string(),
        _ => h.rel.clone(),
    };
    Some((header, suffix))
}

/// Groups the files compiled with features beyond `shared` by those
/// features, in the order of the features' first file.
fn units(per_set: &[SetBuild], shared: &[String]) -> Vec<(Vec<String>, Vec<String>)> {
    let mut own: BTreeMap<&String, BTreeSet<&String>> = BTreeMap::new();
    for s in per_set {
        for (file, features) in &s.features {
            let entry = own.entry(file).or_default();
            entry.extend(features.iter().filter(|f| !shared.contains(f)));
        }
    }
    let mut groups: Vec<(Vec<String>, Vec<String>)> = Vec::new();
    for (file, features) in own.into_iter().filter(|(_, f)| !f.is_empty()) {
        let features: Vec<String> = features.into_iter().cloned().collect();
        match groups.iter_mut().find(|(_, f)| *f == features) {
            Some((files, _)) => files.push(file.clone()),
            None => groups.push((vec![file.clone()], features)),
        }
    }
    groups
}

/// What one set's build compiled the library with.
struct SetBuild {
    sources: Vec<String>,
    defines: Vec<Define>,
    includes: Vec<String>,
    /// Each compiled file → the CPU features of its compile.
    features: BTreeMap<String, BTreeSet<String>>,
    todos: Vec<String>,
    notes: Vec<String>,
}

impl SetBuild {
    /// `tree`: the imported tree, where an include directory the build
    /// made itself (meson's private folders) does not exist.
    fn of(o: &ObservedSet, tree: &Path) -> SetBuild {
        let calls: Vec<&CompilerCall> = o.units.iter().map(|(_, c)| c).collect();
        let (defines, todos, notes) = joined_defines(&o.units);
        let root = o.root.clone();
        let mut includes: Vec<String> = Vec::new();
        for c in &calls {
            for inc in &c.includes {
                let Some(rel) = inside(&root, inc) else {
                    continue;
                };
                // A folder the build made is kept when it holds a source
                // the import keeps (a packaging script's folder), not when
                // it holds objects (meson's private folders).
                let kept = tree.join(&rel).is_dir()
                    || o.generated.keys().any(|g| Path::new(g).starts_with(&rel));
                if !rel.is_empty() && !includes.contains(&rel) && kept {
                    includes.push(rel);
                }
            }
        }
        let mut features: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (src, c) in &o.units {
            let entry = features.entry(src.clone()).or_default();
            entry.extend(c.machine.iter().filter_map(|m| feature(m)));
        }
        let mut sources: Vec<String> = o.units.iter().map(|(s, _)| s.clone()).collect();
        sources.sort();
        sources.dedup();
        let includes = order_includes(tree, includes, &sources);
        SetBuild {
            sources,
            defines,
            includes,
            features,
            todos,
            notes,
        }
    }
}

/// One list of include directories serves every file of a set, where the
/// build may have given different files different ones (a hash library
/// built by a sub-make with its own `-I`). Where two directories hold
/// headers of the same name, the one whose own sources are compiled into
/// the library comes first: its headers describe the code that is linked.
fn order_includes(tree: &Path, includes: Vec<String>, sources: &[String]) -> Vec<String> {
    let backed = |d: &str| {
        sources
            .iter()
            .any(|s| s.rsplit_once('/').map_or("", |(dir, _)| dir) == d)
    };
    let headers = |d: &str| -> BTreeSet<String> {
        std::fs::read_dir(tree.join(d))
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.ends_with(".h"))
                    .collect()
            })
            .unwrap_or_default()
    };
    let shadowing = |d: &String| {
        !backed(d)
            && includes
                .iter()
                .any(|e| e != d && backed(e) && !headers(d).is_disjoint(&headers(e)))
    };
    let (later, first): (Vec<String>, Vec<String>) =
        includes.iter().cloned().partition(|d| shadowing(d));
    first.into_iter().chain(later).collect()
}

/// One list of defines for every file of a set, as pqbench compiles them:
/// each name the build gave any file, with the value most files got. A
/// name given to some files only is a note (harmless as a rule: a
/// module's switch that other files never read); a name given different
/// values is a TODO, since one of them is compiled wrongly.
fn joined_defines(units: &[(String, CompilerCall)]) -> (Vec<Define>, Vec<String>, Vec<String>) {
    let mut names: Vec<String> = Vec::new();
    for (_, c) in units {
        for (n, _) in &c.defines {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
    }
    let (mut defines, mut todos, mut notes) = (Vec::new(), Vec::new(), Vec::new());
    for name in names {
        let mut values: Vec<(Option<String>, Vec<&str>)> = Vec::new();
        let mut without = Vec::new();
        for (src, c) in units {
            match c.defines.iter().find(|(n, _)| *n == name) {
                Some((_, v)) => match values.iter_mut().find(|(x, _)| x == v) {
                    Some((_, files)) => files.push(src),
                    None => values.push((v.clone(), vec![src])),
                },
                None => without.push(src.as_str()),
            }
        }
        let best = values
            .iter()
            .enumerate()
            .max_by_key(|(i, (_, files))| (files.len(), usize::MAX - i))
            .map(|(_, (v, _))| v.clone())
            .unwrap_or_default();
        let chosen = (name.clone(), best);
        if values.len() > 1 {
            let all: Vec<String> = values
                .iter()
                .map(|(v, files)| {
                    format!(
                        "{} for {}",
                        flag(&(name.clone(), v.clone())),
                        files.join(", ")
                    )
                })
                .collect();
            todos.push(format!(
                "the build gives {name} different values ({}); pqbench compiles every file of a set with one, {}",
                all.join("; "),
                flag(&chosen)
            ));
        }
        if !without.is_empty() {
            notes.push(format!(
                "the build compiled {} without {}; pqbench compiles every file of the set with it",
                without.join(", "),
                flag(&chosen)
            ));
        }
        defines.push(chosen);
    }
    (defines, todos, notes)
}

/// `-mavx2` → `avx2`: a target feature as the TOML's `cpu-features`
/// names it (gcc's option name); `-march=`, `-mtune=`, `-m64`, `-mno-…`
/// are no feature of the code.
fn feature(flag: &str) -> Option<String> {
    let f = flag.strip_prefix("-m")?;
    let not_feature = f.contains('=')
        || f.starts_with("no-")
        || matches!(f, "32" | "64" | "x32" | "16" | "abi=lp64");
    (!not_feature && !f.is_empty()).then(|| f.to_string())
}

/// A path of the build as the draft writes it: relative to the tree's
/// copy, `None` outside it (the system's headers).
fn inside(root: &std::path::Path, p: &std::path::Path) -> Option<String> {
    super::argv::normal(p)
        .strip_prefix(root)
        .ok()
        .map(|r| r.to_string_lossy().replace('\\', "/"))
}

fn flag((name, value): &Define) -> String {
    match value {
        Some(v) => format!("-D{name}={v}"),
        None => format!("-D{name}"),
    }
}

/// What every list holds (a define with the same value, a folder, a
/// source), in the first list's order.
fn common<T: PartialEq>(mut lists: impl Iterator<Item = Vec<T>>) -> Vec<T> {
    let Some(first) = lists.next() else {
        return Vec::new();
    };
    lists.fold(first, |acc, l| {
        acc.into_iter().filter(|d| l.contains(d)).collect()
    })
}

/// `all` less what `shared` holds, in order.
fn minus<T: PartialEq + Clone>(all: &[T], shared: &[T]) -> Vec<T> {
    all.iter()
        .filter(|d| !shared.contains(d))
        .cloned()
        .collect()
}

fn values(defines: &[Define]) -> Vec<(String, toml::Value)> {
    defines
        .iter()
        .map(|(n, v)| (n.clone(), params::value(v.as_deref().unwrap_or(""))))
        .collect()
}

fn unique(label: &str, taken: &[String]) -> String {
    if !taken.iter().any(|t| t == label) {
        return label.to_string();
    }
    (2..)
        .map(|n| format!("{label}-{n}"))
        .find(|l| !taken.contains(l))
        .unwrap_or_default()
}

/// The notes the implementation carries: what the builds left out of the
/// library and the system libraries their links named.
fn build_notes(sets: &[ObservedSet]) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for o in sets {
        for (file, why) in &o.excluded {
            if seen.insert(file.clone()) {
                out.push(format!("left out of the library: {file} ({why})"));
            }
        }
    }
    let (_, left) = libraries(sets);
    if !left.is_empty() {
        let names: Vec<String> = left.iter().map(|l| format!("-l{l}")).collect();
        out.push(format!(
            "the generator's link also named {}, which only what was left out uses (NIST's rng.c takes AES from libcrypto; pqbench's DRBG replaces it)",
            names.join(" ")
        ));
    }
    out
}

/// The system libraries the generators' links named, split into those the
/// library itself uses and those only the left-out files do: OpenSSL's
/// libcrypto and libssl are the library's when one of its files includes
/// an OpenSSL header, itself or through the tree's headers; libm is always
/// linked.
fn libraries(sets: &[ObservedSet]) -> (Vec<String>, Vec<String>) {
    let all: BTreeSet<&String> = sets.iter().flat_map(|o| &o.libraries).collect();
    let uses_openssl = sets.iter().any(|o| {
        o.units.iter().any(|(src, call)| {
            let dirs: Vec<std::path::PathBuf> = call
                .includes
                .iter()
                .filter_map(|i| i.strip_prefix(&o.root).ok())
                .map(|r| o.tree.join(r))
                .collect();
            super::header::includes_any(
                &o.tree.join(src),
                &dirs,
                &o.tree,
                &["<openssl/", "\"openssl/"],
            )
        })
    });
    let (mut kept, mut left) = (Vec::new(), Vec::new());
    for l in all {
        match l.as_str() {
            "m" | "c" => {}
            "crypto" | "ssl" if !uses_openssl => left.push(l.clone()),
            _ => kept.push(l.clone()),
        }
    }
    (kept, left)
}

/// The set's reference: the first `.rsp` its generator wrote.
fn kat_of(
    o: &ObservedSet,
    label: &str,
    api: ApiFamily,
    notes: &mut Vec<String>,
) -> (Option<u32>, Option<KatFile>) {
    let Some((file, bytes)) = o.kats.first() else {
        return (None, None);
    };
    for (other, _) in o.kats.iter().skip(1) {
        notes.push(format!(
            "its generator also wrote {other}; the reference is {file}"
        ));
    }
    let (line, kat_records) = katfiles::manifest_line(bytes, label, file, api, false);
    (
        kat_records,
        Some(KatFile {
            label: label.to_string(),
            file: file.clone(),
            bytes: bytes.clone(),
            line,
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(n: &str, v: Option<&str>) -> Define {
        (n.to_string(), v.map(String::from))
    }

    #[test]
    fn shared_defines_keep_their_value_and_the_rest_are_per_set() {
        let a = vec![d("KAT", None), d("SET", Some("a")), d("L", Some("1"))];
        let b = vec![d("KAT", None), d("SET", Some("b")), d("L", Some("1"))];
        let shared = common([a.clone(), b.clone()].into_iter());
        assert_eq!(shared, [d("KAT", None), d("L", Some("1"))]);
        assert_eq!(minus(&a, &shared), [d("SET", Some("a"))]);
        assert_eq!(feature("-mavx2").as_deref(), Some("avx2"));
        assert_eq!(feature("-march=native"), None);
        assert_eq!(feature("-mno-avx"), None);
        assert_eq!(unique("X", &["X".into(), "X-2".into()]), "X-3");
    }

    #[test]
    fn a_header_folder_whose_code_is_not_compiled_yields_to_one_whose_code_is() {
        let t = tempfile::tempdir().unwrap();
        for d in ["k/avx2", "k/opt64", "inc"] {
            std::fs::create_dir_all(t.path().join(d)).unwrap();
        }
        for f in ["k/avx2/SnP.h", "k/opt64/SnP.h", "inc/api.h"] {
            std::fs::write(t.path().join(f), "").unwrap();
        }
        let inc = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let sources = inc(&["k/opt64/p.c", "main.c"]);
        assert_eq!(
            order_includes(t.path(), inc(&["k/avx2", "inc", "k/opt64"]), &sources),
            ["inc", "k/opt64", "k/avx2"]
        );
        // No collision: the build's order stays.
        assert_eq!(
            order_includes(t.path(), inc(&["inc", "k/avx2"]), &sources),
            ["inc", "k/avx2"]
        );
    }
}
