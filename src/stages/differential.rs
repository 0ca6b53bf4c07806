//! Differential stage (opt-in): a KAT file proves an implementation right
//! on its fixed seeds only. For every parameter set with two or more
//! implementations that passed their KAT on this system, the KAT runner
//! writes each implementation's file again from one fresh start drawn for
//! the run (`pqb-kat --start`), in the sandbox like the KAT stage; correct
//! implementations write byte-identical files. A disagreement names the
//! implementations, the start and the first differing record, and fails
//! the parameter set's first instance, which holds the record.

use std::sync::OnceLock;

use anyhow::{Context, Result};

use super::kat::KatStage;
use super::kat_log::kat_channel_error;
use crate::engine::{Job, Manifest, Policy, Stage};
use crate::engine::{PageSection, Publication, Records, Results, Section, Verdict};
use crate::kat::{KatOutput, Status};
use crate::plan::Instance;
use crate::records::campaign::CampaignRecord;
use crate::records::differential::{first_difference, DifferentialRecord, FreshKat};
use crate::records::folder::{Contents, FolderOf, RecordFolder};
use crate::records::layout;
use crate::sandbox::{self, frame, Channel, Limits};
use crate::support::Part;

pub(crate) struct DifferentialStage;

/// Bytes of the start that replaces the KAT file's fixed one.
const START_BYTES: usize = 48;

/// The run's start: drawn once per process from the kernel's random
/// source, so every parameter set of the run is checked from the same one,
/// and never from a stored one.
fn fresh_start() -> Result<&'static str> {
    static START: OnceLock<String> = OnceLock::new();
    if let Some(s) = START.get() {
        return Ok(s);
    }
    let mut b = [0u8; START_BYTES];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut b)
        .context("drawing the differential start from /dev/urandom")?;
    Ok(START.get_or_init(|| hex::encode(b)))
}

/// The parameter set of an instance: its label without the
/// implementation's suffix (the first implementation has none).
fn parameter_set(inst: &Instance) -> &str {
    inst.label
        .strip_suffix(&format!(".{}", inst.implementation))
        .unwrap_or(&inst.label)
}

/// The instances of `inst`'s parameter set whose KAT passed, in plan order,
/// each with its passing library.
fn passing_group<'a>(job: &Job<'a>) -> Vec<(&'a Instance, String)> {
    let ps = parameter_set(job.inst);
    job.cx
        .plan
        .instances
        .iter()
        .filter(|i| i.algorithm == job.inst.algorithm && parameter_set(i) == ps)
        .filter_map(|i| {
            let kat: Option<KatOutput> = if i.key() == job.inst.key() {
                job.prior.get::<KatStage>().cloned()
            } else {
                crate::engine::stored_result::<KatStage>(job.cx, &i.key())
            };
            let kat = kat.filter(|k| k.status() == Status::Pass)?;
            Some((i, kat.final_attempt().library_sha256.clone()?))
        })
        .collect()
}

/// Splits a KAT file into its records (the blank-line separated blocks
/// holding a count) and digests each.
fn record_digests(kat: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(kat)
        .split("\n\n")
        .filter(|b| {
            let b = b.trim_start();
            b.starts_with("count = ") || b.starts_with("Count = ")
        })
        .map(|b| crate::fsutil::sha256_hex(b.as_bytes()))
        .collect()
}

/// Runs the KAT runner from `start` on one instance's library.
fn fresh_kat(job: &Job, inst: &Instance, lib_sha: &str, start: &str) -> Result<FreshKat> {
    let cx = job.cx;
    let lib = cx
        .cache
        .existing_blob(lib_sha)
        .with_context(|| format!("library of {} missing from the cache", inst.key()))?;
    let scratch = cx.cache.scratch()?;
    let local = crate::measure::driver::stage_library(&lib, scratch.path())?;
    let args = [
        "--results-fd",
        &sandbox::RESULTS_FD.to_string(),
        "--out-fd",
        &sandbox::KAT_FD.to_string(),
        "--lib",
        &local,
        "--format",
        inst.api.as_str(),
        "--records",
        &inst.kat_records.to_string(),
        "--start",
        start,
    ];
    let runner = &cx.support()?.kat_runner;
    let args = args.iter().map(|a| a.to_string()).collect();
    let mut spec = cx.submission_spec(runner, args, scratch.path())?;
    spec.channels.push(Channel {
        name: "kat".into(),
        fd: sandbox::KAT_FD,
        cap: sandbox::KAT_CAP,
    });
    spec.timeout = std::time::Duration::from_secs_f64(cx.plan.kat.timeout_seconds);
    spec.limits = Limits::from_plan(&cx.plan.limits);
    let run = sandbox::run(&spec)?;
    let generator = generator_lines(frame::verify(run.channel(&spec, "results")).ok());
    let kat = run.channel(&spec, "kat");
    let reported = generator
        .iter()
        .rev()
        .find(|(k, _)| k == "status")
        .map_or("CRASH", |(_, v)| v.as_str());
    let status = match kat_channel_error(&generator, kat) {
        _ if run.outcome != sandbox::Outcome::Exited(0) => format!("CRASH ({})", run.outcome),
        Some(e) => format!("CRASH ({e})"),
        None => reported.to_string(),
    };
    Ok(FreshKat {
        label: inst.label.clone(),
        implementation: inst.implementation.clone(),
        status,
        bytes: kat.len() as u64,
        sha256: crate::fsutil::sha256_hex(kat),
        record_sha256: record_digests(kat),
    })
}

/// The runner's `key = value` lines.
fn generator_lines(body: Option<&[u8]>) -> Vec<(String, String)> {
    let text = body.map(String::from_utf8_lossy).unwrap_or_default();
    text.lines()
        .filter_map(|l| l.split_once(" = "))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

impl Stage for DifferentialStage {
    type Output = DifferentialRecord;
    const NAME: &'static str = "differential";
    const REQUIRES: &'static [&'static str] = &["kat"];
    const POLICY: Policy = Policy::Parallel;
    const OPT_IN: bool = true;

    /// Only the first passing instance of a parameter set with another
    /// passing one runs; the start is the run's own, so a result is never
    /// reused from an earlier run.
    fn manifest(&self, job: &Job) -> Result<Option<Manifest>> {
        let group = passing_group(job);
        if group.len() < 2 || group[0].0.key() != job.inst.key() {
            return Ok(None);
        }
        let libs: Vec<[&str; 2]> = group
            .iter()
            .map(|(i, sha)| [i.label.as_str(), sha.as_str()])
            .collect();
        let mut m = Manifest::new();
        m.set("libraries", libs)
            .set("records", job.inst.kat_records)
            .set("start", fresh_start()?)
            .set("timeout", job.cx.plan.kat.timeout_seconds)
            .set("limits", &job.cx.plan.limits)
            .set("runner", Part::KatRunner.version())
            .set("pqbench", crate::STAGE_LOGIC_VERSION);
        Ok(Some(m))
    }

    fn run(&self, job: &Job) -> Result<DifferentialRecord> {
        let start = fresh_start()?;
        let files = passing_group(job)
            .iter()
            .map(|(inst, sha)| fresh_kat(job, inst, sha, start))
            .collect::<Result<Vec<_>>>()?;
        let first_difference = first_difference(&files);
        Ok(DifferentialRecord {
            algorithm: job.inst.algorithm.clone(),
            parameter_set: parameter_set(job.inst).to_string(),
            start: start.to_string(),
            records: job.inst.kat_records,
            agree: first_difference.is_none(),
            first_difference,
            files,
        })
    }

    fn records(&self) -> Option<&dyn Records> {
        Some(&DifferentialRecords)
    }

    fn page_section(&self) -> Option<&dyn PageSection> {
        Some(&DifferentialRecords)
    }

    /// A disagreement fails the instance holding the record.
    fn verdict(&self, out: &DifferentialRecord) -> Verdict {
        match &out.first_difference {
            None => Verdict::default(),
            Some(_) => Verdict::failed("differential disagreement", Some(describe(out))),
        }
    }

    fn publish(
        &self,
        p: &mut Publication,
        inst: &Instance,
        out: &DifferentialRecord,
        _: &Results,
    ) -> Result<()> {
        p.write(
            &layout::differential_file(&inst.algorithm, &inst.label),
            out,
        )
    }
}

/// The verdict in one line.
fn describe(r: &DifferentialRecord) -> String {
    match &r.first_difference {
        None => format!(
            "{} implementations agree from start {}",
            r.files.len(),
            r.start
        ),
        Some(d) => format!(
            "{} and {} differ from record {} (count = {}) on start {}",
            d.labels[0], d.labels[1], d.count, d.count, r.start
        ),
    }
}

/// The stage's record folder and its page section.
struct DifferentialRecords;

impl RecordFolder for DifferentialRecords {
    fn dir(&self) -> &'static str {
        layout::DIFFERENTIAL
    }

    fn load(&self, dataset_dir: &std::path::Path) -> Result<Contents> {
        FolderOf::<DifferentialRecord>::new().load(dataset_dir)
    }
}

impl Records for DifferentialRecords {
    fn noun(&self) -> &'static str {
        "differential checks"
    }

    fn files(&self, inst: &Instance) -> Vec<String> {
        vec![layout::differential_file(&inst.algorithm, &inst.label)]
    }

    /// The verdict is what the recorded digests give.
    fn check(
        &self,
        file: &std::path::Path,
        shown: &str,
        _: &CampaignRecord,
    ) -> Result<Vec<String>> {
        let r: DifferentialRecord = crate::fsutil::read_json(file)?;
        let mut problems = Vec::new();
        let owner = r.files.first().map_or("", |f| f.label.as_str());
        if !shown.ends_with(&layout::differential_file(&r.algorithm, owner)) {
            problems.push(format!(
                "{shown}: not the record of {}/{owner}",
                r.algorithm
            ));
        }
        let diff = first_difference(&r.files);
        if diff != r.first_difference || r.agree != diff.is_none() {
            problems.push(format!(
                "{shown}: records {} but its digests give {}",
                if r.agree {
                    "agreement"
                } else {
                    "a disagreement"
                },
                match &diff {
                    None => "agreement".to_string(),
                    Some(d) => format!(
                        "{} and {} differ from record {}",
                        d.labels[0], d.labels[1], d.count
                    ),
                }
            ));
        }
        if r.start.len() != 2 * START_BYTES || hex::decode(&r.start).is_err() {
            problems.push(format!("{shown}: start is not {START_BYTES} bytes of hex"));
        }
        Ok(problems)
    }
}

impl PageSection for DifferentialRecords {
    fn section(
        &self,
        ds: &crate::records::dataset::Dataset,
        algorithm: &str,
        labels: &[String],
    ) -> Result<Option<Section>> {
        let mut rows = Vec::new();
        for label in labels {
            let Some(r) = ds.folder::<DifferentialRecord>().get(algorithm, label, "") else {
                continue;
            };
            let names: Vec<&str> = r.files.iter().map(|f| f.label.as_str()).collect();
            let verdict = match &r.first_difference {
                None => "agree".to_string(),
                Some(d) => format!("⚠ {} differs from record {}", d.labels[1], d.count),
            };
            rows.push(vec![
                r.parameter_set.clone(),
                names.join(", "),
                r.records.to_string(),
                verdict,
                r.start.clone(),
            ]);
        }
        Ok((!rows.is_empty()).then(|| Section {
            title: "Differential check".into(),
            note: "The KAT file of every implementation of a parameter set, generated again from one fresh start drawn for the run instead of the file's fixed one, and compared: correct implementations agree byte for byte. Implementations wrong in the same way agree too, and a parameter set with one implementation is not checked.".into(),
            columns: ["parameter set", "implementations", "records", "verdict", "start"]
                .map(String::from)
                .to_vec(),
            rows,
        }))
    }
}
