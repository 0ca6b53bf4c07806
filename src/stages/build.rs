//! Build stage: compile an instance's sources and the API adapter with a
//! flag profile and link one shared library exporting only the entry table
//! and the API. Objects are cached by content; no submitted build script
//! runs unless the algorithm opts in to CMake.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::context::Cx;
use crate::engine::{Job, Manifest, Policy, Stage};
use crate::fsutil;
use crate::plan::Instance;
use crate::toolchain::library::{build_profile, headers, BuildOutput};

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
        for profile in &job.cx.plan.flag_profiles {
            let a = build_profile(&env, job.inst, profile)?;
            let ok = a.ok;
            attempts.push(a);
            if ok {
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
}

/// Everything a build depends on: source and header contents, defines,
/// every flag profile, the compiler's identity, the support code, target.
pub fn build_manifest(cx: &Cx, inst: &Instance) -> Result<Manifest> {
    let mut m = Manifest::new();
    for s in &inst.sources {
        m.set(
            format!("source:{}", s.display),
            fsutil::sha256_file(&s.path)?,
        );
    }
    for h in headers(&inst.include_dirs) {
        m.set(
            format!("header:{}", cx.plan.display_path(&h)),
            fsutil::sha256_file(&h)?,
        );
    }
    m.set("defines", &inst.defines)
        .set("flags", &cx.plan.flag_profiles)
        .set(
            "compiler",
            format!(
                "{} | {} | {}",
                cx.compiler.path.display(),
                cx.compiler.version,
                cx.compiler.binary_sha256
            ),
        )
        .set("support", cx.support_version())
        .set("pqbench", crate::STAGE_LOGIC_VERSION)
        .set("target", &cx.compiler.target)
        .set("binding", &inst.binding)
        .set("cpu-features", &inst.cpu_features)
        .set("cmake", &inst.cmake);
    // Key exchanges and hashes: what the adapter is compiled for (their
    // digest width or renamed functions change the library, not the
    // defines). Absent for the other kinds, whose keys stay as they were.
    if matches!(inst.kind, crate::plan::Kind::Kex | crate::plan::Kind::Hash) {
        m.set("kind", inst.kind.as_str())
            .set("kind-spec", &inst.spec);
    }
    if let Some(spec) = &inst.cmake {
        for f in cmake_files(&spec.root) {
            m.set(
                format!("source:{}", cx.plan.display_path(&f)),
                fsutil::sha256_file(&f)?,
            );
        }
    }
    Ok(m)
}

/// CMakeLists.txt and *.cmake files under a CMake root: part of the build's
/// inputs when the backend is used.
fn cmake_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                stack.push(p);
            } else if name == "CMakeLists.txt" || name.ends_with(".cmake") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
