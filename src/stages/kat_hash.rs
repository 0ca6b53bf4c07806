//! The KAT of a hash instance: one generator run per KAT file (`KAT_2_12`,
//! `KAT_2_23`, and opt-in `KAT_2_33`, `KAT_Loop`), each compared with its
//! own manifest line `<sha256> <mode> <label>/<file>_<label>.txt`; a
//! mismatch names the first differing `Msg_Len` when the reference file is
//! present. An ICCS baseline instance runs its self-check (`KAT_ICCS`)
//! instead, which needs no reference.
//!
//! The generator runs as the other kinds' do (own process, results and KAT
//! file on channels of their own, framed and accounted for); this module
//! only repeats it per file.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};

use super::kat_log::{kat_channel_error, LogWriter};
use crate::context::Cx;
use crate::engine::Manifest;
use crate::fsutil;
use crate::kat::compare::first_difference;
use crate::kat::manifest::{self as katman, Entry};
use crate::kat::provenance::{self, Provenance};
use crate::kat::{KatAttempt, KatFile, Status};
use crate::plan::{Algorithm, Instance};
use crate::sandbox::{self, frame, Channel, Limits, Outcome};

/// The files an instance generates: the campaign's hash files, or the
/// baseline's self-check.
pub(crate) fn files(cx: &Cx, inst: &Instance) -> Vec<&'static str> {
    if inst.spec.iccs_helper.is_some() {
        vec!["KAT_ICCS"]
    } else {
        cx.plan.kat.hash_files()
    }
}

/// The reference file name of `file` for `label`: `KAT_2_12_<label>.txt`.
pub(crate) fn reference_file(file: &str, label: &str) -> String {
    format!("{file}_{label}.txt")
}

/// The manifest's lines for `label`, and where they came from (None when
/// it has none).
fn entries(manifest: &Path, label: &str) -> Result<(Vec<Entry>, Option<Provenance>)> {
    if !manifest.is_file() {
        return Ok((Vec::new(), None));
    }
    let text = std::fs::read_to_string(manifest)?;
    let lines: Vec<Entry> = katman::parse(manifest, &text)?
        .into_iter()
        .filter(|e| e.label == label)
        .collect();
    let provenance = (!lines.is_empty())
        .then(|| provenance::of_labels(&text).get(label).copied())
        .flatten();
    Ok((lines, provenance))
}

/// The KAT stage's inputs beyond the other kinds': the files generated,
/// their manifest lines and reference files.
pub(crate) fn manifest(cx: &Cx, inst: &Instance, alg: &Algorithm, m: &mut Manifest) -> Result<()> {
    let (all, provenance) = entries(&alg.kat_manifest, &inst.label)?;
    // A provenance comment edited alone changes what the pages say.
    m.set("hash-provenance", provenance.map(Provenance::as_str));
    for f in files(cx, inst) {
        let name = reference_file(f, &inst.label);
        let e = all.iter().find(|e| e.file == name);
        m.set(format!("hash:{f}"), e.map(|e| e.line.clone()));
        if let (Some(e), Some(dir)) = (e, &alg.kat_reference_dir) {
            let p = dir.join(&e.label).join(&e.file);
            m.set(format!("hash-reference:{f}"), fsutil::sha256_file(&p).ok());
        }
    }
    Ok(())
}

/// What one generator run gave.
struct Generated {
    status: Status,
    detail: Option<String>,
    lines: Vec<(String, String)>,
    kat: Vec<u8>,
}

fn generate(cx: &Cx, inst: &Instance, lib: &Path, file: &str) -> Result<Generated> {
    let scratch = cx.cache.scratch()?;
    let local = crate::measure::driver::stage_library(lib, scratch.path())?;
    let mut args = vec![
        "--results-fd".to_string(),
        sandbox::RESULTS_FD.to_string(),
        "--out-fd".into(),
        sandbox::KAT_FD.to_string(),
        "--lib".into(),
        local,
        "--format".into(),
        "hash".into(),
        "--file".into(),
        file.into(),
        "--records".into(),
        "1".into(),
    ];
    if let Some(h) = &inst.spec.iccs_helper {
        args.extend(["--helper".to_string(), h.clone()]);
    }
    // Under the system's emulator when it has one, as the other kinds' KATs.
    let mut spec = cx.submission_spec(&cx.support()?.kat_runner, args, scratch.path())?;
    spec.channels.push(Channel {
        name: "kat".into(),
        fd: sandbox::KAT_FD,
        cap: sandbox::KAT_CAP,
    });
    spec.timeout = Duration::from_secs_f64(cx.plan.kat.timeout_seconds);
    spec.limits = Limits::from_plan(&cx.plan.limits);
    let run = sandbox::run(&spec)?;
    let results = frame::verify(run.channel(&spec, "results"));
    let mut lines = Vec::new();
    if let Ok(body) = &results {
        for line in String::from_utf8_lossy(body).lines() {
            if let Some((k, v)) = line.split_once(" = ") {
                lines.push((k.trim().to_string(), v.trim().to_string()));
            }
        }
    }
    let last = |key: &str| {
        lines
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    };
    let reported = last("status").and_then(|s| Status::parse(&s));
    let (status, detail) = match (run.outcome, reported) {
        _ if run.overflow.is_some() => (
            Status::Crash,
            Some("the generator's output went beyond its cap".to_string()),
        ),
        (Outcome::TimedOut, _) => (
            Status::Timeout,
            Some(format!(
                "no result within {} s",
                cx.plan.kat.timeout_seconds
            )),
        ),
        (Outcome::Signaled(s), _) => (
            Status::Crash,
            Some(format!("generator {}", Outcome::Signaled(s))),
        ),
        (Outcome::Exited(0), Some(st)) => (st, last("detail")),
        (outcome, _) => (
            Status::Crash,
            Some(match results {
                Err(e) => format!("generator results rejected: {e}"),
                Ok(_) => format!("generator ended with {outcome} without a verdict"),
            }),
        ),
    };
    let kat = run.channel(&spec, "kat").to_vec();
    let (status, detail) = match (status, kat_channel_error(&lines, &kat)) {
        (Status::Pass, Some(e)) => (Status::Crash, Some(e)),
        (status, _) => (status, detail),
    };
    Ok(Generated {
        status,
        detail,
        lines,
        kat,
    })
}

/// Generates and checks every file; the attempt's status is the first
/// file's that did not pass.
pub(super) fn check_files(
    cx: &Cx,
    inst: &Instance,
    alg: &Algorithm,
    attempt: &mut KatAttempt,
    log: &mut LogWriter,
) -> Result<()> {
    let lib_sha = attempt.library_sha256.clone().context("no library")?;
    let lib = cx
        .cache
        .existing_blob(&lib_sha)
        .context("library missing from the cache")?;
    log.kv("format", "hash");
    let (all, provenance) = entries(&alg.kat_manifest, &inst.label)?;
    // Where the references come from, for build.json and the pages: the
    // baseline's self-check, else the provenance of the label's lines.
    attempt.reference = if inst.spec.iccs_helper.is_some() {
        Some(provenance::BUILT_IN.to_string())
    } else {
        provenance.map(|p| p.as_str().to_string())
    };
    attempt.status = Status::Pass;
    for file in files(cx, inst) {
        log.kv("file", file);
        let g = generate(cx, inst, &lib, file)?;
        for (k, v) in &g.lines {
            if k != "status" && k != "detail" && k != "file" {
                log.kv(k, v);
            }
        }
        attempt.generator.extend(g.lines.iter().cloned());
        let mut out = KatFile {
            file: file.to_string(),
            status: g.status,
            detail: g.detail.clone(),
            output_sha256: None,
        };
        if g.status == Status::Pass {
            out.output_sha256 = Some(cx.cache.put_blob(&g.kat)?);
            log.kv(
                "records_generated",
                &katman::count_records(&g.kat).to_string(),
            );
            if inst.spec.iccs_helper.is_none() {
                let refs = References {
                    cx,
                    alg,
                    inst,
                    all: &all,
                };
                refs.compare(file, &g.kat, &mut out, log);
            }
        }
        log.kv("file_status", &format!("{file} {}", out.status));
        if attempt.status == Status::Pass && out.status != Status::Pass {
            attempt.status = out.status;
            attempt.detail = Some(format!(
                "{file}: {}",
                out.detail.clone().unwrap_or_else(|| out.status.to_string())
            ));
        }
        attempt.files.push(out);
        // A library that crashed or hung is not run again.
        if matches!(
            attempt.status,
            Status::Crash | Status::Timeout | Status::Loadfail
        ) {
            break;
        }
    }
    Ok(())
}

/// What a generated file is compared with: the instance's manifest lines
/// and reference files.
struct References<'a> {
    cx: &'a Cx<'a>,
    alg: &'a Algorithm,
    inst: &'a Instance,
    all: &'a [Entry],
}

impl References<'_> {
    fn compare(&self, file: &str, generated: &[u8], out: &mut KatFile, log: &mut LogWriter) {
        let (cx, alg, inst, all) = (self.cx, self.alg, self.inst, self.all);
        let name = reference_file(file, &inst.label);
        let Some(entry) = all.iter().find(|e| e.file == name) else {
            out.status = Status::Nokat;
            out.detail = Some(format!(
            "no line for {}/{name} in {}; check the generated file, then record it with `pqbench bless`",
            inst.label,
            cx.plan.display_path(&alg.kat_manifest)
        ));
            log.kv("manifest", "(none)");
            return;
        };
        log.kv("manifest", &entry.line);
        let digest = katman::digest(generated, entry.mode, entry.records);
        log.kv("digest", &format!("{} {}", digest, entry.mode.as_str()));
        let enough = entry
            .records
            .is_none_or(|n| katman::count_records(generated) >= n);
        if digest == entry.sha256 && enough {
            return;
        }
        out.status = Status::Mismatch;
        let reference = alg
            .kat_reference_dir
            .as_ref()
            .map(|d| d.join(&entry.label).join(&entry.file))
            .and_then(|p| std::fs::read(p).ok());
        if let Some(reference) = reference {
            log.kv("reference_file", &entry.file);
            if let Some(d) = first_difference(generated, &reference, entry.mode, entry.records) {
                // A hash record is keyed by its message length.
                let text = match &d.record {
                    Some(len) => d.to_string().replacen(
                        &format!("record {len}"),
                        &format!("Msg_Len = {len}"),
                        1,
                    ),
                    None => d.to_string(),
                };
                log.kv("first_difference", &text);
                out.detail = Some(text);
            }
        }
        if out.detail.is_none() {
            out.detail = Some(format!(
                "digest {} differs from the manifest",
                &digest[..16]
            ));
        }
    }
}
