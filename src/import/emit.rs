//! The draft algorithm TOML: what the importer decided, plus commented
//! notes (where a value came from) and TODO lines (what a human must fill
//! in). Writing goes through `toml::Value` for every string so quoting is
//! always valid, and the result is checked against `RawAlgorithm`.

use crate::config::algorithm::{ApiFamily, InitArgs, Kind, LengthType, SignatureApi};

use super::params::SetGuess;

#[derive(Debug, Clone)]
pub(super) struct Draft {
    pub id: String,
    pub name: String,
    pub kind: Kind,
    pub api: ApiFamily,
    /// Comment lines at the top of the file.
    pub header: Vec<String>,
    /// TODO lines that concern the whole algorithm.
    pub todos: Vec<String>,
    pub uses: Vec<String>,
    pub uses_note: Option<String>,
    pub ngcc_headers: Vec<String>,
    pub nist: Option<NistDraft>,
    pub implementations: Vec<ImplDraft>,
    pub sets: Vec<SetDraft>,
    /// `[[profile.wrap]]`s: the helper functions whose share the profile
    /// shows (symbol, class).
    pub profile: Vec<(String, String)>,
}

#[derive(Debug, Clone, Default)]
pub(super) struct NistDraft {
    pub header: String,
    pub namespace: Option<String>,
    pub randombytes: String,
    pub randombytes_note: Option<String>,
    pub lengths: Option<LengthType>,
    /// A signature whose `crypto_sign` takes a context string.
    pub signature_api: Option<SignatureApi>,
    /// The submission's own KAT RNG: its init symbol and argument shape,
    /// with a note on where they were found.
    pub kat_rng: Option<(String, InitArgs, String)>,
    pub todos: Vec<String>,
}

#[derive(Debug, Clone, Default)]
pub(super) struct ImplDraft {
    pub name: String,
    pub root: String,
    pub notes: Vec<String>,
    pub todos: Vec<String>,
    pub sources: Vec<String>,
    /// File name and why it is excluded.
    pub exclude: Vec<(String, String)>,
    pub include_dirs: Vec<String>,
    /// `-D` defines of every set (as its own build passes them).
    pub defines: Vec<(String, toml::Value)>,
    pub cpu_features: Vec<String>,
    /// System libraries it links.
    pub libraries: Vec<String>,
    /// Prefix of this implementation's symbols and `CRYPTO_` macros.
    pub namespace: Option<String>,
    /// Components compiled with this implementation only.
    pub uses: Vec<String>,
    /// The architectures it is written for (`arch`), when its metadata
    /// names them: it is built and checked on systems of those only.
    pub arch: Vec<String>,
    /// Why it is drafted commented out (written for no architecture
    /// pqbench builds for), if it is.
    pub disabled: Option<String>,
    /// The flags of its own build file, for the `submitter` profile.
    pub submitter: Option<super::makeflags::SubmitterFlags>,
    /// Files compiled with CPU features beyond `cpu_features`, grouped by
    /// those features (`[[implementation.unit]]`).
    pub units: Vec<(Vec<String>, Vec<String>)>,
}

/// Where an implementation whose metadata (`source`) lists
/// `architectures` is built: `arch` from the ones pqbench builds for, or,
/// when it names none of them, the reason to draft it commented out.
pub(super) fn placement(
    name: &str,
    architectures: &[String],
    source: &str,
) -> (Vec<String>, Option<String>) {
    const BUILT: [&str; 2] = ["x86_64", "aarch64"];
    let arch: Vec<String> = architectures
        .iter()
        .filter(|a| BUILT.contains(&a.as_str()))
        .cloned()
        .collect();
    if architectures.is_empty() || !arch.is_empty() {
        return (arch, None);
    }
    (
        arch,
        Some(format!(
            "Implementation `{name}` is for {} ({source}): pqbench builds for x86_64 and aarch64 only.",
            architectures.join(", ")
        )),
    )
}

#[derive(Debug, Clone, Default)]
pub(super) struct SetDraft {
    pub guess: SetGuess,
    /// The set's own API header and function-name suffix, for code whose
    /// functions carry the set's name (`crypto_kem_keypair_Frodo640`).
    pub header: Option<String>,
    pub suffix: Option<String>,
    pub implementations: Option<Vec<String>>,
    pub root: Option<String>,
    pub sources: Option<Vec<String>>,
    pub include_dirs: Option<Vec<String>>,
    pub kat_records: Option<u32>,
    /// Hash instances: the digest width.
    pub digest_bits: Option<u32>,
}

impl Draft {
    /// Every instance label with the parameter-set label it derives from:
    /// the first implementation's instances carry the set's label, the
    /// others `<label>.<implementation>` (as `plan::resolve` names them).
    pub(super) fn labels(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let enabled = self.implementations.iter().filter(|i| i.disabled.is_none());
        for (k, imp) in enabled.enumerate() {
            for s in &self.sets {
                if s.implementations
                    .as_ref()
                    .is_some_and(|l| !l.contains(&imp.name))
                {
                    continue;
                }
                let base = s.guess.label.clone();
                let full = if k == 0 {
                    base.clone()
                } else {
                    format!("{base}.{}", imp.name)
                };
                out.push((base, full));
            }
        }
        out
    }
}

/// A note as one comment line: text from a foreign tree (a file name, a
/// build file's words) may hold a line break or another control character,
/// which would end the comment and write TOML of its own.
pub(super) fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

fn q(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

fn list(items: &[String]) -> String {
    let parts: Vec<String> = items.iter().map(|s| q(s)).collect();
    format!("[{}]", parts.join(", "))
}

fn comment(out: &mut String, lines: &[String]) {
    for l in lines {
        out.push_str(&format!("# {}\n", one_line(l)));
    }
}

fn todo(out: &mut String, lines: &[String]) {
    for l in lines {
        out.push_str(&format!("# TODO: {}\n", one_line(l)));
    }
}

/// Renders the draft as TOML text.
pub(super) fn render(d: &Draft) -> String {
    let mut o = String::new();
    comment(&mut o, &d.header);
    todo(&mut o, &d.todos);
    o.push_str(&format!("id = {}\n", q(&d.id)));
    o.push_str(&format!("name = {}\n", q(&d.name)));
    o.push_str(&format!("kind = {}\n", q(d.kind.as_str())));
    o.push_str(&format!("api = {}\n", q(d.api.as_str())));
    o.push_str("# description = \"...\"  # optional: one line shown on the algorithm's page\n");
    if !d.uses.is_empty() {
        if let Some(n) = &d.uses_note {
            comment(&mut o, std::slice::from_ref(n));
        }
        o.push_str(&format!("uses = {}\n", list(&d.uses)));
    }
    match (d.api, &d.nist) {
        (ApiFamily::Ngcc, _) => {
            o.push_str("\n[ngcc]\n");
            o.push_str(&format!("headers = {}\n", list(&d.ngcc_headers)));
        }
        (ApiFamily::Nist, Some(n)) => {
            o.push_str("\n[nist]\n");
            o.push_str(&format!("header = {}\n", q(&n.header)));
            if let Some(ns) = &n.namespace {
                o.push_str(&format!("namespace = {}\n", q(ns)));
            }
            if let Some(note) = &n.randombytes_note {
                comment(&mut o, std::slice::from_ref(note));
            }
            o.push_str(&format!("randombytes = {}\n", q(&n.randombytes)));
            if let Some(l) = n.lengths {
                let s = match l {
                    LengthType::SizeT => "size-t",
                    LengthType::UnsignedLongLong => "unsigned-long-long",
                };
                o.push_str(&format!("lengths = {}\n", q(s)));
            }
            if let Some(api) = n.signature_api {
                o.push_str("# crypto_sign takes a context string: called with the empty one\n");
                o.push_str(&format!("signature-api = {}\n", q(api.as_str())));
            }
            if let Some((init, args, note)) = &n.kat_rng {
                comment(&mut o, std::slice::from_ref(note));
                o.push_str("kat-rng = \"submission\"\n");
                o.push_str(&format!("randombytes-init = {}\n", q(init)));
                o.push_str(&format!("randombytes-init-args = {}\n", q(args.as_str())));
            }
            todo(&mut o, &n.todos);
        }
        (ApiFamily::Nist, None) => {}
    }
    for imp in d.implementations.iter().filter(|i| i.disabled.is_none()) {
        o.push_str(&implementation(imp));
    }
    // Code for no architecture pqbench builds for: kept as a commented
    // block.
    for imp in d.implementations.iter().filter(|i| i.disabled.is_some()) {
        o.push('\n');
        comment(&mut o, &[imp.disabled.clone().unwrap_or_default()]);
        for line in implementation(imp).lines().filter(|l| !l.is_empty()) {
            o.push_str(&format!("# {line}\n"));
        }
    }
    sets(&mut o, d);
    profile(&mut o, &d.profile);
    o
}

/// The helper wraps, with the hash class titled for what it holds (the
/// default title names the ICCS helpers, which NIST code does not call).
fn profile(o: &mut String, wraps: &[(String, String)]) {
    if wraps.is_empty() {
        return;
    }
    o.push_str("\n# The profile's helper shares: the tree's hash functions this code calls\n# from another file, and its randomness.\n");
    if wraps.iter().any(|(_, c)| c == "hash") {
        o.push_str("[profile.classes]\nhash = \"SHA-2/SHA-3\"\n");
    }
    for (symbol, class) in wraps {
        o.push_str(&format!(
            "\n[[profile.wrap]]\nsymbol = {}\nclass = {}\n",
            q(symbol),
            q(class)
        ));
    }
}

fn implementation(imp: &ImplDraft) -> String {
    let mut o = String::new();
    {
        o.push_str("\n[[implementation]]\n");
        comment(&mut o, &imp.notes);
        todo(&mut o, &imp.todos);
        o.push_str(&format!("name = {}\n", q(&imp.name)));
        o.push_str(&format!("root = {}\n", q(&imp.root)));
        o.push_str(&format!("sources = {}\n", list(&imp.sources)));
        if !imp.exclude.is_empty() {
            o.push_str("exclude = [\n");
            for (f, why) in &imp.exclude {
                o.push_str(&format!("    {},  # {why}\n", q(f)));
            }
            o.push_str("]\n");
        }
        if !imp.include_dirs.is_empty() {
            o.push_str(&format!("include-dirs = {}\n", list(&imp.include_dirs)));
        }
        if !imp.defines.is_empty() {
            o.push_str(&format!("defines = {}\n", inline_table(&imp.defines)));
        }
        if !imp.cpu_features.is_empty() {
            o.push_str(&format!("cpu-features = {}\n", list(&imp.cpu_features)));
        }
        if !imp.libraries.is_empty() {
            o.push_str(&format!("libraries = {}\n", list(&imp.libraries)));
        }
        if !imp.arch.is_empty() {
            o.push_str(&format!("arch = {}\n", list(&imp.arch)));
        }
        if let Some(ns) = &imp.namespace {
            o.push_str(&format!("namespace = {}\n", q(ns)));
        }
        if !imp.uses.is_empty() {
            o.push_str(&format!("uses = {}\n", list(&imp.uses)));
        }
        if let Some(s) = &imp.submitter {
            // No flags read: the TODO lines alone, no key that would build
            // the submitter profile with `-fPIC` only.
            if !s.cflags.is_empty() {
                comment(&mut o, std::slice::from_ref(&s.note));
            }
            todo(&mut o, &s.todos);
            if !s.cflags.is_empty() {
                o.push_str(&format!("submitter-cflags = {}\n", list(&s.cflags)));
            }
        }
        for (sources, features) in &imp.units {
            o.push_str("\n[[implementation.unit]]\n");
            o.push_str(&format!("sources = {}\n", list(sources)));
            o.push_str(&format!("cpu-features = {}\n", list(features)));
        }
    }
    o
}

/// `{ A = 1, "B.C" = true }`: a define's name is quoted when TOML needs it.
fn inline_table(defines: &[(String, toml::Value)]) -> String {
    let parts: Vec<String> = defines
        .iter()
        .map(|(k, v)| {
            let bare = !k.is_empty()
                && k.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            let key = if bare { k.clone() } else { q(k) };
            format!("{key} = {v}")
        })
        .collect();
    format!("{{ {} }}", parts.join(", "))
}

fn sets(o: &mut String, d: &Draft) {
    for s in &d.sets {
        o.push_str("\n[[parameter-set]]\n");
        comment(o, &s.guess.notes);
        todo(o, &s.guess.todos);
        o.push_str(&format!("label = {}\n", q(&s.guess.label)));
        if !s.guess.defines.is_empty() {
            o.push_str(&format!("defines = {}\n", inline_table(&s.guess.defines)));
        }
        if let Some(ns) = &s.guess.namespace {
            o.push_str(&format!("namespace = {}\n", q(ns)));
        }
        if let Some(h) = &s.header {
            o.push_str(&format!("header = {}\n", q(h)));
        }
        if let Some(sfx) = &s.suffix {
            o.push_str(&format!("suffix = {}\n", q(sfx)));
        }
        if let Some(i) = &s.implementations {
            o.push_str(&format!("implementations = {}\n", list(i)));
        }
        if let Some(r) = &s.root {
            o.push_str(&format!("root = {}\n", q(r)));
        }
        if let Some(src) = &s.sources {
            o.push_str(&format!("sources = {}\n", list(src)));
        }
        if let Some(inc) = &s.include_dirs {
            o.push_str(&format!("include-dirs = {}\n", list(inc)));
        }
        if let Some(n) = s.kat_records {
            let records = if n == 1 { "record" } else { "records" };
            o.push_str(&format!(
                "kat-records = {n}  # the reference covers {n} {records}\n"
            ));
        }
        if let Some(n) = s.digest_bits {
            o.push_str(&format!(
                "digest-bits = {n}  # the Dst_Len of its reference KAT files\n"
            ));
        }
    }
}

/// The TODO lines of a drafted file: every line with a comment that opens
/// with `TODO`, wherever on the line the comment starts (the count import
/// reports).
pub(super) fn todo_lines(text: &str) -> usize {
    text.lines()
        .filter(|l| {
            l.split('#')
                .skip(1)
                .any(|c| c.trim_start().starts_with("TODO"))
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::algorithm::RawAlgorithm;

    #[test]
    fn a_line_break_in_foreign_text_stays_inside_its_comment() {
        let mut o = String::new();
        comment(&mut o, &["a\n[evil]\r\nkey = 1".to_string()]);
        todo(&mut o, &["b\nname = \"x\"".to_string()]);
        assert_eq!(o.lines().count(), 2, "{o}");
        assert!(o.lines().all(|l| l.starts_with('#')), "{o}");
    }

    #[test]
    fn rendered_draft_parses_with_the_schema() {
        let d = Draft {
            id: "x-1".into(),
            name: "Name \"quoted\"".into(),
            kind: Kind::Sign,
            api: ApiFamily::Nist,
            header: vec!["imported".into()],
            todos: vec!["check".into()],
            uses: vec![],
            uses_note: None,
            ngcc_headers: vec![],
            nist: Some(NistDraft {
                header: "api.h".into(),
                randombytes: "randombytes".into(),
                lengths: Some(LengthType::SizeT),
                ..NistDraft::default()
            }),
            profile: vec![("sha3_256".into(), "hash".into())],
            implementations: vec![ImplDraft {
                name: "reference".into(),
                root: "x-1".into(),
                sources: vec!["*.c".into()],
                exclude: vec![("rng.c".into(), "builtin RNG".into())],
                ..ImplDraft::default()
            }],
            sets: vec![SetDraft {
                digest_bits: None,
                guess: SetGuess {
                    label: "X-1".into(),
                    defines: vec![("N".into(), toml::Value::Integer(1))],
                    todos: vec!["label = \"...\"".into()],
                    ..SetGuess::default()
                },
                kat_records: Some(3),
                ..SetDraft::default()
            }],
        };
        let text = render(&d);
        let raw: RawAlgorithm = crate::config::parse(std::path::Path::new("x.toml"), &text)
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(raw.name, "Name \"quoted\"");
        assert_eq!(raw.parameter_sets[0].kat_records, Some(3));
        // What import reports is what it wrote: the algorithm's TODO and
        // the set's, and no other line says TODO.
        assert_eq!(todo_lines(&text), 2, "{text}");
        let opening = text.matches("# TODO").count();
        assert_eq!(opening, 2, "{text}");
        assert_eq!(todo_lines("a = 1  # TODO: x\n# see the TODO lines\n"), 1);
    }
}
