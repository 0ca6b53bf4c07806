//! The opt-in CMake backend: for an implementation whose TOML names a
//! `[implementation.cmake] target`, pqbench configures and builds that
//! target with the campaign's compiler and flag profile, then takes the
//! objects out of the static library it produced. The default path never
//! needs cmake; this runs the submission's own build script, which is why a
//! TOML must opt in.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::build_env::{BuildEnv, ObjectRef};
use super::ToolchainLimits;
use crate::plan::{CmakeSpec, FlagProfile, Instance};
use crate::sandbox::{self, Outcome, Spec};

/// Builds the CMake target and returns its objects, stored in the object
/// cache by content.
pub(crate) fn build_target(
    env: &BuildEnv,
    inst: &Instance,
    spec: &CmakeSpec,
    profile: &FlagProfile,
) -> Result<Vec<ObjectRef>> {
    let cmake = crate::toolchain::which("cmake").context(
        "this implementation opts in to its CMake build, but cmake is not installed (e.g. apt-get install cmake)",
    )?;
    let scratch = super::scratch()?;
    let build = scratch.path().join("build");
    let mut cflags = profile.cflags.clone();
    cflags.extend(inst.defines.iter().cloned());
    let mut configure = vec![
        "-S".to_string(),
        spec.root.display().to_string(),
        "-B".into(),
        build.display().to_string(),
        format!("-DCMAKE_C_COMPILER={}", env.compiler.path.display()),
        format!("-DCMAKE_C_FLAGS={}", cflags.join(" ")),
        "-DCMAKE_POSITION_INDEPENDENT_CODE=ON".into(),
        "-DCMAKE_BUILD_TYPE=None".into(),
    ];
    configure.extend(spec.options.iter().map(|(k, v)| format!("-D{k}={v}")));
    let reads = env.reads(inst);
    let job = Job {
        cmake: &cmake,
        reads: &reads,
        execs: env.compiler.installation(),
        cwd: scratch.path(),
        limits: env.compiler.job_limits(),
        passed: &env.compiler.environment,
    };
    job.run(&configure, "configuring")?;
    let build_args = vec![
        "--build".to_string(),
        build.display().to_string(),
        "--target".into(),
        spec.target.clone(),
    ];
    job.run(&build_args, "building")?;
    let archive = find_archive(&build, &spec.target).with_context(|| {
        format!(
            "the CMake target `{}` produced no lib{}.a",
            spec.target, spec.target
        )
    })?;
    extract_objects(env, &archive, &spec.target)
}

/// One step of a submission's CMake build, a foreign build: confined like
/// the compiler (a job uid, no socket, pqbench's environment withheld,
/// the toolchain's limits, the variables its system passes); it reads
/// what the compiler may, executes only the system's and the compiler's
/// programs (none the submission ships) and writes only its scratch folder.
struct Job<'a> {
    cmake: &'a Path,
    reads: &'a [PathBuf],
    execs: Vec<PathBuf>,
    cwd: &'a Path,
    limits: ToolchainLimits,
    /// `toolchain.environment`: names of pqbench's variables it gets.
    passed: &'a [String],
}

impl Job<'_> {
    fn run(&self, args: &[String], what: &str) -> Result<()> {
        let mut spec = Spec::toolchain(self.cmake, args.to_vec(), vec![self.cwd.to_path_buf()])
            .reading(self.reads.iter().cloned())
            .executing(self.execs.iter().cloned())
            .passing(self.passed);
        spec.cwd = Some(self.cwd.to_path_buf());
        spec.timeout = Duration::from_secs(1800);
        spec.limits = sandbox::Limits::toolchain(&self.limits);
        let out = sandbox::run(&spec)?;
        if out.outcome != Outcome::Exited(0) {
            let log = String::from_utf8_lossy(&[out.stdout, out.stderr].concat()).into_owned();
            let breach = super::diag::limit_breach(out.outcome, &log, &self.limits)
                .map(|b| format!("{b}\n"))
                .unwrap_or_default();
            bail!(
                "{what} with cmake failed ({}):\n{breach}{}",
                out.outcome,
                crate::toolchain::tail(&log, 30)
            );
        }
        Ok(())
    }
}

fn find_archive(dir: &Path, target: &str) -> Option<PathBuf> {
    let name = format!("lib{target}.a");
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        if p.is_dir() {
            if let Some(found) = find_archive(&p, target) {
                return Some(found);
            }
        } else if p.file_name().is_some_and(|n| n == name.as_str()) {
            return Some(p);
        }
    }
    None
}

/// Copies every member of a static library into the object cache.
fn extract_objects(env: &BuildEnv, archive: &Path, target: &str) -> Result<Vec<ObjectRef>> {
    let data = std::fs::read(archive).with_context(|| format!("reading {}", archive.display()))?;
    let ar =
        object::read::archive::ArchiveFile::parse(&*data).context("parsing the static library")?;
    let mut out = Vec::new();
    for member in ar.members() {
        let member = member?;
        let name = String::from_utf8_lossy(member.name())
            .trim_end_matches('/')
            .to_string();
        let bytes = member.data(&*data)?;
        let key = crate::fsutil::sha256_hex(bytes);
        let path = env.cache.object_path(&key);
        if !path.is_file() {
            crate::fsutil::write_atomic(&path, bytes)?;
        }
        out.push(ObjectRef {
            source: format!("{target}:{name}"),
            key,
            submission: true,
        });
    }
    if out.is_empty() {
        bail!("lib{target}.a holds no object");
    }
    Ok(out)
}
