//! Which inputs of a locked run differ now: sources and headers (by
//! content), defines, flags, compiler, support code, pqbench, KAT
//! references, planning settings, the instance list and the host. Each
//! difference is one line naming what changed, e.g. `sources changed:
//! sign.c` or `compiler changed: gcc … at /usr/bin/gcc → …`.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Result;
use serde_json::Value;

use crate::context::Cx;
use crate::engine::{Registry, Results};
use crate::pipeline::HostState;
use crate::plan::Plan;
use crate::records::lock::{HostLock, InstanceLock, Lock};
use crate::toolchain::Compiler;

/// Differences between the lock and the current project, compiler and
/// host, without building or running anything.
pub(crate) fn differences(
    lock: &Lock,
    plan: &Plan,
    registry: &Registry,
    compiler: &Compiler,
    host: &HostState,
) -> Result<Vec<String>> {
    // The stages' lock pieces with no results are their inputs alone: they
    // read the plan, the compiler identity and the support sources, so
    // nothing is compiled here.
    let cx = Cx::new(plan, compiler.clone(), false, true);
    let mut files: BTreeMap<(&str, &str), BTreeSet<String>> = BTreeMap::new();
    let mut out = Vec::new();
    let mut per_instance = Vec::new();
    let locked: BTreeMap<&str, _> = lock
        .instances
        .iter()
        .map(|i| (i.instance.as_str(), i))
        .collect();
    for inst in &plan.instances {
        let Some(old) = locked.get(inst.key().as_str()) else {
            continue;
        };
        let mut entry = InstanceLock::default();
        registry.lock_entry(&cx, inst, &Results::default(), &mut entry)?;
        let now = entry.inputs;
        let keys: BTreeSet<&String> = now.keys().chain(old.inputs.keys()).collect();
        for key in keys {
            let (a, b) = (old.inputs.get(key), now.get(key));
            if a == b {
                continue;
            }
            let change = match (a, b) {
                (None, _) => "added",
                (_, None) => "removed",
                _ => "changed",
            };
            match key.split_once(':') {
                Some((group @ ("source" | "header"), path)) => {
                    let name = path.rsplit('/').next().unwrap_or(path).to_string();
                    let group = if group == "source" {
                        "sources"
                    } else {
                        "headers"
                    };
                    files.entry((group, change)).or_default().insert(name);
                }
                // Whole-run inputs are named once below, not per instance.
                _ if ["flags", "compiler", "support", "pqbench"].contains(&key.as_str()) => {}
                _ if key == "defines" => per_instance.push(format!(
                    "defines changed: {}: {} → {}",
                    inst.key(),
                    words(a),
                    words(b)
                )),
                _ => per_instance.push(format!("{key} {change}: {}", inst.key())),
            }
        }
        per_instance.extend(own_flag_change(&cx, inst, old, &lock.plan["flag_profiles"]));
    }
    for ((group, change), names) in &files {
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        out.push(format!("{group} {change}: {}", names.join(", ")));
    }
    out.extend(per_instance);
    out.extend(flag_changes(&lock.plan["flag_profiles"], plan)?);
    if let Some(c) = compiler_change(&lock.compiler, compiler) {
        out.push(c);
    }
    let support = crate::support::version();
    if lock.support_version != support {
        out.push(format!(
            "support code changed: {} → {}",
            &lock.support_version[..12.min(lock.support_version.len())],
            &support[..12]
        ));
    }
    if lock.stage_logic_version != crate::STAGE_LOGIC_VERSION {
        out.push(format!(
            "pqbench changed: {} → {}",
            lock.stage_logic_version,
            crate::STAGE_LOGIC_VERSION
        ));
    }
    for (path, sha) in &lock.config_files {
        let is_reference = path.ends_with(".sha256");
        let now = crate::fsutil::sha256_file(&plan.project_root.join(path)).ok();
        if is_reference && &now != sha {
            out.push(format!("KAT references changed: {path}"));
        }
    }
    out.extend(setting_changes(&lock.plan, plan)?);
    out.extend(instance_changes(lock, plan));
    out.extend(host_changes(&lock.host, host));
    Ok(out)
}

fn words(v: Option<&Value>) -> String {
    match v {
        Some(Value::Array(items)) if items.is_empty() => "(none)".into(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|x| {
                x.as_str()
                    .map(String::from)
                    .unwrap_or_else(|| x.to_string())
            })
            .collect::<Vec<_>>()
            .join(" "),
        Some(v) => v.to_string(),
        None => "(none)".into(),
    }
}

/// An instance's own flags changed under a profile whose campaign flags did
/// not: the implementation's `submitter-cflags`, or what `-march=native`
/// stands for on this host.
fn own_flag_change(
    cx: &Cx,
    inst: &crate::plan::Instance,
    old: &InstanceLock,
    old_profiles: &Value,
) -> Option<String> {
    let name = old.profile.as_ref()?;
    let now = cx.profile_for(inst, name)?;
    let campaign_same =
        serde_json::from_value::<Vec<crate::plan::FlagProfile>>(old_profiles.clone())
            .ok()?
            .iter()
            .any(|p| &p.name == name && cx.plan.flag_profiles.contains(p));
    let diffs: Vec<String> = [
        ("", &old.cflags, &now.cflags),
        ("ldflags ", &old.ldflags, &now.ldflags),
    ]
    .into_iter()
    .filter(|(_, a, b)| a != b)
    .map(|(what, a, b)| format!("{what}{}", flag_diff(a, b)))
    .collect();
    (campaign_same && !diffs.is_empty())
        .then(|| format!("flags changed: {}: {}", inst.key(), diffs.join("; ")))
}

/// `flags changed: guide: -O2 → -O3` per profile whose flags differ.
fn flag_changes(old: &Value, plan: &Plan) -> Result<Vec<String>> {
    let old: Vec<crate::plan::FlagProfile> = serde_json::from_value(old.clone())?;
    let now = &plan.flag_profiles;
    let mut out = Vec::new();
    let names = |ps: &[crate::plan::FlagProfile]| -> Vec<String> {
        ps.iter().map(|p| p.name.clone()).collect()
    };
    if names(&old) != names(now) {
        out.push(format!(
            "flag profiles changed: {} → {}",
            names(&old).join(", "),
            names(now).join(", ")
        ));
    }
    for p in now {
        let Some(o) = old.iter().find(|o| o.name == p.name) else {
            continue;
        };
        for (what, a, b) in [
            ("", &o.cflags, &p.cflags),
            ("ldflags ", &o.ldflags, &p.ldflags),
        ] {
            if a != b {
                out.push(format!(
                    "flags changed: {}: {what}{}",
                    p.name,
                    flag_diff(a, b)
                ));
            }
        }
    }
    Ok(out)
}

/// `-O2 → -O3`: the flags only `a` has, then those only `b` has.
fn flag_diff(a: &[String], b: &[String]) -> String {
    let only = |x: &[String], y: &[String]| -> Vec<String> {
        x.iter().filter(|f| !y.contains(f)).cloned().collect()
    };
    let (gone, new) = (only(a, b), only(b, a));
    if gone.is_empty() && new.is_empty() {
        "order changed".to_string()
    } else {
        let gone: Vec<&str> = gone.iter().map(String::as_str).collect();
        let new: Vec<&str> = new.iter().map(String::as_str).collect();
        format!("{} → {}", or_none(&gone), or_none(&new))
    }
}

fn or_none(v: &[&str]) -> String {
    if v.is_empty() {
        "(none)".into()
    } else {
        v.join(" ")
    }
}

/// What changed in the further datasets since the run at `run_dir`: those
/// added or removed, and each recorded one's compiler and flag profiles
/// (from its own run's lock).
pub(crate) fn child_changes(
    lock: &Lock,
    plan: &Plan,
    registry: &Registry,
    compiler: &Compiler,
    run_dir: &std::path::Path,
) -> Vec<String> {
    let now = registry.child_plans(plan);
    let mut out = Vec::new();
    for c in &now {
        if !lock.children.iter().any(|r| r.child() == c.child) {
            out.push(format!("{} added", c.child));
        }
    }
    let runs = match lock.child_runs(run_dir) {
        Ok(runs) => runs,
        Err(e) => {
            out.push(format!(
                "further datasets: the recorded runs cannot be found ({e:#})"
            ));
            return out;
        }
    };
    for r in runs {
        let Some(c) = now.iter().find(|c| c.child == r.child) else {
            out.push(format!("{} removed", r.child));
            continue;
        };
        let old = match crate::records::lock::load(&r.dir) {
            Ok(l) => l,
            Err(e) => {
                out.push(format!(
                    "{}: its recorded run is unreadable ({e:#})",
                    c.child
                ));
                continue;
            }
        };
        match crate::pipeline::children::child_compiler(plan, compiler, &c.plan) {
            Ok(now) => out
                .extend(compiler_change(&old.compiler, &now).map(|d| format!("{}: {d}", c.child))),
            Err(e) => out.push(format!("{}: {e:#}", c.child)),
        }
        let profiles = serde_json::to_value(&c.plan.flag_profiles).unwrap_or_default();
        if old.plan["flag_profiles"] != profiles {
            out.push(format!("{}: the flags of its profiles changed", c.child));
        }
    }
    out
}

fn compiler_change(old: &Compiler, now: &Compiler) -> Option<String> {
    if old == now {
        return None;
    }
    let show = |c: &Compiler| {
        format!(
            "{} at {} (sha256 {}, target {})",
            c.version,
            c.path.display(),
            &c.binary_sha256[..12.min(c.binary_sha256.len())],
            c.target
        )
    };
    Some(format!("compiler changed: {} → {}", show(old), show(now)))
}

/// Planning settings that change what is measured or how.
fn setting_changes(old: &Value, plan: &Plan) -> Result<Vec<String>> {
    let now = crate::plan::recorded::relative_plan(plan)?;
    let mut out = Vec::new();
    for field in [
        "system",
        "stages",
        "timing",
        "kat",
        "limits",
        "host",
        "profile_wraps",
        "reuse_measurements_from",
    ] {
        let (a, b) = (&old[field], &now[field]);
        if a == b {
            continue;
        }
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
                for k in keys.into_iter().filter(|k| x.get(*k) != y.get(*k)) {
                    out.push(format!(
                        "settings changed: {field}.{k} {} → {}",
                        show_value(x.get(k)),
                        show_value(y.get(k))
                    ));
                }
            }
            _ => out.push(format!(
                "settings changed: {field} {} → {}",
                show_value(Some(a)),
                show_value(Some(b))
            )),
        }
    }
    Ok(out)
}

fn show_value(v: Option<&Value>) -> String {
    v.map(|v| v.to_string()).unwrap_or_else(|| "(unset)".into())
}

fn instance_changes(lock: &Lock, plan: &Plan) -> Vec<String> {
    let old: BTreeSet<&str> = lock.instances.iter().map(|i| i.instance.as_str()).collect();
    let keys: Vec<String> = plan.instances.iter().map(|i| i.key()).collect();
    let now: BTreeSet<&str> = keys.iter().map(String::as_str).collect();
    let mut out = Vec::new();
    let added: Vec<&str> = now.difference(&old).copied().collect();
    let removed: Vec<&str> = old.difference(&now).copied().collect();
    if !added.is_empty() {
        out.push(format!("instances added: {}", added.join(", ")));
    }
    if !removed.is_empty() {
        out.push(format!("instances removed: {}", removed.join(", ")));
    }
    out
}

/// Names what differs in the host state; the fingerprint also covers the
/// counter access (perf permission, TSC flags), named when nothing else is.
fn host_changes(old: &HostLock, now: &HostState) -> Vec<String> {
    if old.fingerprint == now.fingerprint {
        return Vec::new();
    }
    let mut parts = Vec::new();
    let mut diff = |what: &str, a: String, b: String| {
        if a != b {
            parts.push(format!("{what} {a} → {b}"));
        }
    };
    let (e0, e1) = (&old.environment, &now.environment);
    diff("CPU model", e0.cpu_model.clone(), e1.cpu_model.clone());
    diff("kernel", e0.kernel.clone(), e1.kernel.clone());
    diff(
        "measuring CPUs",
        format!("{:?}", old.cpus),
        format!("{:?}", now.cpus),
    );
    for (a, b) in old.checks.iter().zip(&now.checks) {
        let cpu = format!("CPU {}", b.cpu);
        diff(
            &format!("{cpu} governor"),
            format!("{:?}", a.governor),
            format!("{:?}", b.governor),
        );
        diff(
            &format!("{cpu} turbo"),
            format!("{:?}", a.turbo),
            format!("{:?}", b.turbo),
        );
        diff(
            &format!("{cpu} SMT siblings online"),
            format!("{:?}", a.smt_siblings_online),
            format!("{:?}", b.smt_siblings_online),
        );
        diff(
            &format!("{cpu} clock (kHz)"),
            format!("{:?}-{:?}", a.min_khz, a.max_khz),
            format!("{:?}-{:?}", b.min_khz, b.max_khz),
        );
        diff(
            "perf_event_paranoid",
            format!("{:?}", a.perf_event_paranoid),
            format!("{:?}", b.perf_event_paranoid),
        );
    }
    if parts.is_empty() {
        parts.push("counter access (perf permission or TSC flags)".into());
    }
    vec![format!("host differs: {}", parts.join("; "))]
}
