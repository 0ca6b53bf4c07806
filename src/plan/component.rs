//! The files an algorithm draws on besides its own sources: shared
//! components (`uses`) and its KAT manifest and reference files.

use std::collections::BTreeMap;
use std::path::{Component as PathPart, Path, PathBuf};

use toml::Spanned;

use super::names::{self, NAME_RULE};
use super::paths::{contained, expand_sources};
use super::problems::Problems;
use super::project::{list_stems, project_rel, Project};
use crate::config::algorithm::{DefineValue, RawAlgorithm, RawComponent};
use crate::config::{Loaded, Step};
use crate::error::{ConfigError, Location};

/// A component's contribution to every instance of an algorithm using it.
#[derive(Debug, Clone)]
pub(super) struct Component {
    pub sources: Vec<PathBuf>,
    pub include_dirs: Vec<PathBuf>,
    pub defines: BTreeMap<String, DefineValue>,
}

/// The components one algorithm file names (in `uses` and in its
/// implementations' `uses`), each file read once.
#[derive(Default)]
pub(super) struct Components {
    loaded: BTreeMap<String, Option<Component>>,
}

impl Components {
    /// The component `name` names; a reference to a component that is
    /// missing is reported at every place it is made, the problems of a
    /// component file once.
    pub(super) fn get(
        &mut self,
        project: &Project,
        user: &Loaded<RawAlgorithm>,
        name: &Spanned<String>,
        p: &mut Problems,
    ) -> Option<Component> {
        let n = name.get_ref();
        if let Some(c) = self.loaded.get(n) {
            if c.is_none() {
                let file = project
                    .algorithms_dir()
                    .join("components")
                    .join(format!("{n}.toml"));
                if !file.is_file() || names::check_name(n).is_err() {
                    load_component(project, user, name, p);
                }
            }
            return c.clone();
        }
        let c = load_component(project, user, name, p);
        self.loaded.insert(n.clone(), c.clone());
        c
    }
}

/// Loads `algorithms/components/<name>.toml`; `None` (problems recorded)
/// unless all of it resolved.
pub(super) fn load_component(
    project: &Project,
    user: &Loaded<RawAlgorithm>,
    name: &Spanned<String>,
    p: &mut Problems,
) -> Option<Component> {
    let n = name.get_ref();
    if let Err(why) = names::check_name(n) {
        p.push(
            user.error_at(name, format!("component name `{n}` {why}"))
                .help(NAME_RULE),
        );
        return None;
    }
    let alg_root = project.algorithms_dir();
    let dir = alg_root.join("components");
    let file = dir.join(format!("{n}.toml"));
    if !file.is_file() {
        p.push(
            user.error_at(name, format!("unknown component `{n}`"))
                .help(format!(
                    "add algorithms/components/{n}.toml or use one of: {}",
                    list_stems(&dir).join(", ")
                )),
        );
        return None;
    }
    let raw: Loaded<RawComponent> = p.read(&file)?;
    let c = &raw.value;
    let before = p.len();
    // A component is a shared tree: anywhere inside the project (e.g. the
    // `common/` folder beside a public tree's schemes).
    let root = match contained(&project.root, &dir, c.root.get_ref()) {
        Ok(r) if r.is_dir() => r,
        Ok(r) => {
            let shown = project_rel(project, &r);
            p.push(
                raw.error_at(&c.root, format!("component root {shown} not found"))
                    .help("create the directory or fix `root`"),
            );
            return None;
        }
        Err(e) => {
            p.push(
                raw.error_at(&c.root, e)
                    .help("keep component sources inside the project directory"),
            );
            return None;
        }
    };
    let mut sources = Vec::new();
    for pat in &c.sources {
        let at = if pat.span().is_empty() { &c.root } else { pat };
        let found = contained(&root, &root, pat.get_ref()).and_then(|_| {
            expand_sources(
                &root,
                &project.root,
                std::slice::from_ref(pat.get_ref()),
                &c.exclude,
            )
        });
        match found {
            Ok(files) => sources.extend(files),
            Err(e) => p.push(raw.error_at(at, e).help("fix the pattern or add the file")),
        }
    }
    let mut include_dirs = vec![root.clone()];
    for inc in &c.include_dirs {
        match contained(&root, &root, inc.get_ref()) {
            Ok(d) if d.is_dir() => include_dirs.push(d),
            Ok(_) => p.push(
                raw.error_at(inc, "include directory not found")
                    .help("create it or remove it from `include-dirs`"),
            ),
            Err(e) => p.push(
                raw.error_at(inc, e)
                    .help("include dirs stay inside the component root"),
            ),
        }
    }
    for d in c.defines.keys().filter(|d| !names::is_c_identifier(d)) {
        p.push(
            raw.error_at_key(
                &[Step::Key("defines"), Step::Key(d)],
                format!("define `{d}` is not a C macro name"),
            )
            .help("use letters, digits and _, not starting with a digit"),
        );
    }
    (p.len() == before).then(|| Component {
        sources,
        include_dirs,
        defines: c.defines.clone(),
    })
}

/// The KAT manifest (default `kat/<id>/kat.sha256`) and reference
/// directory (default: the manifest's, when it exists). A manifest that
/// does not exist yet is not a problem: `bless` writes it.
pub(super) fn kat_files(
    project: &Project,
    raw: &Loaded<RawAlgorithm>,
    toml_dir: &Path,
    id: &str,
    p: &mut Problems,
) -> (PathBuf, Option<PathBuf>) {
    let k = &raw.value.kat;
    let default = project.root.join("kat").join(id).join("kat.sha256");
    let manifest = match &k.manifest {
        Some(m) => p
            .take(
                contained(&project.root, toml_dir, m.get_ref())
                    .map_err(|e| raw.error_at(m, e).help("use a path inside the project")),
            )
            .unwrap_or_else(|| default.clone()),
        None => default.clone(),
    };
    if manifest.is_file() {
        check_manifest(&manifest, p);
    } else if let Some(m) = k.manifest.as_ref().filter(|_| default.is_file()) {
        // A manifest that does not exist yet is `bless`'s to write, but
        // not beside the one that does: that is a misspelt path.
        let shown = project_rel(project, &manifest);
        p.push(
            raw.error_at(m, format!("KAT manifest {shown} not found, while kat/{id}/kat.sha256 exists"))
                .help("fix the path (relative to this file), or remove `manifest` to use kat/<id>/kat.sha256"),
        );
    }
    let reference_dir = match &k.reference_dir {
        Some(d) => match contained(&project.root, toml_dir, d.get_ref()) {
            Ok(dir) if dir.is_dir() => Some(dir),
            Ok(_) => {
                p.push(
                    raw.error_at(d, "reference directory not found")
                        .help("create it or remove `reference-dir`"),
                );
                None
            }
            Err(e) => {
                p.push(raw.error_at(d, e).help("use a path inside the project"));
                None
            }
        },
        // References stored beside the manifest, as `bless` writes them.
        None => manifest
            .parent()
            .filter(|d| d.is_dir())
            .map(Path::to_path_buf),
    };
    (manifest, reference_dir)
}

/// Parses the manifest; each `<label>/<file>` names a file under the
/// reference directory, so both parts must be plain names.
fn check_manifest(manifest: &Path, p: &mut Problems) {
    let text = match std::fs::read_to_string(manifest) {
        Ok(t) => t,
        Err(e) => {
            p.push(
                ConfigError::new(format!("cannot read KAT manifest: {e}"))
                    .in_file(manifest)
                    .help("make the manifest a readable UTF-8 text file"),
            );
            return;
        }
    };
    let Some(entries) = p.take(crate::kat::manifest::parse(manifest, &text)) else {
        return;
    };
    for e in entries {
        let plain_file = Path::new(&e.file).components().count() == 1
            && matches!(
                Path::new(&e.file).components().next(),
                Some(PathPart::Normal(_))
            )
            && !e.file.starts_with('.');
        let problem = match names::check_name(&e.label) {
            Err(why) => format!("label `{}` {why}", e.label),
            Ok(()) if !plain_file => format!("`{}` is not a plain file name", e.file),
            Ok(()) => continue,
        };
        let start = text.find(&e.line).unwrap_or(0);
        p.push(
            ConfigError::new(format!("bad manifest line: {problem}"))
                .at(Location::from_span(manifest, &text, start..start + e.line.len()))
                .help("write `<sha256> <mode>[:N] <label>/<file>` with a label of the algorithm and a file name without `/`"),
        );
    }
}
