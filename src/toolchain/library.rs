//! Building an instance's shared library: compile its sources and the API
//! adapter with a flag profile (objects cached by their inputs) and link one
//! library exporting only the entry table and the API. Used by the build
//! stage, the KAT stage's fallback profiles and the profile relink.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::Compiler;
use crate::cache::Cache;
use crate::fsutil;
use crate::plan::{ApiFamily, Binding, FlagProfile, Instance, KatRng, Kind, LengthType};
use crate::support::Support;

/// What building needs: the compiler, the support code, the cache, and the
/// project root (stripped from logs, which are published).
#[derive(Clone, Copy)]
pub struct BuildEnv<'a> {
    pub compiler: &'a Compiler,
    pub support: &'a Support,
    pub cache: &'a Cache,
    pub project_root: &'a Path,
}

impl BuildEnv<'_> {
    /// A path relative to the project root, for records.
    pub fn display_path(&self, path: &Path) -> String {
        path.strip_prefix(self.project_root)
            .unwrap_or(path)
            .display()
            .to_string()
    }
}

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
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObjectRef {
    /// The source file, relative to the project root (support files by name).
    pub source: String,
    /// Key of the object in the cache (`Cache::object_path`).
    pub key: String,
    /// True for the submission's (and its components') own code; false for
    /// pqbench's adapter and DRBG.
    pub submission: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildOutput {
    /// Profiles tried in fallback order until one compiled.
    pub attempts: Vec<BuildAttempt>,
}

impl BuildOutput {
    pub fn built(&self) -> Option<&BuildAttempt> {
        self.attempts.iter().find(|a| a.ok)
    }
}

/// Header files of the include dirs (one level): any may be included, so
/// any change to one invalidates the build.
pub fn headers(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = dirs
        .iter()
        .flat_map(|d| std::fs::read_dir(d).into_iter().flatten())
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "h" || x == "inc"))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Builds `inst` with `profile`; a compile error is a failed attempt, not
/// an error of the stage.
pub fn build_profile(
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
    };
    if let Some(missing) = missing_cpu_features(&inst.cpu_features) {
        return Ok(failed(format!(
            "host CPU lacks required features: {missing}"
        )));
    }
    let args = compile_args(inst, profile);
    let header_digest = {
        let mut all = String::new();
        for h in headers(&inst.include_dirs) {
            all.push_str(&fsutil::sha256_file(&h)?);
        }
        fsutil::sha256_hex(all.as_bytes())
    };
    let mut objects = Vec::new();
    let mut units: Vec<(PathBuf, Vec<String>, bool)> = Vec::new();
    match &inst.cmake {
        Some(spec) => {
            match super::cmake::build_target(env, inst, spec, profile) {
                Ok(objs) => objects = objs,
                Err(e) => return Ok(failed(format!("{e:#}"))),
            }
            // Shared components are not part of the submission's CMake project.
            units.extend(
                inst.sources
                    .iter()
                    .filter(|s| !s.path.starts_with(&spec.root))
                    .map(|s| (s.path.clone(), args.clone(), true)),
            );
        }
        None => units.extend(
            inst.sources
                .iter()
                .map(|s| (s.path.clone(), args.clone(), true)),
        ),
    }
    units.push((
        env.support.file(adapter_file(inst.api)),
        adapter_args(env, inst, &args),
        false,
    ));
    // A KEX's pass functions are looked up by name (weak references, in a
    // unit that sees none of the submission's prototypes); an ICCS baseline
    // instance gets pqbench's CryptHash over the helper it measures.
    for (file, extra) in super::kinds::extra_units(inst) {
        let mut a = args.clone();
        a.push(format!("-I{}", env.support.dir.display()));
        a.extend(extra);
        units.push((env.support.file(file), a, false));
    }
    if let Binding::Nist {
        kat_rng: KatRng::Builtin,
        ..
    } = inst.binding
    {
        // The AES-256 CTR_DRBG behind the renamed randombytes.
        let mut own = profile.cflags.clone();
        own.push(format!("-I{}", env.support.dir.display()));
        for f in ["aes256.c", "ctr_drbg.c"] {
            units.push((env.support.file(f), own.clone(), false));
        }
    }
    let results: Vec<Result<(String, String)>> = units
        .par_iter()
        .map(|(src, a, _)| compile_cached(env, src, a, &header_digest))
        .collect();
    let mut log = String::new();
    for (r, (src, _, submission)) in results.into_iter().zip(&units) {
        match r {
            Ok((key, warnings)) => {
                objects.push(ObjectRef {
                    source: if *submission {
                        env.display_path(src)
                    } else {
                        src.file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or_default()
                    },
                    key,
                    submission: *submission,
                });
                log.push_str(&warnings);
            }
            Err(e) => return Ok(failed(format!("{e:#}"))),
        }
    }
    let scratch = env.cache.scratch()?;
    let lib = scratch.path().join("lib.so");
    if let Err(e) = link_library(env, inst, profile, &objects, &[], &lib) {
        return Ok(failed(format!("{e:#}")));
    }
    let sha = env.cache.put_blob_file(&lib)?;
    let load_bytes = crate::elf::load_segment_bytes(&lib).ok();
    Ok(BuildAttempt {
        profile: profile.name.clone(),
        ok: true,
        library_sha256: Some(sha),
        load_bytes,
        log: super::tail(&log, 20).replace(&root, ""),
        objects,
    })
}

/// Links objects (plus extra inputs and arguments, e.g. profiling wrappers)
/// into a shared library exporting only the entry table and the API.
pub fn link_library(
    env: &BuildEnv,
    inst: &Instance,
    profile: &FlagProfile,
    objects: &[ObjectRef],
    extra: &[String],
    out: &Path,
) -> Result<()> {
    let script = out.with_extension("map");
    fsutil::write_atomic(&script, version_script(inst).as_bytes())?;
    let inputs: Vec<PathBuf> = objects
        .iter()
        .map(|o| env.cache.object_path(&o.key))
        .collect();
    let mut args = vec![
        "-shared".to_string(),
        "-Wl,--no-undefined".into(),
        format!("-Wl,--version-script={}", script.display()),
    ];
    args.extend(extra.iter().cloned());
    args.extend(profile.ldflags.iter().cloned());
    args.push("-lm".into());
    env.compiler.link(&inputs, out, &args)?;
    Ok(())
}

fn compile_args(inst: &Instance, profile: &FlagProfile) -> Vec<String> {
    let mut args = profile.cflags.clone();
    args.extend(inst.cpu_features.iter().map(|f| format!("-m{f}")));
    args.extend(inst.defines.iter().cloned());
    args.extend(
        inst.include_dirs
            .iter()
            .map(|d| format!("-I{}", d.display())),
    );
    args
}

fn adapter_file(api: ApiFamily) -> &'static str {
    match api {
        ApiFamily::Ngcc => "adapter_ngcc.c",
        ApiFamily::Nist => "adapter_nist.c",
    }
}

fn adapter_args(env: &BuildEnv, inst: &Instance, base: &[String]) -> Vec<String> {
    let mut a = base.to_vec();
    a.push(format!("-I{}", env.support.dir.display()));
    match inst.kind {
        Kind::Sign => a.push("-DPQB_KIND_IS_SIGN".into()),
        Kind::Kem => a.push("-DPQB_KIND_IS_KEM".into()),
        Kind::Kex | Kind::Hash => a.extend(super::kinds::adapter_defines(inst)),
    }
    a.push(format!("-DPQB_LABEL=\"{}\"", inst.label));
    match &inst.binding {
        Binding::Ngcc { headers } => {
            for h in headers {
                a.extend(["-include".into(), h.clone()]);
            }
        }
        Binding::Nist {
            header,
            namespace,
            randombytes,
            lengths,
            kat_rng,
        } => {
            a.extend(["-include".into(), header.clone()]);
            a.push(format!("-DPQB_NS={namespace}"));
            a.push(format!("-DPQB_RANDOMBYTES={randombytes}"));
            if *lengths == LengthType::SizeT {
                a.push("-DPQB_LEN_SIZE_T".into());
            }
            if *kat_rng == KatRng::Submission {
                a.push("-DPQB_SUBMISSION_RNG".into());
            }
            // The adapter is ours: hold it to no submission's warning level.
            a.push("-Wno-pedantic".into());
        }
    }
    a
}

/// Compiles one unit unless an object for exactly these inputs exists;
/// returns the object's cache key and the compiler's warnings.
fn compile_cached(
    env: &BuildEnv,
    src: &Path,
    args: &[String],
    headers: &str,
) -> Result<(String, String)> {
    let key = fsutil::sha256_hex(
        format!(
            "{}|{}|{}|{}|{}",
            env.compiler.binary_sha256,
            env.compiler.version,
            args.join("\u{1f}"),
            fsutil::sha256_file(src)?,
            headers
        )
        .as_bytes(),
    );
    let obj = env.cache.object_path(&key);
    if obj.is_file() {
        return Ok((key, String::new()));
    }
    let scratch = env.cache.scratch()?;
    let tmp = scratch.path().join("unit.o");
    let log = env.compiler.compile(src, &tmp, args)?;
    std::fs::create_dir_all(obj.parent().expect("object dir"))?;
    std::fs::rename(&tmp, &obj).context("storing object")?;
    Ok((key, log))
}

/// Exports: the entry table and the API functions; everything else local.
fn version_script(inst: &Instance) -> String {
    let api: Vec<String> = match (&inst.binding, inst.kind) {
        (Binding::Ngcc { .. }, Kind::Sign) => [
            "sig_keygen",
            "sig_sign",
            "sig_verify",
            "sig_get_pk_len_bytes",
            "sig_get_sk_len_bytes",
            "sig_get_sn_len_bytes",
        ]
        .map(String::from)
        .to_vec(),
        (Binding::Ngcc { .. }, Kind::Kem) => [
            "kem_keygen",
            "kem_enc",
            "kem_dec",
            "kem_get_pk_len_bytes",
            "kem_get_sk_len_bytes",
            "kem_get_ss_len_bytes",
            "kem_get_ct_len_bytes",
        ]
        .map(String::from)
        .to_vec(),
        (Binding::Ngcc { .. }, Kind::Kex | Kind::Hash) => super::kinds::api_names(inst),
        (Binding::Nist { .. }, Kind::Kex | Kind::Hash) => Vec::new(),
        (Binding::Nist { namespace, .. }, Kind::Sign) => {
            ["crypto_sign_keypair", "crypto_sign", "crypto_sign_open"]
                .map(|f| format!("{namespace}{f}"))
                .to_vec()
        }
        (Binding::Nist { namespace, .. }, Kind::Kem) => {
            ["crypto_kem_keypair", "crypto_kem_enc", "crypto_kem_dec"]
                .map(|f| format!("{namespace}{f}"))
                .to_vec()
        }
    };
    let mut s = String::from("{\n  global:\n    pqb_entry_table;\n    pqb_prof_*;\n");
    if inst.kind == Kind::Kex {
        // Later passes exist only in protocols that have them.
        s.push_str("    kex_generate_pass*;\n");
    }
    for f in api {
        s.push_str(&format!("    {f};\n"));
    }
    s.push_str("  local: *;\n};\n");
    s
}

/// The API symbols an instance must define (for validation and the survey).
pub fn api_symbols(inst: &Instance) -> Vec<String> {
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
        .filter(|f| !flags.contains_key(f.replace('.', "_").as_str()))
        .collect();
    (!missing.is_empty()).then(|| missing.join(", "))
}
