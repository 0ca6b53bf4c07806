//! Raw campaign + algorithm TOML → validated `Plan`.
//!
//! Every problem of the campaign and of every algorithm it selects is
//! collected before giving up, each with its position.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use toml::Spanned;

use super::algorithm::{check_algorithm, Selection};
use super::campaign_profiles::{flag_profiles, lookup_profile, unbuildable};
use super::names::{self, NAME_RULE};
use super::paths::contained;
use super::problems::Problems;
use super::project::{list_stems, project_rel, Project};
use super::system::{self, SystemSpec};
use super::*;
use crate::config::campaign::RawCampaign;
use crate::config::{Loaded, Step};
use crate::error::{ConfigError, Error};

/// What the caller knows beyond the campaign file.
#[derive(Debug, Clone, Copy, Default)]
pub struct ResolveOptions<'a> {
    /// The stage registry's names: each name in `stages` is checked against
    /// them (empty = no check), so an unknown stage is reported with every
    /// other problem of the campaign.
    pub stages: &'a [&'a str],
    /// The system to run (`--system`); default: the first of the campaign's
    /// systems this host runs natively.
    pub system: Option<&'a str>,
}

/// Reads `campaigns/<name>.toml` and every algorithm it selects, leaving
/// the names in `stages` unchecked.
pub fn resolve(project: &Project, campaign: &str) -> Result<Plan, Error> {
    resolve_with(project, campaign, &ResolveOptions::default())
}

/// `resolve`, checking stage names against `known`.
pub fn resolve_with_stages(
    project: &Project,
    campaign: &str,
    known: &[&str],
) -> Result<Plan, Error> {
    let opts = ResolveOptions {
        stages: known,
        system: None,
    };
    resolve_with(project, campaign, &opts)
}

pub fn resolve_with(
    project: &Project,
    campaign: &str,
    opts: &ResolveOptions,
) -> Result<Plan, Error> {
    names::check_campaign_name(campaign)?;
    let file = project.campaign_file(campaign);
    if !file.is_file() {
        return Err(no_campaign(project, campaign, &file));
    }
    let mut p = Problems::default();
    let Some(raw) = p.read::<RawCampaign>(&file) else {
        return Err(p.into());
    };
    let c = &raw.value;
    let (spec, systems) = campaign_systems(project, &raw, opts.system, &mut p);
    let system = &spec.id;
    let flag_profiles = flag_profiles(&raw, &mut p);
    let matrix = super::matrix::resolve(&raw, &flag_profiles, &|n| lookup_profile(c, n), &mut p);
    check_stage_names(&raw, opts.stages, &mut p);
    check_stage_tables(&raw, &mut p);
    let (stages, stage_locations) = stage_list(&raw);
    let mut timing = timing(&raw, &mut p);
    let paths = campaign_paths(project, &raw, &file, &mut p);
    let (profile_wraps, profile_classes) = super::profile::campaign(&raw, &mut p);
    let reuse_measurements_from =
        super::sharing::reuse_from(project, &raw, campaign, system, &mut p);
    let (algorithms, instances) = selected_algorithms(project, &raw, &mut p);
    let deferred = super::deferral::deferred(&raw, &instances, &mut p);
    unbuildable(&raw, &flag_profiles, &instances, &mut p);

    let output = project.output_dir();
    let output_dir = output.join(campaign).join(system);
    let site_dir = output.join(campaign).join(crate::records::layout::SITE);
    let compiler_from_system = spec.compiler.is_some();
    let compiler = compiler_of(&spec, c, matrix.as_ref());
    if timing.cpus.is_empty() {
        timing.cpus = spec.cpus.clone();
    }
    check_output_dirs(&raw, system, &output, [&output_dir, &site_dir], &mut p);
    p.finish(Plan {
        campaign: campaign.to_string(),
        description: c.description.clone(),
        system: system.clone(),
        system_title: c.system_title.clone().or_else(|| spec.title.clone()),
        systems,
        compiler_from_system,
        project_root: project.root.clone(),
        campaign_file: file.clone(),
        output_dir,
        site_dir,
        cache_dir: output.join(".cache"),
        compiler,
        jobs: c.jobs,
        stages,
        stage_locations,
        stage_settings: c
            .stage_tables()
            .map(|(k, t)| Ok((k.to_string(), serde_json::to_value(t.get_ref())?)))
            .collect::<Result<_, serde_json::Error>>()
            .map_err(|e| ConfigError::new(format!("a stage's table: {e}")).in_file(&file))?,
        stage_settings_at: c
            .stage_tables()
            .map(|(k, t)| {
                (
                    k.to_string(),
                    crate::error::Location::from_span(&raw.path, &raw.text, t.span()),
                )
            })
            .collect(),
        flag_profiles,
        kat: KatSettings {
            timeout_seconds: c.kat.timeout_seconds.unwrap_or(300.0),
            records_override: c.kat.records,
            hash_full: c.kat.hash_full.unwrap_or(false),
            hash_loop: c.kat.hash_loop.unwrap_or(false),
        },
        timing,
        host: HostSettings {
            require_fixed: spec.require_fixed.or(c.host.require_fixed).unwrap_or(true),
        },
        system_spec: spec,
        limits: Limits {
            memory_mib: c.limits.memory_mib.unwrap_or(4096),
            cpu_seconds: c.limits.cpu_seconds.unwrap_or(3600),
            file_mib: c.limits.file_mib.unwrap_or(1024),
        },
        sizes_catalog: paths.sizes_catalog,
        reuse_measurements_from,
        kex_catalog: paths.kex_catalog,
        profile_wraps,
        profile_classes,
        templates: paths.templates,
        algorithms,
        instances,
        deferred,
        matrix,
        child: None,
    })
}

/// The error for a campaign with no file, listing the campaigns there are.
fn no_campaign(project: &Project, campaign: &str, file: &Path) -> Error {
    // The system registry lives beside the campaigns but is none.
    let registry = std::path::Path::new(super::system::REGISTRY)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let campaigns = project.root.join("campaigns");
    if !campaigns.is_dir() {
        return ConfigError::new(format!(
            "{} is not a pqbench project: it has no campaigns/ folder",
            project.root.display()
        ))
        .help("run pqbench in a project's folder (one with algorithms/ and campaigns/) or pass -C <project>")
        .into();
    }
    let known: Vec<String> = list_stems(&campaigns)
        .into_iter()
        .filter(|s| s != registry)
        .collect();
    if known.is_empty() {
        return ConfigError::new(format!("no campaign named `{campaign}`"))
            .in_file(file)
            .help(format!(
                "create {}: campaigns/ holds none yet",
                project_rel(project, file)
            ))
            .into();
    }
    ConfigError::new(format!("no campaign named `{campaign}`"))
        .in_file(file)
        .help(format!(
            "create {} or use one of: {}",
            project_rel(project, file),
            known.join(", ")
        ))
        .into()
}

/// Every name in `stages` is one of `known` or "default" (no check when
/// `known` is empty).
fn check_stage_names(raw: &Loaded<RawCampaign>, known: &[&str], p: &mut Problems) {
    // Stage names come from the stage registry, which the caller knows.
    if known.is_empty() {
        return;
    }
    for s in raw.value.stages.iter().flatten() {
        if !known.contains(&s.get_ref().as_str()) && s.get_ref() != DEFAULT_STAGES {
            p.push(
                raw.error_at(s, format!("unknown stage `{}`", s.get_ref()))
                    .help(format!(
                        "stages are {}, or \"{DEFAULT_STAGES}\" for every stage that is not opt-in",
                        known.join(", ")
                    )),
            );
        }
    }
}

/// A stage whose settings are a table of its own name (`[count]`) has no
/// `[stage.<name>]` table.
fn check_stage_tables(raw: &Loaded<RawCampaign>, p: &mut Problems) {
    for (name, table) in &raw.value.stage {
        if crate::config::campaign::OWN_TABLES.contains(&name.as_str()) {
            p.push(
                raw.error_at(
                    table,
                    format!("[stage.{name}]: the `{name}` stage's settings are the [{name}] table"),
                )
                .help(format!("rename [stage.{name}] to [{name}]")),
            );
        }
    }
}

/// The stages to run, each with where the file names it (all of them when
/// the file names none).
fn stage_list(raw: &Loaded<RawCampaign>) -> (Vec<String>, Vec<Option<crate::error::Location>>) {
    match &raw.value.stages {
        None => (vec![ALL_STAGES.to_string()], vec![None]),
        Some(list) => list
            .iter()
            .map(|s| {
                let loc = (!s.span().is_empty())
                    .then(|| crate::error::Location::from_span(&raw.path, &raw.text, s.span()));
                // "default": every stage but the opt-in ones.
                let name = if s.get_ref() == DEFAULT_STAGES {
                    ALL_STAGES.to_string()
                } else {
                    s.get_ref().clone()
                };
                (name, loc)
            })
            .unzip(),
    }
}

/// The files and directories of the project a campaign names.
struct CampaignPaths {
    sizes_catalog: Option<PathBuf>,
    kex_catalog: Option<PathBuf>,
    templates: Option<PathBuf>,
}

/// The campaign's paths, each inside the project (relative to the
/// campaign's directory) and existing.
fn campaign_paths(
    project: &Project,
    raw: &Loaded<RawCampaign>,
    file: &Path,
    p: &mut Problems,
) -> CampaignPaths {
    let c = &raw.value;
    let campaign_dir = file.parent().unwrap_or(&project.root).to_path_buf();
    let mut in_project = |s: &Spanned<String>, is_dir: bool, what: &str, key: &str| {
        let path = p.take(
            contained(&project.root, &campaign_dir, s.get_ref())
                .map_err(|e| raw.error_at(s, e).help("use a path inside the project")),
        )?;
        let found = if is_dir {
            path.is_dir()
        } else {
            path.is_file()
        };
        if !found {
            p.push(
                raw.error_at(s, format!("{what} not found"))
                    .help(format!("create it or remove `{key}`")),
            );
        }
        Some(path)
    };
    CampaignPaths {
        sizes_catalog: c
            .sizes
            .catalog
            .as_ref()
            .and_then(|s| in_project(s, false, "size catalog", "catalog")),
        kex_catalog: c
            .sizes
            .kex_catalog
            .as_ref()
            .and_then(|s| in_project(s, false, "KEX size catalog", "kex-catalog")),
        templates: c
            .render
            .templates
            .as_ref()
            .and_then(|s| in_project(s, true, "template directory", "templates")),
    }
}

/// Every algorithm the campaign selects and its instances, then the ICCS
/// baseline when the campaign has hash candidates.
fn selected_algorithms(
    project: &Project,
    raw: &Loaded<RawCampaign>,
    p: &mut Problems,
) -> (Vec<Algorithm>, Vec<Instance>) {
    let c = &raw.value;
    let sel = Selection {
        implementations: c.implementations.as_deref(),
        records: c.kat.records,
    };
    let mut algorithms = Vec::new();
    let mut instances = Vec::new();
    for id in select_algorithms(project, raw, p) {
        let file = project.algorithms_dir().join(format!("{id}.toml"));
        let check = check_algorithm(project, &file, sel);
        p.extend(check.problems);
        algorithms.extend(check.algorithm);
        instances.extend(check.instances.into_iter().map(|(i, _)| i));
    }
    if let Some(patterns) = &c.instances {
        instances = chosen_instances(raw, patterns, instances, p);
    }
    // The ICCS helpers, measured as the baseline of the hash candidates.
    if let Some((a, insts)) = super::iccs::baseline(project, raw, &algorithms, &instances, p) {
        algorithms.push(a);
        instances.extend(insts);
    }
    (algorithms, instances)
}

/// The instances the campaign's `instances` patterns (over
/// `<id>/<label>`) select; every pattern must select at least one.
fn chosen_instances(
    raw: &Loaded<RawCampaign>,
    patterns: &[Spanned<String>],
    all: Vec<Instance>,
    p: &mut Problems,
) -> Vec<Instance> {
    let mut globs = Vec::new();
    for pat in patterns {
        match glob::Pattern::new(pat.get_ref()) {
            Ok(g) => globs.push((pat, g)),
            Err(e) => p.push(
                raw.error_at(pat, format!("bad pattern: {e}"))
                    .help("write `<id>/<label>` or a glob pattern such as \"mktoy/*3\""),
            ),
        }
    }
    let name = |i: &Instance| format!("{}/{}", i.algorithm, i.label);
    for (pat, g) in &globs {
        if !all.iter().any(|i| g.matches(&name(i))) {
            let some: Vec<String> = all.iter().take(8).map(name).collect();
            p.push(
                raw.error_at(pat, format!("`{}` selects no instance", pat.get_ref()))
                    .help(format!(
                        "patterns match `<id>/<label>` of the selected algorithms, e.g. {}",
                        some.join(", ")
                    )),
            );
        }
    }
    all.into_iter()
        .filter(|i| globs.iter().any(|(_, g)| g.matches(&name(i))))
        .collect()
}

/// Results are written under output/ only.
fn check_output_dirs(
    raw: &Loaded<RawCampaign>,
    system: &str,
    output: &Path,
    dirs: [&PathBuf; 2],
    p: &mut Problems,
) {
    // With valid names only a link can lead elsewhere.
    if names::check_name(system).is_err() {
        return;
    }
    for dir in dirs {
        if !names::resolves_inside(output, dir) {
            p.push(
                raw.error_at(
                    &raw.value.system,
                    format!("{} is not inside output/", dir.display()),
                )
                .help(
                    "results are written under output/ only: remove the link that leads elsewhere",
                ),
            );
        }
    }
}

/// The campaign's systems (its `systems`, else its `system`), each
/// registered in `campaigns/systems.toml` or, for an unregistered single
/// `system`, implicit; and the one this run belongs to.
fn campaign_systems(
    project: &Project,
    raw: &Loaded<RawCampaign>,
    wanted: Option<&str>,
    p: &mut Problems,
) -> (SystemSpec, Vec<String>) {
    let c = &raw.value;
    let registry = system::registry(&project.root, p);
    let find = |id: &str| {
        registry
            .iter()
            .find(|(s, _)| s.id == id)
            .map(|(s, _)| s.clone())
    };
    let named: Vec<&Spanned<String>> = match &c.systems {
        Some(list) => {
            if !c.system.span().is_empty() {
                p.push(
                    raw.error_at(&c.system, "both `system` and `systems` are set")
                        .help("list every system in `systems` and choose one with `pqbench run --system`"),
                );
            }
            list.iter().collect()
        }
        None => vec![&c.system],
    };
    let mut specs = Vec::new();
    for s in &named {
        let id = s.get_ref();
        if let Err(why) = names::check_name(id) {
            p.push(
                raw.error_at(s, format!("system name `{id}` {why}"))
                    .help(format!(
                        "systems are directories under output/: {NAME_RULE}"
                    )),
            );
            continue;
        }
        match find(id) {
            Some(spec) => specs.push(spec),
            // A single unregistered system: this machine, whatever it is.
            None if c.systems.is_none() || id == "local" => specs.push(SystemSpec::implicit(id)),
            None => p.push(
                raw.error_at(s, format!("system `{id}` is not registered"))
                    .help(format!(
                        "register it in {} or use one of: {}",
                        system::REGISTRY,
                        registry
                            .iter()
                            .map(|(s, _)| s.id.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
            ),
        }
    }
    let ids: Vec<String> = specs.iter().map(|s| s.id.clone()).collect();
    let chosen = match system::choose(&specs, wanted) {
        Ok(s) => s,
        Err(e) => {
            p.push(e.in_file(&raw.path));
            SystemSpec::implicit(c.system.get_ref())
        }
    };
    (chosen, ids)
}

/// The compiler: the system's, else the campaign's, else the matrix's
/// first, else gcc.
fn compiler_of(spec: &SystemSpec, c: &RawCampaign, m: Option<&super::matrix::Matrix>) -> String {
    spec.compiler
        .clone()
        .or_else(|| c.compiler.clone())
        .or_else(|| m.and_then(|m| m.compilers.first().cloned()))
        .unwrap_or_else(|| "gcc".into())
}

/// The measurement plan: each value's range is checked when it is read;
/// here the checks across values.
fn timing(raw: &Loaded<RawCampaign>, p: &mut Problems) -> TimingSettings {
    let t = &raw.value.timing;
    let settings = TimingSettings {
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
        share_keys: t.share_keys.unwrap_or_default(),
    };
    if settings.min_iterations > settings.max_iterations {
        let shown = |v: Option<u64>, d: u64| match v {
            Some(v) => v.to_string(),
            None => format!("{d} by default"),
        };
        // Point at whichever of the two the file sets (the minimum first).
        let key = if t.min_iterations.is_some() {
            "min-iterations"
        } else {
            "max-iterations"
        };
        p.push(
            raw.error_at_value(
                &[Step::Key("timing"), Step::Key(key)],
                format!(
                    "`min-iterations` ({}) is more than `max-iterations` ({})",
                    shown(t.min_iterations, 20),
                    shown(t.max_iterations, 20_000)
                ),
            )
            .help("make min-iterations ≤ max-iterations"),
        );
    }
    settings
}

/// The ids the campaign's `algorithms` patterns select; every pattern must
/// select at least one.
fn select_algorithms(
    project: &Project,
    raw: &Loaded<RawCampaign>,
    p: &mut Problems,
) -> Vec<String> {
    let available = project.algorithm_ids();
    let mut chosen = BTreeSet::new();
    if raw.value.algorithms.is_empty() {
        p.push(
            raw.error_at_value(&[Step::Key("algorithms")], "`algorithms` is empty")
                .help("list algorithm ids or patterns, e.g. [\"sign-*\"]"),
        );
    }
    for pat in &raw.value.algorithms {
        let glob = match glob::Pattern::new(pat.get_ref()) {
            Ok(g) => g,
            Err(e) => {
                p.push(
                    raw.error_at(pat, format!("bad pattern: {e}"))
                        .help("write an id or a glob pattern such as \"sign-*\""),
                );
                continue;
            }
        };
        let hits: Vec<&String> = available.iter().filter(|id| glob.matches(id)).collect();
        if hits.is_empty() {
            p.push(
                raw.error_at(pat, format!("unknown algorithm `{}`", pat.get_ref()))
                    .help(format!(
                        "add algorithms/{}.toml or use one of: {}",
                        pat.get_ref(),
                        available.join(", ")
                    )),
            );
        }
        chosen.extend(hits.into_iter().cloned());
    }
    chosen.into_iter().collect()
}
