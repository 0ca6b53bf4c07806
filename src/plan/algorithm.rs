//! One algorithm TOML (and the components it uses) → validated instances.
//!
//! Every problem is recorded and resolution goes on, so one run of `plan`
//! or `validate` lists them all. This is the only place the rules of an
//! algorithm file live: `validate` runs exactly this, then checks the
//! resolved instances' sources.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use toml::Spanned;

use super::component::{Component, Components};
use super::names::{self, NAME_RULE};
use super::paths::{contained, expand_sources};
use super::problems::Problems;
use super::project::{project_rel, Project};
use super::*;
use crate::config::algorithm::{DefineValue, RawAlgorithm, RawImplementation, RawParameterSet};
use crate::config::Loaded;
use crate::error::ConfigError;

/// What a campaign asks of every algorithm it selects.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Selection<'a> {
    /// Only these implementations (`None`: all).
    pub implementations: Option<&'a [String]>,
    /// KAT records of every instance, overriding the algorithm's.
    pub records: Option<u32>,
}

/// Everything resolving one algorithm file found. `resolve` keeps the
/// algorithm and its instances when there is no problem; `validate` also
/// checks the sources of the instances that resolved.
#[derive(Debug)]
pub(crate) struct AlgorithmCheck {
    /// The parsed file, unless it could not be read or deserialized.
    pub raw: Option<Loaded<RawAlgorithm>>,
    pub algorithm: Option<Algorithm>,
    /// Each instance that resolved completely, with the index of its
    /// `[[parameter-set]]` (where problems with its sources point).
    pub instances: Vec<(Instance, usize)>,
    pub problems: Vec<ConfigError>,
    pub warnings: Vec<String>,
}

/// Resolves one algorithm file. A file outside `algorithms/` is checked as
/// if it were there (its paths relative to where it is), with a warning.
pub(crate) fn check_algorithm(project: &Project, file: &Path, sel: Selection) -> AlgorithmCheck {
    let mut p = Problems::default();
    let mut warnings = Vec::new();
    let raw = p.read::<RawAlgorithm>(file);
    let mut algorithm = None;
    let mut instances = Vec::new();
    if let Some(raw) = &raw {
        let mut r = Resolver {
            project,
            raw,
            alg_root: project.algorithms_dir(),
            toml_dir: file.parent().map(Path::to_path_buf).unwrap_or_default(),
            p: &mut p,
            unit_patterns: BTreeMap::new(),
        };
        let id = r.identity(file, &mut warnings);
        let binding = r.binding();
        r.rules();
        r.kind_rules();
        let mut loaded = Components::default();
        let components: Vec<Option<Component>> = raw
            .value
            .uses
            .iter()
            .map(|u| loaded.get(project, raw, u, r.p))
            .collect();
        // Per implementation: the algorithm's components, then its own.
        let per_impl: Vec<Vec<Option<Component>>> = raw
            .value
            .implementations
            .iter()
            .map(|imp| {
                let mut list = components.clone();
                for u in &imp.uses {
                    if raw.value.uses.iter().any(|a| a.get_ref() == u.get_ref()) {
                        continue;
                    }
                    list.push(loaded.get(project, raw, u, r.p));
                }
                list
            })
            .collect();
        let (kat_manifest, kat_reference_dir) = r.kat(&id);
        instances = r.instances(&id, sel, &binding, &per_impl);
        r.unselected_units();
        let profile = super::profile::algorithm(raw, r.p);
        algorithm = Some(r.algorithm(&id, &instances, kat_manifest, kat_reference_dir, profile));
    }
    AlgorithmCheck {
        raw,
        algorithm,
        instances,
        problems: p.into_vec(),
        warnings,
    }
}

pub(super) struct Resolver<'a> {
    pub project: &'a Project,
    pub raw: &'a Loaded<RawAlgorithm>,
    pub alg_root: PathBuf,
    pub toml_dir: PathBuf,
    pub p: &'a mut Problems,
    /// Each `[[implementation.unit]]` pattern (by where it is in the file)
    /// → whether it selected a source of some instance: one that selects
    /// none in every set is a mistake, one set's file is not.
    unit_patterns: BTreeMap<usize, (bool, Spanned<String>)>,
}

impl Resolver<'_> {
    /// The id: a valid name, and the file's name when the file is in
    /// `algorithms/` (campaigns find algorithms by file name).
    fn identity(&mut self, file: &Path, warnings: &mut Vec<String>) -> String {
        let raw = self.raw;
        let id = raw.value.id.get_ref().clone();
        if let Err(why) = names::check_name(&id) {
            self.p.push(
                raw.error_at(&raw.value.id, format!("id `{id}` {why}"))
                    .help(NAME_RULE),
            );
        }
        let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned());
        if file.parent() == Some(self.alg_root.as_path()) {
            if stem.as_deref() != Some(id.as_str()) {
                let stem = stem.unwrap_or_default();
                self.p.push(
                    raw.error_at(
                        &raw.value.id,
                        format!("id `{id}` does not match the file name"),
                    )
                    .help(format!("set id = \"{stem}\" or rename the file")),
                );
            }
        } else {
            warnings.push(format!(
                "{} is not algorithms/{id}.toml: campaigns will not find it",
                file.display()
            ));
        }
        id
    }

    fn kat(&mut self, id: &str) -> (PathBuf, Option<PathBuf>) {
        super::component::kat_files(self.project, self.raw, &self.toml_dir, id, self.p)
    }

    fn instances(
        &mut self,
        id: &str,
        sel: Selection,
        binding: &Binding,
        components: &[Vec<Option<Component>>],
    ) -> Vec<(Instance, usize)> {
        let a = &self.raw.value;
        let mut labels = BTreeSet::new();
        let mut out = Vec::new();
        for (k, imp) in a.implementations.iter().enumerate() {
            let imp_name = imp.name.get_ref();
            if sel.implementations.is_some_and(|f| !f.contains(imp_name)) {
                continue;
            }
            for (j, ps) in a.parameter_sets.iter().enumerate() {
                if ps
                    .implementations
                    .as_ref()
                    .is_some_and(|l| !l.contains(imp_name))
                {
                    continue;
                }
                // The first implementation is the reference: bare labels.
                let label = if k == 0 {
                    ps.label.get_ref().clone()
                } else {
                    format!("{}.{}", ps.label.get_ref(), imp_name)
                };
                // The implementation's own name is checked with the file's
                // rules; here the set's label, then the length of both.
                let problem = match names::check_name(ps.label.get_ref()) {
                    Err(why) => Some(format!("label `{}` {why}", ps.label.get_ref())),
                    Ok(()) if names::check_name(imp_name).is_err() => None,
                    Ok(()) => names::check_name(&label)
                        .err()
                        .map(|why| format!("label `{label}` {why}")),
                };
                let named = problem.is_none() && names::check_name(imp_name).is_ok();
                if let Some(message) = problem {
                    self.p
                        .push(self.raw.error_at(&ps.label, message).help(NAME_RULE));
                }
                if !labels.insert(label.clone()) {
                    self.p.push(
                        self.raw
                            .error_at(&ps.label, format!("duplicate label `{label}`"))
                            .help("give every parameter set a distinct label"),
                    );
                    continue;
                }
                let parts = Parts {
                    id,
                    label,
                    imp,
                    ps,
                    binding,
                    components: &components[k],
                    records: sel.records,
                };
                // Resolved even under a bad name, to report its other problems.
                if let Some(inst) = self.instance(parts).filter(|_| named) {
                    out.push((inst, j));
                }
            }
        }
        out
    }

    /// One instance; `None` (with its problems recorded) unless all of it
    /// resolved.
    fn instance(&mut self, x: Parts) -> Option<Instance> {
        let root_s = x.ps.root.as_ref().unwrap_or(&x.imp.root);
        let root = self.source_root(root_s)?;
        let components_ok = x.components.iter().all(Option::is_some);
        // Both run whatever the other found, so every problem is recorded.
        let sources = self.own_sources(&root, root_s, &x);
        let include_dirs = self.own_include_dirs(&root, &x);
        let units = sources
            .as_deref()
            .and_then(|s| self.unit_flags(&root, &x, s));
        match (sources, include_dirs, units) {
            (Some(sources), Some(include_dirs), Some(units)) if components_ok => {
                Some(self.assemble(x, root, sources, include_dirs, units))
            }
            _ => None,
        }
    }

    /// A unit pattern that selected a file but no instance's source.
    fn unselected_units(&mut self) {
        let raw = self.raw;
        for (_, pat) in self.unit_patterns.values().filter(|(hit, _)| !hit) {
            self.p.push(
                raw.error_at(pat, "selects none of the implementation's sources")
                    .help("a unit pattern names files that `sources` also selects"),
            );
        }
    }

    /// What `[[implementation.unit]]` tables add to the files they select
    /// (features, then defines, in table order); `None` when a pattern
    /// leaves the root or selects none of the instance's sources.
    fn unit_flags(
        &mut self,
        root: &Path,
        x: &Parts,
        sources: &[PathBuf],
    ) -> Option<BTreeMap<PathBuf, UnitFlags>> {
        let raw = self.raw;
        let mut complete = true;
        let mut out: BTreeMap<PathBuf, UnitFlags> = BTreeMap::new();
        for u in &x.imp.units {
            let defines: Vec<String> = u.defines.iter().filter_map(|(k, v)| v.flag(k)).collect();
            for pat in &u.sources {
                let selected = contained(root, root, pat.get_ref()).and_then(|_| {
                    expand_sources(
                        root,
                        &self.alg_root,
                        std::slice::from_ref(pat.get_ref()),
                        &[],
                    )
                });
                let files: Vec<PathBuf> = match selected {
                    Ok(files) => files.into_iter().filter(|f| sources.contains(f)).collect(),
                    Err(e) => {
                        complete = false;
                        self.p.push(raw.error_at(pat, e).help(
                            "unit patterns are relative to the implementation root and stay inside it",
                        ));
                        continue;
                    }
                };
                let seen = self
                    .unit_patterns
                    .entry(pat.span().start)
                    .or_insert_with(|| (false, pat.clone()));
                seen.0 |= !files.is_empty();
                for f in files {
                    let flags = out.entry(f).or_default();
                    for feature in &u.cpu_features {
                        if !flags.0.contains(feature) {
                            flags.0.push(feature.clone());
                        }
                    }
                    flags.1.extend(defines.iter().cloned());
                }
            }
        }
        complete.then_some(out)
    }

    /// The implementation root (a set may name its own), which must be a
    /// directory inside the algorithms directory.
    fn source_root(&mut self, root_s: &Spanned<String>) -> Option<PathBuf> {
        let raw = self.raw;
        match contained(&self.alg_root, &self.toml_dir, root_s.get_ref()) {
            Err(e) => {
                self.p.push(
                    raw.error_at(root_s, e)
                        .help("keep sources inside the algorithms directory"),
                );
                None
            }
            Ok(r) if !r.is_dir() => {
                let shown = project_rel(self.project, &r);
                self.p.push(
                    raw.error_at(root_s, format!("source root {shown} not found"))
                        .help("create the directory or fix `root`"),
                );
                None
            }
            Ok(r) => Some(r),
        }
    }

    /// The files the instance's own source patterns select; `None` when a
    /// pattern leaves the root or selects nothing.
    fn own_sources(
        &mut self,
        root: &Path,
        root_s: &Spanned<String>,
        x: &Parts,
    ) -> Option<Vec<PathBuf>> {
        let raw = self.raw;
        let mut complete = true;
        let excludes = x.ps.exclude.as_ref().unwrap_or(&x.imp.exclude);
        let mut sources = Vec::new();
        for pat in x.ps.sources.as_ref().unwrap_or(&x.imp.sources) {
            // A default pattern has no text: point at the root.
            let at = if pat.span().is_empty() { root_s } else { pat };
            if let Err(e) = contained(root, root, pat.get_ref()) {
                complete = false;
                self.p.push(raw.error_at(at, e).help(
                    "source patterns are relative to the implementation root and stay inside it",
                ));
                continue;
            }
            match expand_sources(
                root,
                &self.alg_root,
                std::slice::from_ref(pat.get_ref()),
                excludes,
            ) {
                Ok(files) => sources.extend(files),
                Err(e) => {
                    complete = false;
                    self.p
                        .push(raw.error_at(at, e).help("fix the pattern or add the file"));
                }
            }
        }
        complete.then_some(sources)
    }

    /// The root, then the implementation's include directories and the
    /// set's (added to them: a set that needs one more directory names only
    /// that one); `None` when one is missing or outside the root. A set
    /// with a root of its own has only its own: the implementation's are
    /// relative to the implementation's root.
    fn own_include_dirs(&mut self, root: &Path, x: &Parts) -> Option<Vec<PathBuf>> {
        let mut complete = true;
        let mut include_dirs = vec![root.to_path_buf()];
        let inherited = if x.ps.root.is_some() {
            &[][..]
        } else {
            &x.imp.include_dirs[..]
        };
        for inc in inherited.iter().chain(x.ps.include_dirs.iter().flatten()) {
            match self.include_dir(root, inc) {
                // Named by both: searched once, where the implementation put it.
                Some(d) if include_dirs.contains(&d) => {}
                Some(d) => include_dirs.push(d),
                None => complete = false,
            }
        }
        complete.then_some(include_dirs)
    }

    /// The instance from its resolved parts: its own sources, include
    /// directories and defines joined with its components'.
    fn assemble(
        &self,
        x: Parts,
        root: PathBuf,
        mut sources: Vec<PathBuf>,
        mut include_dirs: Vec<PathBuf>,
        mut units: BTreeMap<PathBuf, UnitFlags>,
    ) -> Instance {
        let mut defines: BTreeMap<&String, &DefineValue> = x.imp.defines.iter().collect();
        for comp in x.components.iter().flatten() {
            sources.extend(comp.sources.iter().cloned());
            include_dirs.extend(comp.include_dirs.iter().cloned());
            defines.extend(comp.defines.iter());
        }
        defines.extend(x.ps.defines.iter());
        sources.sort();
        sources.dedup();
        include_dirs.dedup();
        let binding = instance_binding(&x);
        let kat_records = self.kat_records(&x);
        let a = &self.raw.value;
        Instance {
            algorithm: x.id.to_string(),
            label: x.label,
            implementation: x.imp.name.get_ref().clone(),
            kind: a.kind,
            api: a.api,
            sources: sources
                .into_iter()
                .map(|p| {
                    let (cpu_features, defines) = units.remove(&p).unwrap_or_default();
                    SourceFile {
                        display: project_rel(self.project, &p),
                        path: p,
                        cpu_features,
                        defines,
                    }
                })
                .collect(),
            include_dirs,
            defines: defines.iter().filter_map(|(k, v)| v.flag(k)).collect(),
            binding,
            cpu_features: x.imp.cpu_features.clone(),
            libraries: x
                .imp
                .libraries
                .iter()
                .map(|l| l.get_ref().clone())
                .collect(),
            arch: x.imp.arch.clone(),
            submitter_cflags: x.imp.submitter_cflags.clone(),
            kat_records,
            cmake: x.imp.cmake.as_ref().map(|c| CmakeSpec {
                root: root.clone(),
                target: c.target.clone(),
                options: c.options.clone(),
            }),
            spec: self.kind_spec(x.ps),
        }
    }

    /// The campaign's override, else the set's, else the file's, else the
    /// API's default.
    fn kat_records(&self, x: &Parts) -> u32 {
        let a = &self.raw.value;
        let default_records = match a.api {
            ApiFamily::Nist => 100,
            ApiFamily::Ngcc => 10,
        };
        x.records
            .or(x.ps.kat_records)
            .or(a.kat.records)
            .unwrap_or(default_records)
    }

    fn include_dir(&mut self, root: &Path, inc: &Spanned<String>) -> Option<PathBuf> {
        match contained(root, root, inc.get_ref()) {
            Ok(d) if d.is_dir() => Some(d),
            Ok(_) => {
                self.p.push(
                    self.raw
                        .error_at(inc, "include directory not found")
                        .help("create it or remove it from `include-dirs`"),
                );
                None
            }
            Err(e) => {
                self.p.push(
                    self.raw
                        .error_at(inc, e)
                        .help("include dirs stay inside the implementation root"),
                );
                None
            }
        }
    }

    fn algorithm(
        &self,
        id: &str,
        instances: &[(Instance, usize)],
        kat_manifest: PathBuf,
        kat_reference_dir: Option<PathBuf>,
        (profile_wraps, profile_classes): (Vec<Wrap>, Vec<super::ClassDef>),
    ) -> Algorithm {
        let a = &self.raw.value;
        Algorithm {
            id: id.to_string(),
            name: a.name.clone(),
            kind: a.kind,
            api: a.api,
            description: a.description.clone(),
            links: a.links.clone(),
            toml: project_rel(self.project, &self.raw.path),
            known_issues: a
                .known_issues
                .iter()
                .map(|k| KnownIssue {
                    labels: k.labels.get_ref().clone(),
                    action: k.action,
                    cause: k.cause.clone(),
                })
                .collect(),
            ct_annotations: a
                .ct_annotations
                .iter()
                .map(exact::CtAnnotation::from_raw)
                .collect(),
            survey_note: a.survey_note.clone(),
            kat_manifest,
            kat_reference_dir,
            implementations: a
                .implementations
                .iter()
                .map(|i| i.name.get_ref().clone())
                .collect(),
            labels: instances.iter().map(|(i, _)| i.label.clone()).collect(),
            profile_wraps,
            profile_classes,
        }
    }
}

/// The pieces one instance is made of.
/// A unit's own CPU features and `-D` flags.
type UnitFlags = (Vec<String>, Vec<String>);

struct Parts<'a> {
    id: &'a str,
    label: String,
    imp: &'a RawImplementation,
    ps: &'a RawParameterSet,
    binding: &'a Binding,
    components: &'a [Option<Component>],
    records: Option<u32>,
}

/// The file's binding, with the most specific namespace (set,
/// implementation, [nist]), suffix and header (set, [nist]).
fn instance_binding(x: &Parts) -> Binding {
    let mut binding = x.binding.clone();
    if let Binding::Nist {
        namespace,
        suffix,
        header,
        ..
    } = &mut binding
    {
        if let Some(ns) = x.ps.namespace.as_ref().or(x.imp.namespace.as_ref()) {
            *namespace = ns.clone();
        }
        if let Some(s) = &x.ps.suffix {
            *suffix = s.clone();
        }
        if let Some(h) = &x.ps.header {
            *header = h.get_ref().clone();
        }
    }
    binding
}
