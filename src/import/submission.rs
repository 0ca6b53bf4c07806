//! A submission directory → draft TOML, KAT references and the source
//! trees to copy. Layouts: competition packages (`Reference_Implementation/`,
//! `Optimized_Implementation/`, `Additional_Implementations/<x>/`, each with
//! one folder per parameter set or one folder for all), or one source
//! folder whose parameter sets are selected by defines.

use std::path::{Path, PathBuf};

use super::binding;
use super::emit::{Draft, ImplDraft, SetDraft};
use super::folder::Folder;
use super::impls::{implementations, sanitize, Impl};
use super::katfiles::{self, KatRef, SetKey};
use super::params::{self, SetGuess};
use crate::config::algorithm::{ApiFamily, Kind};

pub(super) struct Analysis {
    pub draft: Draft,
    pub kats: Vec<KatRef>,
    /// Trees to copy into the algorithms directory: (from, to relative to
    /// `algorithms/`). Empty when the sources are already there.
    pub copies: Vec<(PathBuf, String)>,
    pub notes: Vec<String>,
    /// The tree's own KAT generator (`PQCgenKAT_*.c`, relative to the
    /// imported directory), when it ships one and no KAT file.
    pub generator: Option<String>,
}

/// The API family and kind a folder exposes, with NIST namespaces.
pub(super) struct Api {
    pub family: Option<ApiFamily>,
    pub kind: Option<Kind>,
    pub namespaces: Vec<String>,
    pub both: bool,
}

pub(super) fn detect_api(f: &Folder, forced: Option<ApiFamily>) -> Api {
    let known = f.known();
    let has = |names: &[&str]| names.iter().all(|n| known.contains(*n));
    // The first kind, in `Kind::ALL` order, whose NGCC entry functions
    // are all there.
    let ngcc = Kind::ALL.into_iter().find(|k| has(k.def().ngcc_entry()));
    let mut namespaces = Vec::new();
    let mut nist = None;
    // Names with a tail (`crypto_kem_keypair_Frodo640`): the API of code
    // whose functions carry the set, when no name ends plainly.
    let mut tailed: Vec<(Kind, &str)> = Vec::new();
    for n in &known {
        for kind in Kind::ALL {
            let Some(keypair) = kind.def().nist_keypair() else {
                continue;
            };
            if let Some(ns) = n.strip_suffix(keypair) {
                nist.get_or_insert(kind);
                if !namespaces.contains(&ns.to_string()) {
                    namespaces.push(ns.to_string());
                }
            } else if let Some(at) = n.find(&format!("{keypair}_")) {
                tailed.push((kind, &n[..at]));
            }
        }
    }
    if nist.is_none() {
        if let Some((kind, ns)) = tailed.first() {
            nist = Some(*kind);
            namespaces.push(ns.to_string());
        }
    }
    // A macro-wrapped name also yields the bare name; keep the prefixed
    // ones when there are any, unless the sizes are bare too
    // (`CRYPTO_BYTES`, not `<NS>CRYPTO_BYTES`): then the plain names are
    // the API, which the header maps to namespaced functions (AIMer's maps
    // some and declares the others plain), and the adapter calls them so.
    if namespaces.len() > 1 {
        let bare_sizes = f.macros().iter().any(|m| m.name == "CRYPTO_PUBLICKEYBYTES");
        let plain = bare_sizes && namespaces.iter().any(String::is_empty);
        namespaces.retain(|n| n.is_empty() == plain);
    }
    let family = forced.or(match (ngcc, nist) {
        (Some(_), _) => Some(ApiFamily::Ngcc),
        (None, Some(_)) => Some(ApiFamily::Nist),
        _ => None,
    });
    let kind = match family {
        Some(ApiFamily::Ngcc) => ngcc,
        Some(ApiFamily::Nist) => nist,
        None => None,
    };
    Api {
        family,
        kind,
        namespaces,
        both: ngcc.is_some() && nist.is_some(),
    }
}

/// The display name: the README's first heading (`# id — Name (...)`),
/// else the common start of the NIST labels, else the folder name.
fn display_name(readme: Option<&str>, labels: &[String], dir: &Path) -> String {
    if let Some(h) = readme.and_then(|t| t.lines().find_map(|l| l.strip_prefix("# "))) {
        let after = h
            .split_once(" \u{2014} ")
            .or_else(|| h.split_once(" - "))
            .map_or(h, |(_, b)| b);
        let name = after.split(" (").next().unwrap_or(after).trim();
        if !name.is_empty() {
            return name.to_string();
        }
    }
    if let Some(first) = labels.first() {
        let common: String = first
            .chars()
            .enumerate()
            .take_while(|(i, c)| labels.iter().all(|l| l.chars().nth(*i) == Some(*c)))
            .map(|(_, c)| c)
            .collect();
        let trimmed = common.trim_end_matches(|c: char| !c.is_ascii_alphabetic());
        if trimmed.len() >= 2 {
            return trimmed.to_string();
        }
    }
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Analyses `dir` for algorithm `id`. `alg_dir` is the project's
/// algorithms directory (roots are written relative to it).
pub(super) fn analyse(
    alg_dir: &Path,
    dir: &Path,
    shown: &str,
    id: &str,
    forced: Option<ApiFamily>,
) -> Analysis {
    let mut notes = Vec::new();
    let mut todos = Vec::new();
    let (base, copy) = match dir.strip_prefix(alg_dir) {
        Ok(r) => (r.to_string_lossy().replace('\\', "/"), false),
        Err(_) => (id.to_string(), true),
    };
    let rel = |p: &Path| -> String {
        let r = p
            .strip_prefix(dir)
            .unwrap_or(p)
            .to_string_lossy()
            .replace('\\', "/");
        if r.is_empty() {
            base.clone()
        } else {
            format!("{base}/{r}")
        }
    };
    let impls = implementations(dir);
    let main = &impls[0].folders[0];
    let api = detect_api(main, forced);
    let (family, kind) = family_and_kind(&api, forced, &mut notes, &mut todos);
    let per_impl = guess_sets(&impls, &api, forced, &rel);
    let labels: Vec<String> = per_impl[0]
        .iter()
        .map(|(g, _, _)| g.label.clone())
        .collect();
    let name = display_name(main.readme.as_deref(), &labels, dir);
    let common_ns = common_namespace(&per_impl);
    let mut sets = set_drafts(&impls, &per_impl, common_ns.is_some());
    let implementations: Vec<ImplDraft> = impls.iter().map(|imp| impl_draft(imp, &rel)).collect();
    let (uses, uses_note, ngcc_headers, nist) = match family {
        ApiFamily::Ngcc => {
            let (uses, note, headers) = binding::ngcc(main, alg_dir, &mut todos);
            (uses, note, headers, None)
        }
        ApiFamily::Nist => {
            let mut n = binding::nist(main, kind, common_ns, &api.namespaces);
            if impls[0].shared.is_some() {
                // Each set's include directories hold its own header.
                n.header = n.header.rsplit('/').next().unwrap_or(&n.header).to_string();
            }
            (Vec::new(), None, Vec::new(), Some(n))
        }
    };
    let (mut kats, kat_notes) = katfiles::discover(dir, family, &kat_keys(&sets, &impls));
    notes.extend(kat_notes);
    attach_kats(&mut sets, &kats, kind);
    let copies = if copy {
        impls.iter().map(|i| (i.dir.clone(), rel(&i.dir))).collect()
    } else {
        Vec::new()
    };
    let draft = Draft {
        id: id.to_string(),
        name,
        kind,
        api: family,
        header: vec![
            format!("Drafted by `pqbench import` from {shown}."),
            format!("Review the notes and TODO lines, then run `pqbench validate algorithms/{id}.toml`."),
        ],
        todos,
        uses,
        uses_note,
        ngcc_headers,
        nist,
        implementations,
        sets,
        profile: Vec::new(),
    };
    share_kats(&draft, &mut kats);
    let generator = kats
        .is_empty()
        .then(|| kat_generator(dir, dir, 0))
        .flatten();
    Analysis {
        draft,
        kats,
        copies,
        notes,
        generator,
    }
}

/// How a library binds to pqbench, read from its files alone.
pub(super) struct Binding {
    pub family: ApiFamily,
    pub kind: Kind,
    pub uses: Vec<String>,
    pub uses_note: Option<String>,
    pub ngcc_headers: Vec<String>,
    pub nist: Option<super::emit::NistDraft>,
    pub todos: Vec<String>,
    pub notes: Vec<String>,
}

/// The API family, kind and binding of the library `main` holds (the files
/// a build compiled).
pub(super) fn bind(main: &Folder, alg_dir: &Path, forced: Option<ApiFamily>) -> Binding {
    let mut notes = Vec::new();
    let mut todos = Vec::new();
    let api = detect_api(main, forced);
    let (family, kind) = family_and_kind(&api, forced, &mut notes, &mut todos);
    let mut b = Binding {
        family,
        kind,
        uses: Vec::new(),
        uses_note: None,
        ngcc_headers: Vec::new(),
        nist: None,
        todos: Vec::new(),
        notes: Vec::new(),
    };
    match family {
        ApiFamily::Ngcc => {
            let (uses, note, headers) = binding::ngcc(main, alg_dir, &mut todos);
            (b.uses, b.uses_note, b.ngcc_headers) = (uses, note, headers);
        }
        ApiFamily::Nist => {
            let ns = api.namespaces.first().cloned();
            b.nist = Some(binding::nist(main, kind, ns, &api.namespaces));
        }
    }
    b.todos = todos;
    b.notes = notes;
    b
}

/// The first `PQCgenKAT_*.c` under `dir` (three levels deep at most: a
/// `ref/nistkat/` folder), relative to `root`.
fn kat_generator(root: &Path, dir: &Path, depth: usize) -> Option<String> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    let is_generator = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .is_some_and(|n| n.starts_with("pqcgenkat") && n.ends_with(".c"))
    };
    let rel = |p: &Path| p.strip_prefix(root).unwrap_or(p).display().to_string();
    if let Some(g) = entries.iter().find(|p| p.is_file() && is_generator(p)) {
        return Some(rel(g));
    }
    if depth >= 3 {
        return None;
    }
    entries
        .iter()
        .filter(|p| p.is_dir() && !p.is_symlink())
        .find_map(|p| kat_generator(root, p, depth + 1))
}

/// The API family and kind to draft, with a note or TODO where the main
/// folder leaves them open.
fn family_and_kind(
    api: &Api,
    forced: Option<ApiFamily>,
    notes: &mut Vec<String>,
    todos: &mut Vec<String>,
) -> (ApiFamily, Kind) {
    if api.both && forced.is_none() {
        notes.push(
            "both NGCC and NIST API functions found; drafted NGCC (pass --api nist for the other)"
                .into(),
        );
    }
    let family = api.family.unwrap_or(ApiFamily::Nist);
    let kind = api.kind.unwrap_or_else(|| {
        todos.push(
            "kind = \"sign\", \"kem\", \"kex\" or \"hash\": no sig_*/kem_*/kex_*/CryptHash/crypto_* API functions were found".into(),
        );
        Kind::Sign
    });
    if api.family.is_none() {
        todos.push("api = \"ngcc\" or \"nist\": no API functions found; pass --api".into());
    }
    (family, kind)
}

/// A parameter set found in a folder: its guess, its own root (per-set
/// folders only) and the folder.
type FoundSet<'a> = (SetGuess, Option<String>, &'a Folder);

/// Parameter sets per implementation.
fn guess_sets<'a>(
    impls: &'a [Impl],
    api: &Api,
    forced: Option<ApiFamily>,
    rel: &dyn Fn(&Path) -> String,
) -> Vec<Vec<FoundSet<'a>>> {
    let main = &impls[0].folders[0];
    let fallback = sanitize(
        &main
            .path
            .file_name()
            .map(|n| n.to_string_lossy().to_uppercase())
            .unwrap_or_default(),
    );
    let mut per_impl = Vec::new();
    for imp in impls {
        let mut sets = Vec::new();
        for f in &imp.folders {
            if imp.per_set {
                let root = imp.shared.is_none().then(|| rel(&f.path));
                sets.push((folder_set(f, forced), root, f));
            } else {
                for g in define_selected_sets(f, api, &fallback) {
                    sets.push((g, None, f));
                }
            }
        }
        per_impl.push(sets);
    }
    per_impl
}

/// The one set of a per-set folder, labelled by its CRYPTO_ALGNAME (the
/// one of its namespace first), else by the folder's name.
fn folder_set(f: &Folder, forced: Option<ApiFamily>) -> SetGuess {
    let lib: Vec<_> = f.library().into_iter().cloned().collect();
    let names = params::algnames(&lib);
    let a = detect_api(f, forced);
    let ns = a.namespaces.first().cloned();
    let label = ns
        .as_ref()
        .and_then(|ns| names.iter().find(|(n, _)| n == ns))
        .or(names.first())
        .map(|(_, l)| l.clone());
    let folder = f
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    SetGuess {
        label: sanitize(label.as_deref().unwrap_or(&folder)),
        namespace: ns,
        notes: vec![match &label {
            Some(_) => format!("label from CRYPTO_ALGNAME in {folder}/"),
            None => format!("label from the folder name {folder}/"),
        }],
        ..SetGuess::default()
    }
}

/// The sets a folder of all sets selects by defines; the main folder's
/// namespace goes to each when it has exactly one.
fn define_selected_sets(f: &Folder, api: &Api, fallback: &str) -> Vec<SetGuess> {
    let lib: Vec<_> = f.library().into_iter().cloned().collect();
    let names = params::algnames(&lib);
    let base_label = names
        .first()
        .map(|(_, l)| sanitize(l))
        .unwrap_or(fallback.to_string());
    let mut sets = params::define_selected(&lib, f.readme.as_deref(), &names, &base_label);
    for g in &mut sets {
        if g.namespace.is_none() && api.namespaces.len() == 1 {
            g.namespace = Some(api.namespaces[0].clone());
        }
    }
    sets
}

/// The namespace every set has, if they share one (it goes to [nist]).
fn common_namespace(per_impl: &[Vec<FoundSet>]) -> Option<String> {
    let nss: Vec<Option<String>> = per_impl
        .iter()
        .flatten()
        .map(|(g, _, _)| g.namespace.clone())
        .collect();
    nss.first()
        .cloned()
        .flatten()
        .filter(|n| nss.iter().all(|x| x.as_deref() == Some(n)))
}

/// Per-set folders need one [[parameter-set]] per (implementation, set);
/// define-selected sets are shared by every implementation.
fn set_drafts(impls: &[Impl], per_impl: &[Vec<FoundSet>], common_ns: bool) -> Vec<SetDraft> {
    let any_per_set = impls.iter().any(|i| i.per_set);
    let mut sets = Vec::new();
    for (i, imp) in impls.iter().enumerate() {
        if i > 0 && !any_per_set {
            break;
        }
        for (g, root, f) in &per_impl[i] {
            let mut g = g.clone();
            if common_ns {
                g.namespace = None;
            }
            let (sources, include_dirs) = match &imp.shared {
                // Each variant adds its own folder to the shared code.
                Some(shared) => (
                    Some(f.source_patterns()),
                    Some(
                        f.include_dirs()
                            .into_iter()
                            .filter(|d| !shared.include_dirs.contains(d))
                            .collect(),
                    ),
                ),
                None => {
                    let first = &imp.folders[0];
                    let differs = f.source_patterns() != first.source_patterns();
                    (
                        differs.then(|| f.source_patterns()),
                        (f.include_dirs() != first.include_dirs()).then(|| f.include_dirs()),
                    )
                }
            };
            sets.push(SetDraft {
                guess: g,
                implementations: (impls.len() > 1 && any_per_set).then(|| vec![imp.name.clone()]),
                root: root.clone(),
                sources,
                include_dirs,
                ..SetDraft::default()
            });
        }
    }
    sets
}

/// What KAT discovery matches files by: the first implementation's sets.
fn kat_keys(sets: &[SetDraft], impls: &[Impl]) -> Vec<SetKey> {
    sets.iter()
        .filter(|s| {
            s.implementations
                .as_ref()
                .is_none_or(|i| i[0] == impls[0].name)
        })
        .map(|s| SetKey {
            label: s.guess.label.clone(),
            folders: s
                .root
                .iter()
                .map(|r| r.rsplit('/').next().unwrap_or(r).to_string())
                .collect(),
        })
        .collect()
}

/// Record counts from the KAT files found, and for a hash the digest width
/// they state.
fn attach_kats(sets: &mut [SetDraft], kats: &[KatRef], kind: Kind) {
    for k in kats {
        for s in sets.iter_mut().filter(|s| s.guess.label == k.label) {
            s.kat_records = k.kat_records;
        }
    }
    if kind.def().takes_digest_bits() {
        // The digest width is the instance's: its KAT files state it.
        for s in sets {
            s.digest_bits = kats
                .iter()
                .filter(|k| k.label == s.guess.label)
                .find_map(|k| katfiles::digest_bits(&k.source));
            if s.digest_bits.is_none() {
                s.guess.todos.push(
                    "digest-bits = <width>: no KAT file of this set states its Dst_Len".into(),
                );
            }
        }
    }
}

/// A package's KATs hold for every implementation: the other
/// implementations' instances (`<label>.<impl>`) get the same reference.
fn share_kats(draft: &Draft, kats: &mut Vec<KatRef>) {
    for (base, full) in draft.labels().into_iter().filter(|(b, f)| b != f) {
        if let Some(k) = kats.iter().find(|k| k.label == base).cloned() {
            let line = k
                .line
                .replacen(&format!(" {base}/"), &format!(" {full}/"), 1);
            kats.push(KatRef {
                label: full,
                line,
                ..k
            });
        }
    }
}

fn impl_draft(imp: &Impl, rel: &dyn Fn(&Path) -> String) -> ImplDraft {
    let first = &imp.folders[0];
    let mut exclude: Vec<(String, String)> = Vec::new();
    for f in &imp.folders {
        for (n, why) in &f.excluded {
            if !exclude.iter().any(|(e, _)| e == n) {
                exclude.push((n.clone(), why.clone()));
            }
        }
    }
    let mut features: Vec<String> = Vec::new();
    for f in &imp.folders {
        for c in f.cpu_features() {
            if !features.contains(&c) {
                features.push(c);
            }
        }
    }
    let mut d = ImplDraft {
        name: imp.name.clone(),
        root: rel(&imp.dir),
        sources: first.source_patterns(),
        exclude,
        include_dirs: first.include_dirs(),
        cpu_features: features.clone(),
        ..ImplDraft::default()
    };
    if d.sources.is_empty() {
        d.sources = vec!["*.c".into()];
        d.todos.push(format!(
            "no library .c files found under {}: fix `root` and `sources`",
            d.root
        ));
    }
    if let Some(shared) = &imp.shared {
        d.sources = shared.sources.clone();
        d.include_dirs = shared.include_dirs.clone();
        d.notes.push(
            "one folder per variant (with api.h) beside shared code: each [[parameter-set]] adds its folder's sources and headers".into(),
        );
        d.notes.extend(shared.notes.iter().cloned());
    } else if imp.per_set {
        d.notes.push(
            "one folder per parameter set: each [[parameter-set]] sets its own `root`".into(),
        );
    }
    if !features.is_empty() {
        d.notes
            .push("cpu-features guessed from the intrinsics the code uses".into());
    }
    // One folder per parameter set: the first one's build file stands for
    // all (the note names it).
    d.submitter = super::makeflags::read(&imp.dir, "").or_else(|| {
        let sub = first.path.strip_prefix(&imp.dir).ok()?;
        super::makeflags::read(&first.path, &sub.display().to_string())
    });
    if imp.folders.iter().any(|f| f.uses_neon()) {
        d.todos
            .push("this code uses ARM NEON (arm_neon.h): it builds only on aarch64".into());
    }
    d
}
