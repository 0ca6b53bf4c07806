//! Profile stage: relink the instance with `-Wl,--wrap=<f>` for each helper
//! symbol its objects define, run one timed trial per operation with the
//! wrappers accounting only inside timed calls, and derive the share of the
//! operation spent in the hash helpers and in the DRNG.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::build::{link_library, ObjectRef};
use super::time::{lost_cpu, measurement_manifest, TRIAL_ATTEMPTS};
use super::InstanceResults;
use crate::engine::{Cx, Manifest, Stage};
use crate::fsutil;
use crate::measure::driver::{self, ProcessRecord};
use crate::measure::{measured_library, measuring_cpu};
use crate::plan::{FlagProfile, Instance, StageName, Wrap};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shape {
    pub function: String,
    /// `hash` or `drng`.
    pub class: String,
    pub in_bits: u64,
    pub out_bits: u64,
    pub calls: u64,
    pub ticks: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpProfile {
    pub op: String,
    pub status: String,
    pub detail: Option<String>,
    /// Timed operations and their total ticks.
    pub ops: u64,
    pub total_ticks: u64,
    pub tick_hz: Option<f64>,
    pub shapes: Vec<Shape>,
    pub process: Option<ProcessRecord>,
}

impl OpProfile {
    fn ticks_where(&self, pred: impl Fn(&Shape) -> bool) -> u64 {
        self.shapes
            .iter()
            .filter(|s| pred(s))
            .map(|s| s.ticks)
            .sum()
    }

    /// Share of the operation in every wrapped helper but the DRNG.
    pub fn hash_share(&self) -> f64 {
        self.ticks_where(|s| s.class != "drng") as f64 / self.total_ticks.max(1) as f64
    }

    pub fn drng_share(&self) -> f64 {
        self.ticks_where(|s| s.class == "drng") as f64 / self.total_ticks.max(1) as f64
    }

    /// Calls per operation by function name, sorted by name.
    pub fn calls_per_op(&self) -> BTreeMap<String, f64> {
        let mut m = BTreeMap::new();
        for s in &self.shapes {
            *m.entry(s.function.clone()).or_insert(0.0) += s.calls as f64;
        }
        m.values_mut().for_each(|v| *v /= self.ops.max(1) as f64);
        m
    }

    /// Share of the operation per function.
    pub fn share_per_function(&self) -> BTreeMap<String, f64> {
        let mut m = BTreeMap::new();
        for s in &self.shapes {
            *m.entry(s.function.clone()).or_insert(0.0) += s.ticks as f64;
        }
        m.values_mut()
            .for_each(|v| *v /= self.total_ticks.max(1) as f64);
        m
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileOutput {
    /// `ok`, or why there is no profile (e.g. `relink-failed`).
    pub status: String,
    pub detail: Option<String>,
    /// The helper symbols wrapped (those the objects define).
    pub wrapped: Vec<String>,
    pub ops: Vec<OpProfile>,
}

pub struct ProfileStage;

impl Stage for ProfileStage {
    type Output = ProfileOutput;
    const NAME: StageName = StageName::Profile;

    fn parallel(&self) -> bool {
        false
    }

    fn is_measurement(&self) -> bool {
        true
    }

    fn manifest(
        &self,
        cx: &Cx,
        inst: &Instance,
        prior: &InstanceResults,
    ) -> Result<Option<Manifest>> {
        let Some(mut m) = measurement_manifest(cx, inst, prior)? else {
            return Ok(None);
        };
        m.set("wraps", &cx.plan.profile_wraps);
        Ok(Some(m))
    }

    fn run(&self, cx: &Cx, inst: &Instance, prior: &InstanceResults) -> Result<ProfileOutput> {
        let sha = measured_library(cx.plan, inst, prior).context("instance is not measured")?;
        let kat = prior.kat.as_ref().context("no KAT result")?;
        let profile_name = &kat.final_attempt().profile;
        let build = prior.build.as_ref().context("no build result")?;
        let objects = match build.attempts.iter().find(|a| &a.profile == profile_name) {
            Some(a) if !a.objects.is_empty() => a.objects.clone(),
            _ => {
                // A fallback profile built during the KAT stage: rebuild it
                // (its objects are cached) to get the object list.
                let fp = flag_profile(cx, profile_name)?;
                let a = super::build::build_profile(cx, inst, &fp)?;
                anyhow::ensure!(
                    a.library_sha256.as_deref() == Some(sha.as_str()),
                    "rebuilt library differs from the measured one"
                );
                a.objects
            }
        };
        let wraps = wraps_defined(cx, &objects, &cx.plan.profile_wraps);
        let wrapped: Vec<String> = wraps.iter().map(|w| w.symbol.clone()).collect();
        if wraps.is_empty() {
            // Nothing to wrap is a result too: every operation spends 0 % in
            // the helpers, and its record says why.
            let why = "the objects define none of the wrapped helper symbols";
            let ops = inst
                .kind
                .operations()
                .iter()
                .map(|op| OpProfile {
                    op: op.to_string(),
                    status: "no-helpers".into(),
                    detail: Some(why.into()),
                    ops: 0,
                    total_ticks: 0,
                    tick_hz: None,
                    shapes: Vec::new(),
                    process: None,
                })
                .collect();
            return Ok(ProfileOutput {
                status: "no-helpers".into(),
                detail: Some(why.into()),
                wrapped,
                ops,
            });
        }
        let scratch = cx.cache.scratch()?;
        let lib = scratch.path().join("profiled.so");
        if let Err(e) = relink(cx, inst, profile_name, &objects, &wraps, &lib) {
            return Ok(ProfileOutput {
                status: "relink-failed".into(),
                detail: Some(
                    format!("{e:#}").replace(&format!("{}/", cx.plan.project_root.display()), ""),
                ),
                wrapped,
                ops: Vec::new(),
            });
        }
        let iterations = |op: &str| {
            prior
                .time
                .as_ref()
                .and_then(|t| t.ops.iter().find(|o| o.op == op))
                .and_then(|o| o.plan.as_ref())
                .map(|p| p.iterations)
                .unwrap_or(cx.plan.timing.min_iterations)
        };
        let timeout = Duration::from_secs_f64(cx.plan.timing.timeout_seconds);
        let mut ops = Vec::new();
        for op in inst.kind.operations() {
            let args: Vec<String> = ["--op", op, "--mode", "trial", "--profile", "--warmup"]
                .iter()
                .map(|s| s.to_string())
                .chain([
                    cx.plan.timing.warmup.to_string(),
                    "--iters".into(),
                    iterations(op).to_string(),
                ])
                .collect();
            // Like a timing trial, a profile that lost the CPU is run again.
            let mut attempt = 0;
            let process = loop {
                attempt += 1;
                let (process, _) = driver::run(cx, &lib, &args, measuring_cpu(), timeout)?;
                if !lost_cpu(&process) || attempt >= TRIAL_ATTEMPTS {
                    break process;
                }
            };
            ops.push(read_profile(op, process));
        }
        Ok(ProfileOutput {
            status: "ok".into(),
            detail: None,
            wrapped,
            ops,
        })
    }

    fn store(results: &mut InstanceResults, out: ProfileOutput) {
        results.profile = Some(out);
    }
}

fn flag_profile(cx: &Cx, name: &str) -> Result<FlagProfile> {
    cx.plan
        .flag_profiles
        .iter()
        .find(|p| p.name == name)
        .cloned()
        .with_context(|| format!("flag profile {name} not in the plan"))
}

/// The configured wraps whose symbol one of the submission's objects defines.
fn wraps_defined(cx: &Cx, objects: &[ObjectRef], wraps: &[Wrap]) -> Vec<Wrap> {
    let mut defined = std::collections::BTreeSet::new();
    for o in objects.iter().filter(|o| o.submission) {
        if let Ok(syms) = crate::elf::defined_symbols(&cx.cache.object_path(&o.key)) {
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
pub fn wrapper_source(wraps: &[Wrap]) -> String {
    let mut s = String::from("#include \"prof_wrap.h\"\n");
    for w in wraps {
        let class = if w.class == "drng" {
            "PQB_CLASS_DRNG"
        } else {
            "PQB_CLASS_HASH"
        };
        let idx = |a: Option<u32>| a.map(|v| v.to_string()).unwrap_or_else(|| "-1".into());
        s.push_str(&format!(
            "PQB_WRAP({}, {}, {}, {})\n",
            w.symbol,
            class,
            idx(w.in_bits_arg),
            idx(w.out_bits_arg)
        ));
    }
    s
}

fn relink(
    cx: &Cx,
    inst: &Instance,
    profile: &str,
    objects: &[ObjectRef],
    wraps: &[Wrap],
    out: &std::path::Path,
) -> Result<()> {
    let dir = out.parent().context("scratch dir")?;
    let fp = flag_profile(cx, profile)?;
    let wrap_c = dir.join("wraps.c");
    fsutil::write_atomic(&wrap_c, wrapper_source(wraps).as_bytes())?;
    let mut args = vec![
        "-O2".to_string(),
        "-fPIC".into(),
        "-std=c99".into(),
        "-D_GNU_SOURCE".into(),
    ];
    args.push(format!("-I{}", cx.support.dir.display()));
    let wrap_o = dir.join("wraps.o");
    let rt_o = dir.join("prof_runtime.o");
    cx.compiler.compile(&wrap_c, &wrap_o, &args)?;
    cx.compiler
        .compile(&cx.support.file("prof_runtime.c"), &rt_o, &args)?;
    let mut extra = vec![wrap_o.display().to_string(), rt_o.display().to_string()];
    extra.extend(wraps.iter().map(|w| format!("-Wl,--wrap={}", w.symbol)));
    link_library(cx, inst, &fp, objects, &extra, out)
}

fn read_profile(op: &str, process: ProcessRecord) -> OpProfile {
    let mut p = OpProfile {
        op: op.to_string(),
        status: "ok".into(),
        detail: None,
        ops: 0,
        total_ticks: 0,
        tick_hz: None,
        shapes: Vec::new(),
        process: None,
    };
    if let Some((status, detail)) = process.failure() {
        p.status = status;
        p.detail = Some(detail);
    }
    if let Some(l) = process.line("prof_op") {
        p.ops = l.u64("ops").unwrap_or(0);
        p.total_ticks = l.u64("ticks").unwrap_or(0);
        p.tick_hz = l.f64("tick_hz");
    }
    p.shapes = process
        .lines
        .iter()
        .filter(|l| l.tag == "prof")
        .map(|l| Shape {
            function: l.get("fn").unwrap_or("?").to_string(),
            class: l.get("class").unwrap_or("hash").to_string(),
            in_bits: l.u64("in_bits").unwrap_or(0),
            out_bits: l.u64("out_bits").unwrap_or(0),
            calls: l.u64("calls").unwrap_or(0),
            ticks: l.u64("ticks").unwrap_or(0),
        })
        .collect();
    p.process = Some(process);
    p
}
