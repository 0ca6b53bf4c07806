//! One algorithm TOML (and the components it uses) → validated instances.
//!
//! Every problem is recorded and resolution goes on, so one run of `plan`
//! or `validate` lists them all. This is the only place the rules of an
//! algorithm file live: `validate` runs exactly this, then checks the
//! resolved instances' sources.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component as PathPart, Path, PathBuf};

use toml::Spanned;

use super::component::{load_component, Component};
use super::names::{self, NAME_RULE};
use super::paths::{contained, expand_sources};
use super::problems::Problems;
use super::resolve::{project_rel, Project};
use super::*;
use crate::config::algorithm::{DefineValue, RawAlgorithm, RawImplementation, RawParameterSet};
use crate::config::{Loaded, Step};
use crate::error::{ConfigError, Error};

/// What a campaign asks of every algorithm it selects.
#[derive(Debug, Clone, Copy, Default)]
pub struct Selection<'a> {
    /// Only these implementations (`None`: all).
    pub implementations: Option<&'a [String]>,
    /// KAT records of every instance, overriding the algorithm's.
    pub records: Option<u32>,
}

/// Everything resolving one algorithm file found. `resolve` keeps the
/// algorithm and its instances when there is no problem; `validate` also
/// checks the sources of the instances that resolved.
#[derive(Debug)]
pub struct AlgorithmCheck {
    pub file: PathBuf,
    /// The parsed file, unless it could not be read or deserialized.
    pub raw: Option<Loaded<RawAlgorithm>>,
    pub algorithm: Option<Algorithm>,
    /// Each instance that resolved completely, with the index of its
    /// `[[parameter-set]]` (where problems with its sources point).
    pub instances: Vec<(Instance, usize)>,
    pub problems: Vec<ConfigError>,
    pub warnings: Vec<String>,
}

/// Resolves `algorithms/<id>.toml` on its own, as a campaign selecting only
/// it (every implementation, no record override) would.
pub fn resolve_single(project: &Project, id: &str) -> Result<(Algorithm, Vec<Instance>), Error> {
    let file = project.algorithms_dir().join(format!("{id}.toml"));
    let check = check_algorithm(project, &file, Selection::default());
    let mut p = Problems::default();
    p.extend(check.problems);
    match check.algorithm {
        Some(a) if p.is_empty() => Ok((a, check.instances.into_iter().map(|(i, _)| i).collect())),
        _ => Err(p.into()),
    }
}

/// Resolves one algorithm file. A file outside `algorithms/` is checked as
/// if it were there (its paths relative to where it is), with a warning.
pub fn check_algorithm(project: &Project, file: &Path, sel: Selection) -> AlgorithmCheck {
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
        };
        let id = r.identity(file, &mut warnings);
        let binding = r.binding();
        r.rules();
        let components: Vec<Option<Component>> = raw
            .value
            .uses
            .iter()
            .map(|u| load_component(project, raw, u, r.p))
            .collect();
        let (kat_manifest, kat_reference_dir) = r.kat(&id);
        instances = r.instances(&id, sel, &binding, &components);
        algorithm = Some(r.algorithm(&id, &instances, kat_manifest, kat_reference_dir));
    }
    AlgorithmCheck {
        file: file.to_path_buf(),
        raw,
        algorithm,
        instances,
        problems: p.into_vec(),
        warnings,
    }
}

struct Resolver<'a> {
    project: &'a Project,
    raw: &'a Loaded<RawAlgorithm>,
    alg_root: PathBuf,
    toml_dir: PathBuf,
    p: &'a mut Problems,
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

    /// The API binding shared by every instance (a set may change the
    /// NIST namespace), with its names checked.
    fn binding(&mut self) -> Binding {
        let raw = self.raw;
        let a = &raw.value;
        match a.api {
            ApiFamily::Ngcc => {
                let headers = a
                    .ngcc
                    .as_ref()
                    .map_or_else(|| vec!["api.h".to_string()], |n| n.headers.clone());
                for (i, h) in headers.iter().enumerate() {
                    let at = [Step::Key("ngcc"), Step::Key("headers"), Step::Index(i)];
                    self.header_name(h, &at);
                }
                Binding::Ngcc { headers }
            }
            ApiFamily::Nist => {
                let (header, namespace, randombytes, lengths, kat_rng) = match &a.nist {
                    Some(n) => (
                        n.header.clone(),
                        n.namespace.clone(),
                        n.randombytes.clone(),
                        n.lengths,
                        n.kat_rng,
                    ),
                    None => (
                        "api.h".into(),
                        String::new(),
                        "randombytes".into(),
                        LengthType::UnsignedLongLong,
                        KatRng::Builtin,
                    ),
                };
                self.header_name(&header, &[Step::Key("nist"), Step::Key("header")]);
                self.namespace(&namespace, &[Step::Key("nist"), Step::Key("namespace")]);
                if !names::is_c_identifier(&randombytes) {
                    let at = [Step::Key("nist"), Step::Key("randombytes")];
                    self.p.push(
                        raw.error_at_value(
                            &at,
                            format!("`randombytes` = `{randombytes}` is not a C symbol name"),
                        )
                        .help("name the function the code calls for random bytes"),
                    );
                }
                Binding::Nist {
                    header,
                    namespace,
                    randombytes,
                    lengths,
                    kat_rng,
                }
            }
        }
    }

    /// Headers are force-included from the include directories: a plain
    /// relative path that cannot climb out of them.
    fn header_name(&mut self, h: &str, at: &[Step]) {
        let plain = !h.is_empty()
            && Path::new(h)
                .components()
                .all(|c| matches!(c, PathPart::Normal(_)));
        if !plain {
            self.p.push(
                self.raw
                    .error_at_value(at, format!("header `{h}` is not a relative path inside the include directories"))
                    .help("name the header as it is included, e.g. \"api.h\" or \"include/api.h\", without `..`"),
            );
        }
    }

    fn namespace(&mut self, ns: &str, at: &[Step]) {
        if !ns.is_empty() && !names::is_c_identifier(ns) {
            self.p.push(
                self.raw
                    .error_at_value(
                        at,
                        format!("namespace `{ns}` is not the start of a C symbol name"),
                    )
                    .help("a namespace is a prefix such as \"PQB_LARCH1_\": letters, digits and _"),
            );
        }
    }

    /// Rules within the file that do not need the file system.
    fn rules(&mut self) {
        let raw = self.raw;
        let a = &raw.value;
        if a.implementations.is_empty() {
            self.p.push(
                raw.error("no [[implementation]]")
                    .help("add an [[implementation]] table with a `root`"),
            );
        }
        if a.parameter_sets.is_empty() {
            self.p.push(
                raw.error("no [[parameter-set]]")
                    .help("add a [[parameter-set]] table with a `label`"),
            );
        }
        let imp_names: Vec<&String> = a.implementations.iter().map(|i| i.name.get_ref()).collect();
        let mut seen = BTreeSet::new();
        for (i, imp) in a.implementations.iter().enumerate() {
            let name = imp.name.get_ref();
            if let Err(why) = names::check_name(name) {
                self.p.push(
                    raw.error_at(&imp.name, format!("implementation name `{name}` {why}"))
                        .help(NAME_RULE),
                );
            }
            if !seen.insert(name) {
                self.p.push(
                    raw.error_at(&imp.name, format!("duplicate implementation `{name}`"))
                        .help("give every implementation a distinct name"),
                );
            }
            for f in &imp.cpu_features {
                if names::check_name(f).is_err() {
                    let at = [
                        Step::Key("implementation"),
                        Step::Index(i),
                        Step::Key("cpu-features"),
                    ];
                    self.p.push(
                        raw.error_at_value(&at, format!("CPU feature `{f}` is not a feature name"))
                            .help("write features as gcc's -m options name them: avx2, bmi2, aes, ..."),
                    );
                }
            }
            self.define_names(&imp.defines, &[Step::Key("implementation"), Step::Index(i)]);
        }
        for (j, ps) in a.parameter_sets.iter().enumerate() {
            let at = [Step::Key("parameter-set"), Step::Index(j)];
            self.define_names(&ps.defines, &at);
            if let Some(ns) = &ps.namespace {
                self.namespace(ns, &[at[0], at[1], Step::Key("namespace")]);
            }
            for n in ps.implementations.iter().flatten() {
                if !imp_names.contains(&n) {
                    let list: Vec<&str> = imp_names.iter().map(|s| s.as_str()).collect();
                    self.p.push(
                        raw.error_at(
                            &ps.label,
                            format!("parameter set names unknown implementation `{n}`"),
                        )
                        .help(format!("use one of: {}", list.join(", "))),
                    );
                }
            }
        }
        for k in &a.known_issues {
            if let Err(e) = regex::Regex::new(k.labels.get_ref()) {
                self.p.push(
                    raw.error_at(&k.labels, format!("bad label pattern: {e}"))
                        .help("write a regular expression over instance labels"),
                );
            }
        }
    }

    /// Define names become `-DNAME`: they must be C macro names.
    fn define_names(&mut self, defines: &BTreeMap<String, DefineValue>, table: &[Step]) {
        for name in defines.keys().filter(|n| !names::is_c_identifier(n)) {
            let mut at = table.to_vec();
            at.extend([Step::Key("defines"), Step::Key(name)]);
            self.p.push(
                self.raw
                    .error_at_key(&at, format!("define `{name}` is not a C macro name"))
                    .help("use letters, digits and _, not starting with a digit"),
            );
        }
    }

    fn kat(&mut self, id: &str) -> (PathBuf, Option<PathBuf>) {
        super::component::kat_files(self.project, self.raw, &self.toml_dir, id, self.p)
    }

    fn instances(
        &mut self,
        id: &str,
        sel: Selection,
        binding: &Binding,
        components: &[Option<Component>],
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
                if let Err(why) = names::check_name(&label) {
                    self.p.push(
                        self.raw
                            .error_at(&ps.label, format!("label `{label}` {why}"))
                            .help(NAME_RULE),
                    );
                    continue;
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
                    components,
                    records: sel.records,
                };
                if let Some(inst) = self.instance(parts) {
                    out.push((inst, j));
                }
            }
        }
        out
    }

    /// One instance; `None` (with its problems recorded) unless all of it
    /// resolved.
    fn instance(&mut self, x: Parts) -> Option<Instance> {
        let raw = self.raw;
        let root_s = x.ps.root.as_ref().unwrap_or(&x.imp.root);
        let root = match contained(&self.alg_root, &self.toml_dir, root_s.get_ref()) {
            Err(e) => {
                self.p.push(
                    raw.error_at(root_s, e)
                        .help("keep sources inside the algorithms directory"),
                );
                return None;
            }
            Ok(r) if !r.is_dir() => {
                let shown = project_rel(self.project, &r);
                self.p.push(
                    raw.error_at(root_s, format!("source root {shown} not found"))
                        .help("create the directory or fix `root`"),
                );
                return None;
            }
            Ok(r) => r,
        };
        let mut complete = x.components.iter().all(Option::is_some);
        let excludes = x.ps.exclude.as_ref().unwrap_or(&x.imp.exclude);
        let mut sources = Vec::new();
        for pat in x.ps.sources.as_ref().unwrap_or(&x.imp.sources) {
            // A default pattern has no text: point at the root.
            let at = if pat.span().is_empty() { root_s } else { pat };
            if let Err(e) = contained(&root, &root, pat.get_ref()) {
                complete = false;
                self.p.push(raw.error_at(at, e).help(
                    "source patterns are relative to the implementation root and stay inside it",
                ));
                continue;
            }
            match expand_sources(&root, std::slice::from_ref(pat.get_ref()), excludes) {
                Ok(files) => sources.extend(files),
                Err(e) => {
                    complete = false;
                    self.p
                        .push(raw.error_at(at, e).help("fix the pattern or add the file"));
                }
            }
        }
        let mut include_dirs = vec![root.clone()];
        for inc in x.ps.include_dirs.as_ref().unwrap_or(&x.imp.include_dirs) {
            match self.include_dir(&root, inc) {
                Some(d) => include_dirs.push(d),
                None => complete = false,
            }
        }
        let mut defines: BTreeMap<&String, &DefineValue> = x.imp.defines.iter().collect();
        for comp in x.components.iter().flatten() {
            sources.extend(comp.sources.iter().cloned());
            include_dirs.extend(comp.include_dirs.iter().cloned());
            defines.extend(comp.defines.iter());
        }
        defines.extend(x.ps.defines.iter());
        if !complete {
            return None;
        }
        sources.sort();
        sources.dedup();
        include_dirs.dedup();
        let binding = match (x.binding, &x.ps.namespace) {
            (
                Binding::Nist {
                    header,
                    randombytes,
                    lengths,
                    kat_rng,
                    ..
                },
                Some(ns),
            ) => Binding::Nist {
                header: header.clone(),
                namespace: ns.clone(),
                randombytes: randombytes.clone(),
                lengths: *lengths,
                kat_rng: *kat_rng,
            },
            (b, _) => b.clone(),
        };
        let a = &raw.value;
        let default_records = match a.api {
            ApiFamily::Nist => 100,
            ApiFamily::Ngcc => 10,
        };
        Some(Instance {
            algorithm: x.id.to_string(),
            label: x.label,
            implementation: x.imp.name.get_ref().clone(),
            kind: a.kind,
            api: a.api,
            sources: sources
                .into_iter()
                .map(|p| SourceFile {
                    display: project_rel(self.project, &p),
                    path: p,
                })
                .collect(),
            include_dirs,
            defines: defines.iter().filter_map(|(k, v)| v.flag(k)).collect(),
            binding,
            cpu_features: x.imp.cpu_features.clone(),
            kat_records: x
                .records
                .or(x.ps.kat_records)
                .or(a.kat.records)
                .unwrap_or(default_records),
            cmake: x.imp.cmake.as_ref().map(|c| CmakeSpec {
                root: root.clone(),
                target: c.target.clone(),
                options: c.options.clone(),
            }),
        })
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
            survey_note: a.survey_note.clone(),
            kat_manifest,
            kat_reference_dir,
            implementations: a
                .implementations
                .iter()
                .map(|i| i.name.get_ref().clone())
                .collect(),
            labels: instances.iter().map(|(i, _)| i.label.clone()).collect(),
        }
    }
}

/// The pieces one instance is made of.
struct Parts<'a> {
    id: &'a str,
    label: String,
    imp: &'a RawImplementation,
    ps: &'a RawParameterSet,
    binding: &'a Binding,
    components: &'a [Option<Component>],
    records: Option<u32>,
}
