//! Scheme metadata (see `yaml`) → draft TOML, size catalog rows and
//! digest-only manifest lines. Metadata carries no sources, so the draft's
//! roots are placeholders marked TODO; sizes and KAT digests are exact.

use super::emit::{Draft, ImplDraft, NistDraft, SetDraft};
use super::impls::sanitize;
use super::params::{same_name, SetGuess};
use super::yaml::{KatDigests, Meta, MetaImpl, Scheme};
use crate::bless::reference_name;
use crate::config::algorithm::{ApiFamily, Kind};

pub(super) struct MetaImport {
    pub draft: Draft,
    /// `ID;Instance;PublicKeyBytes;CiphertextBytes;SignatureBytes;Basis`
    /// rows, keyed by label.
    pub catalog: Vec<(String, String)>,
    /// Manifest lines keyed by label, plus comment lines.
    pub manifest: Vec<(String, String)>,
    pub manifest_comments: Vec<String>,
    pub notes: Vec<String>,
}

fn cell(v: Option<u64>) -> String {
    v.map(|n| n.to_string()).unwrap_or_default()
}

pub(super) fn convert(
    meta: &Meta,
    id: &str,
    forced: Option<ApiFamily>,
    kats: Option<&KatDigests>,
    basis: &str,
    source: &str,
) -> MetaImport {
    let kind = meta
        .schemes
        .iter()
        .find_map(|s| s.kind)
        .unwrap_or(Kind::Sign);
    let api = forced.unwrap_or(ApiFamily::Nist);
    let mut todos = Vec::new();
    if meta.schemes.iter().all(|s| s.kind.is_none()) {
        todos.push("kind: the YAML gives no `type` and no ciphertext/signature length".into());
    }
    let impls = implementations(meta, id);
    let all: Vec<String> = impls.iter().map(|i| i.name.clone()).collect();
    let file = reference_name(api, kind);
    let mut sets = Vec::new();
    let mut catalog = Vec::new();
    let mut digests = Digests::default();
    for s in &meta.schemes {
        let label = sanitize(&s.name);
        sets.push(set_draft(s, &label, &all));
        catalog.push((label.clone(), catalog_row(s, id, &label, basis)));
        digests.add(s, &label, file, kats);
    }
    let draft = Draft {
        id: id.to_string(),
        name: meta.family.clone(),
        kind,
        api,
        header: vec![
            format!("Drafted by `pqbench import` from the scheme metadata in {source}."),
            "Metadata has no sources: fill in every TODO, then run `pqbench validate`.".into(),
        ],
        todos,
        uses: Vec::new(),
        uses_note: None,
        ngcc_headers: vec!["api.h".into(), "drng.h".into()],
        nist: (api == ApiFamily::Nist).then(|| nist_draft(meta)),
        implementations: impls,
        sets,
        profile: Vec::new(),
    };
    let mut manifest = digests.manifest;
    share_digests(&draft, &mut manifest);
    MetaImport {
        draft,
        catalog,
        manifest,
        manifest_comments: digests.comments,
        notes: digests.notes,
    }
}

/// Implementations in order of first appearance, else one placeholder.
fn implementations(meta: &Meta, id: &str) -> Vec<ImplDraft> {
    let mut impls: Vec<ImplDraft> = Vec::new();
    for s in &meta.schemes {
        for i in &s.implementations {
            if impls.iter().any(|d| d.name == sanitize(&i.name)) {
                continue;
            }
            impls.push(impl_draft(i, id));
        }
    }
    if impls.is_empty() {
        impls.push(ImplDraft {
            name: "reference".into(),
            root: id.to_string(),
            sources: vec!["*.c".into()],
            todos: vec!["root: the folder (relative to algorithms/) holding the sources".into()],
            ..ImplDraft::default()
        });
    }
    impls
}

/// One implementation the metadata names; its root is left to the user.
fn impl_draft(i: &MetaImpl, id: &str) -> ImplDraft {
    let name = sanitize(&i.name);
    let mut d = ImplDraft {
        root: format!("{id}/{name}"),
        name,
        sources: vec!["*.c".into()],
        cpu_features: i
            .cpu_features
            .iter()
            .filter_map(|f| super::tree::gcc_feature(f))
            .collect(),
        ..ImplDraft::default()
    };
    d.todos.push(format!(
        "root: the folder (relative to algorithms/) holding the `{}` sources; metadata names none",
        i.name
    ));
    (d.arch, d.disabled) = super::emit::placement(&i.name, &i.architectures, "metadata");
    if d.disabled.is_none() && !i.only_on.is_empty() {
        d.todos
            .push(format!("runs only on {}", i.only_on.join(", ")));
    }
    d
}

/// A scheme's parameter set; it lists its implementations when it has
/// not all of them (`all`).
fn set_draft(s: &Scheme, label: &str, all: &[String]) -> SetDraft {
    let mut guess = SetGuess {
        label: label.to_string(),
        notes: vec![format!("{} (from the metadata)", s.facts().join(", "))],
        ..SetGuess::default()
    };
    guess.todos.push(format!(
        "defines / namespace that select {} in the sources",
        s.name
    ));
    let mine: Vec<String> = s
        .implementations
        .iter()
        .map(|i| sanitize(&i.name))
        .collect();
    SetDraft {
        digest_bits: None,
        guess,
        implementations: (!mine.is_empty() && mine.len() < all.len()).then_some(mine),
        ..SetDraft::default()
    }
}

fn catalog_row(s: &Scheme, id: &str, label: &str, basis: &str) -> String {
    format!(
        "{id};{label};{};{};{};{basis}",
        cell(s.public_key),
        cell(s.ciphertext),
        cell(s.signature)
    )
}

/// Manifest lines, manifest comments and notes from the schemes' digests.
#[derive(Default)]
struct Digests {
    manifest: Vec<(String, String)>,
    comments: Vec<String>,
    notes: Vec<String>,
}

impl Digests {
    /// A scheme's published digest, from `kats.json` before the YAML.
    fn add(&mut self, s: &Scheme, label: &str, file: &str, kats: Option<&KatDigests>) {
        let from_json = kats.and_then(|k| {
            k.get(&s.name).or_else(|| {
                k.iter()
                    .find(|(n, _)| same_name(n, &s.name))
                    .map(|(_, v)| v)
            })
        });
        let single = from_json.and_then(|(a, _)| a.clone());
        if let (Some(j), Some(y)) = (&single, &s.kat_single) {
            if j != y {
                self.notes.push(format!(
                    "{}: kats.json and the YAML give different digests; using kats.json",
                    s.name
                ));
            }
        }
        match single.or_else(|| s.kat_single.clone()) {
            Some(d) if d.len() == 64 && d.bytes().all(|b| b.is_ascii_hexdigit()) => {
                // The published digest holds for every implementation:
                // lines for the other implementations' labels follow below.
                self.manifest
                    .push((label.to_string(), format!("{d} exact:1 {label}/{file}")));
            }
            Some(d) => self.notes.push(format!(
                "{}: `{d}` is not a SHA-256 digest; skipped",
                s.name
            )),
            None => self
                .notes
                .push(format!("{}: no KAT digest in the metadata", s.name)),
        }
        if let Some(all) = from_json.and_then(|(_, a)| a.clone()) {
            self.comments.push(format!(
                "{label}: liboqs `all` digest {all} covers liboqs' own KAT output; not checked"
            ));
        }
    }
}

fn nist_draft(meta: &Meta) -> NistDraft {
    let mut todos =
        vec!["namespace, randombytes and lengths: check them against the sources".into()];
    for s in meta.schemes.iter().filter(|s| s.kat_rng.is_some()) {
        todos.push(format!(
            "{}: the metadata names its own KAT RNG `{}`: add its source as a component in `uses`, then set kat-rng = \"submission\", randombytes-init and randombytes-init-args (or import the scheme folder, which finds them)",
            s.name,
            s.kat_rng.as_deref().unwrap_or_default()
        ));
    }
    NistDraft {
        header: "api.h".into(),
        randombytes: "randombytes".into(),
        todos,
        ..NistDraft::default()
    }
}

/// One line per implementation: `<label>.<impl>` instances share the
/// set's published digest.
fn share_digests(draft: &Draft, manifest: &mut Vec<(String, String)>) {
    for (base, full) in draft.labels().into_iter().filter(|(b, f)| b != f) {
        let line = manifest
            .iter()
            .find(|(l, _)| *l == base)
            .map(|(_, line)| line.replacen(&format!(" {base}/"), &format!(" {full}/"), 1));
        if let Some(line) = line {
            manifest.push((full, line));
        }
    }
}
