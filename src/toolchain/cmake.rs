//! The opt-in CMake backend: for an implementation whose TOML names a
//! `[implementation.cmake] target`, pqbench configures and builds that
//! target with the campaign's compiler and flag profile, then takes the
//! objects out of the static library it produced. The default path never
//! needs cmake; this runs the submission's own build script, which is why a
//! TOML must opt in.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::library::{BuildEnv, ObjectRef};
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
    let scratch = env.cache.scratch()?;
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
    let reads: Vec<PathBuf> = env
        .reads(inst)
        .into_iter()
        .chain(env.compiler.installation())
        .collect();
    run(&cmake, &reads, &configure, scratch.path(), "configuring")?;
    let build_args = vec![
        "--build".to_string(),
        build.display().to_string(),
        "--target".into(),
        spec.target.clone(),
    ];
    run(&cmake, &reads, &build_args, scratch.path(), "building")?;
    let archive = find_archive(&build, &spec.target).with_context(|| {
        format!(
            "the CMake target `{}` produced no lib{}.a",
            spec.target, spec.target
        )
    })?;
    extract_objects(env, &archive, &spec.target)
}

fn run(cmake: &Path, reads: &[PathBuf], args: &[String], cwd: &Path, what: &str) -> Result<()> {
    // A submitted build script, confined like the compiler: it writes only
    // in its scratch directory and reads what the compiler may.
    let mut spec = Spec::toolchain(cmake, args.to_vec(), vec![cwd.to_path_buf()])
        .reading(reads.iter().cloned());
    spec.cwd = Some(cwd.to_path_buf());
    spec.timeout = Duration::from_secs(1800);
    let out = sandbox::run(&spec)?;
    if out.outcome != Outcome::Exited(0) {
        let log = String::from_utf8_lossy(&[out.stdout, out.stderr].concat()).into_owned();
        bail!(
            "{what} with cmake failed ({}):\n{}",
            out.outcome,
            crate::toolchain::tail(&log, 30)
        );
    }
    Ok(())
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
