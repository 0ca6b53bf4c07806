//! KAT stage: run the embedded KAT generator on each built library in an
//! isolated process, compare the output with the reference manifest (and
//! the reference file, line by line, when present) and decide the status.
//! When the first flag profile's library fails, the next profile is built
//! and checked, and both outcomes are recorded.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};

use super::build::{build_manifest, BuildStage};
use super::kat_log::{kat_channel_error, LogWriter};
use crate::context::Cx;
use crate::engine::{Job, Manifest, Policy, Stage};
use crate::engine::{Publication, Results};
use crate::fsutil;
use crate::kat::compare::first_difference;
use crate::kat::manifest::{self as katman, Entry};
use crate::kat::provenance::{self, Provenance};
use crate::kat::{KatAttempt, KatOutput, Status};
use crate::plan::{ApiFamily, Instance};
use crate::records::layout;
use crate::records::AttemptRecord;
use crate::sandbox::frame;
use crate::sandbox::{self, Channel, Limits, Outcome};
use crate::support::Part;
use crate::toolchain::diag;
use crate::toolchain::library::{build_profile, BuildAttempt};

pub(crate) struct KatStage;

impl Stage for KatStage {
    type Output = KatOutput;
    const NAME: &'static str = "kat";
    const REQUIRES: &'static [&'static str] = &["build"];
    const POLICY: Policy = Policy::Parallel;

    fn manifest(&self, job: &Job) -> Result<Option<Manifest>> {
        let (cx, inst) = (job.cx, job.inst);
        let Some(build) = job.prior.get::<BuildStage>() else {
            return Ok(None);
        };
        let alg = cx
            .plan
            .algorithm(&inst.algorithm)
            .context("algorithm of instance")?;
        let mut m = Manifest::new();
        // The build manifest's key pins every library any profile can produce.
        m.set("build", build_manifest(cx, inst)?.key())
            .set("built", build)
            // The log names the instance: a renamed copy gets its own.
            .set(
                "instance",
                [&inst.algorithm, &inst.label, &inst.implementation],
            )
            .set("records", inst.kat_records)
            .set("timeout", cx.plan.kat.timeout_seconds)
            .set("limits", &cx.plan.limits)
            .set("runner", Part::KatRunner.version())
            .set("trip", Part::Driver.version())
            .set("pqbench", crate::STAGE_LOGIC_VERSION);
        let (refs, provenance) = reference_of(cx, &alg.kat_manifest, &inst.label)?;
        m.set("reference:manifest", refs.as_ref().map(|e| e.line.clone()));
        if refs.is_some() {
            m.set("reference:provenance", provenance.map(|p| p.as_str()));
        }
        if let (Some(e), Some(dir)) = (&refs, &alg.kat_reference_dir) {
            let f = dir.join(&e.label).join(&e.file);
            m.set("reference:file", cx.cache.view().sha256_file(&f).ok());
        }
        if inst.kind.def().kat_per_file() {
            super::kat_hash::manifest(cx, inst, alg, &mut m)?;
        }
        Ok(Some(m))
    }

    fn run(&self, job: &Job) -> Result<KatOutput> {
        let (cx, inst) = (job.cx, job.inst);
        let build = job.prior.get::<BuildStage>().context("no build result")?;
        let mut attempts = Vec::new();
        for (i, profile) in cx.profiles_for(inst).iter().enumerate() {
            let built = match build.attempts.iter().find(|a| a.profile == profile.name) {
                Some(a) => a.clone(),
                None if i == 0 => continue,
                None => build_profile(&cx.build_env()?, inst, profile)?,
            };
            let attempt = check(cx, inst, &built)?;
            // Another profile cannot unskip an instance.
            let done = matches!(attempt.status, Status::Pass | Status::Skipped);
            attempts.push(attempt);
            if done {
                break;
            }
        }
        // Later stages use the passing library, else the first one built.
        let chosen = attempts
            .iter()
            .position(|a| a.status == Status::Pass)
            .or_else(|| attempts.iter().position(|a| a.library_sha256.is_some()))
            .unwrap_or(0);
        Ok(KatOutput { attempts, chosen })
    }

    const SUPERSEDES: &'static [&'static str] = &["build"];
    const MISSING: Option<&'static str> = Some("no KAT result");

    fn verdict(&self, out: &KatOutput) -> crate::engine::Verdict {
        let status = out.status();
        let mut v = if matches!(status, Status::Pass | Status::Skipped) {
            crate::engine::Verdict::default()
        } else {
            crate::engine::Verdict::failed(
                format!("KAT {status}"),
                out.final_attempt().detail.clone(),
            )
        };
        v.status = Some(status.to_string());
        v.skipped = status == Status::Skipped;
        v
    }

    /// The verdict of the attempt used, and the profile and library it
    /// checked (which later stages measured).
    fn lock(
        &self,
        _: &Cx,
        _: &Instance,
        out: Option<&KatOutput>,
        entry: &mut crate::records::lock::InstanceLock,
    ) -> Result<()> {
        let Some(kat) = out.map(KatOutput::final_attempt) else {
            return Ok(());
        };
        entry.profile = Some(kat.profile.clone());
        if kat.library_sha256.is_some() {
            entry.library_sha256.clone_from(&kat.library_sha256);
        }
        entry.kat_status = Some(kat.status.to_string());
        entry.kat_log_sha256 = Some(kat.log_sha256.clone());
        entry.kat_output_sha256.clone_from(&kat.output_sha256);
        Ok(())
    }

    /// The libraries and logs (the generated KAT files can be large; a
    /// missing one is only left out of the evidence).
    fn artifacts(&self, out: &KatOutput) -> Vec<String> {
        out.attempts
            .iter()
            .flat_map(|a| [Some(&a.log_sha256), a.library_sha256.as_ref()])
            .flatten()
            .cloned()
            .collect()
    }

    /// The verdict of every attempt and of the one used, and the KAT log
    /// and files of the one used (copied from the cache, so a reused
    /// result still gets its files).
    fn publish(
        &self,
        p: &mut Publication,
        inst: &Instance,
        out: &KatOutput,
        _: &Results,
    ) -> Result<()> {
        let rec = p.build()?;
        for a in &out.attempts {
            match rec.attempts.iter_mut().find(|x| x.profile == a.profile) {
                Some(x) => {
                    x.kat_status = Some(a.status);
                    x.detail = a.detail.clone().or(x.detail.take());
                }
                None => rec.attempts.push(AttemptRecord {
                    profile: a.profile.clone(),
                    built: a.library_sha256.is_some(),
                    kat_status: Some(a.status),
                    detail: a.detail.clone(),
                }),
            }
        }
        let f = out.final_attempt();
        rec.profile = Some(f.profile.clone());
        rec.kat_status = f.status;
        rec.kat_detail = f.detail.clone();
        rec.kat_reference = f.reference.clone();
        rec.kat_reference_records = f.reference.as_ref().and(f.reference_records);
        rec.library_sha256 = f.library_sha256.clone();
        rec.load_bytes = f.load_bytes;
        rec.kat_log = Some(layout::kat_log(&inst.algorithm, &inst.label));
        rec.kat_log_sha256 = Some(f.log_sha256.clone());
        write_kat_evidence(p, inst, f)
    }
}

/// Where `label`'s reference line came from (`kat::provenance`).
/// The manifest's line for `label` and its provenance, the manifest read
/// once per command (every instance of an algorithm shares it).
fn reference_of(
    cx: &Cx,
    manifest: &Path,
    label: &str,
) -> Result<(Option<Entry>, Option<Provenance>)> {
    type Read = Arc<(Vec<Entry>, BTreeMap<String, Provenance>)>;
    let read: Read = cx.memo(format!("kat-manifest:{}", manifest.display()), || {
        if !manifest.is_file() {
            return Ok(Arc::new((Vec::new(), BTreeMap::new())));
        }
        let text = std::fs::read_to_string(manifest)?;
        let entries = katman::parse(manifest, &text)?;
        Ok(Arc::new((entries, provenance::of_labels(&text))))
    })?;
    let entry = read.0.iter().find(|e| e.label == label).cloned();
    Ok((entry, read.1.get(label).copied()))
}

fn reference_provenance(manifest: &Path, label: &str) -> Option<Provenance> {
    let text = std::fs::read_to_string(manifest).ok()?;
    provenance::of_labels(&text).get(label).copied()
}

pub(super) fn reference_entry(manifest: &Path, label: &str) -> Result<Option<Entry>> {
    if !manifest.is_file() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(manifest)?;
    let entries = katman::parse(manifest, &text)?;
    Ok(entries.into_iter().find(|e| e.label == label))
}

/// Runs the generator on one library and decides its status.
fn check(cx: &Cx, inst: &Instance, built: &BuildAttempt) -> Result<KatAttempt> {
    let alg = cx
        .plan
        .algorithm(&inst.algorithm)
        .context("algorithm of instance")?;
    let mut log = LogWriter::default();
    log.kv("algorithm", &inst.algorithm);
    log.kv("label", &inst.label);
    log.kv("implementation", &inst.implementation);
    log.kv("profile", &built.profile);
    let mut attempt = KatAttempt {
        profile: built.profile.clone(),
        status: Status::Buildfail,
        detail: None,
        library_sha256: built.library_sha256.clone(),
        load_bytes: built.load_bytes,
        log_sha256: String::new(),
        output_sha256: None,
        generator: Vec::new(),
        reference: None,
        reference_records: None,
        files: Vec::new(),
        crossed: None,
    };
    if let Some(why) = &built.skipped {
        attempt.status = Status::Skipped;
        attempt.detail = Some(why.clone());
        log.kv("build", "skipped");
        return finish(cx, inst, attempt, log);
    }
    let Some(lib_sha) = &built.library_sha256 else {
        attempt.detail = Some(diag::detail(&built.log));
        log.kv("build", "failed");
        log.raw(&built.log);
        return finish(cx, inst, attempt, log);
    };
    log.kv("library_sha256", lib_sha);
    if inst.kind.def().kat_per_file() {
        // One generator run per KAT file: see kat_hash.
        super::kat_hash::check_files(cx, inst, alg, &mut attempt, &mut log)?;
        return finish(cx, inst, attempt, log);
    }
    let lib = cx
        .cache
        .existing_blob(lib_sha)
        .context("library missing from the cache")?;
    let scratch = cx.cache.scratch()?;
    let local = crate::measure::driver::stage_library(&lib, scratch.path())?;
    let spec = generator_spec(cx, inst, local, scratch.path(), &mut log)?;
    let run = sandbox::run(&spec)?;
    let results = frame::verify(run.channel(&spec, "results"));
    read_generator_lines(&results, &mut attempt, &mut log);
    attempt.status = verdict(cx, &run, &results, &mut attempt);
    if attempt.status == Status::Pass {
        let generated = run.channel(&spec, "kat");
        match kat_channel_error(&attempt.generator, generated) {
            Some(e) => {
                attempt.status = Status::Crash;
                attempt.detail = Some(e);
            }
            None => {
                attempt.output_sha256 = Some(cx.cache.put_blob(generated)?);
                compare_with_references(cx.plan, alg, inst, generated, &mut attempt, &mut log)?;
                if attempt.status == Status::Mismatch {
                    repeat(&spec, generated, &mut attempt, &mut log)?;
                }
                cross(cx, inst, &lib, generated, &mut attempt, &mut log)?;
            }
        }
    }
    finish(cx, inst, attempt, log)
}

/// A mismatch is generated once more with the same seeds: when the two
/// runs differ, the library's output does not follow the seeds at all
/// (`NONDETERMINISTIC`, with where they part), which no reference or fix
/// of the draft's defines can match.
fn repeat(
    spec: &sandbox::Spec,
    first: &[u8],
    attempt: &mut KatAttempt,
    log: &mut LogWriter,
) -> Result<()> {
    let again = sandbox::run(spec)?;
    let second = again.channel(spec, "kat");
    if second.is_empty() || second == first {
        log.kv("second_run", "identical");
        return Ok(());
    }
    let at = first_difference(first, second, katman::Mode::Strict, None)
        .map(|d| {
            d.to_string()
                .replace("generated `", "first run `")
                .replace("reference `", "second run `")
        })
        .unwrap_or_else(|| "in length".into());
    log.kv("second_run", &format!("differs: {at}"));
    attempt.status = Status::Nondeterministic;
    attempt.detail = Some(format!(
        "two runs with the same seeds differ ({at}): the library draws randomness other than the KAT's randombytes (getrandom(), rand(), the time, or a define its own KAT build sets that the TOML lacks)"
    ));
    Ok(())
}

/// The round trip across processes of a KAT that reproduced (or had
/// nothing to compare with); its failure is the instance's (`CROSSFAIL`).
fn cross(
    cx: &Cx,
    inst: &Instance,
    lib: &Path,
    generated: &[u8],
    attempt: &mut KatAttempt,
    log: &mut LogWriter,
) -> Result<()> {
    if !matches!(attempt.status, Status::Pass | Status::Nokat) {
        return Ok(());
    }
    let Some(crossing) = super::kat_trip::check(cx, inst, lib, generated)? else {
        return Ok(());
    };
    let lengths: Vec<String> = crossing
        .lengths
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    log.kv("cross_process_lengths", &lengths.join(", "));
    match &crossing.failure {
        None => log.kv("cross_process", "ok"),
        Some(why) => {
            log.kv("cross_process", why);
            attempt.status = Status::Crossfail;
            attempt.detail = Some(why.clone());
        }
    }
    attempt.crossed = Some(crossing);
    Ok(())
}

/// The sandboxed run of the KAT runner on the staged library `local`.
fn generator_spec(
    cx: &Cx,
    inst: &Instance,
    local: String,
    scratch: &Path,
    log: &mut LogWriter,
) -> Result<sandbox::Spec> {
    let format = inst.api.as_str();
    // Verdict lines and the KAT file travel on channels of their own, never
    // on stdout (which the library shares) or through a file in the job
    // directory (which a process the library forked could replace).
    let mut spec = cx.submission_spec(
        &cx.support()?.kat_runner,
        vec![
            "--results-fd".into(),
            sandbox::RESULTS_FD.to_string(),
            "--out-fd".into(),
            sandbox::KAT_FD.to_string(),
            "--lib".into(),
            local,
            "--format".into(),
            format.into(),
            "--records".into(),
            inst.kat_records.to_string(),
        ],
        scratch,
    )?;
    spec.channels.push(Channel {
        name: "kat".into(),
        fd: sandbox::KAT_FD,
        cap: sandbox::KAT_CAP,
    });
    spec.timeout = Duration::from_secs_f64(cx.plan.kat.timeout_seconds);
    spec.limits = Limits::from_plan(&cx.plan.limits);
    log.kv("format", format);
    log.kv("records_requested", &inst.kat_records.to_string());
    Ok(spec)
}

/// Keeps the runner's `key = value` lines in `attempt.generator` and logs
/// all but its status, its detail and its CPU costs (`cost_*`, which
/// differ from run to run; the time stage's estimate reads them).
fn read_generator_lines(
    results: &Result<&[u8], frame::FrameError>,
    attempt: &mut KatAttempt,
    log: &mut LogWriter,
) {
    if let Ok(body) = results {
        for line in String::from_utf8_lossy(body).lines() {
            if let Some((k, v)) = line.split_once(" = ") {
                attempt
                    .generator
                    .push((k.trim().to_string(), v.trim().to_string()));
            }
        }
    }
    for (k, v) in &attempt.generator {
        if k != "status" && k != "detail" && !k.starts_with("cost_") {
            log.kv(k, v);
        }
    }
}

/// The status of a generator run, from how it ended and what it reported
/// (setting the attempt's detail to say why when it did not pass).
fn verdict(
    cx: &Cx,
    run: &sandbox::Output,
    results: &Result<&[u8], frame::FrameError>,
    attempt: &mut KatAttempt,
) -> Status {
    // The runner's verdict is its last status line.
    let reported = attempt
        .generator
        .iter()
        .rev()
        .find(|(k, _)| k == "status")
        .and_then(|(_, v)| Status::parse(v));
    let detail = attempt
        .generator
        .iter()
        .rev()
        .find(|(k, _)| k == "detail")
        .map(|(_, v)| v.clone());
    let status = match (run.outcome, reported) {
        _ if run.overflow.is_some() => {
            attempt.detail = Some(format!(
                "the generator's {} channel went beyond its cap",
                run.overflow.as_deref().unwrap_or("?")
            ));
            Status::Crash
        }
        (Outcome::TimedOut, _) => Status::Timeout,
        (Outcome::Signaled(s), _) => {
            attempt.detail = Some(format!("generator {}", Outcome::Signaled(s)));
            Status::Crash
        }
        (Outcome::Exited(0), Some(Status::Pass)) => Status::Pass,
        (Outcome::Exited(0), Some(st)) => {
            attempt.detail = detail;
            st
        }
        (Outcome::Exited(0), None) if results.is_err() => {
            let e = results
                .as_ref()
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            attempt.detail = Some(format!("generator results rejected: {e}"));
            Status::Crash
        }
        (outcome, _) => {
            let err = crate::toolchain::tail(&String::from_utf8_lossy(&run.stderr), 3);
            attempt.detail = Some(
                format!("generator ended with {outcome} without a verdict {err}")
                    .trim()
                    .to_string(),
            );
            Status::Crash
        }
    };
    if status == Status::Timeout {
        attempt.detail = Some(format!(
            "no result within {} s",
            cx.plan.kat.timeout_seconds
        ));
    }
    status
}

fn compare_with_references(
    plan: &crate::plan::Plan,
    alg: &crate::plan::Algorithm,
    inst: &Instance,
    generated: &[u8],
    attempt: &mut KatAttempt,
    log: &mut LogWriter,
) -> Result<()> {
    log.kv(
        "records_generated",
        &katman::count_records(generated).to_string(),
    );
    let Some(entry) = reference_entry(&alg.kat_manifest, &inst.label)? else {
        attempt.status = Status::Nokat;
        // Published in records and pages: a project path, never a machine's.
        attempt.detail = Some(format!(
            "no line for {} in {}; check the generated file, then record it with `pqbench bless`",
            inst.label,
            plan.display_path(&alg.kat_manifest)
        ));
        log.kv("manifest", "(none)");
        return Ok(());
    };
    log.kv("manifest", &entry.line);
    let provenance = reference_provenance(&alg.kat_manifest, &inst.label);
    attempt.reference = provenance.map(|p| p.as_str().to_string());
    if let Some(p) = provenance {
        log.kv("reference", p.as_str());
    }
    let wanted = entry.records.unwrap_or(inst.kat_records as usize);
    attempt.reference_records = u32::try_from(wanted).ok();
    let digest = katman::digest(generated, entry.mode, entry.records);
    log.kv("digest", &format!("{} {}", digest, entry.mode_text()));
    let enough = katman::count_records(generated) >= wanted.min(inst.kat_records as usize);
    attempt.status = if digest == entry.sha256 && enough {
        Status::Pass
    } else {
        Status::Mismatch
    };
    if let Some(dir) = &alg.kat_reference_dir {
        let file = dir.join(&entry.label).join(&entry.file);
        if let Ok(reference) = std::fs::read(&file) {
            let diff = first_difference(generated, &reference, entry.mode, entry.records);
            log.kv("reference_file", &entry.file);
            match diff {
                Some(d) => {
                    log.kv("first_difference", &d.to_string());
                    attempt.detail = Some(d.to_string());
                }
                None => log.kv("first_difference", "none"),
            }
        }
    }
    if attempt.status == Status::Mismatch {
        // Both digests in full, with the mode they were taken in: a prefix
        // of each could be equal.
        let digests = if digest == entry.sha256 {
            format!(
                "digest {digest} ({}) matches, but only {} of {wanted} records were generated",
                entry.mode_text(),
                katman::count_records(generated)
            )
        } else {
            format!(
                "generated digest {digest} differs from the manifest's {} ({} {}/{})",
                entry.sha256,
                entry.mode_text(),
                entry.label,
                entry.file
            )
        };
        attempt.detail = Some(match attempt.detail.take() {
            Some(first) => format!("{first}; {digests}"),
            None => digests,
        });
    }
    Ok(())
}

pub(super) fn finish(
    cx: &Cx,
    inst: &Instance,
    mut attempt: KatAttempt,
    mut log: LogWriter,
) -> Result<KatAttempt> {
    if let Some(d) = &attempt.detail {
        log.kv("detail", d);
    }
    log.line(&format!(
        "RESULT {} {} {}",
        inst.algorithm, inst.label, attempt.status
    ));
    attempt.log_sha256 = cx.cache.put_blob(log.text.as_bytes())?;
    Ok(attempt)
}

/// Copies the chosen attempt's log and KAT files into the run's evidence.
fn write_kat_evidence(p: &Publication, inst: &Instance, a: &KatAttempt) -> Result<()> {
    let dir = p.path(&layout::kat_folder(&inst.algorithm));
    let cache = &p.cx.cache;
    let log = cache
        .existing_blob(&a.log_sha256)
        .context("KAT log missing from the cache")?;
    fsutil::copy_atomic(&log, &dir.join(format!("{}.log", inst.label)))?;
    if let Some(sha) = &a.output_sha256 {
        let ext = match inst.api {
            ApiFamily::Nist => "rsp",
            ApiFamily::Ngcc => "kat",
        };
        if let Some(path) = cache.existing_blob(sha) {
            fsutil::copy_atomic(&path, &dir.join(format!("{}.{ext}", inst.label)))?;
        }
    }
    // A hash instance's KAT files, one each: `<label>__<file>.kat`.
    for f in &a.files {
        if let Some(path) = f
            .output_sha256
            .as_ref()
            .and_then(|s| cache.existing_blob(s))
        {
            fsutil::copy_atomic(&path, &dir.join(format!("{}__{}.kat", inst.label, f.file)))?;
        }
    }
    Ok(())
}
