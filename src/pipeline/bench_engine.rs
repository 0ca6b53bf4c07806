//! `bench-engine`: what the engine itself costs, on a synthetic project of
//! N instances made from the demo's `sign-92` (its parameter sets copied
//! with a distinct define each, so no two libraries are alike, and its
//! KAT references copied beside them). It times pqbench as a user runs it
//! (the binary, in child processes): a cold build, a cold build with the
//! KAT, warm re-runs and `status`, beside bare `gcc` building the same
//! libraries from the same sources with the same flags and defines. A
//! benchmark: it prints figures and asserts nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use rayon::prelude::*;

use super::timing::timed;
pub use super::timing::Timing;
use crate::plan::Project;

/// The demo algorithm the project is made from.
const SOURCE_ALGORITHM: &str = "sign-92";

/// The figures of one benchmark.
#[derive(Debug, Clone)]
pub struct EngineBench {
    pub instances: usize,
    /// Parallel jobs of bare gcc (pqbench uses as many threads).
    pub jobs: usize,
    pub bare_gcc: Timing,
    pub cold_build: Timing,
    pub cold_build_kat: Timing,
    /// Warm re-runs of build + KAT, and `status`, in the order run.
    pub warm: Vec<Timing>,
    pub status: Vec<Timing>,
    /// Where the project was made (kept only when asked).
    pub project: PathBuf,
}

impl EngineBench {
    /// The median wall seconds of `t`.
    pub fn median_wall(t: &[Timing]) -> f64 {
        let mut w: Vec<f64> = t.iter().map(|t| t.wall).collect();
        w.sort_by(f64::total_cmp);
        w.get(w.len() / 2).copied().unwrap_or(0.0)
    }
}

/// Runs the benchmark with the pqbench binary `exe`, making the project
/// from `source`'s demo algorithm under `work` (a fresh directory).
pub fn run(
    source: &Project,
    exe: &Path,
    work: &Path,
    instances: usize,
    repeats: usize,
    note: &dyn Fn(&str),
) -> Result<EngineBench> {
    let instances = instances.max(1);
    make_project(&source.root, work, instances)?;
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    note(&format!("bare gcc: {instances} libraries, {jobs} jobs"));
    let bare_gcc = bare_gcc(work, jobs)?;
    let _ = std::fs::remove_dir_all(work.join("bare"));
    note("cold build");
    let cold_build = pqbench(exe, work, &["run", "build-only"])?;
    std::fs::remove_dir_all(work.join("output")).context("removing the output")?;
    note("cold build + KAT");
    let cold_build_kat = pqbench(exe, work, &["run", "build-kat"])?;
    let mut warm = Vec::new();
    let mut status = Vec::new();
    for _ in 0..repeats.max(1) {
        note("warm re-run");
        warm.push(pqbench(exe, work, &["run", "build-kat"])?);
        note("status");
        status.push(pqbench(exe, work, &["status", "build-kat"])?);
    }
    Ok(EngineBench {
        instances,
        jobs,
        bare_gcc,
        cold_build,
        cold_build_kat,
        warm,
        status,
        project: work.to_path_buf(),
    })
}

/// `pqbench -C work -q <args>`, which must succeed.
fn pqbench(exe: &Path, work: &Path, args: &[&str]) -> Result<Timing> {
    timed(|| {
        let out = Command::new(exe)
            .arg("-C")
            .arg(work)
            .arg("-q")
            .args(args)
            .output()
            .with_context(|| format!("running {}", exe.display()))?;
        if !out.status.success() {
            bail!(
                "pqbench {} failed ({}): {}",
                args.join(" "),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(())
    })
}

/// Every instance's library built by gcc alone, in one call per library:
/// the arguments pqbench compiles its units with (the first flag profile,
/// CPU features, defines, include directories), its sources, the profile's
/// link flags; `jobs` compilers at a time (as `xargs -P`).
fn bare_gcc(work: &Path, jobs: usize) -> Result<Timing> {
    let project = Project::new(work).context("opening the benchmark project")?;
    let plan = super::resolve(&project, "build-kat").map_err(|e| anyhow::anyhow!("{e}"))?;
    let profile = plan
        .flag_profiles
        .first()
        .context("the benchmark campaign has no flag profile")?;
    let out = work.join("bare");
    std::fs::create_dir_all(&out)?;
    let commands: Vec<Vec<String>> = plan
        .instances
        .iter()
        .map(|inst| {
            let mut a =
                crate::toolchain::library::compile_args(inst, profile, std::env::consts::ARCH);
            a.extend(["-fPIC".into(), "-shared".into(), "-o".into()]);
            a.push(out.join(format!("{}.so", inst.label)).display().to_string());
            a.extend(inst.sources.iter().map(|s| s.path.display().to_string()));
            a.extend(profile.ldflags.iter().cloned());
            a.push("-lm".into());
            a
        })
        .collect();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(jobs).build()?;
    timed(|| {
        pool.install(|| {
            commands.par_iter().try_for_each(|args| {
                let st = Command::new("gcc")
                    .args(args)
                    .status()
                    .context("running gcc")?;
                if !st.success() {
                    bail!("gcc {} failed ({st})", args.join(" "));
                }
                Ok(())
            })
        })
    })
}

/// The synthetic project: `sign-92` with `n` parameter sets (its own,
/// copied round-robin, each with `PQB_BENCH_COPY = i`), its KAT
/// references copied per set, and two campaigns, `build-only` and
/// `build-kat`, over the first flag profile of the source project.
fn make_project(source: &Path, work: &Path, n: usize) -> Result<()> {
    let alg_file = source
        .join("algorithms")
        .join(format!("{SOURCE_ALGORITHM}.toml"));
    let text = std::fs::read_to_string(&alg_file).with_context(|| {
        format!(
            "reading {} (bench-engine runs in the demo project, which has it)",
            alg_file.display()
        )
    })?;
    let mut alg: toml::Table = toml::from_str(&text)?;
    let sets = match alg.remove("parameter-set") {
        Some(toml::Value::Array(a)) if !a.is_empty() => a,
        _ => bail!("{} has no parameter set", alg_file.display()),
    };
    let mut copies = Vec::with_capacity(n);
    let mut labels = Vec::with_capacity(n);
    for i in 0..n {
        let mut set = sets[i % sets.len()].as_table().cloned().unwrap_or_default();
        let base = set
            .get("label")
            .and_then(|l| l.as_str())
            .unwrap_or("set")
            .to_string();
        let label = format!("{base}-{i:04}");
        set.insert("label".into(), label.clone().into());
        let mut defines = set
            .get("defines")
            .and_then(|d| d.as_table())
            .cloned()
            .unwrap_or_default();
        defines.insert("PQB_BENCH_COPY".into(), (i as i64).into());
        set.insert("defines".into(), defines.into());
        copies.push(toml::Value::Table(set));
        labels.push((base, label));
    }
    alg.insert("parameter-set".into(), copies.into());
    let algorithms = work.join("algorithms");
    std::fs::create_dir_all(&algorithms)?;
    std::fs::write(
        algorithms.join(format!("{SOURCE_ALGORITHM}.toml")),
        toml::to_string(&alg)?,
    )?;
    for imp in alg
        .get("implementation")
        .and_then(|i| i.as_array())
        .into_iter()
        .flatten()
    {
        if let Some(root) = imp.get("root").and_then(|r| r.as_str()) {
            copy_tree(
                &source.join("algorithms").join(root),
                &algorithms.join(root),
            )?;
        }
    }
    copy_kats(source, work, &labels)?;
    let campaigns = work.join("campaigns");
    std::fs::create_dir_all(&campaigns)?;
    let systems = source.join("campaigns").join("systems.toml");
    if systems.is_file() {
        std::fs::copy(&systems, campaigns.join("systems.toml"))?;
    }
    for (name, stages) in [
        ("build-only", "\"build\""),
        ("build-kat", "\"build\", \"kat\""),
    ] {
        std::fs::write(
            campaigns.join(format!("{name}.toml")),
            format!(
                "description = \"bench-engine: {n} instances\"\nsystems = [\"local\"]\n\
                 algorithms = [\"{SOURCE_ALGORITHM}\"]\nflag-profiles = [\"guide\"]\n\
                 stages = [{stages}]\n\n[host]\nrequire-fixed = false\n"
            ),
        )?;
    }
    Ok(())
}

/// The KAT manifest with a line per copy, and each copy's reference file.
fn copy_kats(source: &Path, work: &Path, labels: &[(String, String)]) -> Result<()> {
    let from = source.join("kat").join(SOURCE_ALGORITHM);
    let manifest = std::fs::read_to_string(from.join("kat.sha256"))
        .with_context(|| format!("reading {}", from.join("kat.sha256").display()))?;
    let to = work.join("kat").join(SOURCE_ALGORITHM);
    let mut out = String::new();
    for (base, label) in labels {
        for line in manifest
            .lines()
            .filter(|l| !l.trim_start().starts_with('#'))
        {
            let mut words: Vec<&str> = line.split_whitespace().collect();
            let Some((set, file)) = words.last().and_then(|p| p.split_once('/')) else {
                continue;
            };
            if set != base {
                continue;
            }
            let dir = to.join(label);
            std::fs::create_dir_all(&dir)?;
            std::fs::copy(from.join(set).join(file), dir.join(file))?;
            let path = format!("{label}/{file}");
            words.pop();
            out.push_str(&format!("{} {path}\n", words.join(" ")));
        }
    }
    std::fs::write(to.join("kat.sha256"), out)?;
    Ok(())
}

/// Copies the regular files and folders of `from` (links are refused: the
/// demo has none).
fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let e = e?;
        let kind = e.file_type()?;
        let target = to.join(e.file_name());
        if kind.is_dir() {
            copy_tree(&e.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(e.path(), &target)?;
        } else {
            bail!("{} is not a file or a folder", e.path().display());
        }
    }
    Ok(())
}
