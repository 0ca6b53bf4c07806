//! Synthetic datasets built from the real record types: the renderer's
//! benchmark (`pqbench bench-render`) and tests that need a dataset with
//! chosen figures use them. Statistics are derived with `stats::summarize`
//! and profile shares with the profile stage's own code, so a synthetic
//! dataset passes `pqbench check` like a measured one.

use std::path::Path;

use anyhow::Result;

use crate::host::{Environment, HostCheck};
use crate::measure::driver::ProcessRecord;
use crate::measure::profile::{OpProfile, Shape};
use crate::plan::{ApiFamily, Kind, Limits, TimingSettings, Wrap};
use crate::records::analysis::{ProfileRecord, SizesJson, SizesRow, SurveyJson};
use crate::records::campaign::{AlgorithmInfo, CampaignRecord};
use crate::records::operation::{MemoryFigures, OperationRecord};
use crate::records::{BuildJson, BuildRecord};
use crate::sandbox::Outcome;
use crate::stats::Trial;
use crate::toolchain::Compiler;

/// A dataset in memory; `write` lays it out as a run directory.
#[derive(Debug, Clone)]
pub struct Synth {
    pub campaign: CampaignRecord,
    pub build: BuildJson,
    pub sizes: Option<SizesJson>,
    pub survey: Option<SurveyJson>,
    pub records: Vec<OperationRecord>,
    pub profiles: Vec<ProfileRecord>,
    /// (path relative to the run directory, content).
    pub files: Vec<(String, String)>,
}

pub fn environment(cpu_model: &str, max_mhz: f64, memory_mib: u64, utc: &str) -> Environment {
    Environment {
        cpu_model: cpu_model.into(),
        cpus_online: 20,
        max_mhz: Some(max_mhz),
        memory_mib,
        os: "Debian GNU/Linux 13 (trixie)".into(),
        kernel: "6.12.107+deb13-amd64".into(),
        virtualization: None,
        load_averages: [0.0, 0.0, 0.0],
        utc: utc.into(),
    }
}

/// A fixed host on `cpu`: performance governor, no turbo, no SMT sibling.
pub(crate) fn fixed_host(cpu: usize, khz: u64) -> HostCheck {
    HostCheck {
        cpu,
        governor: Some("performance".into()),
        turbo: Some(false),
        smt_siblings_online: Vec::new(),
        min_khz: Some(khz),
        max_khz: Some(khz),
        perf_event_paranoid: Some(2),
        cpu_allowed: true,
        problems: Vec::new(),
    }
}

pub fn algorithm(id: &str, name: &str, kind: Kind, labels: &[&str]) -> AlgorithmInfo {
    AlgorithmInfo {
        id: id.into(),
        name: name.into(),
        kind,
        api: ApiFamily::Ngcc,
        description: String::new(),
        links: Default::default(),
        toml: format!("algorithms/{id}.toml"),
        kat_manifest: format!("kat/{id}/kat.sha256"),
        known_issues: Vec::new(),
        survey_note: None,
        implementations: vec!["reference".into()],
        labels: labels.iter().map(|l| l.to_string()).collect(),
        profile_wraps: Vec::new(),
        profile_classes: None,
    }
}

fn process(op: &str, mode: &str, cpu: usize) -> ProcessRecord {
    ProcessRecord {
        command: ["--lib", "<library>", "--op", op, "--mode", mode]
            .map(String::from)
            .to_vec(),
        cpu: Some(cpu),
        outcome: Outcome::Exited(0),
        wall_seconds: 0.0,
        lines: Vec::new(),
        stderr_tail: String::new(),
        sandbox: Default::default(),
    }
}

/// Trials of `calls` each, with the given per-call cycles and seconds.
pub fn trials(calls: u64, cycles_per_call: &[f64], seconds_per_call: &[f64]) -> Vec<Trial> {
    cycles_per_call
        .iter()
        .zip(seconds_per_call)
        .map(|(c, s)| Trial {
            calls,
            seconds: s * calls as f64,
            cycles: c * calls as f64,
            samples: Vec::new(),
        })
        .collect()
}

/// Memory figures: ELF load bytes, baseline and peak RSS (KiB), stack and
/// heap high-water (bytes).
pub fn memory(op: &str, cpu: usize, figures: [u64; 5]) -> MemoryFigures {
    let [load, base, peak, stack, heap] = figures;
    MemoryFigures {
        status: crate::measure::OpStatus::Ok,
        detail: None,
        load_bytes: Some(load),
        baseline_rss_kib: Some(base),
        peak_rss_kib: Some(peak),
        stack_bytes: Some(stack),
        heap_peak_bytes: Some(heap),
        heap_allocs: Some(u64::from(heap > 0)),
        process: process(op, "memory", cpu),
        measured_by: None,
    }
}

pub fn profile(
    alg: &str,
    label: &str,
    op: &str,
    ops: u64,
    total_ticks: u64,
    shapes: Vec<Shape>,
) -> ProfileRecord {
    let wrapped: Vec<String> = Wrap::iccs_defaults()
        .into_iter()
        .map(|w| w.symbol)
        .collect();
    let p = OpProfile {
        op: op.into(),
        status: crate::measure::OpStatus::Ok,
        detail: None,
        ops,
        total_ticks,
        tick_hz: None,
        shapes,
        process: None,
    };
    ProfileRecord::from_op(alg, label, &wrapped, &p)
}

/// A helper shape: `calls` calls taking `ticks` in total.
pub fn shape(function: &str, calls: u64, ticks: u64) -> Shape {
    let class = if function.contains("random") {
        crate::plan::HelperClass::drng()
    } else {
        crate::plan::HelperClass::hash()
    };
    Shape {
        function: function.into(),
        class,
        in_bits: 256,
        out_bits: 256,
        calls,
        ticks,
    }
}

/// A sizes row; `figures` are (name, api, observed, catalog).
pub fn sizes_row(
    alg: &str,
    label: &str,
    kind: Kind,
    figures: &[(&str, u64, u64, Option<u64>)],
    basis: Option<&str>,
) -> SizesRow {
    let out = crate::sizes::combine(
        figures
            .iter()
            .map(|(n, a, o, c)| (n.to_string(), Some(*a), Some(*o), *c)),
        basis.map(String::from),
    );
    SizesRow {
        algorithm: alg.into(),
        label: label.into(),
        kind,
        figures: out.figures,
        basis: out.basis,
        disagreements: out.disagreements,
    }
}

/// The stages a campaign without `stages` runs, as its `campaign.json`
/// lists them (no opt-in ones: the synthetic dataset has no count or ct
/// records). The stage registry's test keeps this list in step with it.
pub(crate) const DEFAULT_STAGES: [&str; 10] = [
    "build",
    "scan",
    "kat",
    "profile-link",
    "time",
    "memory",
    "sizes",
    "profile",
    "survey",
    "render",
];

impl Synth {
    pub fn new(
        campaign: &str,
        system: &str,
        title: &str,
        start: &str,
        end: &str,
        env: Environment,
        cpu: usize,
    ) -> Synth {
        let khz = env.max_mhz.map_or(0, |m| (m * 1000.0) as u64);
        let compiler = Compiler {
            command: "gcc".into(),
            path: "/usr/bin/gcc".into(),
            version: "gcc (Debian 14.2.0-19) 14.2.0".into(),
            binary_sha256: "0".repeat(64),
            target: "x86_64-linux-gnu".into(),
            assembler: None,
            native_flags: None,
            limits: None,
            environment: Vec::new(),
        };
        let guide = crate::plan::FlagProfile::builtin("guide").expect("built-in profile");
        let campaign_record = CampaignRecord {
            campaign: campaign.into(),
            description: String::new(),
            system: system.into(),
            system_title: Some(title.into()),
            pqbench_version: env!("CARGO_PKG_VERSION").into(),
            start_utc: start.into(),
            end_utc: end.into(),
            measured_from_utc: None,
            measured_to_utc: None,
            environment_end: Environment {
                utc: end.into(),
                ..env.clone()
            },
            environment_start: env,
            compiler: compiler.clone(),
            build_tool: format!("pqbench {}", env!("CARGO_PKG_VERSION")),
            flag_profiles: vec!["guide".into()],
            cpus: vec![cpu],
            host_checks: vec![fixed_host(cpu, khz)],
            host_require_fixed: true,
            host_fingerprint: "0".repeat(64),
            counter: Some("perf-user-cycles".into()),
            counter_hz: Some(khz as f64 * 1000.0),
            drbg: None,
            isolation: None,
            system_spec: None,
            // The reference campaign's order: its survey is x86_1's.
            systems: vec!["x86_1".into(), "arm_1".into()],
            accepted_fingerprints: Vec::new(),
            reuse_measurements_from: None,
            deferred: Vec::new(),
            preliminary: Vec::new(),
            matrix: Vec::new(),
            children: Vec::new(),
            child: None,
            timing: TimingSettings {
                trials: 5,
                warmup: 2,
                trial_seconds: 2.5,
                min_iterations: 20,
                max_iterations: 20000,
                min_calls: 100,
                budget_seconds: 60.0,
                samples: false,
                cpus: vec![cpu],
                timeout_seconds: 600.0,
                share_keys: Default::default(),
            },
            limits: Limits {
                memory_mib: 4096,
                cpu_seconds: 3600,
                file_mib: 1024,
            },
            kat_timeout_seconds: 600.0,
            system_libraries: Vec::new(),
            profile_wraps: Wrap::iccs_defaults(),
            stages: DEFAULT_STAGES.iter().map(|s| s.to_string()).collect(),
            algorithms: Vec::new(),
        };
        Synth {
            build: BuildJson {
                campaign: campaign.into(),
                system: system.into(),
                written: start.into(),
                compiler,
                support_version: "0".repeat(64),
                flag_profiles: vec![guide],
                instances: Vec::new(),
            },
            campaign: campaign_record,
            sizes: None,
            survey: None,
            records: Vec::new(),
            profiles: Vec::new(),
            files: Vec::new(),
        }
    }

    /// Adds an instance's build record with its KAT log (whose last line
    /// states `status`) and returns the record for further changes.
    pub fn add_instance(
        &mut self,
        a: &AlgorithmInfo,
        label: &str,
        status: crate::kat::Status,
        load_bytes: u64,
    ) -> &mut BuildRecord {
        let log_path = crate::records::layout::kat_log(&a.id, label);
        let log = format!(
            "algorithm = {}\nlabel = {label}\nprofile = guide\nrecords = 10\nRESULT {} {label} {status}\n",
            a.id, a.id
        );
        let sha = crate::fsutil::sha256_hex(log.as_bytes());
        self.files.push((log_path.clone(), log));
        self.build.instances.push(BuildRecord {
            algorithm: a.id.clone(),
            label: label.into(),
            implementation: "reference".into(),
            kind: a.kind,
            api: a.api,
            profile: Some("guide".into()),
            attempts: vec![crate::records::AttemptRecord {
                profile: "guide".into(),
                built: true,
                kat_status: Some(status),
                detail: None,
            }],
            kat_status: status,
            kat_detail: None,
            library: None,
            library_sha256: Some(crate::fsutil::sha256_hex(
                format!("{}/{label}", a.id).as_bytes(),
            )),
            load_bytes: Some(load_bytes),
            kat_log: Some(log_path),
            kat_log_sha256: Some(sha),
            kat_records: 10,
            defines: Vec::new(),
            sources: Vec::new(),
            kat_reference: None,
            kat_reference_records: None,
        });
        self.build.instances.last_mut().expect("just pushed")
    }

    /// Adds a timing record with statistics derived from `trials`.
    pub fn add_operation(
        &mut self,
        a: &AlgorithmInfo,
        label: &str,
        op: &str,
        trials: Vec<Trial>,
        retries: u64,
        memory: Option<MemoryFigures>,
    ) {
        let cpu = self.campaign.cpus.first().copied().unwrap_or(0);
        let kat_status = self
            .build
            .instances
            .iter()
            .find(|b| b.algorithm == a.id && b.label == label)
            .map_or(String::new(), |b| b.kat_status.to_string());
        self.records.push(OperationRecord {
            algorithm: a.id.clone(),
            label: label.into(),
            op: op.into(),
            started_utc: None,
            kat_status,
            known_issues: crate::render::rows::issues_for(a, label)
                .iter()
                .map(|k| k.cause.clone())
                .collect(),
            status: crate::measure::OpStatus::Ok,
            detail: None,
            cpu: Some(cpu),
            host_fingerprint: None,
            counter: self.campaign.counter.clone(),
            counter_hz: self.campaign.counter_hz,
            calibration: None,
            plan: None,
            trials_wanted: trials.len() as u32,
            warmup: self.campaign.timing.warmup,
            processes: vec![process(op, "trial", cpu)],
            statistics: crate::stats::summarize(&trials),
            step: None,
            output_checks: Vec::new(),
            full_replays: Vec::new(),
            witness: None,
            witness_sets: None,
            trials,
            repeated_trials: 0,
            sign_failures_retried: retries,
            setup_sign_failures_retried: 0,
            verify_rejects: 0,
            lengths: Default::default(),
            memory,
            measured_by: None,
        });
    }

    /// Writes the run directory (pretty JSON with a final newline, as the
    /// pipeline writes it).
    pub fn write(&self, dir: &Path) -> Result<()> {
        let put = |rel: &str, bytes: &[u8]| -> Result<()> {
            let p = dir.join(rel);
            std::fs::create_dir_all(p.parent().expect("relative path has a parent"))?;
            std::fs::write(&p, bytes)?;
            Ok(())
        };
        let json = |v: &dyn erased::Json| -> Result<Vec<u8>> { v.bytes() };
        put(crate::records::layout::CAMPAIGN, &json(&self.campaign)?)?;
        put(crate::records::layout::BUILD, &json(&self.build)?)?;
        if let Some(s) = &self.sizes {
            put(crate::records::layout::SIZES, &json(s)?)?;
        }
        if let Some(s) = &self.survey {
            put(crate::records::layout::SURVEY, &json(s)?)?;
        }
        for r in &self.records {
            put(
                &crate::records::operation::record_path(&r.algorithm, &r.label, &r.op),
                &json(r)?,
            )?;
        }
        for p in &self.profiles {
            put(
                &crate::records::analysis::profile_path(&p.algorithm, &p.label, &p.op),
                &json(p)?,
            )?;
        }
        for (rel, text) in &self.files {
            put(rel, text.as_bytes())?;
        }
        Ok(())
    }
}

/// Object-safe JSON serialisation for `Synth::write`.
mod erased {
    pub(super) trait Json {
        fn bytes(&self) -> anyhow::Result<Vec<u8>>;
    }
    impl<T: serde::Serialize> Json for T {
        fn bytes(&self) -> anyhow::Result<Vec<u8>> {
            let mut v = serde_json::to_vec_pretty(self)?;
            v.push(b'\n');
            Ok(v)
        }
    }
}
