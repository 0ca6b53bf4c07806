//! `pqbench bench-checks`: what the output checks add to a timed call. A
//! trial of a checked operation hashes every timed call's input and output
//! for the replay, and before every call of `keygen`, `enc` and `sign`
//! re-seeds the library's randomness; this benchmark runs trials of one
//! operation of an instance a campaign has built, alternately with and
//! without both (the driver's `checks=0`, used nowhere else), and compares
//! their median cycles per call. A benchmark, not a test: it prints
//! figures and asserts nothing. Not a stage: it lives beside them because
//! it reads the kat stage's stored verdict to find the library and runs
//! the time stage's driver on it.

use anyhow::{Context, Result};

use crate::context::Cx;
use crate::engine::stored_result;
use crate::measure::{driver, inputs, measured_library_path};
use crate::plan::{Instance, Plan};
use crate::stages::kat::KatStage;
use crate::stats::median;

/// Medians over `pairs` trials of `calls` calls each, cycles per call.
#[derive(Debug)]
pub struct ChecksBench {
    pub instance: String,
    pub op: String,
    pub calls: u64,
    pub pairs: usize,
    pub with_checks: f64,
    pub without_checks: f64,
}

impl ChecksBench {
    /// The hashing's share of a timed call, in percent of the call without it.
    pub fn overhead_percent(&self) -> f64 {
        (self.with_checks / self.without_checks - 1.0) * 100.0
    }
}

/// The first instance with a passing KAT stored by the campaign that has
/// `op` (or, without one, the cheapest checked operation it runs:
/// `hash_32` before `verify` before `dec`).
fn pick<'p>(cx: &Cx<'p>, op: Option<&str>) -> Result<(&'p Instance, &'static str)> {
    let order = ["hash_32", "verify", "dec"];
    let mut best: Option<(&Instance, &'static str, usize)> = None;
    for inst in &cx.plan.instances {
        let kat = stored_result::<KatStage>(cx, &inst.key());
        for o in crate::measure::instance_operations(inst, kat.as_ref()) {
            if kat.is_none() || !inputs::checked(o) {
                continue;
            }
            if op == Some(o) {
                return Ok((inst, o));
            }
            let rank = order.iter().position(|x| *x == o).unwrap_or(order.len());
            if op.is_none() && best.is_none_or(|(_, _, r)| rank < r) {
                best = Some((inst, o, rank));
            }
        }
    }
    best.map(|(i, o, _)| (i, o)).with_context(|| {
        format!(
            "no built instance of campaign {} runs {}: run the campaign first",
            cx.plan.campaign,
            op.unwrap_or(
                "an operation whose outputs are checked (keygen, enc, dec, sign, verify, hash_<n>)"
            )
        )
    })
}

/// One trial's cycles per call.
fn trial(cx: &Cx, lib: &std::path::Path, op: &str, calls: u64, checks: bool) -> Result<f64> {
    let mut args: Vec<String> = ["--op", op, "--mode", "trial", "--warmup", "2", "--iters"]
        .map(String::from)
        .to_vec();
    args.push(calls.to_string());
    if !checks {
        args.push("--no-checks".into());
    }
    let seed = inputs::fresh_seed()?;
    let pool = inputs::PoolPlan::trial(op, calls, 2, 1e-6).map(|p| p.settings(&seed));
    let timeout = std::time::Duration::from_secs(120);
    let ran = driver::run_fed(cx, lib, &args, pool.as_deref(), Some(0), timeout)?;
    if let Some((status, detail)) = ran.proc.failure() {
        anyhow::bail!("the driver's trial ended {status}: {detail}");
    }
    let t = ran
        .proc
        .line("trial")
        .context("the driver printed no trial line")?;
    let (cycles, n) = (
        t.f64("cycles").unwrap_or(f64::NAN),
        t.u64("calls").unwrap_or(0),
    );
    anyhow::ensure!(n == calls, "the trial made {n} calls of {calls}");
    Ok(cycles / n as f64)
}

/// Runs `pairs` alternating trial pairs of `calls` calls on CPU 0.
pub fn run(plan: &Plan, op: Option<&str>, pairs: usize, calls: u64) -> Result<ChecksBench> {
    let compiler = crate::toolchain::Compiler::for_plan(plan)?;
    let cx = Cx::new(plan, compiler, false, true);
    let (inst, op) = pick(&cx, op)?;
    let kat = stored_result::<KatStage>(&cx, &inst.key());
    let lib = measured_library_path(&cx.cache, plan, inst, kat.as_ref())?;
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for i in 0..pairs {
        // Alternate which comes first, so a drift favours neither.
        for checks in if i % 2 == 0 {
            [true, false]
        } else {
            [false, true]
        } {
            let c = trial(&cx, &lib, op, calls, checks)?;
            if checks {
                with.push(c)
            } else {
                without.push(c)
            }
        }
    }
    Ok(ChecksBench {
        instance: inst.key(),
        op: op.to_string(),
        calls,
        pairs,
        with_checks: median(&with),
        without_checks: median(&without),
    })
}
