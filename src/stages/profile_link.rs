//! Profile-link stage: relink the measured library with `-Wl,--wrap=<f>`
//! for each helper symbol of the instance (`Plan::wraps_for`) that one of
//! the linked objects defines — the submission's own, or pqbench's adapter
//! (a NIST instance's renamed randombytes) — plus pqbench's wrappers and
//! profiling runtime. A build job, so it runs on the build pool before any
//! measurement starts; the profile stage then runs the relinked library.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::build::BuildStage;
use super::kat::KatStage;
use crate::engine::{Job, Manifest, Policy, Stage};
use crate::fsutil;
use crate::measure::{measured_library, OpStatus};
use crate::plan::{FlagProfile, Instance, Wrap};
use crate::support::Part;
use crate::toolchain::build_env::ObjectRef;
use crate::toolchain::library::{build_profile, link_library};
use crate::toolchain::BuildEnv;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ProfileLink {
    /// `ok`, `no-helpers` (nothing to wrap) or `relink-failed`.
    pub status: OpStatus,
    pub detail: Option<String>,
    /// The helper symbols wrapped (those the objects define).
    pub wrapped: Vec<String>,
    /// The instrumented library (a blob in the cache) when `ok`.
    pub library_sha256: Option<String>,
}

pub(crate) struct ProfileLinkStage;

impl Stage for ProfileLinkStage {
    type Output = ProfileLink;
    const NAME: &'static str = "profile-link";
    const REQUIRES: &'static [&'static str] = &["build", "kat"];
    const POLICY: Policy = Policy::Parallel;

    fn manifest(&self, job: &Job) -> Result<Option<Manifest>> {
        if job.cx.emulated() {
            // An emulator's memory and time figures describe the emulator.
            return Ok(None);
        }
        let cx = job.cx;
        let Some(lib) = measured_library(cx.plan, job.inst, job.prior.get::<KatStage>()) else {
            return Ok(None);
        };
        // Kinds with no profiled operation (hashes) have no profile. nothing to relink.
        if !job.inst.kind.def().profiled() {
            return Ok(None);
        }
        let mut m = Manifest::new();
        m.set("library", lib)
            .set("wraps", cx.plan.wraps_for(job.inst))
            .set("support", Part::ProfileRuntime.version())
            .set("compiler", &cx.compiler)
            .set("pqbench", crate::STAGE_LOGIC_VERSION);
        Ok(Some(m))
    }

    fn run(&self, job: &Job) -> Result<ProfileLink> {
        let cx = job.cx;
        let inst = job.inst;
        let kat = job.prior.get::<KatStage>();
        let sha = measured_library(cx.plan, inst, kat).context("instance is not measured")?;
        let profile_name = &kat.context("no KAT result")?.final_attempt().profile;
        let build = job.prior.get::<BuildStage>().context("no build result")?;
        let env = cx.build_env()?;
        let fp = cx
            .profile_for(inst, profile_name)
            .with_context(|| format!("flag profile {profile_name} not in the plan"))?;
        let objects = match build.attempts.iter().find(|a| &a.profile == profile_name) {
            Some(a) if !a.objects.is_empty() => a.objects.clone(),
            _ => {
                // A fallback profile built during the KAT stage: rebuild it
                // (its objects are cached) to get the object list.
                let a = build_profile(&env, inst, &fp)?;
                anyhow::ensure!(
                    a.library_sha256.as_deref() == Some(sha.as_str()),
                    "rebuilt library differs from the measured one"
                );
                a.objects
            }
        };
        let wanted = cx.plan.wraps_for(inst);
        let wraps = wraps_defined(&env, &objects, &wanted);
        let wrapped: Vec<String> = wraps.iter().map(|w| w.symbol.clone()).collect();
        if wraps.is_empty() {
            let detail = if wanted.is_empty() {
                "no helper symbol is configured for this instance ([[profile.wrap]])"
            } else {
                "the objects define none of the wrapped helper symbols"
            };
            return Ok(ProfileLink {
                status: OpStatus::NoHelpers,
                detail: Some(detail.into()),
                wrapped,
                library_sha256: None,
            });
        }
        let scratch = crate::toolchain::scratch()?;
        let lib = scratch.path().join("profiled.so");
        if let Err(e) = relink(&env, inst, &fp, &objects, &wraps, &lib) {
            let root = format!("{}/", cx.plan.project_root.display());
            return Ok(ProfileLink {
                status: OpStatus::RelinkFailed,
                detail: Some(format!("{e:#}").replace(&root, "")),
                wrapped,
                library_sha256: None,
            });
        }
        Ok(ProfileLink {
            status: OpStatus::Ok,
            detail: None,
            wrapped,
            library_sha256: Some(cx.cache.put_blob(&crate::toolchain::library::bounded_read(
                &lib,
                &cx.compiler.job_limits(),
            )?)?),
        })
    }

    fn artifacts(&self, out: &ProfileLink) -> Vec<String> {
        out.library_sha256.iter().cloned().collect()
    }
}

/// The configured wraps whose symbol one of the linked objects defines:
/// the submission's, or pqbench's adapter and DRBG (whose randombytes the
/// submission calls across an object boundary, so --wrap catches it).
fn wraps_defined(env: &BuildEnv, objects: &[ObjectRef], wraps: &[Wrap]) -> Vec<Wrap> {
    let mut defined = std::collections::BTreeSet::new();
    for o in objects {
        if let Ok(syms) = crate::elf::defined_symbols(&env.cache.object_path(&o.key)) {
            defined.extend(syms);
        }
    }
    wraps
        .iter()
        .filter(|w| defined.contains(&w.symbol))
        .cloned()
        .collect()
}

/// The wrapper source for `wraps`: one `PQB_WRAP` line each.
pub(crate) fn wrapper_source(wraps: &[Wrap]) -> String {
    let mut s = String::from("#include \"prof_wrap.h\"\n");
    for w in wraps {
        // Symbols are C names and classes lower-case words (both checked
        // by the plan), so neither can break out of the macro call or the
        // string literal.
        let idx = |a: Option<u32>| a.map(|v| v.to_string()).unwrap_or_else(|| "-1".into());
        s.push_str(&format!(
            "PQB_WRAP({}, \"{}\", {}, {})\n",
            w.symbol,
            w.class,
            idx(w.in_bits_arg),
            idx(w.out_bits_arg)
        ));
    }
    s
}

fn relink(
    env: &BuildEnv,
    inst: &Instance,
    fp: &FlagProfile,
    objects: &[ObjectRef],
    wraps: &[Wrap],
    out: &std::path::Path,
) -> Result<()> {
    let dir = out.parent().context("scratch dir")?;
    let wrap_c = dir.join("wraps.c");
    fsutil::write_atomic(&wrap_c, wrapper_source(wraps).as_bytes())?;
    let args = vec![
        "-O2".to_string(),
        "-fPIC".into(),
        "-std=c99".into(),
        "-D_GNU_SOURCE".into(),
        format!("-I{}", env.support_dir.display()),
    ];
    let wrap_o = dir.join("wraps.o");
    let rt_o = dir.join("prof_runtime.o");
    let reads = env.reads(inst);
    env.compiler.compile(&reads, &wrap_c, &wrap_o, &args)?;
    env.compiler.compile(
        &reads,
        &env.support_dir.join("prof_runtime.c"),
        &rt_o,
        &args,
    )?;
    let mut extra = vec![wrap_o.display().to_string(), rt_o.display().to_string()];
    extra.extend(wraps.iter().map(|w| format!("-Wl,--wrap={}", w.symbol)));
    link_library(env, inst, fp, objects, &extra, out)
}
