//! Public trees of NIST-API code, laid out as DESIGN "Public code as it is
//! shipped" describes: `crypto_kem/<scheme>/<impl>/` and
//! `crypto_sign/<scheme>/<impl>/` beside a shared `common/`, a `META.yml`
//! per scheme. One TOML per scheme: an `[[implementation]]` per
//! implementation with its own namespace (from its sources), CPU features
//! (from META.yml) and the `common/` components it includes; the
//! randomness call's link symbol from the renaming header; `nistkat-rng`
//! as the submission's own KAT RNG; one `exact:1` manifest line per
//! implementation from `nistkat-sha256` (the published digest holds for
//! each), and one KAT record per set (what that digest covers). An implementation for one architecture is drafted with `arch`
//! (built on that system's compiler, emulated systems included, SKIPPED
//! elsewhere); only one for an architecture pqbench does not build is
//! commented out, with the reason.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::emit::{self, Draft, ImplDraft, NistDraft, SetDraft};
use super::folder::Folder;
use super::impls::{sanitize, subdirs};
use super::params::SetGuess;
use super::submission::{detect_api, Api};
use super::tree_common::{find_kat_rng, Common, KatRng};
use super::tree_kat::{is_sha256, manifest};
use super::yaml::{self, MetaImpl, Scheme};
use crate::config::algorithm::{ApiFamily, Kind};
use crate::error::{ConfigError, Error};

const KINDS: [&str; 2] = ["crypto_kem", "crypto_sign"];

/// A tree (its root) and the scheme folders to import from it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Layout {
    pub root: PathBuf,
    pub schemes: Vec<PathBuf>,
}

/// Whether `path` is a public tree (its root or `crypto_kem/`,
/// `crypto_sign/`), a scheme folder in one (with `META.yml` and
/// implementation folders), or that scheme's `META.yml`.
pub(super) fn detect(path: &Path) -> Option<Layout> {
    let dir = if path.is_file() && path.file_name().is_some_and(|n| n == "META.yml") {
        path.parent()?.to_path_buf()
    } else {
        path.to_path_buf()
    };
    if !dir.is_dir() {
        return None;
    }
    if is_scheme(&dir) {
        let parent = dir.parent()?;
        let in_tree = parent
            .file_name()
            .is_some_and(|n| KINDS.contains(&n.to_string_lossy().as_ref()));
        let root = if in_tree {
            parent.parent()?.to_path_buf()
        } else {
            parent.to_path_buf()
        };
        return Some(Layout {
            root,
            schemes: vec![dir],
        });
    }
    if path.is_file() {
        return None;
    }
    let name = dir.file_name()?.to_string_lossy().into_owned();
    let (root, kinds): (PathBuf, Vec<PathBuf>) = if KINDS.contains(&name.as_str()) {
        (dir.parent()?.to_path_buf(), vec![dir.clone()])
    } else {
        let kinds: Vec<PathBuf> = KINDS
            .iter()
            .map(|k| dir.join(k))
            .filter(|d| d.is_dir())
            .collect();
        (dir.clone(), kinds)
    };
    let schemes: Vec<PathBuf> = kinds
        .iter()
        .flat_map(|k| subdirs(k).into_iter().map(|(_, p)| p))
        .filter(|p| is_scheme(p))
        .collect();
    (!schemes.is_empty()).then_some(Layout { root, schemes })
}

/// A folder with `META.yml` and at least one implementation folder.
fn is_scheme(dir: &Path) -> bool {
    dir.join("META.yml").is_file() && subdirs(dir).iter().any(|(_, p)| super::folder::has_c(p, 0))
}

/// What importing one scheme produces.
pub(super) struct SchemeImport {
    pub draft: Draft,
    /// Manifest lines keyed by label, provenance comment first (key "").
    pub manifest: Vec<(String, String)>,
    /// `algorithms/components/<name>.toml` → text.
    pub components: BTreeMap<String, String>,
    pub notes: Vec<String>,
}

/// Where the tree is, as the drafted files name it.
pub(super) struct TreeCx<'a> {
    pub layout: &'a Layout,
    /// The tree root relative to `algorithms/` (roots are written under it).
    pub base: String,
    /// The tree's name, the prefix of its component names.
    pub name: String,
    pub common: Option<Common>,
    /// How the source was given, for comments.
    pub shown: String,
    /// The architecture of this host (`std::env::consts::ARCH`).
    pub arch: &'static str,
    /// Names META.yml gives to more than one scheme imported together
    /// (PQClean names `mceliece348864` and `mceliece348864f` alike).
    pub shared_names: BTreeMap<String, Vec<String>>,
}

impl TreeCx<'_> {
    fn rel(&self, p: &Path) -> String {
        let r = p
            .strip_prefix(&self.layout.root)
            .unwrap_or(p)
            .to_string_lossy()
            .replace('\\', "/");
        if r.is_empty() {
            self.base.clone()
        } else {
            format!("{}/{r}", self.base)
        }
    }

    fn component(&self, stem: &str) -> String {
        sanitize(&format!("{}-{stem}", self.name)).to_ascii_lowercase()
    }
}

pub(super) fn tree_cx<'a>(layout: &'a Layout, alg_dir: &Path, shown: String) -> TreeCx<'a> {
    let name = layout
        .root
        .file_name()
        .map(|n| sanitize(&n.to_string_lossy()).to_ascii_lowercase())
        .unwrap_or_else(|| "tree".into());
    let base = match layout.root.strip_prefix(alg_dir) {
        Ok(r) => r.to_string_lossy().replace('\\', "/"),
        Err(_) => name.clone(),
    };
    let common = Some(layout.root.join("common"))
        .filter(|c| c.is_dir())
        .map(|c| Common::scan(&c));
    TreeCx {
        layout,
        base,
        name,
        common,
        shown,
        arch: std::env::consts::ARCH,
        shared_names: shared_names(&layout.schemes),
    }
}

/// META.yml names held by several of `schemes`, with the folders holding
/// each (unreadable metadata is reported when its scheme is drafted).
fn shared_names(schemes: &[PathBuf]) -> BTreeMap<String, Vec<String>> {
    let mut by_name: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for dir in schemes {
        let Ok(meta) = yaml::read(&dir.join("META.yml")) else {
            continue;
        };
        let folder = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Some(s) = meta.schemes.first() {
            by_name.entry(s.name.clone()).or_default().push(folder);
        }
    }
    by_name.retain(|_, folders| folders.len() > 1);
    by_name
}

/// META.yml's name, with the id added where other schemes of the tree
/// share it (their pages would otherwise read alike).
fn display_name(cx: &TreeCx, s: &Scheme, id: &str, notes: &mut Vec<String>) -> String {
    match cx.shared_names.get(&s.name) {
        Some(folders) => {
            notes.push(format!(
                "META.yml names {} alike (`{}`): drafted as `{} ({id})`",
                folders.join(", "),
                s.name,
                s.name
            ));
            format!("{} ({id})", s.name)
        }
        None => s.name.clone(),
    }
}

/// An implementation folder with what META.yml says about it.
struct Found {
    name: String,
    dir: PathBuf,
    folder: Folder,
    meta: Option<MetaImpl>,
}

pub(super) fn scheme(cx: &TreeCx, dir: &Path, id: &str) -> Result<SchemeImport, Error> {
    let meta = yaml::read(&dir.join("META.yml"))?;
    let s: &Scheme = &meta.schemes[0];
    let mut notes = Vec::new();
    let found = implementation_folders(cx, dir, s, &mut notes);
    let Some(first) = found.first() else {
        return Err(
            ConfigError::new(format!("no implementation folder in {}", dir.display())).into(),
        );
    };
    let api = detect_api(&first.folder, Some(ApiFamily::Nist));
    let kind = s.kind.or(api.kind).unwrap_or(Kind::Sign);
    let mut todos = Vec::new();
    if s.kind.is_none() && api.kind.is_none() {
        todos.push("kind = \"sign\" or \"kem\": neither META.yml nor the sources tell".into());
    }
    let mut shared = Shared::default();
    let rng = kat_rng(cx, dir, s, &found, &mut todos);
    let rng_component = rng
        .as_ref()
        .map(|rng| rng_component(cx, id, dir, s, rng, &mut shared.components));
    let mut impls: Vec<ImplDraft> = Vec::new();
    for f in &found {
        impls.push(impl_draft(cx, f, &mut shared, rng_component.as_ref()));
    }
    let nist = nist_binding(cx, &first.folder, kind, &api, &shared.symbol, &rng);
    // The published digest covers the first record only (the tree's own
    // KAT test writes one): more records would be generated unchecked,
    // and McEliece's would take minutes each.
    let published = s.kat_single.as_deref().is_some_and(is_sha256);
    // A name other schemes share would label their instances alike:
    // the id, unique in the tree, labels them instead.
    let label = if cx.shared_names.contains_key(&s.name) {
        sanitize(id)
    } else {
        sanitize(&s.name)
    };
    let set = SetDraft {
        guess: SetGuess {
            label,
            notes: vec![format!("{} (META.yml)", s.facts().join(", "))],
            ..SetGuess::default()
        },
        kat_records: published.then_some(1),
        ..SetDraft::default()
    };
    let draft = Draft {
        id: id.to_string(),
        name: display_name(cx, s, id, &mut notes),
        kind,
        api: ApiFamily::Nist,
        header: vec![
            format!(
                "Drafted by `pqbench import` from the public tree {} (scheme {}).",
                cx.shown,
                cx.rel(dir)
            ),
            format!("Check it with `pqbench validate algorithms/{id}.toml`."),
        ],
        todos,
        uses: Vec::new(),
        uses_note: None,
        ngcc_headers: Vec::new(),
        nist: Some(nist),
        implementations: impls,
        sets: vec![set],
        profile: profile_wraps(&shared.wraps),
    };
    let manifest = manifest(&draft, s, kind, &mut notes);
    Ok(SchemeImport {
        draft,
        manifest,
        components: shared.components,
        notes,
    })
}

/// The scheme's implementation folders (those META.yml lists, when it
/// lists any), portable code first: its instances carry the bare label.
fn implementation_folders(
    cx: &TreeCx,
    dir: &Path,
    s: &Scheme,
    notes: &mut Vec<String>,
) -> Vec<Found> {
    let mut found: Vec<Found> = Vec::new();
    for (name, path) in subdirs(dir) {
        if !super::folder::has_c(&path, 0) {
            continue;
        }
        let m = s
            .implementations
            .iter()
            .find(|i| sanitize(&i.name) == sanitize(&name))
            .cloned();
        if m.is_none() && !s.implementations.is_empty() {
            // Not an implementation META.yml lists (a KAT generator's
            // folder, tools).
            continue;
        }
        found.push(Found {
            name: sanitize(&name),
            folder: Folder::scan(&path),
            dir: path,
            meta: m,
        });
    }
    for i in &s.implementations {
        if !found.iter().any(|f| f.name == sanitize(&i.name)) {
            notes.push(format!(
                "{}: META.yml lists implementation `{}`, which has no folder here",
                s.name, i.name
            ));
        }
    }
    let order = |f: &Found| {
        let m = f.meta.as_ref();
        (
            !m.is_none_or(|m| m.runs_on(cx.arch)),
            m.is_some_and(|m| !m.cpu_features.is_empty()),
        )
    };
    found.sort_by_key(|f| order(f));
    found
}

/// The scheme's own KAT RNG (META.yml `nistkat-rng`), a component every
/// implementation uses; a TODO when it cannot be found.
fn kat_rng(
    cx: &TreeCx,
    dir: &Path,
    s: &Scheme,
    found: &[Found],
    todos: &mut Vec<String>,
) -> Option<(String, KatRng)> {
    let name = s.kat_rng.as_ref()?;
    let impl_dirs: Vec<PathBuf> = found.iter().map(|f| f.dir.clone()).collect();
    let common = cx.common.as_ref().map(|c| c.dir.as_path());
    match find_kat_rng(dir, &impl_dirs, common, name) {
        Ok(r) => Some((name.clone(), r)),
        Err(why) => {
            todos.push(format!(
                "META.yml names the KAT RNG `{name}`, but {why}: add a component with its source and set [nist] kat-rng = \"submission\""
            ));
            None
        }
    }
}

/// Drafts the KAT RNG's component; returns its name.
fn rng_component(
    cx: &TreeCx,
    id: &str,
    dir: &Path,
    s: &Scheme,
    (name, r): &(String, KatRng),
    components: &mut BTreeMap<String, String>,
) -> String {
    let comp = cx.component(&format!("{id}-{name}"));
    let file = r
        .source
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let root = r.source.parent().unwrap_or(dir);
    components.insert(
        comp.clone(),
        component_toml(
            &comp,
            &format!(
                "{}'s own KAT RNG ({file}, META.yml nistkat-rng: {name}) from the public tree {}",
                s.name, cx.name
            ),
            &format!("../{}", cx.rel(root)),
            &[file],
            &cx.shown,
        ),
    );
    comp
}

/// What a scheme's implementations share as they are drafted in turn.
#[derive(Default)]
struct Shared {
    /// `algorithms/components/<name>.toml` → text.
    components: BTreeMap<String, String>,
    /// The randomness call's link symbol and the header renaming it, from
    /// the first implementation whose headers tell.
    symbol: Option<(String, String)>,
    /// The hash functions of `common/` the implementations call, by class.
    wraps: BTreeSet<(String, String)>,
}

/// The class of a hash helper by its name: SHAKE and Keccak are `xof`,
/// SHA-2 and SHA-3 `hash`; anything else is no helper.
fn helper_class(name: &str) -> Option<&'static str> {
    let n = name.to_ascii_lowercase();
    if ["shake", "keccak", "absorb", "squeeze"]
        .iter()
        .any(|w| n.contains(w))
    {
        Some("xof")
    } else if n.starts_with("sha") {
        Some("hash")
    } else {
        None
    }
}

/// The wraps a NIST-API draft gets: its randomness, then the tree's hash
/// functions its code calls.
fn profile_wraps(found: &BTreeSet<(String, String)>) -> Vec<(String, String)> {
    let mut v = vec![("{randombytes}".to_string(), "drng".to_string())];
    v.extend(found.iter().cloned());
    v
}

fn impl_draft(
    cx: &TreeCx,
    f: &Found,
    shared: &mut Shared,
    rng_component: Option<&String>,
) -> ImplDraft {
    let ns = detect_api(&f.folder, Some(ApiFamily::Nist)).namespaces;
    let include_dirs = f.folder.include_dirs();
    let mut d = ImplDraft {
        name: f.name.clone(),
        root: cx.rel(&f.dir),
        sources: f.folder.source_patterns(),
        exclude: f.folder.excluded.clone(),
        include_dirs: include_dirs.clone(),
        ..ImplDraft::default()
    };
    match ns.as_slice() {
        [one] if !one.is_empty() => d.namespace = Some(one.clone()),
        [] | [_] => {}
        many => d.todos.push(format!(
            "several API prefixes in the sources ({}): set `namespace`",
            many.join(", ")
        )),
    }
    cpu_features(f, &mut d);
    d.submitter = super::makeflags::read(&f.dir, "");
    if let Some(common) = &cx.common {
        d.uses = common_uses(cx, common, f, &include_dirs, shared);
    }
    d.uses.extend(rng_component.cloned());
    if let Some(m) = &f.meta {
        (d.arch, d.disabled) = super::emit::placement(&f.name, &m.architectures, "META.yml");
        if !d.arch.is_empty() {
            d.notes.push(format!(
                "arch: written for {} (META.yml): built and KAT-checked on systems of that architecture, SKIPPED with the reason elsewhere",
                d.arch.join(", ")
            ));
        }
    }
    d
}

/// The flags META.yml requires, else those of the intrinsics used.
fn cpu_features(f: &Found, d: &mut ImplDraft) {
    let flags: Vec<String> = f
        .meta
        .as_ref()
        .map(|m| {
            m.cpu_features
                .iter()
                .filter_map(|c| gcc_feature(c))
                .collect()
        })
        .unwrap_or_default();
    if flags.is_empty() {
        d.cpu_features = f.folder.cpu_features();
        if !d.cpu_features.is_empty() {
            d.notes
                .push("cpu-features from the intrinsics the code uses".into());
        }
    } else {
        d.cpu_features = flags;
        d.notes
            .push("cpu-features: the required flags META.yml lists".into());
    }
}

/// The `common/` components an implementation uses (drafted once each):
/// one per source its headers need, else one for the headers alone.
fn common_uses(
    cx: &TreeCx,
    common: &Common,
    f: &Found,
    include_dirs: &[String],
    shared: &mut Shared,
) -> Vec<String> {
    let mut uses = Vec::new();
    // Components are shared by every scheme of the tree: the same text
    // whichever scheme's import drafts them, so a later import keeps them.
    let tree_root = cx.layout.root.display().to_string();
    let headers = common.headers_used(&f.folder, include_dirs);
    if shared.symbol.is_none() {
        shared.symbol = common.randombytes_symbol(&headers);
    }
    let link = shared.symbol.as_ref().map(|(s, _)| s.as_str());
    let mut sources = common.sources_for(&headers, link);
    sources.extend(common.link_sources(&f.folder.library(), &sources, link));
    let calls = f.folder.calls_through_macros();
    for src in &sources {
        // The shared code's hash functions this implementation calls
        // across a file boundary (where a link-time wrapper sees them).
        if let Some(file) = common.files.iter().find(|f| &f.rel == src) {
            shared.wraps.extend(
                file.defs
                    .iter()
                    .filter(|d| calls.contains(&d.name))
                    .filter_map(|d| helper_class(&d.name).map(|c| (d.name.clone(), c.to_string()))),
            );
        }
        let stem = src.rsplit_once('.').map_or(src.as_str(), |(s, _)| s);
        let comp = cx.component(&stem.replace('/', "-"));
        shared.components.entry(comp.clone()).or_insert_with(|| {
            component_toml(
                &comp,
                &format!("common/{src} of the public tree {}, compiled with the flags of each implementation that uses it", cx.name),
                &format!("../{}", cx.rel(&common.dir)),
                std::slice::from_ref(src),
                &tree_root,
            )
        });
        uses.push(comp);
    }
    if !headers.is_empty() && sources.is_empty() {
        // Headers only: the component puts common/ on the include path.
        let comp = cx.component("common");
        shared.components.entry(comp.clone()).or_insert_with(|| {
            component_toml(
                &comp,
                &format!("the headers of common/ of the public tree {}", cx.name),
                &format!("../{}", cx.rel(&common.dir)),
                &[],
                &tree_root,
            )
        });
        uses.push(comp);
    }
    uses
}

/// The [nist] table: the first implementation's binding without a shared
/// namespace (each implementation has its own), with the renamed
/// randomness call and the scheme's KAT RNG when there are.
fn nist_binding(
    cx: &TreeCx,
    first: &Folder,
    kind: Kind,
    api: &Api,
    symbol: &Option<(String, String)>,
    rng: &Option<(String, KatRng)>,
) -> NistDraft {
    let mut nist = super::binding::nist(
        first,
        kind,
        api.namespaces.first().cloned(),
        &api.namespaces,
    );
    nist.namespace = None;
    if let Some((sym, header)) = symbol {
        nist.randombytes = sym.clone();
        nist.randombytes_note = Some(format!(
            "the link symbol common/{header} renames `randombytes` to"
        ));
        nist.todos.clear();
    }
    if let Some((name, r)) = rng {
        nist.kat_rng = Some((
            r.init.clone(),
            r.args,
            format!(
                "META.yml nistkat-rng: {name}: the KAT RNG of the scheme's own ({}), seeded by {}",
                cx.rel(&r.source),
                r.init
            ),
        ));
    }
    nist
}

/// A CPU flag as metadata writes it (the kernel's `/proc/cpuinfo` names)
/// as gcc names it (an `-m` option on x86, a `-march` extension on
/// AArch64); None for what needs no option (NEON, part of every AArch64
/// CPU).
pub(super) fn gcc_feature(flag: &str) -> Option<String> {
    Some(
        match flag {
            "sse4_1" => "sse4.1",
            "sse4_2" => "sse4.2",
            "bmi1" => "bmi",
            "pclmulqdq" => "pclmul",
            "asimd" | "neon" => return None,
            other => other,
        }
        .to_string(),
    )
}

fn component_toml(
    name: &str,
    description: &str,
    root: &str,
    sources: &[String],
    shown: &str,
) -> String {
    let q = |s: &str| toml::Value::String(s.to_string()).to_string();
    let list: Vec<String> = sources.iter().map(|s| q(s)).collect();
    format!(
        "# Drafted by `pqbench import` from the public tree {shown}.\nname = {}\ndescription = {}\nroot = {}\nsources = [{}]\n",
        q(name),
        q(description),
        q(root),
        list.join(", ")
    )
}

/// Renders a scheme's draft (for the caller, which writes it).
pub(super) fn render(s: &SchemeImport) -> String {
    emit::render(&s.draft)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trees_kind_folders_and_schemes_are_recognised() {
        let t = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pubtree");
        let whole = detect(&t).unwrap();
        assert_eq!(whole.root, t);
        assert_eq!(whole.schemes.len(), 2);
        let kem = detect(&t.join("crypto_kem")).unwrap();
        assert_eq!((kem.root.clone(), kem.schemes.len()), (t.clone(), 1));
        let one = detect(&t.join("crypto_sign/fixsig")).unwrap();
        assert_eq!(one.root, t);
        assert_eq!(one.schemes, vec![t.join("crypto_sign/fixsig")]);
        let meta = detect(&t.join("crypto_sign/fixsig/META.yml")).unwrap();
        assert_eq!(meta, one);
        assert!(detect(&t.join("common")).is_none());
    }

    /// PQClean's McEliece AVX2 code requires `bmi1`, which gcc rejects as
    /// `-mbmi1`; its AArch64 code requires `asimd`, part of every AArch64
    /// CPU and no gcc option there.
    #[test]
    fn metadata_cpu_flags_become_gcc_option_names() {
        let got: Vec<Option<String>> = ["avx2", "bmi1", "sse4_1", "pclmulqdq", "asimd", "popcnt"]
            .iter()
            .map(|f| gcc_feature(f))
            .collect();
        let want = [
            Some("avx2"),
            Some("bmi"),
            Some("sse4.1"),
            Some("pclmul"),
            None,
            Some("popcnt"),
        ];
        assert_eq!(got, want.map(|w| w.map(String::from)));
    }
}
