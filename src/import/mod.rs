//! `pqbench import`: drafts `algorithms/<id>.toml` from a submission
//! directory or from scheme metadata (YAML), so adding an existing
//! submission starts from a checkable file instead of a blank page.
//!
//! From a directory it also copies the sources into `algorithms/<id>/`
//! (unless they already live under `algorithms/`) and the shipped KAT files
//! into `kat/<id>/<label>/` with a manifest `kat/<id>/kat.sha256`. From
//! metadata it writes size catalog rows (default `algorithms/sizes.csv`) and
//! digest-only manifest lines. Nothing existing is overwritten without
//! `force`; all conflicts are found before anything is written.

mod binding;
mod checker;
pub(crate) mod csource;
mod emit;
mod folder;
mod from_meta;
mod impls;
pub(crate) mod katfiles;
mod macros;
mod makeflags;
mod observe;
mod params;
mod plan_observed;
mod prove;
mod submission;
pub(crate) mod symbols;
mod tree;
mod tree_common;
mod tree_kat;
mod tree_plan;
mod yaml;

use std::path::{Path, PathBuf};

use crate::config::algorithm::{ApiFamily, RawAlgorithm};
use crate::error::{ConfigError, Error};
use crate::fsutil;

use plan_observed::{add_build_sources, add_generated, add_kat_files, observe_build};

pub use checker::Checker;
pub(crate) use impls::sanitize;
pub use observe::record_entry;
pub use prove::{mark_unproven, prove, Proof, Verdict};

/// The catalog's header line, as `stages::sizes::read_catalog` reads it.
pub(crate) const CATALOG_HEADER: &str =
    "ID;Instance;PublicKeyBytes;CiphertextBytes;SignatureBytes;Basis";

#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// A submission directory, or a `.yml`/`.yaml` metadata file.
    pub path: PathBuf,
    pub id: Option<String>,
    /// Force the API family instead of detecting it.
    pub api: Option<ApiFamily>,
    pub force: bool,
    /// liboqs-style `kats.json` with KAT digests (metadata imports).
    pub kats: Option<PathBuf>,
    /// Size catalog to write rows into (default `algorithms/sizes.csv`).
    pub catalog: Option<PathBuf>,
    /// Catalog basis: `encoded`, `maximum-variable` or `nominal-variable`.
    pub basis: String,
    /// The command that builds the tree's KAT generator (brace lists make
    /// one build per value), when its build files do not say.
    pub build: Option<String>,
}

/// What an import did, one line per action or note, for the user.
#[derive(Debug, Clone, Default)]
pub struct ImportReport {
    pub id: String,
    pub toml: PathBuf,
    pub lines: Vec<String>,
    /// Every TOML drafted (several for a public tree, one per scheme).
    pub tomls: Vec<PathBuf>,
    /// Drafted from the tree's own build, with its generators' KAT files as
    /// references: the draft can be proven against them (`prove`).
    pub observed: bool,
    /// The tree's KAT checkers, for sets whose build made no generator:
    /// the proof has them judge pqbench's KAT files.
    pub checkers: Vec<Checker>,
}

/// The largest metadata file read (a scheme's `META.yml` is a few KiB).
const YAML_BYTES: u64 = 16 << 20;

/// A tree from elsewhere is walked before anything of it is read: a
/// symbolic link in it, a file beyond the size limit or a tree too deep or
/// too large is an error naming it, so nothing outside the tree becomes a
/// project file and no link loop is walked.
fn refuse_links(path: &Path, given: &Path) -> Result<(), Error> {
    use crate::fsutil::foreign;
    let walked = if path.is_dir() {
        foreign::regular_files(path, foreign::TREE, &|n| n == ".git").map(drop)
    } else {
        // A metadata file on its own: only its size matters here.
        foreign::read_regular(path, YAML_BYTES).map(drop)
    };
    walked.map_err(|e| {
        ConfigError::new(format!("cannot import {}: {e:#}", given.display()))
            .help(
                "pqbench follows no link in a tree it imports: replace the link by a copy of what it points to, or import a copy of the tree made with `cp -rL`",
            )
            .into()
    })
}

/// Files to write, gathered before anything is written.
#[derive(Default)]
struct Plan {
    root: PathBuf,
    writes: Vec<(PathBuf, Vec<u8>)>,
    /// Earlier copies `--force` replaces: removed before anything is
    /// copied, so no file of the old copy stays among the new one's.
    replaced: Vec<PathBuf>,
    copies: Vec<(PathBuf, PathBuf)>,
    conflicts: Vec<String>,
    lines: Vec<String>,
    /// The draft comes from the tree's own build.
    observed: bool,
    checkers: Vec<Checker>,
}

pub fn import(project_root: &Path, opts: &ImportOptions) -> Result<ImportReport, Error> {
    let root = project_root.canonicalize().map_err(|e| {
        ConfigError::new(format!("project directory {}: {e}", project_root.display()))
    })?;
    let alg_dir = root.join("algorithms");
    let path = opts.path.canonicalize().map_err(|e| {
        ConfigError::new(format!("cannot import {}: {e}", opts.path.display()))
            .help("give a submission directory or a .yml metadata file")
    })?;
    if !["encoded", "maximum-variable", "nominal-variable"].contains(&opts.basis.as_str()) {
        return Err(ConfigError::new(format!("unknown basis `{}`", opts.basis))
            .help("use encoded, maximum-variable or nominal-variable")
            .into());
    }
    refuse_links(&path, &opts.path)?;
    let _lock = crate::pipeline::locks::ProjectLock::exclusive(&root.join("output"), "import")?;
    // Paths in messages and in the drafted file: project-relative when
    // inside the project, else as the user gave them.
    let shown = path
        .strip_prefix(&root)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| opts.path.display().to_string());
    if let Some(layout) = tree::detect(&path) {
        return tree_plan::import_tree(&root, &layout, opts, shown);
    }
    let is_yaml = path.is_file() && path.extension().is_some_and(|e| e == "yml" || e == "yaml");
    let mut plan = Plan {
        root: root.clone(),
        ..Plan::default()
    };
    let id = if is_yaml {
        plan_metadata(&mut plan, &path, opts, &shown)?
    } else if path.is_dir() {
        plan_submission(&mut plan, &path, opts, &shown)?
    } else {
        return Err(
            ConfigError::new(format!("cannot import {}", opts.path.display()))
                .help("give a submission directory or a .yml/.yaml metadata file")
                .into(),
        );
    };
    plan.carry_out()?;
    let toml = alg_dir.join(format!("{id}.toml"));
    Ok(ImportReport {
        tomls: vec![toml.clone()],
        toml,
        id,
        observed: plan.observed,
        lines: plan.lines,
        checkers: plan.checkers,
    })
}

/// Writes the KAT files the tree's checkers accepted (`label`, file name,
/// bytes) as the sets' references, with manifest lines marked `checked`.
pub(crate) fn record_checked(
    root: &Path,
    id: &str,
    api: ApiFamily,
    files: &[(String, String, Vec<u8>)],
    command: &str,
) -> Result<(), Error> {
    if files.is_empty() {
        return Ok(());
    }
    let kat_dir = root.join("kat").join(id);
    let mut lines = vec![(
        String::new(),
        crate::kat::provenance::Provenance::Checked.comment(&format!(
            "pqbench's own output, accepted by the tree's KAT checkers, built by `{}`",
            emit::one_line(command)
        )),
    )];
    for (label, file, bytes) in files {
        fsutil::write_atomic(&kat_dir.join(label).join(file), bytes)?;
        let (line, _) = katfiles::manifest_line(bytes, label, file, api, false);
        lines.push((label.clone(), line));
    }
    let path = kat_dir.join("kat.sha256");
    let header = format!(
        "# KAT manifest of {id}: <sha256> <mode>[:N] <label>/<file>\n# written by pqbench import from the tree's own KAT checkers\n"
    );
    let existing = std::fs::read_to_string(&path).ok();
    let mut conflicts = Vec::new();
    let text = merge(
        existing.as_deref(),
        &header,
        &lines,
        manifest_key_of_line,
        true,
        &mut conflicts,
        &format!("kat/{id}/kat.sha256"),
    );
    fsutil::write_atomic(&path, text.as_bytes())?;
    Ok(())
}

/// Plans a metadata import: the TOML (kept when it exists, unless
/// `force`), the size catalog rows and the digest-only manifest lines.
/// Returns the id.
fn plan_metadata(
    plan: &mut Plan,
    path: &Path,
    opts: &ImportOptions,
    shown: &str,
) -> Result<String, Error> {
    let alg_dir = plan.root.join("algorithms");
    let meta = yaml::read(path)?;
    let id = choose_id(opts.id.as_deref(), &meta.family)?;
    let kats = opts.kats.as_deref().map(yaml::read_kats).transpose()?;
    let m = from_meta::convert(&meta, &id, opts.api, kats.as_ref(), &opts.basis, shown);
    let toml = alg_dir.join(format!("{id}.toml"));
    if toml.exists() && !opts.force {
        plan.lines.push(format!(
            "kept algorithms/{id}.toml (pass --force to replace it)"
        ));
    } else {
        add_toml(plan, &toml, &emit::render(&m.draft), opts.force)?;
    }
    let catalog = opts
        .catalog
        .clone()
        .unwrap_or_else(|| alg_dir.join("sizes.csv"));
    add_catalog(plan, &catalog, &id, &m.catalog, opts.force);
    if !m.manifest.is_empty() {
        let mut lines = vec![(
            String::new(),
            crate::kat::provenance::Provenance::Published
                .comment("digests from the scheme metadata"),
        )];
        lines.extend(m.manifest.iter().cloned());
        for c in &m.manifest_comments {
            // Text from the metadata: one comment line, never a line of
            // the manifest.
            lines.push((String::new(), format!("# {}", emit::one_line(c))));
        }
        add_manifest(plan, &id, &lines, shown, opts.force);
    }
    plan.lines
        .extend(m.notes.iter().map(|n| format!("note: {n}")));
    Ok(id)
}

/// Queues the size catalog with `id`'s rows merged in.
fn add_catalog(plan: &mut Plan, catalog: &Path, id: &str, rows: &[(String, String)], force: bool) {
    let existing = std::fs::read_to_string(catalog).ok();
    let catalog_shown = plan.show(catalog);
    let text = merge(
        existing.as_deref(),
        &format!("{CATALOG_HEADER}\n"),
        rows,
        |l| {
            let f: Vec<&str> = l.split(';').collect();
            (f.len() >= 2 && f[0] == id).then(|| f[1].trim().to_string())
        },
        force,
        &mut plan.conflicts,
        &catalog_shown,
    );
    plan.lines.push(format!(
        "{} {} size catalog rows into {catalog_shown}",
        if existing.is_some() {
            "merged"
        } else {
            "wrote"
        },
        rows.len(),
    ));
    plan.writes.push((catalog.to_path_buf(), text.into_bytes()));
}

/// Plans a submission directory's import: the TOML, the source trees
/// copied under `algorithms/` and the KAT files under `kat/<id>/`.
/// Returns the id.
fn plan_submission(
    plan: &mut Plan,
    path: &Path,
    opts: &ImportOptions,
    shown: &str,
) -> Result<String, Error> {
    let alg_dir = plan.root.join("algorithms");
    let fallback = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let id = choose_id(opts.id.as_deref(), &fallback)?;
    if opts.kats.is_some() {
        plan.lines
            .push("note: --kats applies to metadata imports; ignored".into());
    }
    let observed = observe_build(plan, path, opts)?;
    let mut a = submission::analyse(&alg_dir, path, shown, &id, opts.api);
    let mut generated = observe::References::default();
    if let Some((commands, sets)) = &observed {
        let base = match path.strip_prefix(&alg_dir) {
            Ok(r) => r.to_string_lossy().replace('\\', "/"),
            Err(_) => id.clone(),
        };
        let at = observe::Placement {
            root: base.clone(),
            tree: path,
            alg_dir: &alg_dir,
            forced: opts.api,
        };
        generated = observe::apply(&mut a.draft, sets, &at);
        a.draft.header.insert(
            1,
            format!(
                "Sets, sources and defines as the tree's own build compiled them: `{}`.",
                commands.join("`, `")
            ),
        );
        a.copies = if path.starts_with(&alg_dir) {
            Vec::new()
        } else {
            vec![(path.to_path_buf(), base)]
        };
        a.kats.clear();
        a.generator = None;
    }
    add_toml(
        plan,
        &alg_dir.join(format!("{id}.toml")),
        &emit::render(&a.draft),
        opts.force,
    )?;
    let kat_sources: Vec<&Path> = a.kats.iter().map(|k| k.source.as_path()).collect();
    for (from, to) in &a.copies {
        let dest = alg_dir.join(to);
        if dest.exists() && !opts.force {
            let d = plan.show(&dest);
            plan.conflicts
                .push(format!("{d} exists (sources would be copied there)"));
        } else if dest.is_dir() && !dest.is_symlink() && !path.starts_with(&dest) {
            plan.replaced.push(dest.clone());
        }
        copy_plan(from, &dest, &kat_sources, &mut plan.copies);
        plan.lines
            .push(format!("copied {} to algorithms/{to}", from.display()));
    }
    if let Some((commands, sets)) = &observed {
        plan.observed = true;
        let dest = match a.copies.first() {
            Some((_, to)) => alg_dir.join(to),
            None => path.to_path_buf(),
        };
        add_build_sources(plan, &dest, sets);
        if !generated.files.is_empty() {
            add_generated(plan, &id, &generated.files, commands, opts.force);
        }
        for c in &generated.checkers {
            plan.lines.push(format!(
                "{}: the build made no KAT generator; its checker {} is to judge pqbench's KAT file",
                c.label, c.program
            ));
        }
        plan.checkers = generated.checkers;
    } else {
        add_kat_files(plan, &a, &id, shown, opts.force)?;
    }
    plan.lines
        .extend(a.notes.iter().map(|n| format!("note: {n}")));
    Ok(id)
}

fn choose_id(given: Option<&str>, fallback: &str) -> Result<String, ConfigError> {
    let id = match given {
        Some(g) => g.to_string(),
        None => sanitize(&fallback.to_ascii_lowercase()),
    };
    let ok = !id.is_empty()
        && !id.starts_with('.')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    // `algorithms/components/` holds the shared components: an import
    // copied there (and replaced with --force) would take their place.
    if id == "components" {
        return Err(ConfigError::new(
            "`components` is the folder of the shared components, not an algorithm id",
        )
        .help("pass another --id"));
    }
    if !ok {
        return Err(
            ConfigError::new(format!("`{id}` is not a usable algorithm id"))
                .help("pass --id with letters, digits, - _ or ."),
        );
    }
    Ok(id)
}

impl Plan {
    fn show(&self, p: &Path) -> String {
        p.strip_prefix(&self.root)
            .unwrap_or(p)
            .display()
            .to_string()
    }

    /// Refuses every conflict at once, else copies and writes all that is
    /// queued.
    fn carry_out(&self) -> Result<(), Error> {
        if !self.conflicts.is_empty() {
            return Err(ConfigError::new(format!(
                "import would overwrite:\n  {}",
                self.conflicts.join("\n  ")
            ))
            .help("pass --force to replace them")
            .into());
        }
        for dir in &self.replaced {
            std::fs::remove_dir_all(dir)
                .map_err(|e| anyhow::anyhow!("removing the earlier copy {}: {e}", dir.display()))?;
        }
        for (from, to) in &self.copies {
            fsutil::copy_atomic(from, to)?;
        }
        for (p, bytes) in &self.writes {
            fsutil::write_atomic(p, bytes)?;
        }
        Ok(())
    }
}

/// Queues the TOML after checking it parses with the schema (a failure is
/// an importer bug, reported instead of writing a broken file).
fn add_toml(plan: &mut Plan, path: &Path, text: &str, force: bool) -> Result<(), Error> {
    crate::config::parse::<RawAlgorithm>(path, text).map_err(|e| {
        Error::Other(anyhow::anyhow!(
            "internal error: the drafted TOML does not parse:\n{e}"
        ))
    })?;
    if path.exists() && !force {
        let shown = plan.show(path);
        plan.conflicts.push(format!("{shown} exists"));
    }
    let todos = emit::todo_lines(text);
    plan.lines
        .push(format!("wrote {} ({todos} TODO lines)", plan.show(path)));
    plan.writes
        .push((path.to_path_buf(), text.as_bytes().to_vec()));
    Ok(())
}

fn add_manifest(plan: &mut Plan, id: &str, lines: &[(String, String)], source: &str, force: bool) {
    let path = plan.root.join("kat").join(id).join("kat.sha256");
    let existing = std::fs::read_to_string(&path).ok();
    let header = format!(
        "# KAT manifest of {id}: <sha256> <mode>[:N] <label>/<file>\n# written by pqbench import from {source}\n"
    );
    let text = merge(
        existing.as_deref(),
        &header,
        lines,
        manifest_key_of_line,
        force,
        &mut plan.conflicts,
        &format!("kat/{id}/kat.sha256"),
    );
    let n = lines.iter().filter(|(k, _)| !k.is_empty()).count();
    plan.lines
        .push(format!("{n} manifest lines in kat/{id}/kat.sha256"));
    plan.writes.push((path, text.into_bytes()));
}

/// What a manifest line is keyed by when merging: its label, or for a
/// hash KAT file (one line per file of a label) its `<label>/<file>`.
fn manifest_key_of_line(l: &str) -> Option<String> {
    let target = l.split_whitespace().nth(2)?;
    let (label, file) = target.split_once('/')?;
    let hash = katfiles::hash_kind(Path::new(file)).is_some();
    Some(if hash { target } else { label }.to_string())
}

/// Merges keyed lines into a text file: lines for other keys are kept, a
/// line for an existing key replaces it only with `force` (else it is a
/// conflict), new keys are appended. An empty key marks a comment line.
fn merge(
    existing: Option<&str>,
    header: &str,
    new: &[(String, String)],
    key_of: impl Fn(&str) -> Option<String>,
    force: bool,
    conflicts: &mut Vec<String>,
    file: &str,
) -> String {
    let mut lines: Vec<String> = match existing {
        Some(t) => t.lines().map(String::from).collect(),
        None => header.lines().map(String::from).collect(),
    };
    for (key, line) in new {
        if key.is_empty() {
            if !lines.contains(line) {
                lines.push(line.clone());
            }
            continue;
        }
        let at = lines
            .iter()
            .position(|l| !l.starts_with('#') && key_of(l).as_deref() == Some(key));
        match at {
            Some(i) if lines[i] == *line => {}
            Some(i) if force => lines[i] = line.clone(),
            Some(_) => conflicts.push(format!("the line for {key} in {file}")),
            None => lines.push(line.clone()),
        }
    }
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

/// Queues copies of every file under `from` (hidden files and the KAT
/// files, which go to `kat/`, left out).
fn copy_plan(from: &Path, to: &Path, skip: &[&Path], out: &mut Vec<(PathBuf, PathBuf)>) {
    let Ok(rd) = std::fs::read_dir(from) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if e.file_name().to_string_lossy().starts_with('.') || skip.contains(&p.as_path()) {
            continue;
        }
        let dest = to.join(e.file_name());
        if p.is_dir() {
            copy_plan(&p, &dest, skip, out);
        } else {
            out.push((p, dest));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_components_folder_is_no_algorithm_id() {
        assert!(choose_id(Some("components"), "x").is_err());
        // A folder of that name imports under its name's id only when it
        // is given another.
        assert_eq!(choose_id(Some("comp"), "components").unwrap(), "comp");
        assert!(choose_id(None, "Components").is_err());
        assert_eq!(choose_id(None, "Kyber").unwrap(), "kyber");
    }

    #[test]
    fn merge_keeps_other_keys_and_refuses_changes_without_force() {
        let key = |l: &str| l.split(';').nth(1).map(String::from);
        let old = "H\nx;A;1\nx;B;2\n";
        let mut c = Vec::new();
        let new = [
            ("B".to_string(), "x;B;3".to_string()),
            ("C".to_string(), "x;C;4".to_string()),
        ];
        let t = merge(Some(old), "H\n", &new, key, false, &mut c, "f");
        assert_eq!(c.len(), 1);
        assert_eq!(t, "H\nx;A;1\nx;B;2\nx;C;4\n");
        let mut c = Vec::new();
        let t = merge(Some(old), "H\n", &new, key, true, &mut c, "f");
        assert!(c.is_empty());
        assert_eq!(t, "H\nx;A;1\nx;B;3\nx;C;4\n");
    }
}
