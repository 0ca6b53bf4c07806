//! Scheme metadata (see `yaml`) → draft TOML, size catalog rows and
//! digest-only manifest lines. Metadata carries no sources, so the draft's
//! roots are placeholders marked TODO; sizes and KAT digests are exact.

use super::emit::{Draft, ImplDraft, NistDraft, SetDraft};
use super::params::{same_name, SetGuess};
use super::submission::sanitize;
use super::yaml::{KatDigests, Meta};
use crate::bless::reference_name;
use crate::config::algorithm::{ApiFamily, Kind};

pub struct MetaImport {
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

pub fn convert(
    meta: &Meta,
    id: &str,
    forced: Option<ApiFamily>,
    kats: Option<&KatDigests>,
    basis: &str,
    source: &str,
) -> MetaImport {
    let mut notes = Vec::new();
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
    // Implementations in order of first appearance; a set lists the ones
    // it has when that is not all of them.
    let mut impls: Vec<ImplDraft> = Vec::new();
    for s in &meta.schemes {
        for i in &s.implementations {
            if impls.iter().any(|d| d.name == sanitize(&i.name)) {
                continue;
            }
            let name = sanitize(&i.name);
            let mut d = ImplDraft {
                root: format!("{id}/{name}"),
                name,
                sources: vec!["*.c".into()],
                cpu_features: i.cpu_features.clone(),
                ..ImplDraft::default()
            };
            d.todos.push(format!(
                "root: the folder (relative to algorithms/) holding the `{}` sources; metadata names none",
                i.name
            ));
            if !i.runs_on(std::env::consts::ARCH) {
                d.disabled = Some(format!(
                    "Implementation `{}` is for {} (metadata): not built on this {} host; uncomment it on a system of that architecture.",
                    i.name,
                    i.architectures.join(", "),
                    std::env::consts::ARCH
                ));
            } else if !i.only_on.is_empty() {
                d.todos
                    .push(format!("runs only on {}", i.only_on.join(", ")));
            }
            impls.push(d);
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
    let all: Vec<String> = impls.iter().map(|i| i.name.clone()).collect();
    let file = reference_name(api, kind);
    let mut sets = Vec::new();
    let mut catalog = Vec::new();
    let mut manifest = Vec::new();
    let mut manifest_comments = Vec::new();
    for s in &meta.schemes {
        let label = sanitize(&s.name);
        let mut facts = Vec::new();
        if let Some(l) = s.level {
            facts.push(format!("claimed NIST level {l}"));
        }
        for (what, v) in [
            ("public key", s.public_key),
            ("secret key", s.secret_key),
            ("ciphertext", s.ciphertext),
            ("signature", s.signature),
            ("shared secret", s.shared_secret),
        ] {
            if let Some(n) = v {
                facts.push(format!("{what} {n} B"));
            }
        }
        let mut guess = SetGuess {
            label: label.clone(),
            notes: vec![format!("{} (from the metadata)", facts.join(", "))],
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
        sets.push(SetDraft {
            digest_bits: None,
            guess,
            implementations: (!mine.is_empty() && mine.len() < all.len()).then_some(mine),
            ..SetDraft::default()
        });
        catalog.push((
            label.clone(),
            format!(
                "{id};{label};{};{};{};{basis}",
                cell(s.public_key),
                cell(s.ciphertext),
                cell(s.signature)
            ),
        ));
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
                notes.push(format!(
                    "{}: kats.json and the YAML give different digests; using kats.json",
                    s.name
                ));
            }
        }
        match single.or_else(|| s.kat_single.clone()) {
            Some(d) if d.len() == 64 && d.bytes().all(|b| b.is_ascii_hexdigit()) => {
                // The published digest holds for every implementation:
                // lines for the other implementations' labels follow below.
                manifest.push((label.clone(), format!("{d} exact:1 {label}/{file}")));
            }
            Some(d) => notes.push(format!(
                "{}: `{d}` is not a SHA-256 digest; skipped",
                s.name
            )),
            None => notes.push(format!("{}: no KAT digest in the metadata", s.name)),
        }
        if let Some(all) = from_json.and_then(|(_, a)| a.clone()) {
            manifest_comments.push(format!(
                "{label}: liboqs `all` digest {all} covers liboqs' own KAT output; not checked"
            ));
        }
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
        nist: (api == ApiFamily::Nist).then(|| {
            let mut todos = vec![
                "namespace, randombytes and lengths: check them against the sources".into(),
            ];
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
        }),
        implementations: impls,
        sets,
    };
    // One line per implementation: `<label>.<impl>` instances share the
    // set's published digest.
    for (base, full) in draft.labels().into_iter().filter(|(b, f)| b != f) {
        let line = manifest
            .iter()
            .find(|(l, _)| *l == base)
            .map(|(_, line)| line.replacen(&format!(" {base}/"), &format!(" {full}/"), 1));
        if let Some(line) = line {
            manifest.push((full, line));
        }
    }
    MetaImport {
        draft,
        catalog,
        manifest,
        manifest_comments,
        notes,
    }
}
