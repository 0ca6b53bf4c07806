//! Raw campaign + algorithm TOML → validated `Plan`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use toml::Spanned;

use super::algorithm::resolve_algorithm;
use super::paths::contained;
use super::*;
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
    // Stage names are checked against the stage registry by the caller
    // (`pipeline::resolve`), which is where the stages are known.
    let (stages, stage_locations) = match &c.stages {
        None => (vec![ALL_STAGES.to_string()], vec![None]),
        Some(list) => list
            .iter()
            .map(|s| {
                let loc = (!s.span().is_empty())
                    .then(|| crate::error::Location::from_span(&raw.path, &raw.text, s.span()));
                (s.get_ref().clone(), loc)
            })
            .unzip(),
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
        stage_locations,
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
                        class: w.class,
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

pub(super) fn list_stems(dir: &Path) -> Vec<String> {
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

pub(super) fn project_rel(project: &Project, p: &Path) -> String {
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
