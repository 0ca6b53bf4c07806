//! Runs a campaign's stages in order and writes the run-level records;
//! also answers `plan` and `status` (which stage results are stale, why).

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use anyhow::Result;
use serde::Serialize;

use crate::engine::cache::Cache;
use crate::engine::progress::Progress;
use crate::engine::{self, freshness, Cx, Freshness, Stage, Tally};
use crate::error::Error;
use crate::plan::{Instance, Plan, StageName};
use crate::records;
use crate::stages::build::BuildStage;
use crate::stages::kat::KatStage;
use crate::stages::InstanceResults;
use crate::support::Support;
use crate::toolchain::Compiler;

#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub quiet: bool,
    pub remeasure: bool,
    pub jobs: Option<usize>,
}

/// What a finished run reports.
#[derive(Debug, Serialize)]
pub struct RunSummary {
    pub reused: usize,
    pub computed: usize,
    pub errors: Vec<String>,
    /// Instances that did not pass their KAT: (instance, status).
    pub failing: Vec<(String, String)>,
}

pub fn context<'a>(plan: &'a Plan, opts: &RunOptions) -> Result<Cx<'a>> {
    let cache = Cache::new(&plan.cache_dir);
    let compiler = Compiler::detect(&plan.compiler)?;
    let support = Support::prepare(&cache, &compiler)?;
    Ok(Cx {
        plan,
        cache,
        compiler,
        support,
        host_fingerprint: None,
        remeasure: opts.remeasure,
        progress: Progress::new(opts.quiet),
    })
}

fn empty_results(plan: &Plan) -> BTreeMap<String, InstanceResults> {
    plan.instances
        .iter()
        .map(|i| (i.key(), InstanceResults::default()))
        .collect()
}

pub fn run(plan: &Plan, opts: &RunOptions) -> Result<RunSummary, Error> {
    let jobs = opts.jobs.unwrap_or(plan.jobs);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(anyhow::Error::from)?;
    pool.install(|| run_in_pool(plan, opts))
}

fn run_in_pool(plan: &Plan, opts: &RunOptions) -> Result<RunSummary, Error> {
    let cx = context(plan, opts)?;
    let started = records::utc_now();
    let mut results = empty_results(plan);
    let tally = Tally::default();
    cx.progress.note(&format!(
        "campaign {} on {}: {} instances of {} algorithms",
        plan.campaign,
        plan.system,
        plan.instances.len(),
        plan.algorithms.len()
    ));
    if plan.runs(StageName::Build) {
        engine::run_stage(&cx, &BuildStage, &mut results, &tally);
    }
    if plan.runs(StageName::Kat) {
        engine::run_stage(&cx, &KatStage, &mut results, &tally);
    }
    records::write_build_json(&cx, &results, &started)?;
    let failing = plan
        .instances
        .iter()
        .filter_map(|i| {
            let st = results[&i.key()]
                .kat
                .as_ref()
                .map(|k| k.status().to_string());
            match st.as_deref() {
                Some("PASS") => None,
                Some(s) => Some((i.key(), s.to_string())),
                None if plan.runs(StageName::Kat) => Some((i.key(), "no result".to_string())),
                None => None,
            }
        })
        .collect();
    Ok(RunSummary {
        reused: tally.reused.load(Ordering::Relaxed),
        computed: tally.ran.load(Ordering::Relaxed),
        errors: tally.failures.into_inner().expect("tally lock"),
        failing,
    })
}

/// One row of `pqbench plan` / `status`.
#[derive(Debug, Serialize)]
pub struct StageState {
    pub instance: String,
    pub stage: StageName,
    pub freshness: Freshness,
}

/// Freshness of every (instance, stage) without running anything.
pub fn states(plan: &Plan) -> Result<Vec<StageState>> {
    let cx = context(
        plan,
        &RunOptions {
            quiet: true,
            ..Default::default()
        },
    )?;
    let mut out = Vec::new();
    for inst in &plan.instances {
        let mut prior = InstanceResults::default();
        let mut upstream_stale = false;
        let mut push = |stage, f| {
            out.push(StageState {
                instance: inst.key(),
                stage,
                freshness: f,
            })
        };
        let f = check(
            &cx,
            &BuildStage,
            inst,
            &mut prior,
            &mut upstream_stale,
            plan,
        )?;
        if let Some(f) = f {
            push(StageName::Build, f);
        }
        let f = check(&cx, &KatStage, inst, &mut prior, &mut upstream_stale, plan)?;
        if let Some(f) = f {
            push(StageName::Kat, f);
        }
    }
    Ok(out)
}

fn check<S: Stage>(
    cx: &Cx,
    stage: &S,
    inst: &Instance,
    prior: &mut InstanceResults,
    upstream_stale: &mut bool,
    plan: &Plan,
) -> Result<Option<Freshness>> {
    if !plan.runs(S::NAME) {
        return Ok(None);
    }
    if *upstream_stale {
        return Ok(Some(Freshness::Stale(vec![
            "an earlier stage is stale".into()
        ])));
    }
    let (f, out) = freshness(cx, stage, inst, prior)?;
    match out {
        Some(o) => S::store(prior, o),
        None => *upstream_stale = matches!(f, Freshness::Stale(_)),
    }
    Ok(Some(f))
}
