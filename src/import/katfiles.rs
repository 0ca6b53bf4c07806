//! KAT files shipped with a submission: NIST `.rsp` files and NGCC KAT
//! text files, matched to parameter-set labels and turned into manifest
//! lines (`<sha256> strict[:N] <label>/<file>`).

use std::path::{Path, PathBuf};

use super::params::same_name;
use crate::config::algorithm::ApiFamily;
use crate::error::ConfigError;
use crate::kat::manifest::{self as katman, Mode};

/// A reference KAT file for one label.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KatRef {
    pub source: PathBuf,
    pub label: String,
    /// File name under `kat/<id>/<label>/`.
    pub file: String,
    pub records: usize,
    /// The manifest line.
    pub line: String,
    /// Records to generate when the file holds fewer than the default.
    pub kat_records: Option<u32>,
}

/// Default records generated per API family (see `plan::resolve`).
pub(crate) fn default_records(api: ApiFamily) -> usize {
    match api {
        ApiFamily::Nist => 100,
        ApiFamily::Ngcc => 10,
    }
}

/// A set the KAT files may belong to: its label and the folder names that
/// identify it (the per-set source folder, if any).
pub(crate) struct SetKey {
    pub label: String,
    pub folders: Vec<String>,
}

/// Finds KAT files under `dir` and assigns each to a set. Returns the
/// references (one per label, the first by path order) and notes about
/// files it could not place.
pub(crate) fn discover(dir: &Path, api: ApiFamily, sets: &[SetKey]) -> (Vec<KatRef>, Vec<String>) {
    let mut files = Vec::new();
    walk(dir, 0, &mut files);
    files.sort_by_key(|p| (!is_reference_path(p), p.clone()));
    let mut refs: Vec<KatRef> = Vec::new();
    let mut notes = Vec::new();
    for path in files {
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        if !is_kat(&path, &bytes, api) {
            continue;
        }
        let shown = path
            .strip_prefix(dir)
            .unwrap_or(&path)
            .display()
            .to_string();
        let Some(label) = label_for(&path, dir, &bytes, sets) else {
            notes.push(format!(
                "KAT file {shown} matches no parameter set: copy it to kat/<id>/<label>/ and add its manifest line"
            ));
            continue;
        };
        let records = katman::count_records(&bytes);
        // A hash instance ships one file of each kind (KAT_2_12, ...),
        // stored under the name pqbench generates: `<kind>_<label>.txt`.
        let hash = hash_kind(&path);
        let file_name = hash.map(|h| format!("{h}_{label}.txt"));
        if let Some(prev) = refs
            .iter()
            .find(|r| r.label == label && (hash.is_none() || Some(&r.file) == file_name.as_ref()))
        {
            let same = katman::digest(&bytes, Mode::Strict, None)
                == katman::digest(
                    &std::fs::read(&prev.source).unwrap_or_default(),
                    Mode::Strict,
                    None,
                );
            if !same {
                notes.push(format!(
                    "KAT file {shown} also belongs to {label} but differs from {}; using the latter",
                    prev.file
                ));
            }
            continue;
        }
        let file = file_name.unwrap_or_else(|| {
            path.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        let (line, kat_records) = manifest_line(&bytes, &label, &file, api, hash.is_some());
        refs.push(KatRef {
            source: path,
            label,
            file,
            records,
            line,
            kat_records,
        });
    }
    (refs, notes)
}

/// A reference file's manifest line and, when it holds fewer records than
/// pqbench generates by default, the records to generate: a file with
/// more is checked over the default's count. Hash files have a fixed
/// number of records of their own.
pub(crate) fn manifest_line(
    bytes: &[u8],
    label: &str,
    file: &str,
    api: ApiFamily,
    hash: bool,
) -> (String, Option<u32>) {
    let records = katman::count_records(bytes);
    let wanted = default_records(api);
    let (limit, kat_records) = match records.cmp(&wanted) {
        _ if hash => (None, None),
        std::cmp::Ordering::Equal => (None, None),
        std::cmp::Ordering::Greater => (Some(wanted), None),
        std::cmp::Ordering::Less => (None, Some(records as u32)),
    };
    let mode = match limit {
        Some(n) => format!("strict:{n}"),
        None => "strict".into(),
    };
    let line = format!(
        "{} {mode} {label}/{file}",
        katman::digest(bytes, Mode::Strict, limit)
    );
    (line, kat_records)
}

/// Warnings about a manifest against an algorithm's labels: a missing
/// manifest, labels without a line (their KAT is NOKAT) and lines naming
/// no label. `shown` is how to name the manifest in messages.
pub(crate) fn coverage(
    manifest: &Path,
    shown: &str,
    labels: &[String],
) -> Result<Vec<String>, ConfigError> {
    let Ok(text) = std::fs::read_to_string(manifest) else {
        return Ok(vec![format!(
            "no KAT manifest {shown}: every instance is NOKAT until `pqbench bless` or an import writes one"
        )]);
    };
    let entries = katman::parse(manifest, &text)?;
    let mut out = Vec::new();
    for l in labels
        .iter()
        .filter(|l| !entries.iter().any(|e| &e.label == *l))
    {
        out.push(format!("{l} has no line in {shown}"));
    }
    for e in entries.iter().filter(|e| !labels.contains(&e.label)) {
        out.push(format!(
            "{shown} names `{}`, which is not a label of this algorithm",
            e.label
        ));
    }
    Ok(out)
}

/// Reference implementations' KATs come first when both ship one.
fn is_reference_path(p: &Path) -> bool {
    let s = p.to_string_lossy().to_ascii_lowercase();
    !s.contains("optimi") && !s.contains("additional")
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > 6 {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let hidden = e.file_name().to_string_lossy().starts_with('.');
        if hidden {
            continue;
        }
        if p.is_dir() {
            walk(&p, depth + 1, out);
        } else if p.metadata().map(|m| m.len() < 256 << 20).unwrap_or(false) {
            out.push(p);
        }
    }
}

/// The kind of an NGCC hash KAT file, from its name: `KAT_2_12_X.txt` →
/// `KAT_2_12` (also `KAT_2_23`, `KAT_2_33`, `KAT_Loop`).
pub(crate) fn hash_kind(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
    ["KAT_2_12", "KAT_2_23", "KAT_2_33", "KAT_Loop"]
        .into_iter()
        .find(|k| name.starts_with(&format!("{}_", k.to_ascii_lowercase())))
}

/// The instance a hash or KEX KAT file names after its kind:
/// `KAT_2_12_RILL-256.txt`, `KAT_KEX_BROOK-16.txt` → the instance.
fn named_instance(path: &Path) -> Option<String> {
    let stem = path.file_stem()?.to_string_lossy().into_owned();
    let kind = hash_kind(path).map(str::to_string).or_else(|| {
        stem.to_ascii_lowercase()
            .starts_with("kat_kex_")
            .then(|| "KAT_KEX".to_string())
    })?;
    stem.get(kind.len() + 1..).map(str::to_string)
}

/// The digest width a hash KAT file states (its first `Dst_Len`).
pub(crate) fn digest_bits(path: &Path) -> Option<u32> {
    let text = std::fs::read(path).ok()?;
    let head = String::from_utf8_lossy(&text[..text.len().min(1 << 16)]).into_owned();
    head.lines()
        .find_map(|l| l.strip_prefix("Dst_Len"))
        .and_then(|v| v.trim_start().strip_prefix('='))
        .and_then(|v| v.trim().parse().ok())
}

/// NIST: `.rsp` with `count = ` records. NGCC: a text file with
/// `Count = ` records and `_Len = ` fields, or a hash KAT file
/// (`KAT_2_12_*`, ...) with `Msg_Len` and `Dst_Len` fields.
pub(crate) fn is_kat(path: &Path, bytes: &[u8], api: ApiFamily) -> bool {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(8192)]);
    match api {
        ApiFamily::Nist => ext == "rsp" && head.lines().any(|l| l.starts_with("count = ")),
        ApiFamily::Ngcc => {
            let text = !["c", "h", "rsp", "req", "md"].contains(&ext.as_str());
            let records =
                head.lines().any(|l| l.starts_with("Count = ")) && head.contains("_Len = ");
            let hash = hash_kind(path).is_some()
                && head.contains("Msg_Len = ")
                && head.contains("Dst_Len = ");
            text && (records || hash)
        }
    }
}

/// The label a KAT file belongs to: by its `# NAME` header, then by the
/// folders on its path, then the only set there is.
fn label_for(path: &Path, root: &Path, bytes: &[u8], sets: &[SetKey]) -> Option<String> {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(256)]);
    if let Some(name) = head.lines().next().and_then(|l| l.strip_prefix('#')) {
        if let Some(s) = sets.iter().find(|s| same_name(&s.label, name.trim())) {
            return Some(s.label.clone());
        }
    }
    if let Some(inst) = named_instance(path) {
        if let Some(s) = sets.iter().find(|s| same_name(&s.label, &inst)) {
            return Some(s.label.clone());
        }
    }
    let rel = path.strip_prefix(root).unwrap_or(path);
    for comp in rel.parent().into_iter().flat_map(|p| p.components().rev()) {
        let c = comp.as_os_str().to_string_lossy();
        if let Some(s) = sets
            .iter()
            .find(|s| same_name(&s.label, &c) || s.folders.iter().any(|f| same_name(f, &c)))
        {
            return Some(s.label.clone());
        }
    }
    (sets.len() == 1).then(|| sets[0].label.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rsp_files_map_by_header_and_folder() {
        let dir = tempfile::tempdir().unwrap();
        let k = dir.path().join("KAT/set_b");
        std::fs::create_dir_all(&k).unwrap();
        let rec = |n: usize| {
            (0..n)
                .map(|i| format!("count = {i}\nseed = 00\n\n"))
                .collect::<String>()
        };
        std::fs::write(k.join("x.rsp"), format!("# B-2\n\n{}", rec(3))).unwrap();
        std::fs::write(k.join("y.req"), "count = 0\n").unwrap();
        std::fs::write(dir.path().join("KAT/z.rsp"), format!("# ?\n\n{}", rec(100))).unwrap();
        let sets = [
            SetKey {
                label: "A-1".into(),
                folders: vec!["set_a".into()],
            },
            SetKey {
                label: "B-2".into(),
                folders: vec!["set_b".into()],
            },
        ];
        let (refs, notes) = discover(dir.path(), ApiFamily::Nist, &sets);
        // NGCC text files have no header: the folder names the set.
        let n = dir.path().join("KAT/B-2");
        std::fs::create_dir_all(&n).unwrap();
        let ngcc: String = (0..10)
            .map(|i| format!("Count = {i}\r\nSeed_Len = 1\r\nSeed = 00\r\n\r\n"))
            .collect();
        std::fs::write(n.join("KAT_SIG.txt"), &ngcc).unwrap();
        let (ng, _) = discover(dir.path(), ApiFamily::Ngcc, &sets);
        assert_eq!(ng.len(), 1, "{ng:?}");
        assert_eq!((ng[0].label.as_str(), ng[0].kat_records), ("B-2", None));
        assert!(ng[0].line.ends_with(" strict B-2/KAT_SIG.txt"));
        assert_eq!(refs.len(), 1, "{refs:?}");
        assert_eq!(refs[0].label, "B-2");
        assert_eq!(refs[0].kat_records, Some(3));
        assert!(refs[0].line.ends_with(" strict B-2/x.rsp"));
        assert_eq!(notes.len(), 1, "{notes:?}");
    }
}
