//! `pqbench publish <campaign> [--system S] <dir>`: a self-contained,
//! relocatable copy of a campaign's evidence and pages.
//!
//! Published layout (what `pqbench check <dir>` expects):
//!
//! ```text
//! <dir>/data/<system>/campaign.json, build.json, sizes.json, survey.json
//! <dir>/data/<system>/records/<id>/<label>__<op>.json
//! <dir>/data/<system>/profile/<id>/<label>__<op>.json
//! <dir>/data/<system>/kat/<id>/<label>.log (+ the generated KAT files)
//! <dir>/data/<system>/lib/<id>/<label>.so   only with --with-libraries
//! <dir>/templates/                           the campaign's template overrides, if any
//! <dir>/site/                                pages of every system under data/
//! ```
//!
//! The pages are rendered from the copied data rather than copied from the
//! campaign's site: links to the evidence and the crumb line's other
//! systems must point inside `<dir>`, and `check` must regenerate exactly
//! what is published. Publishing several systems into one `<dir>` one after
//! another re-renders all of them, so their crumb lines link each other.
//!
//! Nothing is copied when any record holds an absolute path. The
//! exemptions are host tools' identities (like their versions and binary
//! hashes), which name a tool, not a file of the dataset: the compiler's
//! and the assembler's paths, an emulated system's emulator and target
//! root.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::records::dataset;

/// Keys whose absolute values identify a host tool and are allowed: the
/// compiler and a system's assembler, and an emulated system's emulator
/// command and target root.
pub(crate) const TOOL_IDENTITY_KEYS: &[&str] = &[
    "compiler.path",
    "compiler.assembler.path",
    "system_spec.sysroot",
];

/// Prefixes of keys (array items included) allowed like `TOOL_IDENTITY_KEYS`.
const TOOL_IDENTITY_PREFIXES: &[&str] = &["system_spec.runner.command["];

fn tool_identity(key: &str) -> bool {
    TOOL_IDENTITY_KEYS.contains(&key) || TOOL_IDENTITY_PREFIXES.iter().any(|p| key.starts_with(p))
}

use crate::engine::Registry;
use crate::records::layout::{self, TOP_FILES};

/// The published trees: every stage's record tree and the KAT files; the
/// libraries only with `--with-libraries`.
fn trees(registry: &Registry, with_libraries: bool) -> Vec<&'static str> {
    let mut trees = registry.record_trees();
    trees.push(layout::KAT);
    if with_libraries {
        trees.push(layout::LIB);
    }
    trees
}

fn is_absolute(s: &str) -> bool {
    let b = s.as_bytes();
    s.starts_with('/')
        || s.starts_with("\\\\")
        || (b.len() >= 3
            && b[0].is_ascii_alphabetic()
            && b[1] == b':'
            && (b[2] == b'\\' || b[2] == b'/'))
}

/// The first absolute path among the string values of `v`, as `(key, value)`.
fn find_absolute(key: &str, v: &serde_json::Value) -> Option<(String, String)> {
    use serde_json::Value;
    match v {
        Value::String(s) if is_absolute(s) && !tool_identity(key) => {
            Some((key.to_string(), s.clone()))
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, x)| find_absolute(&format!("{key}[{i}]"), x)),
        Value::Object(map) => map.iter().find_map(|(k, x)| {
            let path = if key.is_empty() {
                k.clone()
            } else {
                format!("{key}.{k}")
            };
            find_absolute(&path, x)
        }),
        _ => None,
    }
}

/// Every JSON file a dataset publishes.
fn json_files(dir: &Path, registry: &Registry) -> Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = TOP_FILES
        .iter()
        .map(|f| dir.join(f))
        .filter(|p| p.is_file())
        .collect();
    for sub in registry.record_trees() {
        if dir.join(sub).is_dir() {
            out.extend(crate::records::folder::json_files(&dir.join(sub))?);
        }
    }
    Ok(out)
}

/// Refuses a dataset in which any JSON string value is an absolute path,
/// naming the file and key.
pub(crate) fn refuse_absolute_paths(dir: &Path, registry: &Registry) -> Result<()> {
    for file in json_files(dir, registry)? {
        let text = std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
        let v: serde_json::Value =
            serde_json::from_slice(&text).with_context(|| format!("parsing {}", file.display()))?;
        if let Some((key, value)) = find_absolute("", &v) {
            bail!(
                "{}: key `{key}` holds the absolute path `{value}`; a published dataset must use paths relative to the run directory",
                file.display()
            );
        }
    }
    Ok(())
}

/// The keys under which records keep what a process printed: the
/// submission's own words, which a published dataset leaves out unless
/// asked for (`--with-output`).
const OUTPUT_KEYS: [&str; 2] = ["stderr_tail", "stdout_tail"];

/// A record without the printed output of its processes. pqbench writes
/// records pretty-printed, one key a line, and a JSON string holds no raw
/// line break: blanking those lines keeps every other byte. A record in
/// another layout (a foreign dataset's) is rewritten whole. Either way the
/// result is checked to differ from the record in those values only.
fn without_output(bytes: &[u8]) -> Result<Vec<u8>> {
    use serde_json::Value;
    fn blank(v: &mut Value) {
        match v {
            Value::Object(map) => {
                for (k, x) in map.iter_mut() {
                    if OUTPUT_KEYS.contains(&k.as_str()) && x.is_string() {
                        *x = Value::String(String::new());
                    } else {
                        blank(x);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(blank),
            _ => {}
        }
    }
    let mut want: Value = serde_json::from_slice(bytes)?;
    blank(&mut want);
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let body = line.trim_start();
        match OUTPUT_KEYS
            .iter()
            .find(|k| body.starts_with(&format!("\"{k}\": \"")))
        {
            Some(k) => {
                let indent = &line[..line.len() - body.len()];
                let comma = if line.trim_end().ends_with(',') {
                    ","
                } else {
                    ""
                };
                let end = if line.ends_with('\n') { "\n" } else { "" };
                out.push_str(&format!("{indent}\"{k}\": \"\"{comma}{end}"));
            }
            None => out.push_str(line),
        }
    }
    if serde_json::from_str::<Value>(&out).ok().as_ref() == Some(&want) {
        return Ok(out.into_bytes());
    }
    let mut whole = serde_json::to_vec_pretty(&want)?;
    whole.push(b'\n');
    Ok(whole)
}

/// Copies one file of a dataset; a JSON file without printed output
/// unless `with_output`.
fn copy_file(from: &Path, to: &Path, with_output: bool) -> Result<()> {
    use crate::fsutil::foreign;
    // Read without following a link, whatever put one there.
    if with_output || from.extension().is_none_or(|e| e != "json") {
        return foreign::copy_regular(from, to, foreign::DATASET.file_bytes);
    }
    let bytes = foreign::read_regular(from, foreign::DATASET.file_bytes)?;
    let kept = without_output(&bytes).with_context(|| format!("{}", from.display()))?;
    if std::fs::read(to).is_ok_and(|old| old == kept) {
        return Ok(());
    }
    crate::fsutil::write_atomic(to, &kept)
}

fn copy_tree(from: &Path, to: &Path, with_output: bool) -> Result<usize> {
    let mut n = 0;
    for p in crate::fsutil::paths::sorted_entries(from)? {
        let name = p.file_name().context("entry without a name")?;
        if name.to_string_lossy().starts_with('.') {
            continue; // temporary files of an interrupted write
        }
        let kind = std::fs::symlink_metadata(&p)
            .with_context(|| format!("reading {}", p.display()))?
            .file_type();
        if kind.is_symlink() {
            bail!(
                "{} is a symbolic link; pqbench publishes no link",
                p.display()
            );
        } else if kind.is_dir() {
            n += copy_tree(&p, &to.join(name), with_output)?;
        } else if kind.is_file() {
            copy_file(&p, &to.join(name), with_output)?;
            n += 1;
        }
    }
    Ok(n)
}

/// What a publication carries besides the records and KAT files.
#[derive(Debug, Clone, Copy, Default)]
pub struct Extras {
    /// The built libraries (`lib/`).
    pub libraries: bool,
    /// What the processes printed (the records' stdout and stderr tails).
    pub output: bool,
}

/// Copies one system's evidence into `dest/data/<system>/`, replacing an
/// earlier copy.
fn copy_dataset(src: &Path, dest: &Path, extras: Extras, registry: &Registry) -> Result<usize> {
    if dest.exists() {
        std::fs::remove_dir_all(dest).with_context(|| format!("clearing {}", dest.display()))?;
    }
    let mut n = 0;
    for f in TOP_FILES {
        if src.join(f).is_file() {
            copy_file(&src.join(f), &dest.join(f), extras.output)?;
            n += 1;
        }
    }
    for tree in trees(registry, extras.libraries) {
        if src.join(tree).is_dir() {
            // Only JSON records carry printed output; KAT files are copied
            // as they are whatever their names.
            let with_output = extras.output || tree == layout::KAT || tree == layout::LIB;
            n += copy_tree(&src.join(tree), &dest.join(tree), with_output)?;
        }
    }
    n += copy_children(src, dest, extras, registry)?;
    Ok(n)
}

/// The further datasets `campaign.json` names within its own.
fn copy_children(src: &Path, dest: &Path, extras: Extras, registry: &Registry) -> Result<usize> {
    let Ok(c) = crate::fsutil::read_json::<crate::records::campaign::CampaignRecord>(
        &src.join(layout::CAMPAIGN),
    ) else {
        return Ok(0);
    };
    let mut n = 0;
    for child in c.children().with_context(|| format!("{}", src.display()))? {
        if src.join(&child.dir).join(layout::CAMPAIGN).is_file() {
            n += copy_dataset(
                &src.join(&child.dir),
                &dest.join(&child.dir),
                extras,
                registry,
            )?;
        }
    }
    Ok(n)
}

/// What `publish` copied and rendered.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PublishReport {
    pub systems: Vec<String>,
    pub files_copied: usize,
    pub render: crate::render::RenderReport,
}

/// Publishes the datasets under `campaign_dir` (one system, or all) into
/// `dest` and renders the site there from every dataset `dest` then holds.
pub fn publish_from(
    registry: &Registry,
    campaign_dir: &Path,
    system: Option<&str>,
    dest: &Path,
    extras: Extras,
    templates: Option<&Path>,
) -> Result<PublishReport> {
    let sources = match system {
        Some(s) => {
            crate::records::layout::safe_component(s)?;
            let d = campaign_dir.join(s);
            if !d.join(crate::records::layout::CAMPAIGN).is_file() {
                bail!(
                    "{}: no dataset of system `{s}` (campaign.json missing)",
                    d.display()
                );
            }
            vec![d]
        }
        None => dataset::dataset_dirs_in(campaign_dir)?,
    };
    if sources.is_empty() {
        bail!("{}: no dataset to publish", campaign_dir.display());
    }
    // Check every source before copying anything.
    for s in &sources {
        refuse_absolute_paths(s, registry)?;
    }
    let mut files_copied = 0;
    let mut systems = Vec::new();
    for s in &sources {
        let name = s.file_name().context("dataset without a name")?;
        files_copied += copy_dataset(s, &dest.join("data").join(name), extras, registry)?;
        systems.push(name.to_string_lossy().into_owned());
    }
    let dest_templates = dest.join("templates");
    if dest_templates.exists() {
        std::fs::remove_dir_all(&dest_templates)?;
    }
    if let Some(t) = templates {
        for p in crate::fsutil::paths::sorted_entries(t)? {
            if p.is_file() && crate::render::is_generated(&p) {
                let name = p.file_name().context("template without a name")?;
                crate::fsutil::copy_atomic(&p, &dest_templates.join(name))?;
            }
        }
    }
    let all = dataset::dataset_dirs_in(&dest.join("data"))?;
    let used = Some(dest_templates.as_path()).filter(|t| t.is_dir());
    let render = crate::render::render_dataset_dirs(
        &all,
        &dest.join(crate::records::layout::SITE),
        used,
        registry,
    )?;
    Ok(PublishReport {
        systems,
        files_copied,
        render,
    })
}

/// Publishes the plan's campaign (all systems, or `system`) into `dest`.
pub fn publish(
    registry: &Registry,
    plan: &crate::plan::Plan,
    system: Option<&str>,
    dest: &Path,
    extras: Extras,
) -> Result<()> {
    // Held while the campaign's datasets are read, so a run or merge
    // cannot change them half-way through the copy.
    let _lock = crate::pipeline::locks::ProjectLock::acquire(plan, "publish")?;
    let campaign_dir = plan
        .site_dir
        .parent()
        .context("the site directory has no parent")?;
    publish_from(
        registry,
        campaign_dir,
        system,
        dest,
        extras,
        plan.templates.as_deref(),
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printed_output_is_blanked_and_every_other_byte_kept() {
        let record = serde_json::json!({
            "op": "sign",
            "processes": [{
                "command": ["--op", "sign"],
                "stderr_tail": "leak: secret\nmore",
                "sandbox": {"stdout_bytes": 12, "stdout_tail": "printed"}
            }],
            "note": "stderr_tail stays when it is not a key"
        });
        let mut pretty = serde_json::to_vec_pretty(&record).unwrap();
        pretty.push(b'\n');
        let out = String::from_utf8(without_output(&pretty).unwrap()).unwrap();
        let expected = String::from_utf8(pretty.clone())
            .unwrap()
            .replace("\"leak: secret\\nmore\"", "\"\"")
            .replace("\"printed\"", "\"\"");
        assert_eq!(out, expected);
        // Compact JSON from elsewhere is rewritten whole, values alike.
        let compact = serde_json::to_vec(&record).unwrap();
        let v: serde_json::Value =
            serde_json::from_slice(&without_output(&compact).unwrap()).unwrap();
        assert_eq!(v["processes"][0]["stderr_tail"], "");
        assert_eq!(v["processes"][0]["sandbox"]["stdout_tail"], "");
        assert_eq!(v["processes"][0]["sandbox"]["stdout_bytes"], 12);
        assert_eq!(v["note"], record["note"]);
    }

    #[test]
    fn absolute_paths_are_found_with_their_key() {
        let v = serde_json::json!({
            "compiler": {"path": "/usr/bin/gcc"},
            "processes": [{"command": ["--lib", "<library>"]}, {"command": ["--lib", "/tmp/x.so"]}]
        });
        assert_eq!(
            find_absolute("", &v),
            Some(("processes[1].command[1]".into(), "/tmp/x.so".into()))
        );
        assert!(is_absolute("C:\\x") && is_absolute("\\\\srv\\x") && !is_absolute("lib/x.so"));
        assert_eq!(find_absolute("", &serde_json::json!({"a": "rel/x"})), None);
    }
}
