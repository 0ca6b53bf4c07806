//! One algorithm TOML (and the components it uses) → validated instances.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use toml::Spanned;

use super::paths::{contained, expand_sources};
use super::resolve::{list_stems, project_rel, Project};
use super::*;
use crate::config::algorithm::{DefineValue, RawAlgorithm, RawComponent, RawImplementation};
use crate::config::campaign::RawCampaign;
use crate::config::{self, Loaded};
use crate::error::ConfigError;

/// Resolves `algorithms/<id>.toml` on its own, as a campaign selecting only
/// it (every implementation, no record override) would: for checks such as
/// `pqbench validate` that run outside any campaign.
pub fn resolve_single(
    project: &Project,
    id: &str,
) -> Result<(Algorithm, Vec<Instance>), ConfigError> {
    let campaign: RawCampaign = config::parse(Path::new("(no campaign)"), "algorithms = []")?;
    resolve_algorithm(project, id, &campaign, None)
}

pub(super) fn resolve_algorithm(
    project: &Project,
    id: &str,
    campaign: &RawCampaign,
    records_override: Option<u32>,
) -> Result<(Algorithm, Vec<Instance>), ConfigError> {
    let alg_root = project.algorithms_dir();
    let file = alg_root.join(format!("{id}.toml"));
    let raw: Loaded<RawAlgorithm> = config::load(&file)?;
    let a = &raw.value;
    if a.id.get_ref() != id {
        return Err(raw
            .error_at(
                &a.id,
                format!("id `{}` does not match the file name", a.id.get_ref()),
            )
            .help(format!("set id = \"{id}\" or rename the file")));
    }
    if a.implementations.is_empty() {
        return Err(raw
            .error("no [[implementation]]")
            .help("add an [[implementation]] table with a `root`"));
    }
    if a.parameter_sets.is_empty() {
        return Err(raw
            .error("no [[parameter-set]]")
            .help("add a [[parameter-set]] table with a `label`"));
    }
    let binding = match (a.api, &a.ngcc, &a.nist) {
        (ApiFamily::Ngcc, Some(n), _) => Binding::Ngcc {
            headers: n.headers.clone(),
        },
        (ApiFamily::Ngcc, None, _) => Binding::Ngcc {
            headers: vec!["api.h".into()],
        },
        (ApiFamily::Nist, _, Some(n)) => Binding::Nist {
            header: n.header.clone(),
            namespace: n.namespace.clone(),
            randombytes: n.randombytes.clone(),
            lengths: n.lengths,
            kat_rng: n.kat_rng,
        },
        (ApiFamily::Nist, _, None) => Binding::Nist {
            header: "api.h".into(),
            namespace: String::new(),
            randombytes: "randombytes".into(),
            lengths: LengthType::UnsignedLongLong,
            kat_rng: KatRng::Builtin,
        },
    };
    for k in &a.known_issues {
        if let Err(e) = regex::Regex::new(k.labels.get_ref()) {
            return Err(raw
                .error_at(&k.labels, format!("bad label pattern: {e}"))
                .help("write a regular expression over instance labels"));
        }
    }

    let components = a
        .uses
        .iter()
        .map(|u| load_component(project, &raw, u))
        .collect::<Result<Vec<_>, _>>()?;
    let toml_dir = file.parent().expect("file has a parent").to_path_buf();
    let kat_manifest = match &a.kat.manifest {
        Some(m) => contained(&project.root, &toml_dir, m.get_ref())
            .map_err(|e| raw.error_at(m, e).help("use a path inside the project"))?,
        None => project.root.join("kat").join(id).join("kat.sha256"),
    };
    if kat_manifest.is_file() {
        let text = std::fs::read_to_string(&kat_manifest).map_err(|e| {
            ConfigError::new(format!("cannot read KAT manifest: {e}")).in_file(&kat_manifest)
        })?;
        crate::kat::manifest::parse(&kat_manifest, &text)?;
    }
    let kat_reference_dir = match &a.kat.reference_dir {
        Some(d) => {
            let p = contained(&project.root, &toml_dir, d.get_ref())
                .map_err(|e| raw.error_at(d, e).help("use a path inside the project"))?;
            if !p.is_dir() {
                return Err(raw
                    .error_at(d, "reference directory not found")
                    .help("create it or remove `reference-dir`"));
            }
            Some(p)
        }
        // References stored beside the manifest, as `bless` writes them.
        None => kat_manifest
            .parent()
            .filter(|d| d.is_dir())
            .map(Path::to_path_buf),
    };

    let impl_filter = campaign.implementations.as_ref();
    let mut labels = BTreeSet::new();
    let mut instances = Vec::new();
    for imp in &a.implementations {
        let imp_name = imp.name.get_ref();
        if impl_filter.is_some_and(|f| !f.contains(imp_name)) {
            continue;
        }
        for ps in &a.parameter_sets {
            if ps
                .implementations
                .as_ref()
                .is_some_and(|l| !l.contains(imp_name))
            {
                continue;
            }
            let label = if imp_name == &a.implementations[0].name.get_ref().clone() {
                ps.label.get_ref().clone()
            } else {
                format!("{}.{}", ps.label.get_ref(), imp_name)
            };
            if !label
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.+".contains(c))
            {
                return Err(raw
                    .error_at(
                        &ps.label,
                        format!("label `{label}` has characters unsafe in file names"),
                    )
                    .help("use letters, digits and - _ . +"));
            }
            if !labels.insert(label.clone()) {
                return Err(raw
                    .error_at(&ps.label, format!("duplicate label `{label}`"))
                    .help("give every parameter set a distinct label"));
            }
            let root_s = ps.root.as_ref().unwrap_or(&imp.root);
            let root = contained(&alg_root, &toml_dir, root_s.get_ref()).map_err(|e| {
                raw.error_at(root_s, e)
                    .help("keep sources inside the algorithms directory")
            })?;
            if !root.is_dir() {
                return Err(raw
                    .error_at(root_s, format!("source root {} not found", root.display()))
                    .help("create the directory or fix `root`"));
            }
            let src_pats = ps.sources.as_ref().unwrap_or(&imp.sources);
            let excludes = ps.exclude.as_ref().unwrap_or(&imp.exclude);
            let incs = ps.include_dirs.as_ref().unwrap_or(&imp.include_dirs);
            let mut sources = Vec::new();
            for pat in src_pats {
                contained(&root, &root, pat.get_ref()).map_err(|e| {
                    raw.error_at(pat, e).help("source patterns are relative to the implementation root and stay inside it")
                })?;
                let files = expand_sources(&root, std::slice::from_ref(pat.get_ref()), excludes)
                    .map_err(|e| raw.error_at(pat, e).help("fix the pattern or add the file"))?;
                sources.extend(files);
            }
            let mut include_dirs = vec![root.clone()];
            for inc in incs {
                let d = contained(&root, &root, inc.get_ref()).map_err(|e| {
                    raw.error_at(inc, e)
                        .help("include dirs stay inside the implementation root")
                })?;
                if !d.is_dir() {
                    return Err(raw
                        .error_at(inc, "include directory not found")
                        .help("create it or remove it from `include-dirs`"));
                }
                include_dirs.push(d);
            }
            let mut defines: BTreeMap<&String, &DefineValue> = imp.defines.iter().collect();
            for comp in &components {
                sources.extend(comp.sources.iter().cloned());
                include_dirs.extend(comp.include_dirs.iter().cloned());
                defines.extend(comp.defines.iter());
            }
            defines.extend(ps.defines.iter());
            sources.sort();
            sources.dedup();
            include_dirs.dedup();
            let binding = match (&binding, &ps.namespace) {
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
            let default_records = match a.api {
                ApiFamily::Nist => 100,
                ApiFamily::Ngcc => 10,
            };
            instances.push(Instance {
                algorithm: id.to_string(),
                label,
                implementation: imp_name.clone(),
                kind: a.kind,
                api: a.api,
                sources: sources
                    .into_iter()
                    .map(|p| SourceFile {
                        display: project_rel(project, &p),
                        path: p,
                    })
                    .collect(),
                include_dirs,
                defines: defines.iter().filter_map(|(k, v)| v.flag(k)).collect(),
                binding,
                cpu_features: imp.cpu_features.clone(),
                kat_records: records_override
                    .or(ps.kat_records)
                    .or(a.kat.records)
                    .unwrap_or(default_records),
                cmake: cmake_spec(imp, &root),
            });
        }
    }
    let algorithm = Algorithm {
        id: id.to_string(),
        name: a.name.clone(),
        kind: a.kind,
        api: a.api,
        description: a.description.clone(),
        links: a.links.clone(),
        toml: project_rel(project, &file),
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
        labels: instances.iter().map(|i| i.label.clone()).collect(),
    };
    Ok((algorithm, instances))
}

fn cmake_spec(imp: &RawImplementation, root: &Path) -> Option<CmakeSpec> {
    imp.cmake.as_ref().map(|c| CmakeSpec {
        root: root.to_path_buf(),
        target: c.target.clone(),
        options: c.options.clone(),
    })
}

struct Component {
    sources: Vec<PathBuf>,
    include_dirs: Vec<PathBuf>,
    defines: BTreeMap<String, DefineValue>,
}

fn load_component(
    project: &Project,
    user: &Loaded<RawAlgorithm>,
    name: &Spanned<String>,
) -> Result<Component, ConfigError> {
    let dir = project.algorithms_dir().join("components");
    let file = dir.join(format!("{}.toml", name.get_ref()));
    if !file.is_file() {
        return Err(user
            .error_at(name, format!("unknown component `{}`", name.get_ref()))
            .help(format!(
                "add algorithms/components/{}.toml or use one of: {}",
                name.get_ref(),
                list_stems(&dir).join(", ")
            )));
    }
    let raw: Loaded<RawComponent> = config::load(&file)?;
    let c = &raw.value;
    let alg_root = project.algorithms_dir();
    let root = contained(&alg_root, &dir, c.root.get_ref()).map_err(|e| {
        raw.error_at(&c.root, e)
            .help("keep component sources inside the algorithms directory")
    })?;
    let mut sources = Vec::new();
    for pat in &c.sources {
        let files = expand_sources(&root, std::slice::from_ref(pat.get_ref()), &c.exclude)
            .map_err(|e| raw.error_at(pat, e).help("fix the pattern or add the file"))?;
        sources.extend(files);
    }
    let mut include_dirs = vec![root.clone()];
    for inc in &c.include_dirs {
        include_dirs.push(contained(&root, &root, inc.get_ref()).map_err(|e| {
            raw.error_at(inc, e)
                .help("include dirs stay inside the component root")
        })?);
    }
    Ok(Component {
        sources,
        include_dirs,
        defines: c.defines.clone(),
    })
}
