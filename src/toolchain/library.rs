//! Building an instance's shared library: compile its sources and the API
//! adapter with a flag profile (objects cached by their inputs) and link one
//! library exporting only the entry table and the API. Used by the build
//! stage, the KAT stage's fallback profiles and the profile relink.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::build_env::{BuildEnv, ObjectRef};
use super::deps::{self, Deps, Unit};
use super::Compiler;
use crate::fsutil;
use crate::plan::{Binding, FlagProfile, Instance, KatRng, LengthType};

/// One attempt to build an instance with one flag profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildAttempt {
    pub profile: String,
    pub ok: bool,
    /// sha256 of the library (its blob in the cache).
    pub library_sha256: Option<String>,
    /// Σ MemSiz over the library's PT_LOAD segments.
    pub load_bytes: Option<u64>,
    /// Compiler or linker messages (tail), empty when quiet.
    pub log: String,
    /// The objects linked, for relinking (profile) and scanning (survey).
    #[serde(default)]
    pub objects: Vec<ObjectRef>,
    /// Why the instance was not built on this system at all (code for
    /// another architecture, CPU features the host lacks): not a failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

impl BuildAttempt {
    /// The submission's own objects (its sources and components, not
    /// pqbench's adapter and DRBG), with their paths in `cache`: what the
    /// survey, the scan and the client-request check read.
    pub(crate) fn own_objects(
        &self,
        cache: &crate::cache::Cache,
    ) -> (Vec<&ObjectRef>, Vec<PathBuf>) {
        let own: Vec<&ObjectRef> = self.objects.iter().filter(|o| o.submission).collect();
        let paths = own.iter().map(|o| cache.object_path(&o.key)).collect();
        (own, paths)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildOutput {
    /// Profiles tried in fallback order until one compiled.
    pub attempts: Vec<BuildAttempt>,
}

impl BuildOutput {
    pub(crate) fn built(&self) -> Option<&BuildAttempt> {
        self.attempts.iter().find(|a| a.ok)
    }
}

/// The compilation units of `inst` built with `profile`: its sources
/// (those its CMake project does not build), the API adapter and, with
/// pqbench's own KAT RNG, the AES-256 CTR_DRBG. `support_dir` holds the
/// support sources (`Support::sources`).
pub(crate) fn units(
    inst: &Instance,
    profile: &FlagProfile,
    support_dir: &Path,
    arch: &str,
) -> Vec<Unit> {
    let args = compile_args(inst, profile, arch);
    let mut units: Vec<Unit> = inst
        .sources
        .iter()
        .filter(|s| {
            inst.cmake
                .as_ref()
                .is_none_or(|c| !s.path.starts_with(&c.root))
        })
        .map(|s| {
            let mut args = args.clone();
            args.extend(feature_args(&s.cpu_features, arch));
            args.extend(s.defines.iter().cloned());
            Unit {
                source: s.path.clone(),
                args,
                submission: true,
            }
        })
        .collect();
    units.extend(adapter_units(support_dir, inst, profile, arch, &args));
    // A KEX's pass functions are looked up by name (weak references, in a
    // unit that sees none of the submission's prototypes); an ICCS baseline
    // instance gets pqbench's CryptHash over the helper it measures.
    for (file, extra) in super::kinds::extra_units(inst) {
        let mut a = args.clone();
        a.push(format!("-I{}", support_dir.display()));
        a.extend(extra);
        units.push(Unit {
            source: support_dir.join(file),
            args: a,
            submission: false,
        });
    }
    if let Binding::Nist {
        kat_rng: KatRng::Builtin,
        ..
    } = inst.binding
    {
        // The AES-256 CTR_DRBG behind the renamed randombytes.
        let mut own = profile.cflags.clone();
        own.push(format!("-I{}", support_dir.display()));
        for f in ["aes256.c", "ctr_drbg.c"] {
            units.push(Unit {
                source: support_dir.join(f),
                args: own.clone(),
                submission: false,
            });
        }
    }
    units
}

/// Builds `inst` with `profile`; a compile error is a failed attempt, not
/// an error of the stage.
pub(crate) fn build_profile(
    env: &BuildEnv,
    inst: &Instance,
    profile: &FlagProfile,
) -> Result<BuildAttempt> {
    // Logs go into published records: no machine paths in them.
    let root = format!("{}/", env.project_root.display());
    let failed = |log: String| BuildAttempt {
        profile: profile.name.clone(),
        ok: false,
        library_sha256: None,
        load_bytes: None,
        log: log.replace(&root, ""),
        objects: Vec::new(),
        skipped: None,
    };
    if let Some(why) = skip_reason(env, inst) {
        let mut a = failed(String::new());
        a.skipped = Some(why);
        return Ok(a);
    }
    let mut objects = Vec::new();
    if let Some(spec) = &inst.cmake {
        match super::cmake::build_target(env, inst, spec, profile) {
            Ok(objs) => objects = objs,
            Err(e) => return Ok(failed(format!("{e:#}"))),
        }
    }
    let units = units(inst, profile, env.support_dir, target_arch(env.compiler));
    let reads = env.reads(inst);
    let results: Vec<Result<(String, String)>> = units
        .par_iter()
        .map(|u| compile_cached(env, u, &reads))
        .collect();
    let mut log = String::new();
    for (r, u) in results.into_iter().zip(&units) {
        match r {
            Ok((key, warnings)) => {
                objects.push(ObjectRef {
                    source: if u.submission {
                        env.display_path(&u.source)
                    } else {
                        u.source
                            .file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or_default()
                    },
                    key,
                    submission: u.submission,
                });
                log.push_str(&warnings);
            }
            Err(e) => return Ok(failed(format!("{e:#}"))),
        }
    }
    let scratch = super::scratch()?;
    let lib = scratch.path().join("lib.so");
    if let Err(e) = link_library(env, inst, profile, &objects, &[], &lib) {
        return Ok(failed(format!("{e:#}")));
    }
    let sha = env
        .cache
        .put_blob(&bounded_read(&lib, &env.compiler.job_limits())?)?;
    let load_bytes = crate::elf::load_segment_bytes(&lib).ok();
    Ok(BuildAttempt {
        profile: profile.name.clone(),
        ok: true,
        library_sha256: Some(sha),
        load_bytes,
        log: super::tail(&log, 20).replace(&root, ""),
        objects,
        skipped: None,
    })
}

/// Links objects (plus extra inputs and arguments, e.g. profiling wrappers)
/// into a shared library exporting only the entry table and the API.
pub(crate) fn link_library(
    env: &BuildEnv,
    inst: &Instance,
    profile: &FlagProfile,
    objects: &[ObjectRef],
    extra: &[String],
    out: &Path,
) -> Result<()> {
    let script = out.with_extension("map");
    fsutil::write_atomic(&script, version_script(inst).as_bytes())?;
    // The linker reads copies beside its output, never the cache: other
    // instances' objects and the cache's records are not its to read.
    let dir = out.parent().context("the link's scratch folder")?;
    let mut inputs = Vec::with_capacity(objects.len());
    for (i, o) in objects.iter().enumerate() {
        let copy = dir.join(format!("in-{i}.o"));
        std::fs::copy(env.cache.object_path(&o.key), &copy)
            .with_context(|| format!("copying the object of {} to link it", o.source))?;
        // Readable by the linker's job uid, whatever the cache's mode.
        std::fs::set_permissions(&copy, std::os::unix::fs::PermissionsExt::from_mode(0o644))?;
        inputs.push(copy);
    }
    let mut args = vec![
        "-shared".to_string(),
        "-Wl,--no-undefined".into(),
        format!("-Wl,--version-script={}", script.display()),
    ];
    args.extend(extra.iter().cloned());
    args.extend(profile.ldflags.iter().cloned());
    args.extend(inst.libraries.iter().map(|l| format!("-l{l}")));
    args.push("-lm".into());
    env.compiler.link(&env.reads(inst), &inputs, out, &args)?;
    Ok(())
}

/// The arguments every unit of `inst` is compiled with under `profile`
/// for a compiler targeting `arch` (`target_arch`).
pub(crate) fn compile_args(inst: &Instance, profile: &FlagProfile, arch: &str) -> Vec<String> {
    let mut args = profile.cflags.clone();
    args.extend(feature_args(&inst.cpu_features, arch));
    args.extend(inst.defines.iter().cloned());
    args.extend(
        inst.include_dirs
            .iter()
            .map(|d| format!("-I{}", d.display())),
    );
    args
}

/// CPU features as the compiler takes them: x86 ones as `-m<feature>`
/// each; AArch64 ones as extensions of the architecture
/// (`-march=armv8.2-a+sha3`: gcc accepts the SHA-3 extension from v8.2
/// on, and the features AArch64 code asks for are of v8.2 or later).
fn feature_args(features: &[String], arch: &str) -> Vec<String> {
    if features.is_empty() {
        return Vec::new();
    }
    if arch == "aarch64" {
        return vec![format!("-march=armv8.2-a+{}", features.join("+"))];
    }
    features.iter().map(|f| format!("-m{f}")).collect()
}

/// pqbench's adapter for the instance's API. The NIST one comes in two
/// halves (`adapter_nist.h`): the one that calls the API, compiled with the
/// instance's arguments and header, and the rest, compiled with the flag
/// profile, the CPU features and the adapter's own options only, so that
/// every instance of one kind, API options and flag set shares one object
/// of it (a cold build of many instances compiles it once).
fn adapter_units(
    support_dir: &Path,
    inst: &Instance,
    profile: &FlagProfile,
    arch: &str,
    args: &[String],
) -> Vec<Unit> {
    let unit = |file: &str, args: Vec<String>| Unit {
        source: support_dir.join(file),
        args,
        submission: false,
    };
    let mut own = vec![format!("-I{}", support_dir.display())];
    own.extend(super::kinds::adapter_defines(inst));
    match &inst.binding {
        Binding::Ngcc { headers } => {
            let mut a = args.to_vec();
            a.extend(own);
            a.push(format!("-DPQB_LABEL=\"{}\"", inst.label));
            for h in headers {
                a.extend(["-include".into(), h.clone()]);
            }
            vec![unit("adapter_ngcc.c", a)]
        }
        Binding::Nist {
            header,
            namespace,
            suffix,
            randombytes,
            lengths,
            kat_rng,
            rng_init,
            ..
        } => {
            // The adapter is ours: hold it to no submission's warning level.
            own.push("-Wno-pedantic".into());
            let mut api = args.to_vec();
            api.extend(own.iter().cloned());
            api.extend(["-include".into(), header.clone()]);
            api.push(format!("-DPQB_NS={namespace}"));
            if !suffix.is_empty() {
                api.push(format!("-DPQB_SFX={suffix}"));
            }
            if *lengths == LengthType::SizeT {
                api.push("-DPQB_LEN_SIZE_T".into());
            }
            let mut rest = profile.cflags.clone();
            rest.extend(feature_args(&inst.cpu_features, arch));
            rest.extend(own);
            rest.push(format!("-DPQB_RANDOMBYTES={randombytes}"));
            if *kat_rng == KatRng::Submission {
                rest.push("-DPQB_SUBMISSION_RNG".into());
                if let Some(init) = rng_init {
                    rest.push(format!("-DPQB_RANDOMBYTES_INIT={}", init.symbol));
                    rest.push(format!(
                        "-DPQB_INIT_ARGS_{}",
                        init.args.as_str().to_ascii_uppercase().replace('-', "_")
                    ));
                }
            }
            vec![
                unit("adapter_nist_api.c", api),
                unit("adapter_nist.c", rest),
            ]
        }
    }
}

/// Compiles one unit unless an object for exactly these inputs exists;
/// returns the object's cache key and the compiler's warnings. The key
/// covers every file the compiler lists for the unit (`deps`): the
/// remembered list while it stands, else the one the compiler writes while
/// compiling (`-MD`), so a unit never listed before costs one compiler run,
/// not a preprocessor run and a compile.
pub(crate) fn compile_cached(
    env: &BuildEnv,
    unit: &Unit,
    reads: &[PathBuf],
) -> Result<(String, String)> {
    if let Some(deps) = deps::remembered(env.cache, env.compiler, unit) {
        let key = object_key(env, unit, &deps);
        if env.cache.object_path(&key).is_file() {
            return Ok((key, String::new()));
        }
    }
    let (key, _, log) = compile_listing(env, unit, reads)?;
    Ok((key, log))
}

/// The dependencies of `unit` for a build's key, learnt by compiling it
/// when no list is remembered (the object is then cached for the build);
/// a unit that does not compile is listed by the preprocessor
/// (`deps::of`), as `plan` and `status` list every unit.
pub(crate) fn deps_by_compiling(env: &BuildEnv, unit: &Unit, reads: &[PathBuf]) -> Result<Deps> {
    if let Some(deps) = deps::remembered(env.cache, env.compiler, unit) {
        return Ok(deps);
    }
    match compile_listing(env, unit, reads) {
        Ok((_, deps, _)) => Ok(deps),
        Err(_) => deps::of(env.cache, env.compiler, unit, reads),
    }
}

/// How often a unit is compiled again while a file it read keeps changing
/// under the compiler, before its object is kept for this command only.
const UNSETTLED_RETRIES: usize = 3;

/// Compiles `unit` with `-MD`, records the list the compiler wrote and
/// stores the object under the key of that list. The files on the list are
/// hashed after the compile: when one of them changed after the compile
/// began (its change time, which user space cannot set back, says so), the
/// object may come from its old contents, so the unit is compiled again;
/// if the files never settle, the object is stored under a key of its own
/// that no later command computes, and the list is forgotten.
fn compile_listing(
    env: &BuildEnv,
    unit: &Unit,
    reads: &[PathBuf],
) -> Result<(String, Deps, String)> {
    for _ in 0..UNSETTLED_RETRIES {
        let began = std::time::SystemTime::now();
        let (tmp, scratch, log) = compile_to_scratch(env, unit, reads)?;
        let deps = deps::compiled(
            env.cache,
            env.compiler,
            unit,
            &scratch.path().join("unit.d"),
        )?;
        if deps::changed_since(&deps, began) {
            continue;
        }
        let key = object_key(env, unit, &deps);
        store_object(env, &tmp, &key)?;
        return Ok((key, deps, log));
    }
    deps::forget(env.cache, env.compiler, unit);
    let (tmp, scratch, log) = compile_to_scratch(env, unit, reads)?;
    let deps = deps::compiled(
        env.cache,
        env.compiler,
        unit,
        &scratch.path().join("unit.d"),
    )?;
    deps::forget(env.cache, env.compiler, unit);
    let key = fsutil::sha256_hex(format!("unsettled|{}", fsutil::sha256_file(&tmp)?).as_bytes());
    store_object(env, &tmp, &key)?;
    Ok((key, deps, log))
}

/// Compiles `unit` into `unit.o` (and its list into `unit.d`) of a fresh
/// scratch directory, kept alive by the returned handle.
fn compile_to_scratch(
    env: &BuildEnv,
    unit: &Unit,
    reads: &[PathBuf],
) -> Result<(PathBuf, tempfile::TempDir, String)> {
    let scratch = super::scratch()?;
    let tmp = scratch.path().join("unit.o");
    let depfile = scratch.path().join("unit.d");
    let mut args = unit.args.clone();
    args.extend(["-MD".into(), "-MF".into(), depfile.display().to_string()]);
    let log = env.compiler.compile(reads, &unit.source, &tmp, &args)?;
    Ok((tmp, scratch, log))
}

/// Copies an object the compiler wrote into the cache: a new file of
/// pqbench's (the job's uid owned the original), after checking its size.
fn store_object(env: &BuildEnv, tmp: &Path, key: &str) -> Result<()> {
    let obj = env.cache.object_path(key);
    let bytes = bounded_read(tmp, &env.compiler.job_limits())?;
    // Renamed into place whole, as the compiler's own file was before; not
    // synced (an object is rebuilt from its key whenever it is missing).
    let dir = obj.parent().context("object folder")?;
    std::fs::create_dir_all(dir)?;
    let mut staged = tempfile::Builder::new()
        .prefix(".tmp-")
        .tempfile_in(dir)
        .context("storing object")?;
    std::io::Write::write_all(&mut staged, &bytes).context("storing object")?;
    staged
        .as_file()
        .set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644))?;
    staged.persist(&obj).context("storing object")?;
    Ok(())
}

/// A file a toolchain job wrote, read whole when it is within the job's
/// file-size limit (which the kernel enforced while it was written; this
/// holds the line where the job could not be limited).
pub(crate) fn bounded_read(
    path: &Path,
    limits: &crate::records::toolchain::ToolchainLimits,
) -> Result<Vec<u8>> {
    let len = std::fs::metadata(path)
        .with_context(|| format!("reading {}", path.display()))?
        .len();
    if len > limits.file_mib << 20 {
        anyhow::bail!(
            "{} is {len} bytes, over the {} MiB file-size limit (toolchain.limits.file-mib)",
            path.display(),
            limits.file_mib
        );
    }
    std::fs::read(path).with_context(|| format!("reading {}", path.display()))
}

/// An object's key: the compiler's identity, the unit's arguments and
/// every file it reads with its contents.
fn object_key(env: &BuildEnv, unit: &Unit, deps: &Deps) -> String {
    let mut key = format!(
        "{}|{}|{}|{}",
        env.compiler.binary_sha256,
        env.compiler.version,
        unit.args.join("\u{1f}"),
        deps.digest()
    );
    if let Some(tool) = env.compiler.extra_identity(&unit.source) {
        key.push('|');
        key.push_str(&tool);
    }
    if let Some(names) = env.compiler.environment_identity() {
        key.push('|');
        key.push_str(&names);
    }
    fsutil::sha256_hex(key.as_bytes())
}

/// Exports: the entry table and the API functions; everything else local.
fn version_script(inst: &Instance) -> String {
    let api = super::kinds::api_names(inst);
    // pqb_prof_* and pqb_ct_*: hooks of the profiling and constant-time
    // builds (absent from the measured library).
    let mut s =
        String::from("{\n  global:\n    pqb_entry_table;\n    pqb_prof_*;\n    pqb_ct_*;\n");
    for g in inst.kind.def().export_globs() {
        s.push_str(&format!("    {g};\n"));
    }
    for f in api {
        s.push_str(&format!("    {f};\n"));
    }
    s.push_str("  local: *;\n};\n");
    s
}

/// The API symbols an instance must define (for validation and the survey).
pub(crate) fn api_symbols(inst: &Instance) -> Vec<String> {
    version_script(inst)
        .lines()
        .map(|l| l.trim().trim_end_matches(';'))
        .filter(|l| {
            !l.is_empty()
                && !l.contains(':')
                && !l.contains('*')
                && !l.contains('{')
                && !l.contains('}')
                && *l != "pqb_entry_table"
        })
        .map(String::from)
        .collect()
}

/// The architecture a compiler builds for (`x86_64`, `aarch64`), from its
/// `-dumpmachine` triple.
pub(crate) fn target_arch(compiler: &Compiler) -> &str {
    compiler.target.split('-').next().unwrap_or("")
}

/// Why `inst` is not built with this compiler here, if it is not: code
/// written for another architecture, or CPU features this host lacks (only
/// checked when building for this host: an emulator provides its own CPU).
pub(crate) fn skip_reason(env: &BuildEnv, inst: &Instance) -> Option<String> {
    let arch = target_arch(env.compiler);
    if !inst.arch.is_empty() && !inst.arch.iter().any(|a| a == arch) {
        return Some(format!(
            "implementation `{}` is written for {}; this system builds for {arch}",
            inst.implementation,
            inst.arch.join(", ")
        ));
    }
    if arch != std::env::consts::ARCH {
        return None;
    }
    missing_cpu_features(&inst.cpu_features)
        .map(|m| format!("host CPU lacks required features: {m}"))
}

/// A feature as gcc's `-m` option names it, as `/proc/cpuinfo` lists it.
fn cpuinfo_name(feature: &str) -> String {
    match feature {
        "bmi" => "bmi1".into(),
        "pclmul" => "pclmulqdq".into(),
        "lzcnt" => "abm".into(),
        f => f.replace(['.', '-'], "_"),
    }
}

/// Features named in the TOML that /proc/cpuinfo does not list.
fn missing_cpu_features(features: &[String]) -> Option<String> {
    if features.is_empty() {
        return None;
    }
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags: BTreeMap<&str, ()> = info
        .lines()
        .find(|l| l.starts_with("flags") || l.starts_with("Features"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.split_whitespace().map(|f| (f, ())).collect())
        .unwrap_or_default();
    let missing: Vec<&str> = features
        .iter()
        .map(|f| f.as_str())
        .filter(|f| !flags.contains_key(cpuinfo_name(f).as_str()))
        .collect();
    (!missing.is_empty()).then(|| missing.join(", "))
}

#[cfg(test)]
mod tests {
    use super::{cpuinfo_name, feature_args};

    /// x86 features are `-m` options each; AArch64 ones extend `-march`
    /// (gcc has no `-msha3` for AArch64).
    #[test]
    fn features_are_options_on_x86_and_march_extensions_on_aarch64() {
        let f = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            feature_args(&f(&["avx2", "bmi2"]), "x86_64"),
            ["-mavx2", "-mbmi2"]
        );
        assert_eq!(
            feature_args(&f(&["sha3"]), "aarch64"),
            ["-march=armv8.2-a+sha3"]
        );
        assert_eq!(
            feature_args(&f(&["sha3", "sm4"]), "aarch64"),
            ["-march=armv8.2-a+sha3+sm4"]
        );
        assert!(feature_args(&[], "aarch64").is_empty());
    }

    /// The TOML names features as gcc's `-m` options; the host check looks
    /// them up under the kernel's names (`bmi` is listed as `bmi1`).
    #[test]
    fn gcc_feature_names_are_looked_up_under_cpuinfo_names() {
        for (gcc, kernel) in [
            ("bmi", "bmi1"),
            ("bmi2", "bmi2"),
            ("sse4.1", "sse4_1"),
            ("pclmul", "pclmulqdq"),
            ("amx-tile", "amx_tile"),
            ("avx2", "avx2"),
        ] {
            assert_eq!(cpuinfo_name(gcc), kernel);
        }
    }
}
