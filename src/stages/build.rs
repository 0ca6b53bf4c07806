//! Build stage: compile an instance's sources and the API adapter with a
//! flag profile and link one shared library exporting only the entry table
//! and the API. Objects are cached by content; no submitted build script
//! runs unless the algorithm opts in to CMake.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::context::Cx;
use crate::engine::{Job, Manifest, Policy, Stage};
use crate::engine::{Publication, Results};
use crate::fsutil;
use crate::plan::{FlagProfile, Instance};
use crate::records::AttemptRecord;
use crate::support::Part;
use crate::toolchain::deps;
use crate::toolchain::library::{
    build_profile, deps_by_compiling, target_arch, units, BuildOutput,
};

pub struct BuildStage;

impl Stage for BuildStage {
    type Output = BuildOutput;
    const NAME: &'static str = "build";
    const REQUIRES: &'static [&'static str] = &[];
    const POLICY: Policy = Policy::Parallel;

    fn manifest(&self, job: &Job) -> Result<Option<Manifest>> {
        build_manifest(job.cx, job.inst).map(Some)
    }

    fn run(&self, job: &Job) -> Result<BuildOutput> {
        let env = job.cx.build_env()?;
        let mut attempts = Vec::new();
        for profile in &job.cx.profiles_for(job.inst) {
            let a = build_profile(&env, job.inst, profile)?;
            let done = a.ok || a.skipped.is_some();
            attempts.push(a);
            if done {
                break;
            }
        }
        Ok(BuildOutput { attempts })
    }

    fn artifacts(&self, out: &BuildOutput) -> Vec<String> {
        out.attempts
            .iter()
            .filter_map(|a| a.library_sha256.clone())
            .collect()
    }

    /// Every profile tried, and the library of the one built.
    const MISSING: Option<&'static str> = Some("no build result");

    /// A library that built under no profile is a failure, unless every
    /// attempt was skipped (code this host cannot run): then it is skipped.
    fn verdict(&self, out: &BuildOutput) -> crate::engine::Verdict {
        let skipped = out.built().is_none() && out.attempts.iter().all(|a| a.skipped.is_some());
        let failed = out.built().is_none() && out.attempts.iter().all(|a| a.skipped.is_none());
        let mut v = if failed {
            crate::engine::Verdict::failed(
                crate::kat::Status::Buildfail.to_string(),
                out.attempts
                    .last()
                    .map(|a| crate::toolchain::diag::detail(&a.log)),
            )
        } else {
            crate::engine::Verdict::default()
        };
        v.skipped = skipped;
        v.skip_reason = out.attempts.first().and_then(|a| a.skipped.clone());
        v
    }

    /// The build's inputs, and the profile and library it built.
    fn lock(
        &self,
        cx: &Cx,
        inst: &Instance,
        out: Option<&BuildOutput>,
        entry: &mut crate::records::lock::InstanceLock,
    ) -> Result<()> {
        entry.inputs = build_manifest(cx, inst)?.entries;
        if let Some(built) = out.and_then(|b| b.built()) {
            entry.profile = Some(built.profile.clone());
            entry.library_sha256.clone_from(&built.library_sha256);
        }
        Ok(())
    }

    fn publish(
        &self,
        p: &mut Publication,
        _: &Instance,
        out: &BuildOutput,
        _: &Results,
    ) -> Result<()> {
        let rec = p.build()?;
        rec.attempts = out
            .attempts
            .iter()
            .map(|a| AttemptRecord {
                profile: a.profile.clone(),
                built: a.ok,
                kat_status: None,
                detail: (!a.ok).then(|| crate::toolchain::diag::detail(&a.log)),
            })
            .collect();
        if let Some(a) = out.built() {
            rec.profile = Some(a.profile.clone());
            rec.library_sha256 = a.library_sha256.clone();
            rec.load_bytes = a.load_bytes;
        }
        Ok(())
    }
}

/// Everything a build depends on: every file the compiler reads for any
/// unit under any flag profile (its own dependency list: sources, headers
/// at any depth and with any extension, system headers), defines, every
/// flag profile, the compiler's identity, the support code, target.
/// pqbench's own support files are covered by the support version.
pub(crate) fn build_manifest(cx: &Cx, inst: &Instance) -> Result<Manifest> {
    // Asked for by this stage, the KAT's key and the lock: the files are
    // read once per command.
    cx.memo(
        format!("build-manifest:{}", inst.key()),
        || match written_for_another_arch(cx, inst) {
            Some(m) => Ok(m),
            None => build_manifest_now(cx, inst),
        },
    )
}

/// The key of code written for another architecture: not built for this
/// target whatever its files hold, so they are not read (a scan of NEON
/// code on x86-64 misses `arm_neon.h` and is never remembered: it would
/// be redone by every command).
fn written_for_another_arch(cx: &Cx, inst: &Instance) -> Option<Manifest> {
    let arch = target_arch(&cx.compiler);
    if inst.arch.is_empty() || inst.arch.iter().any(|a| a == arch) {
        return None;
    }
    let mut m = Manifest::new();
    m.set("written-for", &inst.arch)
        .set("target", &cx.compiler.target)
        .set("pqbench", crate::STAGE_LOGIC_VERSION);
    Some(m)
}

/// The files every unit of `inst` reads under `profiles`, with their
/// digests. Units read the same headers: each file is kept once (a
/// file's later digest wins, as the manifest's own entries would), keyed
/// by its bytes (comparing paths component by component was most of a
/// warm `status` on a large tree).
fn files_read(
    cx: &Cx,
    inst: &Instance,
    profiles: &[FlagProfile],
    support: &Path,
) -> Result<HashMap<OsString, String>> {
    // What a compiler job of this build may read (`BuildEnv::reads`),
    // known without compiling the support tools.
    let reads = crate::toolchain::build_env::compiler_reads(&cx.plan.project_root, inst, support);
    let mut read = HashMap::new();
    for (i, profile) in profiles.iter().enumerate() {
        for unit in units(inst, profile, support, target_arch(&cx.compiler)) {
            // The first profile is the one built: in a run, a unit of it
            // never listed is compiled now, so that learning what it reads
            // is its compile.
            let deps = match deps::remembered(&cx.cache, &cx.compiler, &unit) {
                Some(deps) => deps,
                None => match compiling_env(cx, inst, i) {
                    Some(env) => deps_by_compiling(&env, &unit, &reads)?,
                    None => deps::of(&cx.cache, &cx.compiler, &unit, &reads)?,
                },
            };
            read.extend(
                deps.files
                    .into_iter()
                    .map(|(f, sha)| (f.into_os_string(), sha)),
            );
        }
    }
    Ok(read)
}

fn build_manifest_now(cx: &Cx, inst: &Instance) -> Result<Manifest> {
    let mut m = Manifest::new();
    let support = cx.support_sources()?;
    let profiles = cx.profiles_for(inst);
    let read = files_read(cx, inst, &profiles, support)?;
    let sources: HashSet<&Path> = inst.sources.iter().map(|s| s.path.as_path()).collect();
    for (file, sha) in read {
        let file = Path::new(&file);
        if file.starts_with(support) {
            continue;
        }
        let group = if sources.contains(file) {
            "source"
        } else if file.starts_with(&cx.plan.project_root) || file.is_relative() {
            "header"
        } else {
            "system-header"
        };
        m.set(format!("{group}:{}", cx.plan.display_path(file)), sha);
    }
    for s in &inst.sources {
        m.set(
            format!("source:{}", s.display),
            deps::hash_in(&cx.cache, &s.path),
        );
    }
    m.set("defines", &inst.defines)
        .set("flags", &profiles)
        .set(
            "compiler",
            format!(
                "{} | {} | {}",
                cx.compiler.path.display(),
                cx.compiler.version,
                cx.compiler.binary_sha256
            ),
        )
        .set("support", Part::Adapters.version())
        .set("pqbench", crate::STAGE_LOGIC_VERSION)
        .set("target", &cx.compiler.target)
        .set("binding", &inst.binding)
        .set("cpu-features", &inst.cpu_features)
        .set("cmake", &inst.cmake);
    // Flags of single files (`[[implementation.unit]]`): absent without
    // them, so other keys stay as they were.
    let units: Vec<String> = inst
        .sources
        .iter()
        .filter(|s| !s.cpu_features.is_empty() || !s.defines.is_empty())
        .map(|s| {
            format!(
                "{}: {} {}",
                s.display,
                s.cpu_features.join(","),
                s.defines.join(" ")
            )
        })
        .collect();
    if !units.is_empty() {
        m.set("unit-flags", &units);
    }
    // A system library is part of what is linked: its file (where the
    // compiler finds it) and its bytes; absent without libraries, so other
    // keys stay as they were.
    for l in &inst.libraries {
        m.set(
            format!("system-library:{l}"),
            cx.compiler.system_library(l).map_or_else(
                |e| format!("{e:#}"),
                |s| format!("{} sha256:{}", s.file, s.sha256),
            ),
        );
    }
    // The assembler of `.s` sources, where the system names one: absent
    // otherwise, so other keys stay as they were.
    if let Some(tool) = inst
        .sources
        .iter()
        .find_map(|s| cx.compiler.extra_identity(&s.path))
    {
        m.set("assembler", tool);
    }
    // The names of the variables the system passes to its toolchain jobs:
    // absent when it names none, so other keys stay as they were.
    if let Some(names) = cx.compiler.environment_identity() {
        m.set("toolchain-environment", names);
    }
    // Key exchanges and hashes: what the adapter is compiled for (their
    // digest width or renamed functions change the library, not the
    // defines). Absent for signatures and KEMs, whose keys stay as they were.
    if inst.kind.def().keys_build_by_kind() {
        m.set("kind", inst.kind.as_str())
            .set("kind-spec", &inst.spec);
    }
    if let Some(spec) = &inst.cmake {
        // The CMake project compiles what it likes: every file under its root.
        for f in cmake_files(&spec.root) {
            m.set(
                format!("source:{}", cx.plan.display_path(&f)),
                fsutil::sha256_file(&f)?,
            );
        }
    }
    Ok(m)
}

/// The build environment when this command may compile to learn a build's
/// key (`Cx::compiles_to_key`), for the first flag profile (the others are
/// built only when it fails), and the instance is built here by pqbench
/// alone: not one skipped on this system, nor one whose CMake project
/// builds first (its units may need what that project generates).
fn compiling_env<'a>(
    cx: &'a Cx,
    inst: &Instance,
    profile: usize,
) -> Option<crate::toolchain::BuildEnv<'a>> {
    if !cx.compiles_to_key || profile > 0 || inst.cmake.is_some() {
        return None;
    }
    // Without the support sources the build stage says why; its key is
    // listed by the preprocessor meanwhile.
    let env = cx.build_env().ok()?;
    crate::toolchain::library::skip_reason(&env, inst)
        .is_none()
        .then_some(env)
}

/// Every file under a CMake root (hidden ones aside): part of the build's
/// inputs when the backend is used.
fn cmake_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if e.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
