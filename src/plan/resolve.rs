//! Raw campaign + algorithm TOML → validated `Plan`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use toml::Spanned;

use super::paths::{contained, expand_sources};
use super::*;
use crate::config::algorithm::{DefineValue, RawAlgorithm, RawComponent, RawImplementation};
use crate::config::campaign::RawCampaign;
use crate::config::{self, Loaded};
use crate::error::{ConfigError, Error};

/// Where a project's directories are.
#[derive(Debug, Clone)]
pub struct Project {
    pub root: PathBuf,
}

impl Project {
    pub fn new(root: &Path) -> std::io::Result<Project> {
        Ok(Project {
            root: root.canonicalize()?,
        })
    }
    pub fn algorithms_dir(&self) -> PathBuf {
        self.root.join("algorithms")
    }
    pub fn campaign_file(&self, name: &str) -> PathBuf {
        self.root.join("campaigns").join(format!("{name}.toml"))
    }
    pub fn output_dir(&self) -> PathBuf {
        self.root.join("output")
    }
    /// Every algorithm id with a TOML in `algorithms/`.
    pub fn algorithm_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = std::fs::read_dir(self.algorithms_dir())
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .collect();
        ids.sort();
        ids
    }
}

/// Reads `campaigns/<name>.toml` and every algorithm it selects.
pub fn resolve(project: &Project, campaign: &str) -> Result<Plan, Error> {
    let file = project.campaign_file(campaign);
    if !file.is_file() {
        let known = list_stems(&project.root.join("campaigns"));
        return Err(ConfigError::new(format!("no campaign named `{campaign}`"))
            .in_file(&file)
            .help(format!(
                "create {} or use one of: {}",
                project_rel(project, &file),
                known.join(", ")
            ))
            .into());
    }
    let raw: Loaded<RawCampaign> = config::load(&file)?;
    let c = &raw.value;

    let ids = select_algorithms(project, &raw)?;
    let flag_profiles = c
        .flag_profiles
        .iter()
        .map(|name| {
            c.flag_profile_defs
                .get(name.get_ref())
                .map(|d| FlagProfile {
                    name: name.get_ref().clone(),
                    cflags: d.cflags.clone(),
                    ldflags: d.ldflags.clone(),
                })
                .or_else(|| FlagProfile::builtin(name.get_ref()))
                .ok_or_else(|| {
                    raw.error_at(name, format!("unknown flag profile `{}`", name.get_ref()))
                        .help("use `guide` or `harness-default`, or define it under [flag-profile.<name>]")
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if flag_profiles.is_empty() {
        return Err(raw
            .error("`flag-profiles` is empty")
            .help("name at least one profile")
            .into());
    }
    let stages = match &c.stages {
        None => StageName::ALL.to_vec(),
        Some(list) => list
            .iter()
            .map(|s| {
                StageName::parse(s.get_ref()).ok_or_else(|| {
                    raw.error_at(s, format!("unknown stage `{}`", s.get_ref()))
                        .help("stages are build, kat, time, memory, sizes, profile, survey, render")
                })
            })
            .collect::<Result<Vec<_>, _>>()?,
    };
    let campaign_dir = file.parent().unwrap_or(&project.root).to_path_buf();
    let in_project = |s: &Spanned<String>| -> Result<PathBuf, ConfigError> {
        contained(&project.root, &campaign_dir, s.get_ref())
            .map_err(|e| raw.error_at(s, e).help("use a path inside the project"))
    };
    let sizes_catalog = c.sizes.catalog.as_ref().map(&in_project).transpose()?;
    if let Some(p) = &sizes_catalog {
        if !p.is_file() {
            let s = c.sizes.catalog.as_ref().expect("catalog is set");
            return Err(raw
                .error_at(s, "size catalog not found")
                .help("create the CSV or remove `catalog`")
                .into());
        }
    }
    let templates = c.render.templates.as_ref().map(&in_project).transpose()?;

    let mut algorithms = Vec::new();
    let mut instances = Vec::new();
    let mut errors = Vec::new();
    for id in &ids {
        match resolve_algorithm(project, id, c, raw.value.kat.records) {
            Ok((alg, mut insts)) => {
                algorithms.push(alg);
                instances.append(&mut insts);
            }
            Err(e) => errors.push(e),
        }
    }
    match errors.len() {
        0 => {}
        1 => return Err(errors.remove(0).into()),
        _ => return Err(Error::ConfigMany(errors)),
    }

    let t = &c.timing;
    let output = project.output_dir();
    Ok(Plan {
        campaign: campaign.to_string(),
        description: c.description.clone(),
        system: c.system.clone(),
        system_title: c.system_title.clone(),
        project_root: project.root.clone(),
        campaign_file: file.clone(),
        output_dir: output.join(campaign).join(&c.system),
        site_dir: output.join(campaign).join("site"),
        cache_dir: output.join(".cache"),
        compiler: c.compiler.clone().unwrap_or_else(|| "gcc".into()),
        jobs: c.jobs,
        stages,
        flag_profiles,
        kat: KatSettings {
            timeout_seconds: c.kat.timeout_seconds.unwrap_or(300.0),
            records_override: c.kat.records,
        },
        timing: TimingSettings {
            trials: t.trials.unwrap_or(5),
            warmup: t.warmup.unwrap_or(2),
            trial_seconds: t.trial_seconds.unwrap_or(1.0),
            min_iterations: t.min_iterations.unwrap_or(20),
            max_iterations: t.max_iterations.unwrap_or(20_000),
            min_calls: t.min_calls.unwrap_or(100),
            budget_seconds: t.budget_seconds.unwrap_or(120.0),
            samples: t.samples.unwrap_or(true),
            cpus: t.cpus.clone().unwrap_or_default(),
            timeout_seconds: t.timeout_seconds.unwrap_or(600.0),
        },
        host: HostSettings {
            require_fixed: c.host.require_fixed.unwrap_or(true),
        },
        limits: Limits {
            memory_mib: c.limits.memory_mib.unwrap_or(4096),
            cpu_seconds: c.limits.cpu_seconds.unwrap_or(3600),
            file_mib: c.limits.file_mib.unwrap_or(1024),
        },
        sizes_catalog,
        profile_wraps: c
            .profile
            .wraps
            .as_ref()
            .map(|ws| {
                ws.iter()
                    .map(|w| Wrap {
                        symbol: w.symbol.clone(),
                        class: w.class.clone(),
                        in_bits_arg: w.in_bits_arg,
                        out_bits_arg: w.out_bits_arg,
                    })
                    .collect()
            })
            .unwrap_or_else(Wrap::iccs_defaults),
        templates,
        algorithms,
        instances,
    })
}

fn list_stems(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let p = e.path();
            (p.extension()? == "toml")
                .then(|| p.file_stem().map(|s| s.to_string_lossy().into_owned()))?
        })
        .collect();
    v.sort();
    v
}

fn project_rel(project: &Project, p: &Path) -> String {
    p.strip_prefix(&project.root)
        .unwrap_or(p)
        .display()
        .to_string()
}

fn select_algorithms(
    project: &Project,
    raw: &Loaded<RawCampaign>,
) -> Result<Vec<String>, ConfigError> {
    let available = project.algorithm_ids();
    let mut chosen = BTreeSet::new();
    for pat in &raw.value.algorithms {
        let p = glob::Pattern::new(pat.get_ref())
            .map_err(|e| raw.error_at(pat, format!("bad pattern: {e}")))?;
        let hits: Vec<&String> = available.iter().filter(|id| p.matches(id)).collect();
        if hits.is_empty() {
            return Err(raw
                .error_at(pat, format!("unknown algorithm `{}`", pat.get_ref()))
                .help(format!(
                    "add algorithms/{}.toml or use one of: {}",
                    pat.get_ref(),
                    available.join(", ")
                )));
        }
        chosen.extend(hits.into_iter().cloned());
    }
    Ok(chosen.into_iter().collect())
}

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

fn resolve_algorithm(
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
