//! The pipeline engine: runs each stage over the plan's instances, reusing
//! a stored result whenever the stage's input manifest hashes to a key seen
//! before, and remembering each instance's last manifest so `status` can say
//! why something is stale.

pub mod cache;
pub mod manifest;
pub mod progress;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use anyhow::Result;
use rayon::prelude::*;
use serde::{de::DeserializeOwned, Deserialize, Serialize};

use crate::fsutil;
use crate::plan::{Instance, Plan, StageName};
use crate::stages::InstanceResults;
use crate::support::Support;
use crate::toolchain::Compiler;
use cache::Cache;
pub use manifest::Manifest;
use progress::Progress;

/// Everything a stage may read while it runs.
pub struct Cx<'a> {
    pub plan: &'a Plan,
    pub cache: Cache,
    pub compiler: Compiler,
    pub support: Support,
    /// Host fingerprint for measurement keys (None until the host stage ran).
    pub host_fingerprint: Option<String>,
    /// Force measurement stages to run again.
    pub remeasure: bool,
    pub progress: Progress,
}

/// One stage of the pipeline, per instance.
pub trait Stage: Sync {
    type Output: Serialize + DeserializeOwned + Send + Clone;
    const NAME: StageName;

    /// Whether instances may run this stage concurrently (builds and KATs
    /// may; measurements never share a core).
    fn parallel(&self) -> bool;

    /// The stage's inputs for `inst`, or None when the stage does not apply
    /// (e.g. timing an instance that failed its KAT).
    fn manifest(
        &self,
        cx: &Cx,
        inst: &Instance,
        prior: &InstanceResults,
    ) -> Result<Option<Manifest>>;

    fn run(&self, cx: &Cx, inst: &Instance, prior: &InstanceResults) -> Result<Self::Output>;

    fn store(results: &mut InstanceResults, out: Self::Output);

    /// Measurement stages are rerun by `--remeasure` even when fresh.
    fn is_measurement(&self) -> bool {
        false
    }
}

/// Freshness of one stage for one instance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Freshness {
    Fresh,
    Stale(Vec<String>),
    NotApplicable,
}

/// Counters printed at the end of a run.
#[derive(Debug, Default)]
pub struct Tally {
    pub reused: AtomicUsize,
    pub ran: AtomicUsize,
    pub failures: Mutex<Vec<String>>,
}

impl Tally {
    /// Records a stage that could not produce a result for one instance; the
    /// run goes on, and the failure is shown now and in the summary.
    fn fail<T>(&self, cx: &Cx, stage: StageName, inst: &Instance, e: &anyhow::Error) -> Option<T> {
        let msg = format!("{} {}: {e:#}", stage.as_str(), inst.key());
        cx.progress.error(&msg);
        self.failures.lock().expect("tally lock").push(msg);
        None
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct LastInputs {
    key: String,
    manifest: Manifest,
}

fn state_path(cx: &Cx, stage: StageName, inst: &Instance) -> PathBuf {
    cx.plan
        .output_dir
        .join(".state")
        .join(stage.as_str())
        .join(&inst.algorithm)
        .join(format!("{}.json", inst.label))
}

/// Whether `stage` would reuse a stored result for `inst`, and if not why.
pub fn freshness<S: Stage>(
    cx: &Cx,
    stage: &S,
    inst: &Instance,
    prior: &InstanceResults,
) -> Result<(Freshness, Option<S::Output>)> {
    let Some(m) = stage.manifest(cx, inst, prior)? else {
        return Ok((Freshness::NotApplicable, None));
    };
    let key = m.key();
    let stored: Option<S::Output> = cx.cache.get(S::NAME.as_str(), &key);
    if let Some(out) = stored {
        if !(cx.remeasure && stage.is_measurement()) {
            return Ok((Freshness::Fresh, Some(out)));
        }
        return Ok((Freshness::Stale(vec!["--remeasure given".into()]), None));
    }
    let reasons = match fsutil::read_json::<LastInputs>(&state_path(cx, S::NAME, inst)) {
        Ok(last) if last.key == key => vec!["stored result missing".into()],
        Ok(last) => {
            let r = m.reasons(&last.manifest);
            if r.is_empty() {
                vec!["inputs changed".into()]
            } else {
                r
            }
        }
        Err(_) => vec!["never run".into()],
    };
    Ok((Freshness::Stale(reasons), None))
}

/// Runs one stage over every instance, in parallel or serially.
pub fn run_stage<S: Stage>(
    cx: &Cx,
    stage: &S,
    results: &mut BTreeMap<String, InstanceResults>,
    tally: &Tally,
) {
    let instances = &cx.plan.instances;
    let one = |inst: &Instance, prior: &InstanceResults| -> Option<S::Output> {
        run_one(cx, stage, inst, prior, tally).unwrap_or_else(|e| tally.fail(cx, S::NAME, inst, &e))
    };
    let outs: Vec<Option<S::Output>> = if stage.parallel() {
        instances
            .par_iter()
            .map(|inst| one(inst, &results[&inst.key()]))
            .collect()
    } else {
        instances
            .iter()
            .map(|inst| one(inst, &results[&inst.key()]))
            .collect()
    };
    for (inst, out) in instances.iter().zip(outs) {
        if let Some(out) = out {
            S::store(results.get_mut(&inst.key()).expect("instance results"), out);
        }
    }
}

fn run_one<S: Stage>(
    cx: &Cx,
    stage: &S,
    inst: &Instance,
    prior: &InstanceResults,
    tally: &Tally,
) -> Result<Option<S::Output>> {
    let Some(m) = stage.manifest(cx, inst, prior)? else {
        return Ok(None);
    };
    let key = m.key();
    if !(cx.remeasure && stage.is_measurement()) {
        if let Some(out) = cx.cache.get::<S::Output>(S::NAME.as_str(), &key) {
            tally.reused.fetch_add(1, Ordering::Relaxed);
            return Ok(Some(out));
        }
    }
    cx.progress.start(S::NAME.as_str(), &inst.key());
    let out = stage.run(cx, inst, prior)?;
    cx.cache.put(S::NAME.as_str(), &key, &out)?;
    fsutil::write_json(
        &state_path(cx, S::NAME, inst),
        &LastInputs { key, manifest: m },
    )?;
    tally.ran.fetch_add(1, Ordering::Relaxed);
    cx.progress.finish(S::NAME.as_str(), &inst.key());
    Ok(Some(out))
}

/// Runs a measuring stage with one shard per CPU: instances of one
/// algorithm stay on one core, shards run concurrently, each serially on its
/// own core, so no two measurements ever share a core.
pub fn run_stage_sharded<S: Stage>(
    cx: &Cx,
    stage: &S,
    results: &mut BTreeMap<String, InstanceResults>,
    tally: &Tally,
    cpus: &[usize],
) {
    let shards = shard_by_algorithm(&cx.plan.instances, cpus.len().max(1));
    let run_shard = |cpu: Option<usize>, members: &[usize]| -> Vec<(String, S::Output)> {
        crate::measure::set_measuring_cpu(cpu);
        let mut out = Vec::new();
        for &i in members {
            let inst = &cx.plan.instances[i];
            let result = run_one(cx, stage, inst, &results[&inst.key()], tally);
            if let Some(o) = result.unwrap_or_else(|e| tally.fail(cx, S::NAME, inst, &e)) {
                out.push((inst.key(), o));
            }
        }
        out
    };
    let outs: Vec<(String, S::Output)> = std::thread::scope(|scope| {
        let handles: Vec<_> = shards
            .iter()
            .enumerate()
            .map(|(k, members)| {
                let cpu = cpus.get(k).copied();
                let run_shard = &run_shard;
                scope.spawn(move || run_shard(cpu, members))
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    });
    for (key, out) in outs {
        S::store(results.get_mut(&key).expect("instance results"), out);
    }
}

/// Splits instance indices into `n` shards, whole algorithms at a time,
/// largest algorithms first onto the least loaded shard.
pub fn shard_by_algorithm(instances: &[Instance], n: usize) -> Vec<Vec<usize>> {
    let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, inst) in instances.iter().enumerate() {
        groups.entry(inst.algorithm.as_str()).or_default().push(i);
    }
    let mut groups: Vec<Vec<usize>> = groups.into_values().collect();
    groups.sort_by_key(|g| std::cmp::Reverse(g.len()));
    let mut shards = vec![Vec::new(); n.max(1)];
    for g in groups {
        let target = shards
            .iter_mut()
            .min_by_key(|s| s.len())
            .expect("at least one shard");
        target.extend(g);
    }
    for s in &mut shards {
        s.sort();
    }
    shards
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{ApiFamily, Binding, Kind};

    fn inst(alg: &str, label: &str) -> Instance {
        Instance {
            algorithm: alg.into(),
            label: label.into(),
            implementation: "reference".into(),
            kind: Kind::Sign,
            api: ApiFamily::Ngcc,
            sources: vec![],
            include_dirs: vec![],
            defines: vec![],
            binding: Binding::Ngcc { headers: vec![] },
            cpu_features: vec![],
            kat_records: 10,
            cmake: None,
        }
    }

    #[test]
    fn shards_keep_algorithms_together_and_balance_load() {
        let insts = vec![
            inst("a", "1"),
            inst("a", "2"),
            inst("a", "3"),
            inst("b", "1"),
            inst("c", "1"),
            inst("c", "2"),
        ];
        let shards = shard_by_algorithm(&insts, 2);
        assert_eq!(shards.len(), 2);
        let all: Vec<usize> = shards.iter().flatten().copied().collect();
        assert_eq!(all.len(), 6, "every instance in exactly one shard");
        for alg in ["a", "b", "c"] {
            let homes: Vec<usize> = (0..2)
                .filter(|&s| shards[s].iter().any(|&i| insts[i].algorithm == alg))
                .collect();
            assert_eq!(homes.len(), 1, "{alg} split across shards");
        }
        assert_eq!(shards.iter().map(Vec::len).collect::<Vec<_>>(), vec![3, 3]);
        assert_eq!(
            shard_by_algorithm(&insts, 1),
            vec![(0..6).collect::<Vec<_>>()]
        );
    }
}
