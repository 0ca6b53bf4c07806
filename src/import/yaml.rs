//! Scheme metadata as public PQC libraries publish it:
//!
//! - liboqs `docs/algorithms/<kem|sig>/<family>.yml`: `name`, `type`,
//!   `parameter-sets: [{name, claimed-nist-level, length-public-key,
//!   length-secret-key, length-ciphertext | length-signature,
//!   length-shared-secret, implementations: [{upstream-id,
//!   supported-platforms: all | [{architecture, required_flags}]}]}]`;
//! - PQClean `META.yml`: one scheme per file with the same `length-*` keys,
//!   `nistkat-sha256`, and `implementations: [{name, supported_platforms}]`;
//!
//! several of either may be given as a YAML sequence or as documents of
//! one stream. KAT digests come from `nistkat-sha256` or a liboqs
//! `tests/KATs/<kem|sig>/kats.json` (`{"<scheme>": {"single": …, "all": …}}`
//! or `{"<scheme>": "<sha256>"}`); both are SHA-256 over the exact bytes of
//! the first record, i.e. manifest mode `exact:1`.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_yaml_ng::Value;

use crate::config::algorithm::Kind;
use crate::error::{ConfigError, Location};

#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Scheme {
    pub name: String,
    pub kind: Option<Kind>,
    pub level: Option<u64>,
    pub public_key: Option<u64>,
    pub secret_key: Option<u64>,
    pub ciphertext: Option<u64>,
    pub signature: Option<u64>,
    pub shared_secret: Option<u64>,
    /// Single-record KAT digest.
    pub kat_single: Option<String>,
    pub kat_all: Option<String>,
    /// `nistkat-rng`: the KAT RNG of the scheme's own, when its `.rsp`
    /// files were not generated with NIST's AES-256 CTR_DRBG.
    pub kat_rng: Option<String>,
    pub implementations: Vec<MetaImpl>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct MetaImpl {
    pub name: String,
    /// Required CPU flags on x86_64.
    pub cpu_features: Vec<String>,
    /// Architectures other than x86_64 the implementation is limited to.
    pub only_on: Vec<String>,
    /// Every architecture its supported platforms name (`x86_64`,
    /// `aarch64`, ...); empty when it names none (portable code).
    pub architectures: Vec<String>,
}

impl Scheme {
    /// The claimed level and sizes, as notes phrase them.
    pub(crate) fn facts(&self) -> Vec<String> {
        let mut facts = Vec::new();
        if let Some(l) = self.level {
            facts.push(format!("claimed NIST level {l}"));
        }
        for (what, v) in [
            ("public key", self.public_key),
            ("secret key", self.secret_key),
            ("ciphertext", self.ciphertext),
            ("signature", self.signature),
            ("shared secret", self.shared_secret),
        ] {
            if let Some(n) = v {
                facts.push(format!("{what} {n} B"));
            }
        }
        facts
    }
}

impl MetaImpl {
    /// Whether it can be built for `arch` (`std::env::consts::ARCH`).
    pub(super) fn runs_on(&self, arch: &str) -> bool {
        self.architectures.is_empty() || self.architectures.iter().any(|a| a == arch)
    }
}

/// Architecture names as metadata writes them, made `std::env::consts`
/// names: `arm_8`/`arm64` are `aarch64`, `amd64`/`x86` count as `x86_64`.
pub(super) fn arch_name(a: &str) -> String {
    match a.to_ascii_lowercase().as_str() {
        "arm_8" | "arm64" | "armv8" | "aarch64" => "aarch64".into(),
        "amd64" | "x86" | "x86_64" | "x64" => "x86_64".into(),
        other => other.to_string(),
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Meta {
    /// Family name (liboqs `name`), or the first scheme's name.
    pub family: String,
    pub schemes: Vec<Scheme>,
}

fn yaml_error(path: &Path, text: &str, e: &serde_yaml_ng::Error) -> ConfigError {
    let err = ConfigError::new(format!("YAML syntax error: {e}"));
    match e.location() {
        Some(l) => err.at(Location::from_span(path, text, l.index()..l.index() + 1)),
        None => err.in_file(path),
    }
    .help("fix the YAML at the marked position")
}

/// Reads scheme metadata from a YAML file.
pub(super) fn read(path: &Path) -> Result<Meta, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        ConfigError::new(format!("cannot read {}: {e}", path.display())).in_file(path)
    })?;
    let mut docs = Vec::new();
    for doc in serde_yaml_ng::Deserializer::from_str(&text) {
        docs.push(Value::deserialize(doc).map_err(|e| yaml_error(path, &text, &e))?);
    }
    let mut meta = Meta::default();
    for doc in docs {
        match doc {
            Value::Sequence(items) => {
                for item in items {
                    add(&mut meta, &item, path)?;
                }
            }
            Value::Null => {}
            other => add(&mut meta, &other, path)?,
        }
    }
    if meta.schemes.is_empty() {
        return Err(ConfigError::new("no scheme in the YAML file")
            .in_file(path)
            .help(
                "expected liboqs `parameter-sets:` or a PQClean META.yml with `length-public-key:`",
            ));
    }
    Ok(meta)
}

fn add(meta: &mut Meta, v: &Value, path: &Path) -> Result<(), ConfigError> {
    let bad = |m: String| {
        ConfigError::new(m).in_file(path).help(
            "each scheme needs `name` and the `length-*` keys (liboqs: under `parameter-sets`)",
        )
    };
    if !v.is_mapping() {
        return Err(bad("expected a mapping describing a scheme".into()));
    }
    let family_kind = kind_of(v.get("type"));
    let family = text(v.get("name"));
    if let Some(sets) = v.get("parameter-sets") {
        let Some(sets) = sets.as_sequence() else {
            return Err(bad("`parameter-sets` must be a list".into()));
        };
        for (i, s) in sets.iter().enumerate() {
            let mut sc = scheme(s).ok_or_else(|| {
                bad(format!(
                    "parameter set {} of {} has no `name`",
                    i + 1,
                    family.as_deref().unwrap_or("?")
                ))
            })?;
            sc.kind = sc.kind.or(family_kind);
            meta.schemes.push(sc);
        }
    } else {
        let mut sc = scheme(v).ok_or_else(|| bad("a scheme has no `name`".into()))?;
        sc.kind = sc.kind.or(family_kind);
        meta.schemes.push(sc);
    }
    if meta.family.is_empty() {
        meta.family = family.unwrap_or_else(|| meta.schemes[0].name.clone());
    }
    Ok(())
}

fn text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn number(v: Option<&Value>) -> Option<u64> {
    match v? {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// The kind a `type` value names.
fn kind_of(v: Option<&Value>) -> Option<Kind> {
    let t = text(v)?.to_ascii_lowercase();
    Kind::ALL
        .into_iter()
        .find(|k| k.def().yaml_types().0.contains(&t.as_str()))
}

/// The kind whose own length key alone is present (a ciphertext length
/// and no signature length: a KEM).
fn kind_by_lengths(v: &Value) -> Option<Kind> {
    let named: Vec<Kind> = Kind::ALL
        .into_iter()
        .filter(|k| {
            k.def()
                .yaml_types()
                .1
                .is_some_and(|key| number(v.get(key)).is_some())
        })
        .collect();
    match named[..] {
        [k] => Some(k),
        _ => None,
    }
}

fn scheme(v: &Value) -> Option<Scheme> {
    let name = text(v.get("name"))?;
    let mut s = Scheme {
        name,
        kind: kind_of(v.get("type")),
        level: number(v.get("claimed-nist-level")),
        public_key: number(v.get("length-public-key")),
        secret_key: number(v.get("length-secret-key")),
        ciphertext: number(v.get("length-ciphertext")),
        signature: number(v.get("length-signature")),
        shared_secret: number(v.get("length-shared-secret")),
        kat_single: text(v.get("nistkat-sha256")).map(|d| d.to_ascii_lowercase()),
        kat_rng: text(v.get("nistkat-rng")).filter(|r| !r.trim().is_empty()),
        ..Scheme::default()
    };
    if s.kind.is_none() {
        s.kind = kind_by_lengths(v);
    }
    for imp in v
        .get("implementations")
        .and_then(Value::as_sequence)
        .into_iter()
        .flatten()
    {
        if let Some(i) = implementation(imp) {
            s.implementations.push(i);
        }
    }
    Some(s)
}

/// One implementation; None for GPU implementations (not CPU code).
fn implementation(v: &Value) -> Option<MetaImpl> {
    let name = text(v.get("upstream-id"))
        .or_else(|| text(v.get("name")))
        .or_else(|| text(v.get("upstream")))?;
    let mut out = MetaImpl {
        name,
        ..MetaImpl::default()
    };
    let platforms = v
        .get("supported-platforms")
        .or_else(|| v.get("supported_platforms"));
    let Some(list) = platforms.and_then(Value::as_sequence) else {
        return Some(out);
    };
    let mut gpu_only = !list.is_empty();
    for p in list {
        let arch = text(p.get("architecture")).unwrap_or_default();
        if arch.eq_ignore_ascii_case("cuda") {
            continue;
        }
        gpu_only = false;
        if !arch.is_empty() && !out.architectures.contains(&arch_name(&arch)) {
            out.architectures.push(arch_name(&arch));
        }
        // The flags an implementation requires, on whichever architecture
        // it is written for (PQClean's AArch64 SPHINCS+ requires `sha3`).
        for f in p
            .get("required_flags")
            .and_then(Value::as_sequence)
            .into_iter()
            .flatten()
            .filter_map(|f| text(Some(f)))
        {
            if !out.cpu_features.contains(&f) {
                out.cpu_features.push(f);
            }
        }
        if arch != "x86_64" && arch != "x86" && !arch.is_empty() {
            out.only_on.push(arch);
        }
    }
    (!gpu_only).then_some(out)
}

/// Scheme name → (single-record, all-records) KAT digests.
pub(super) type KatDigests = BTreeMap<String, (Option<String>, Option<String>)>;

/// Reads a liboqs `kats.json`.
pub(super) fn read_kats(path: &Path) -> Result<KatDigests, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        ConfigError::new(format!("cannot read {}: {e}", path.display())).in_file(path)
    })?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        let line_start: usize = text
            .split_inclusive('\n')
            .take(e.line().saturating_sub(1))
            .map(str::len)
            .sum();
        let at = (line_start + e.column().saturating_sub(1)).min(text.len());
        ConfigError::new(format!("JSON syntax error: {e}"))
            .at(Location::from_span(path, &text, at..at + 1))
            .help("fix the JSON at the marked position")
    })?;
    let Some(map) = v.as_object() else {
        return Err(ConfigError::new("expected a JSON object of scheme names")
            .in_file(path)
            .help("write {\"<scheme>\": {\"single\": \"<sha256>\", \"all\": \"<sha256>\"}}"));
    };
    let digest =
        |v: Option<&serde_json::Value>| v.and_then(|x| x.as_str()).map(str::to_ascii_lowercase);
    Ok(map
        .iter()
        .map(|(k, v)| {
            let pair = match v {
                serde_json::Value::String(s) => (Some(s.to_ascii_lowercase()), None),
                _ => (digest(v.get("single")), digest(v.get("all"))),
            };
            (k.clone(), pair)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn liboqs_and_pqclean_shapes_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.yml");
        std::fs::write(
            &p,
            "name: Fam\ntype: kem\nparameter-sets:\n- name: Fam-1\n  claimed-nist-level: 1\n  length-public-key: 10\n  length-ciphertext: 20\n  length-secret-key: 5\n  length-shared-secret: 32\n  implementations:\n  - upstream-id: ref\n    supported-platforms: all\n  - upstream-id: x86_64\n    supported-platforms:\n    - architecture: x86_64\n      required_flags: [avx2, bmi2]\n  - upstream-id: cuda\n    supported-platforms:\n    - architecture: CUDA\n---\nname: Other-2\ntype: signature\nlength-public-key: 1\nlength-signature: 2\nnistkat-sha256: ABCD\n",
        )
        .unwrap();
        let m = read(&p).unwrap();
        assert_eq!(m.family, "Fam");
        assert_eq!(m.schemes.len(), 2);
        let s = &m.schemes[0];
        assert_eq!(
            (s.kind, s.public_key, s.ciphertext),
            (Some(Kind::Kem), Some(10), Some(20))
        );
        let names: Vec<_> = s.implementations.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, vec!["ref", "x86_64"]);
        assert_eq!(s.implementations[1].cpu_features, vec!["avx2", "bmi2"]);
        assert_eq!(m.schemes[1].kat_single.as_deref(), Some("abcd"));
        assert_eq!(m.schemes[1].kind, Some(Kind::Sign));
    }

    #[test]
    fn syntax_errors_point_at_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.yml");
        std::fs::write(&p, "name: X\nparameter-sets:\n- name: A\n  length: [1, 2\n").unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(e.starts_with("YAML syntax error"), "{e}");
        assert!(e.contains("bad.yml:"), "{e}");
        let j = dir.path().join("k.json");
        std::fs::write(
            &j,
            "{\n  \"A\": {\"single\": \"AB\"},\n  \"B\": \"cd\"\n}\n",
        )
        .unwrap();
        let k = read_kats(&j).unwrap();
        assert_eq!(k["A"], (Some("ab".into()), None));
        assert_eq!(k["B"].0.as_deref(), Some("cd"));
    }
}
