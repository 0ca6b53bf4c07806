//! `pqbench validate <toml>`: checks an algorithm TOML without building or
//! running anything, and lists every problem with its position.
//!
//! Checks: the schema (unknown keys are reported one after another by
//! commenting each out and parsing again), paths that exist and stay inside
//! the algorithms directory, source patterns that match files, components,
//! include dirs and API headers, label rules, and that the sources define
//! every API function the adapter will call (`stages::build::api_symbols`),
//! namespacing macros expanded. When all that passes, the algorithm is also
//! resolved exactly as a run would (`plan::resolve_single`), so validate
//! never accepts what `run` rejects.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use toml::Spanned;

use crate::config::algorithm::{RawAlgorithm, RawComponent};
use crate::config::{self, Loaded};
use crate::error::{exit, ConfigError, Error, Location};
use crate::import::{katfiles, symbols, tomltext};
use crate::plan::{self, contained, expand_sources, Binding, Instance};

/// The outcome: problems (each positioned) and warnings.
#[derive(Debug)]
pub struct Report {
    pub file: PathBuf,
    pub problems: Vec<ConfigError>,
    pub warnings: Vec<String>,
    pub instances: usize,
}

impl Report {
    pub fn exit_code(&self) -> i32 {
        if self.problems.is_empty() {
            exit::OK
        } else {
            exit::BAD_INPUT
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for p in &self.problems {
            writeln!(f, "error: {p}\n")?;
        }
        for w in &self.warnings {
            writeln!(f, "warning: {w}")?;
        }
        match self.problems.len() {
            0 => writeln!(
                f,
                "{}: OK ({} instances: paths, sources and API symbols checked)",
                self.file.display(),
                self.instances
            ),
            n => writeln!(
                f,
                "{}: {n} problem{}",
                self.file.display(),
                if n == 1 { "" } else { "s" }
            ),
        }
    }
}

pub fn validate(project_root: &Path, toml: &Path) -> Result<Report, Error> {
    let project = plan::Project::new(project_root).map_err(|e| {
        ConfigError::new(format!("project directory {}: {e}", project_root.display()))
    })?;
    let file = toml.canonicalize().map_err(|e| {
        ConfigError::new(format!("cannot read {}: {e}", toml.display()))
            .in_file(toml)
            .help("check the path and that the file exists")
    })?;
    let text = std::fs::read_to_string(&file).map_err(|e| {
        ConfigError::new(format!("cannot read {}: {e}", file.display())).in_file(&file)
    })?;
    let mut c = Checker {
        alg_root: project.algorithms_dir(),
        project,
        toml_dir: file.parent().map(Path::to_path_buf).unwrap_or_default(),
        problems: Vec::new(),
        seen: BTreeSet::new(),
        warnings: Vec::new(),
        scans: BTreeMap::new(),
        instances: 0,
    };
    if let Some(raw) = schema(&file, &text, &mut c) {
        c.check(&raw);
    }
    Ok(Report {
        file,
        problems: c.problems,
        warnings: c.warnings,
        instances: c.instances,
    })
}

/// Parses with the schema; after an unknown key on a line of its own, the
/// key is commented out and parsing repeats, so every such key is listed.
fn schema(path: &Path, text: &str, c: &mut Checker) -> Option<Loaded<RawAlgorithm>> {
    let mut work = text.to_string();
    for _ in 0..64 {
        match config::parse::<RawAlgorithm>(path, &work) {
            Ok(value) => {
                return Some(Loaded {
                    path: path.to_path_buf(),
                    text: work,
                    value,
                })
            }
            Err(e) => {
                let next = tomltext::comment_out(&work, &e);
                c.push(e);
                work = next?;
            }
        }
    }
    None
}

struct Checker {
    project: plan::Project,
    alg_root: PathBuf,
    toml_dir: PathBuf,
    problems: Vec<ConfigError>,
    seen: BTreeSet<String>,
    warnings: Vec<String>,
    scans: symbols::Cache,
    instances: usize,
}

/// A component's contribution to every instance.
#[derive(Default)]
struct Comp {
    sources: Vec<PathBuf>,
    include_dirs: Vec<PathBuf>,
}

impl Checker {
    /// Records a problem once (shared patterns would repeat it per set).
    fn push(&mut self, e: ConfigError) {
        if self.seen.insert(e.to_string()) {
            self.problems.push(e);
        }
    }

    fn check(&mut self, raw: &Loaded<RawAlgorithm>) {
        let a = &raw.value;
        let id = a.id.get_ref().clone();
        let expected = self.alg_root.join(format!("{id}.toml"));
        if raw.path != expected {
            if raw.path.parent() == Some(self.alg_root.as_path()) {
                self.push(
                    raw.error_at(&a.id, format!("id `{id}` does not match the file name"))
                        .help("set `id` to the file name (without .toml) or rename the file"),
                );
            } else {
                self.warnings.push(format!(
                    "{} is not algorithms/{id}.toml: campaigns will not find it",
                    raw.path.display()
                ));
            }
        }
        if a.implementations.is_empty() {
            self.push(
                raw.error("no [[implementation]]")
                    .help("add an [[implementation]] table with a `root`"),
            );
        }
        if a.parameter_sets.is_empty() {
            self.push(
                raw.error("no [[parameter-set]]")
                    .help("add a [[parameter-set]] table with a `label`"),
            );
        }
        for k in &a.known_issues {
            if let Err(e) = regex::Regex::new(k.labels.get_ref()) {
                self.push(
                    raw.error_at(&k.labels, format!("bad label pattern: {e}"))
                        .help("write a regular expression over instance labels"),
                );
            }
        }
        let comps: Vec<Comp> = a
            .uses
            .iter()
            .filter_map(|u| self.component(raw, u))
            .collect();
        let labels = self.instances_of(raw, &comps);
        self.kat(raw, &id, &labels);
        if self.problems.is_empty() && raw.path == expected {
            if let Err(e) = plan::resolve_single(&self.project, &id) {
                self.push(e);
            }
        }
    }

    fn in_alg_root(
        &mut self,
        raw: &Loaded<RawAlgorithm>,
        s: &Spanned<String>,
        what: &str,
    ) -> Option<PathBuf> {
        match contained(&self.alg_root, &self.toml_dir, s.get_ref()) {
            Err(e) => {
                self.push(
                    raw.error_at(s, e)
                        .help("keep sources inside the algorithms directory"),
                );
                None
            }
            Ok(p) if !p.is_dir() => {
                self.push(
                    raw.error_at(s, format!("{what} {} not found", p.display()))
                        .help("create the directory or fix the path"),
                );
                None
            }
            Ok(p) => Some(p),
        }
    }

    fn component(&mut self, raw: &Loaded<RawAlgorithm>, name: &Spanned<String>) -> Option<Comp> {
        let dir = self.alg_root.join("components");
        let file = dir.join(format!("{}.toml", name.get_ref()));
        if !file.is_file() {
            self.push(
                raw.error_at(name, format!("unknown component `{}`", name.get_ref()))
                    .help(format!("add algorithms/components/{}.toml", name.get_ref())),
            );
            return None;
        }
        let comp: Loaded<RawComponent> = match config::load(&file) {
            Ok(c) => c,
            Err(e) => {
                self.push(e);
                return None;
            }
        };
        let c = &comp.value;
        let root = match contained(&self.alg_root, &dir, c.root.get_ref()) {
            Ok(r) if r.is_dir() => r,
            Ok(r) => {
                self.push(
                    comp.error_at(&c.root, format!("component root {} not found", r.display())),
                );
                return None;
            }
            Err(e) => {
                self.push(comp.error_at(&c.root, e));
                return None;
            }
        };
        let mut out = Comp {
            include_dirs: vec![root.clone()],
            ..Comp::default()
        };
        for pat in &c.sources {
            match expand_sources(&root, std::slice::from_ref(pat.get_ref()), &c.exclude) {
                Ok(files) => out.sources.extend(files),
                Err(e) => self.push(
                    comp.error_at(pat, e)
                        .help("fix the pattern or add the file"),
                ),
            }
        }
        for inc in &c.include_dirs {
            if let Ok(d) = contained(&root, &root, inc.get_ref()) {
                out.include_dirs.push(d);
            }
        }
        Some(out)
    }

    /// Checks every (implementation, parameter set) pair; returns labels.
    fn instances_of(&mut self, raw: &Loaded<RawAlgorithm>, comps: &[Comp]) -> Vec<String> {
        let a = &raw.value;
        let names: Vec<&String> = a.implementations.iter().map(|i| i.name.get_ref()).collect();
        let mut labels = Vec::new();
        for ps in &a.parameter_sets {
            for n in ps.implementations.iter().flatten() {
                if !names.contains(&n) {
                    self.push(
                        raw.error_at(
                            &ps.label,
                            format!("parameter set names unknown implementation `{n}`"),
                        )
                        .help(format!(
                            "use one of: {}",
                            names
                                .iter()
                                .map(|s| s.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )),
                    );
                }
            }
        }
        for (k, imp) in a.implementations.iter().enumerate() {
            for ps in &a.parameter_sets {
                if ps
                    .implementations
                    .as_ref()
                    .is_some_and(|l| !l.contains(imp.name.get_ref()))
                {
                    continue;
                }
                let label = if k == 0 {
                    ps.label.get_ref().clone()
                } else {
                    format!("{}.{}", ps.label.get_ref(), imp.name.get_ref())
                };
                if !label
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.+".contains(c))
                {
                    self.push(
                        raw.error_at(
                            &ps.label,
                            format!("label `{label}` has characters unsafe in file names"),
                        )
                        .help("use letters, digits and - _ . +"),
                    );
                }
                if labels.contains(&label) {
                    self.push(
                        raw.error_at(&ps.label, format!("duplicate label `{label}`"))
                            .help("give every parameter set a distinct label"),
                    );
                }
                labels.push(label.clone());
                let root_s = ps.root.as_ref().unwrap_or(&imp.root);
                let Some(root) = self.in_alg_root(raw, root_s, "source root") else {
                    continue;
                };
                let pats = ps.sources.as_ref().unwrap_or(&imp.sources);
                let excludes = ps.exclude.as_ref().unwrap_or(&imp.exclude);
                let mut sources = Vec::new();
                let mut complete = true;
                for pat in pats {
                    // A default pattern has no text: point at the root.
                    let at = if pat.span().is_empty() { root_s } else { pat };
                    let found = contained(&root, &root, pat.get_ref()).and_then(|_| {
                        expand_sources(&root, std::slice::from_ref(pat.get_ref()), excludes)
                    });
                    match found {
                        Ok(f) => sources.extend(f),
                        Err(e) => {
                            complete = false;
                            self.push(raw.error_at(at, e).help("fix the pattern or add the file"));
                        }
                    }
                }
                let mut include_dirs = vec![root.clone()];
                for inc in ps.include_dirs.as_ref().unwrap_or(&imp.include_dirs) {
                    match contained(&root, &root, inc.get_ref()) {
                        Ok(d) if d.is_dir() => include_dirs.push(d),
                        Ok(_) => self.push(
                            raw.error_at(inc, "include directory not found")
                                .help("create it or remove it from `include-dirs`"),
                        ),
                        Err(e) => self.push(
                            raw.error_at(inc, e)
                                .help("include dirs stay inside the implementation root"),
                        ),
                    }
                }
                for c in comps {
                    sources.extend(c.sources.iter().cloned());
                    include_dirs.extend(c.include_dirs.iter().cloned());
                }
                self.instances += 1;
                if imp.cmake.is_some() {
                    continue; // CMake builds its own file list.
                }
                let inst =
                    symbols::instance(a, ps.namespace.as_deref(), &label, sources, include_dirs);
                self.headers(raw, &inst);
                if complete {
                    self.symbols(raw, &ps.label, &inst);
                }
            }
        }
        labels
    }

    /// The API headers the adapter force-includes must be findable.
    fn headers(&mut self, raw: &Loaded<RawAlgorithm>, inst: &Instance) {
        let (table, key, names) = match &inst.binding {
            Binding::Ngcc { headers } => ("ngcc", "headers", headers.clone()),
            Binding::Nist { header, .. } => ("nist", "header", vec![header.clone()]),
        };
        for h in names {
            if inst.include_dirs.iter().any(|d| d.join(&h).is_file()) {
                continue;
            }
            let err = ConfigError::new(format!(
                "{}: API header `{h}` is in none of its include directories",
                inst.label
            ));
            let err = match tomltext::key_span(&raw.text, table, key) {
                Some(span) => err.at(Location::from_span(&raw.path, &raw.text, span)),
                None => err.in_file(&raw.path),
            };
            self.push(
                err.help("fix the header name, or add its directory to `include-dirs` (or `uses`)"),
            );
        }
    }

    /// Every API function the adapter calls must be defined in the sources.
    fn symbols(&mut self, raw: &Loaded<RawAlgorithm>, label: &Spanned<String>, inst: &Instance) {
        let root = self.project.root.clone();
        let show = |p: &Path| p.strip_prefix(&root).unwrap_or(p).display().to_string();
        for m in symbols::missing(inst, &mut self.scans, &show) {
            self.push(
                raw.error_at(
                    label,
                    format!(
                        "{}: API function `{}` is not defined ({})",
                        inst.label, m.symbol, m.detail
                    ),
                )
                .help(
                    "define it, fix the set's `defines`/`namespace`, or add its file to `sources`",
                ),
            );
        }
    }

    fn show(&self, p: &Path) -> String {
        p.strip_prefix(&self.project.root)
            .unwrap_or(p)
            .display()
            .to_string()
    }

    fn kat(&mut self, raw: &Loaded<RawAlgorithm>, id: &str, labels: &[String]) {
        let k = &raw.value.kat;
        let manifest = match &k.manifest {
            Some(m) => match contained(&self.project.root, &self.toml_dir, m.get_ref()) {
                Ok(p) if p.is_file() => p,
                Ok(_) => {
                    return self.push(
                        raw.error_at(m, "KAT manifest not found")
                            .help("create it or remove `manifest`"),
                    )
                }
                Err(e) => {
                    return self.push(raw.error_at(m, e).help("use a path inside the project"))
                }
            },
            None => self.project.root.join("kat").join(id).join("kat.sha256"),
        };
        if let Some(d) = &k.reference_dir {
            match contained(&self.project.root, &self.toml_dir, d.get_ref()) {
                Ok(p) if p.is_dir() => {}
                Ok(_) => self.push(
                    raw.error_at(d, "reference directory not found")
                        .help("create it or remove `reference-dir`"),
                ),
                Err(e) => self.push(raw.error_at(d, e).help("use a path inside the project")),
            }
        }
        match katfiles::coverage(&manifest, &self.show(&manifest), labels) {
            Ok(w) => self.warnings.extend(w),
            Err(e) => self.push(e),
        }
    }
}
