//! Ct stage (opt-in): a constant-time check of every operation under
//! Valgrind's memcheck, in the manner of ctgrind and SUPERCOP's TIMECOP.
//!
//! The instance is rebuilt with debug information (the flag profile its
//! KAT passed with, plus `-g`: the same code, with line tables) and relinked
//! with `-Wl,--wrap=<randomness function>` around pqbench's wrapper
//! (`ct_hooks.c`), which marks every byte of randomness the submission
//! draws as undefined. The driver (`--mode ct`) marks the secret key
//! undefined before sign and dec, the public outputs defined after each
//! call, and lets memcheck report only during the calls. Every conditional
//! branch and every address that then depends on undefined data is an
//! error; the sites are the innermost frames in the instance's own code.
//!
//! Annotations do not change what runs: the records apply them (`evidence`),
//! so editing an annotation re-renders without re-checking.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::kat::KatStage;
use crate::context::Cx;
use crate::engine::{Job, Manifest, Policy, Stage};
use crate::engine::{Publication, Results};
use crate::measure::valgrind::{self, Valgrind};
use crate::measure::{measured_library, vgxml, OpStatus};
use crate::plan::{ApiFamily, Binding, FlagProfile, Instance};
use crate::records::ct::ct_path;
use crate::records::ct::{
    derive_sites, other_errors, CtError, CtFrame, CtRecord, CtStatus, FrameOrigin,
};
use crate::support::Part;
use crate::toolchain::library::{build_profile, link_library};

pub(crate) struct CtStage;

/// `[ct]`: the constant-time check under memcheck. Default: one checked
/// call (a call under memcheck costs tens of times a native one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct CtSettings {
    /// Checked calls per operation.
    #[serde(deserialize_with = "crate::config::values::count_u32_or_default")]
    pub calls: u32,
    /// Timeout of one memcheck process, seconds.
    #[serde(deserialize_with = "crate::config::values::seconds_or_default")]
    pub timeout_seconds: f64,
}

impl Default for CtSettings {
    fn default() -> Self {
        CtSettings {
            calls: 1,
            timeout_seconds: 600.0,
        }
    }
}

/// The campaign's `[ct]` (validated before any stage runs).
fn settings(cx: &Cx) -> Result<CtSettings> {
    crate::engine::settings::<CtSettings>(cx.plan, CtStage::NAME)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct CtOutput {
    /// One per operation; annotations and sites are applied when the
    /// records are written.
    pub ops: Vec<CtRecord>,
}

impl Stage for CtStage {
    type Output = CtOutput;
    const NAME: &'static str = "ct";
    const REQUIRES: &'static [&'static str] = &["build", "kat"];
    const POLICY: Policy = Policy::Parallel;
    const OPT_IN: bool = true;

    fn manifest(&self, job: &Job) -> Result<Option<Manifest>> {
        let cx = job.cx;
        if !job.inst.kind.ct_checked() {
            return Ok(None);
        }
        let Some(lib) = measured_library(cx.plan, job.inst, job.prior.get::<KatStage>()) else {
            return Ok(None);
        };
        let tool = match valgrind::unsupported_reason(cx) {
            Some(why) => why,
            None => match valgrind::find() {
                Ok(v) => v.version,
                Err(why) => why,
            },
        };
        let mut m = Manifest::new();
        m.set("library", lib)
            .set("support", [Part::Driver.version(), Part::CtHooks.version()])
            .set("compiler", &cx.compiler)
            .set("ct", &settings(cx)?)
            .set("limits", &cx.plan.limits)
            .set("tool", tool)
            .set("pqbench", crate::STAGE_LOGIC_VERSION);
        Ok(Some(m))
    }

    fn run(&self, job: &Job) -> Result<CtOutput> {
        let cx = job.cx;
        let inst = job.inst;
        let blank = |op: &str, status: CtStatus, detail: Option<String>| CtRecord {
            algorithm: inst.algorithm.clone(),
            label: inst.label.clone(),
            op: op.to_string(),
            status,
            detail,
            tool: None,
            library_sha256: None,
            cflags: Vec::new(),
            random_symbol: None,
            secrets: Vec::new(),
            calls: 0,
            random_draws: None,
            seconds: None,
            annotations: Vec::new(),
            errors: Vec::new(),
            sites: Vec::new(),
            other_errors: 0,
            process: None,
        };
        let all = |status: CtStatus, why: String| CtOutput {
            ops: inst
                .kind
                .operations()
                .iter()
                .filter(|op| inst.kind.counts(op))
                .map(|op| blank(op, status, Some(why.clone())))
                .collect(),
        };
        if let Some(why) = valgrind::unsupported_reason(cx) {
            return Ok(all(CtStatus::Skipped, why));
        }
        let vg = match valgrind::find() {
            Ok(v) => v,
            Err(why) => return Ok(all(CtStatus::Skipped, why)),
        };
        if let Some(why) = super::client_requests::found(job)? {
            return Ok(all(CtStatus::Suspicious, why));
        }
        let scratch = crate::toolchain::scratch()?;
        let lib = scratch.path().join("ct.so");
        let (fp, symbol) = match debug_build(job, &lib) {
            Ok(x) => x,
            Err(e) => {
                let root = format!("{}/", cx.plan.project_root.display());
                let why = format!("debug build failed: {e:#}").replace(&root, "");
                return Ok(all(CtStatus::Error, why));
            }
        };
        let lib_sha = crate::fsutil::sha256_file(&lib)?;
        let mut ops = Vec::new();
        for op in inst
            .kind
            .operations()
            .iter()
            .filter(|op| inst.kind.counts(op))
        {
            let mut r = blank(op, CtStatus::Error, None);
            r.tool = Some(format!("{} memcheck", vg.version));
            r.library_sha256 = Some(lib_sha.clone());
            r.cflags = fp.cflags.clone();
            r.random_symbol = Some(symbol.clone());
            check_op(cx, &vg, &lib, &mut r)?;
            let summary = format!(
                "{} — {} call(s) under memcheck in {:.1} s",
                r.status_text(),
                r.calls,
                r.seconds.unwrap_or(0.0)
            );
            cx.progress.operation(Self::NAME, &inst.key(), op, &summary);
            ops.push(r);
        }
        Ok(CtOutput { ops })
    }

    fn estimate_seconds(&self, job: &Job) -> Option<f64> {
        Some(
            3.0 * job
                .inst
                .kind
                .operations()
                .iter()
                .filter(|op| job.inst.kind.counts(op))
                .count() as f64,
        )
    }

    /// `[ct]`, read as the stage reads it: a misspelt key or a value out
    /// of range is named before anything runs.
    fn check_settings(&self, table: &serde_json::Value) -> std::result::Result<(), String> {
        serde_json::from_value::<CtSettings>(table.clone())
            .map(drop)
            .map_err(|e| e.to_string())
    }

    fn records(&self) -> Option<&dyn crate::engine::Records> {
        Some(&RECORDS)
    }

    fn page_section(&self) -> Option<&dyn crate::engine::PageSection> {
        Some(&super::ct_page::CtPages)
    }

    /// Each record with the algorithm's annotations that apply to the
    /// instance and the sites derived with them (so an edited annotation
    /// changes the records and pages without checking again).
    fn publish(
        &self,
        p: &mut Publication,
        inst: &Instance,
        out: &CtOutput,
        _: &Results,
    ) -> Result<()> {
        let annotations: Vec<_> =
            p.cx.plan
                .algorithm(&inst.algorithm)
                .map(|a| {
                    a.ct_annotations
                        .iter()
                        .filter(|n| n.applies_to(&inst.label))
                        .cloned()
                        .collect()
                })
                .unwrap_or_default();
        for rec in &out.ops {
            let rec = annotated(rec, &annotations);
            p.write(&ct_path(&rec.algorithm, &rec.label, &rec.op), &rec)?;
        }
        Ok(())
    }
}

/// The randomness function the submission's objects call.
fn random_symbol(inst: &Instance) -> (String, bool) {
    match (&inst.binding, inst.api) {
        (Binding::Nist { randombytes, .. }, _) => (randombytes.clone(), false),
        (_, ApiFamily::Nist) => ("randombytes".into(), false),
        _ => ("get_random_number".into(), true),
    }
}

/// Builds the instance with its KAT's flag profile plus `-g` and links it
/// with the randomness wrapper into `out`; returns the profile used and
/// the wrapped symbol.
fn debug_build(job: &Job, out: &Path) -> Result<(FlagProfile, String)> {
    let cx = job.cx;
    let inst = job.inst;
    let kat = job.prior.get::<KatStage>().context("no KAT result")?;
    let name = &kat.final_attempt().profile;
    let mut fp = cx
        .profile_for(inst, name)
        .with_context(|| format!("flag profile {name} not in the plan"))?;
    fp.name = format!("{name}+g");
    fp.cflags.push("-g".into());
    // Line tables must survive the link.
    fp.ldflags.retain(|f| {
        !matches!(
            f.as_str(),
            "-s" | "-Wl,-s" | "-Wl,--strip-all" | "-Wl,--strip-debug"
        )
    });
    let env = cx.build_env()?;
    let attempt = build_profile(&env, inst, &fp)?;
    anyhow::ensure!(attempt.ok, "{}", crate::toolchain::tail(&attempt.log, 5));
    let (symbol, ngcc) = random_symbol(inst);
    let dir = out.parent().context("scratch dir")?;
    let hooks = dir.join("ct_hooks.o");
    let mut args = vec![
        "-std=c99".to_string(),
        "-O2".into(),
        "-g".into(),
        "-fPIC".into(),
        "-D_GNU_SOURCE".into(),
        format!("-I{}", env.support_dir.display()),
        format!("-DPQB_CT_RANDOM_SYM={symbol}"),
    ];
    if ngcc {
        args.push("-DPQB_CT_RANDOM_NGCC".into());
    }
    env.compiler.compile(
        &env.reads(inst),
        &env.support_dir.join("ct_hooks.c"),
        &hooks,
        &args,
    )?;
    let extra = vec![hooks.display().to_string(), format!("-Wl,--wrap={symbol}")];
    link_library(&env, inst, &fp, &attempt.objects, &extra, out)?;
    Ok((fp, symbol))
}

fn check_op(cx: &Cx, vg: &Valgrind, lib: &Path, r: &mut CtRecord) -> Result<()> {
    const XML: &str = "memcheck.xml";
    let s = &settings(cx)?;
    let tool: Vec<String> = [
        "--tool=memcheck",
        "--xml=yes",
        "--xml-file=memcheck.xml",
        "--error-limit=no",
        "--leak-check=no",
        "--num-callers=24",
        "--read-inline-info=yes",
    ]
    .iter()
    .map(|x| x.to_string())
    .collect();
    let args: Vec<String> = ["--op", &r.op, "--mode", "ct", "--iters"]
        .iter()
        .map(|x| x.to_string())
        .chain([s.calls.to_string()])
        .collect();
    let timeout = Duration::from_secs_f64(s.timeout_seconds);
    let how = valgrind::Invocation {
        tool: &tool,
        driver: &args,
        cpu: None,
        timeout,
    };
    let run = valgrind::run(cx, vg, lib, &how, |n| n == XML)?;
    let xml = run
        .files
        .iter()
        .find(|(n, _)| n == XML)
        .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    let support = cx.support()?.dir.clone();
    r.errors = vgxml::parse(&xml)
        .into_iter()
        .map(|e| CtError {
            kind: e.kind,
            what: e.what,
            count: e.count,
            frames: e
                .frames
                .iter()
                .map(|f| classify(f, &run.library_path, &cx.plan.project_root, &support))
                .collect(),
        })
        .collect();
    r.seconds = Some(run.process.wall_seconds);
    let p = &run.process;
    if let Some(l) = p.line("ct") {
        r.calls = l.u64("calls").unwrap_or(0);
        r.random_draws = l.u64("draws");
        r.secrets = l
            .get("secrets")
            .map(|v| v.split(',').map(String::from).collect())
            .unwrap_or_default();
    }
    match p.failure() {
        Some((status, detail)) => {
            r.status = CtStatus::Error;
            r.detail = Some(match status {
                OpStatus::Timeout => format!("timed out under memcheck: {detail}"),
                _ => detail,
            });
        }
        None if xml.is_empty() => {
            r.status = CtStatus::Error;
            r.detail = Some("memcheck wrote no XML report".into());
        }
        None => {
            r.sites = derive_sites(&r.errors, &[], &r.op);
            r.other_errors = other_errors(&r.errors);
            r.status = if r.sites.is_empty() {
                CtStatus::Clean
            } else {
                CtStatus::Flagged
            };
        }
    }
    r.process = Some(run.process);
    Ok(())
}

/// Where a frame's code comes from, and its file as a record may show it
/// (no machine paths: project-relative, `pqbench:<name>`, or a bare name).
fn classify(f: &vgxml::Frame, lib: &Path, root: &Path, support: &Path) -> CtFrame {
    let in_lib = f.obj.as_deref().is_some_and(|o| {
        let o = Path::new(o);
        o == lib || std::fs::canonicalize(o).is_ok_and(|c| c == lib)
    });
    let full = f.file.as_ref().map(|file| match &f.dir {
        Some(d) => Path::new(d).join(file),
        None => Path::new(file).to_path_buf(),
    });
    let (origin, file) = match &full {
        None => (FrameOrigin::Instance, None),
        Some(p) if p.starts_with(support) => (
            FrameOrigin::Pqbench,
            Some(format!(
                "pqbench:{}",
                p.file_name().unwrap_or_default().to_string_lossy()
            )),
        ),
        Some(p) if p.starts_with(root) => (
            FrameOrigin::Instance,
            Some(p.strip_prefix(root).unwrap_or(p).display().to_string()),
        ),
        Some(p) => (
            FrameOrigin::System,
            Some(
                p.file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned(),
            ),
        ),
    };
    CtFrame {
        function: f.function.clone(),
        file,
        line: f.line,
        origin: if in_lib { origin } else { FrameOrigin::Outside },
    }
}

/// The record with `annotations` and everything derived from its errors.
pub(crate) fn annotated(
    rec: &CtRecord,
    annotations: &[crate::plan::exact::CtAnnotation],
) -> CtRecord {
    let mut rec = rec.clone();
    rec.annotations = annotations.to_vec();
    let (status, sites, other) = rec.recomputed();
    rec.status = status;
    rec.sites = sites;
    rec.other_errors = other;
    rec
}

/// The stage's record folder: one file per operation, recomputed by `check`.
pub(crate) static RECORDS: crate::engine::OperationRecords<crate::records::ct::CtRecord> =
    crate::engine::OperationRecords::new("constant-time checks", recompute_ct);

fn recompute_ct(
    file: &std::path::Path,
    rel: &str,
    _: &crate::records::campaign::CampaignRecord,
) -> Result<Vec<String>> {
    // A record's sites and status are what its raw errors and
    // annotations give.
    let r: crate::records::ct::CtRecord = crate::fsutil::read_json(file)?;
    let dir = crate::records::layout::CT;
    let mut problems: Vec<String> =
        crate::engine::misplaced(rel, dir, &r.algorithm, &r.label, &r.op)
            .into_iter()
            .collect();
    let (status, sites, other) = r.recomputed();
    use crate::records::diff::differ;
    let fields = [
        differ("status", &r.status, &status),
        differ("sites", &r.sites, &sites),
        differ("other_errors", &r.other_errors, &other),
    ];
    problems.extend(fields.into_iter().flatten().map(|d| format!("{rel}: {d}")));
    Ok(problems)
}

#[cfg(test)]
mod settings_tests {
    use super::{CtSettings, CtStage};
    use crate::engine::Stage;
    use serde_json::json;

    #[test]
    fn the_ct_table_is_read_with_its_defaults_and_checked() {
        let s: CtSettings = serde_json::from_value(json!({})).unwrap();
        assert_eq!((s.calls, s.timeout_seconds), (1, 600.0));
        let s: CtSettings = serde_json::from_value(json!({"calls": 3})).unwrap();
        assert_eq!((s.calls, s.timeout_seconds), (3, 600.0));
        for bad in [json!({"calls": 0}), json!({"warmup": 1})] {
            assert!(CtStage.check_settings(&bad).is_err(), "{bad}");
        }
    }
}
