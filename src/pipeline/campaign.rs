//! The measuring host of a run (its CPUs, checks, environment and
//! fingerprint), the refusal to measure on a host that is not fixed, and
//! `campaign.json`.

use anyhow::Result;

use super::RunOptions;
use crate::context::Cx;
use crate::engine::{AllResults, Registry};
use crate::host;
use crate::measure::drbg_cost::{self, DrbgCost};
use crate::plan::Plan;
use crate::records::campaign::{AlgorithmInfo, CampaignRecord, SystemLibrary};

/// The CPUs measurements run on: the command line, else the campaign,
/// else the last CPU this process may use (CPU 0 takes most interrupts).
pub(crate) fn measuring_cpus(plan: &Plan, opts: &RunOptions) -> Vec<usize> {
    opts.cpus
        .clone()
        .filter(|c| !c.is_empty())
        .or_else(|| (!plan.timing.cpus.is_empty()).then(|| plan.timing.cpus.clone()))
        .unwrap_or_else(|| host::allowed_cpus().last().copied().into_iter().collect())
}

/// The measuring CPUs, their checks and the environment at the start.
#[derive(Debug, Clone)]
pub(crate) struct HostState {
    pub cpus: Vec<usize>,
    pub checks: Vec<host::HostCheck>,
    pub environment: host::Environment,
    pub fingerprint: String,
}

/// The CPUs the instances are sharded over: the measuring CPUs (the
/// deferred CPU measures only the deferred instances).
pub(crate) fn shard_cpus(plan: &Plan, opts: &RunOptions) -> Vec<usize> {
    measuring_cpus(plan, opts)
}

/// The measuring CPUs, then the deferred CPU (checked and locked like
/// them); the fingerprint is the measuring CPUs', so giving the deferred
/// instances a CPU of their own changes no other instance's measurement.
pub(crate) fn host_state(plan: &Plan, opts: &RunOptions) -> HostState {
    if let crate::plan::Runner::Emulator { command } = &plan.system_spec.runner {
        return emulated_host(plan, command);
    }
    let mut cpus = measuring_cpus(plan, opts);
    let mut checks: Vec<host::HostCheck> = cpus.iter().map(|&c| host::check(c)).collect();
    let environment = host::environment();
    let fingerprint = host::fingerprint(&environment, &checks, &counter_hint());
    if let Some(d) = opts.deferred_cpu.filter(|d| !cpus.contains(d)) {
        cpus.push(d);
        checks.push(host::check(d));
    }
    HostState {
        cpus,
        checks,
        environment,
        fingerprint,
    }
}

/// An emulated system has no measuring CPU and no host state to check; its
/// fingerprint names the emulator, the target and this host.
fn emulated_host(plan: &Plan, command: &[String]) -> HostState {
    let environment = host::environment();
    let emulator = command
        .first()
        .and_then(|e| crate::toolchain::which(e))
        .and_then(|p| std::process::Command::new(p).arg("--version").output().ok())
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or("")
                .to_string()
        })
        .unwrap_or_else(|| "emulator not found".into());
    let fingerprint = crate::fsutil::sha256_hex(
        format!(
            "emulated|{}|{emulator}|{}|{}",
            plan.system_spec.arch, environment.cpu_model, environment.kernel
        )
        .as_bytes(),
    );
    HostState {
        cpus: Vec::new(),
        checks: Vec::new(),
        environment,
        fingerprint,
    }
}

/// Refuses to run a native system on a host that is not it: another
/// architecture or CPU model, or a fingerprint the registry does not list.
pub(crate) fn check_system_host(plan: &Plan, host: &HostState) -> Result<(), crate::error::Error> {
    let spec = &plan.system_spec;
    if spec.emulated() {
        return Ok(());
    }
    let registry = plan.project_root.join(crate::plan::system::REGISTRY);
    let refuse = |why: String| -> crate::error::Error {
        crate::error::ConfigError::new(why)
            .in_file(&registry)
            .help(format!(
                "run system {} on the machine it names, register an emulated runner for it, or choose another system with --system",
                spec.id
            ))
            .into()
    };
    if let Some(why) = spec.host_mismatch(
        crate::plan::system::host_arch(),
        &host.environment.cpu_model,
    ) {
        return Err(refuse(why));
    }
    if !spec.fingerprints.is_empty() && !spec.fingerprints.contains(&host.fingerprint) {
        return Err(refuse(format!(
            "this host's fingerprint {} is not one registered for system {} (CPU {}, kernel {}, measuring CPUs {:?})",
            host.fingerprint, spec.id, host.environment.cpu_model, host.environment.kernel, host.cpus
        )));
    }
    Ok(())
}

/// Measuring stages refuse a host that is not fixed unless the campaign
/// allows it; either way every problem is shown and recorded.
pub(crate) fn refuse_unfixed_host(cx: &Cx, host: &HostState) -> Result<()> {
    let plan = cx.plan;
    let problems: Vec<String> = host
        .checks
        .iter()
        .flat_map(|c| {
            c.problems
                .iter()
                .map(move |p| format!("CPU {}: {p}", c.cpu))
        })
        .collect();
    if problems.is_empty() {
        return Ok(());
    }
    if plan.host.require_fixed {
        anyhow::bail!(
            "the host is not fixed for measuring:\n  {}\nfix the host, or set `require-fixed = false` under [host] in {} to measure anyway (every problem is recorded)",
            problems.join("\n  "),
            plan.display_path(&plan.campaign_file)
        );
    }
    for p in &problems {
        cx.progress
            .note(&format!("host: {p} (recorded; measuring anyway)"));
    }
    Ok(())
}

pub(crate) fn write_campaign_json(
    cx: &Cx,
    registry: &Registry,
    all: &AllResults,
    host: &HostState,
    drbg: Option<DrbgCost>,
    started: &str,
    preliminary: &[String],
) -> Result<()> {
    let plan = cx.plan;
    let mut record = CampaignRecord {
        campaign: plan.campaign.clone(),
        description: plan.description.clone(),
        system: plan.system.clone(),
        system_title: plan.system_title.clone(),
        pqbench_version: env!("CARGO_PKG_VERSION").to_string(),
        start_utc: started.to_string(),
        end_utc: crate::records::utc_now(),
        measured_from_utc: None,
        measured_to_utc: None,
        environment_start: host.environment.clone(),
        environment_end: host::environment(),
        compiler: cx.compiler.clone(),
        build_tool: format!("pqbench {}", env!("CARGO_PKG_VERSION")),
        flag_profiles: plan.flag_profiles.iter().map(|p| p.name.clone()).collect(),
        cpus: host.cpus.clone(),
        host_checks: host.checks.clone(),
        host_require_fixed: plan.host.require_fixed,
        host_fingerprint: host.fingerprint.clone(),
        counter: None,
        counter_hz: None,
        drbg,
        isolation: Some(crate::sandbox::layers()),
        system_spec: Some(plan.system_spec.clone()),
        accepted_fingerprints: Vec::new(),
        systems: plan.systems.clone(),
        reuse_measurements_from: plan.reuse_measurements_from.clone(),
        deferred: plan.deferred.clone(),
        preliminary: preliminary.to_vec(),
        matrix: Vec::new(),
        children: Vec::new(),
        child: None,
        system_libraries: system_libraries(cx),
        timing: plan.timing.clone(),
        limits: plan.limits.clone(),
        kat_timeout_seconds: plan.kat.timeout_seconds,
        profile_wraps: plan.profile_wraps.clone(),
        stages: registry
            .selected(&plan.stages)
            .iter()
            .map(|s| s.name.to_string())
            .collect(),
        algorithms: plan
            .algorithms
            .iter()
            .map(|a| AlgorithmInfo::from_plan(plan, a))
            .collect(),
    };
    // What the stages measured: counter, first and last measurement.
    registry.campaign_record(all, &mut record);
    registry.describe_children(plan, &mut record);
    crate::fsutil::write_json(
        &plan.output_dir.join(crate::records::layout::CAMPAIGN),
        &record,
    )
}

/// The system libraries the campaign's instances link, each with the
/// algorithms that link it; one the compiler cannot find is left out
/// (its instances do not build, and say why).
fn system_libraries(cx: &Cx) -> Vec<SystemLibrary> {
    let mut users: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
    for inst in &cx.plan.instances {
        for l in &inst.libraries {
            let algs = users.entry(l.as_str()).or_default();
            if !algs.contains(&inst.algorithm) {
                algs.push(inst.algorithm.clone());
            }
        }
    }
    users
        .into_iter()
        .filter_map(|(name, algorithms)| {
            let found = cx.compiler.system_library(name).ok()?;
            Some(SystemLibrary {
                algorithms,
                ..found
            })
        })
        .collect()
}

/// The DRBG's cost as the dataset's `campaign.json` records it, if it does.
pub(crate) fn recorded_drbg(plan: &Plan) -> Option<DrbgCost> {
    let path = plan.output_dir.join(crate::records::layout::CAMPAIGN);
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str::<CampaignRecord>(&text).ok()?.drbg
}

/// Measures the DRBG's cost on the first measuring CPU; a failure is shown
/// and recorded as unknown, never fatal.
pub(crate) fn drbg_cost(cx: &Cx, host: &HostState) -> Option<DrbgCost> {
    let measured = cx
        .support()
        .and_then(|s| drbg_cost::measure(s, host.cpus.first().copied()));
    match measured {
        Ok(c) => Some(c),
        Err(e) => {
            cx.progress
                .error(&format!("measuring the DRBG's cost: {e:#}"));
            None
        }
    }
}

/// What decides the driver's counter: perf permission and the TSC flags.
fn counter_hint() -> String {
    let paranoid =
        std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").unwrap_or_default();
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let tsc = cpuinfo
        .split_whitespace()
        .filter(|f| ["constant_tsc", "nonstop_tsc", "hypervisor"].contains(f))
        .take(3)
        .collect::<Vec<_>>()
        .join(",");
    format!("paranoid={} {tsc}", paranoid.trim())
}
