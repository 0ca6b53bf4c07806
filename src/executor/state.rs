//! What a system's executor remembers between runs, under
//! `output/<campaign>/<system>/.executor/`: the shard plan for the current
//! inputs, which shards finished (their datasets fetched under `shards/`),
//! and a submitted Slurm job. While the inputs stay the same, the shard plan
//! stays the same, so a later run sends only the shards still missing.

use std::path::PathBuf;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::bundle::Bundle;
use super::combine::ShardData;
use super::remote::Remote;
use super::shards::{self, Shard};
use crate::cache::Cache;
use crate::fsutil;
use crate::plan::Plan;
use crate::records::lock::{self, Lock, ShardLock};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct ExecState {
    pub bundle: String,
    pub shards: Vec<Shard>,
    /// Shards whose datasets were fetched.
    pub done: Vec<usize>,
    /// A submitted Slurm job array and the shard of each task.
    #[serde(default)]
    pub job: Option<SlurmJob>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct SlurmJob {
    pub id: String,
    /// Shard indices, in array-task order.
    pub tasks: Vec<usize>,
}

fn dir(plan: &Plan) -> PathBuf {
    plan.output_dir.join(".executor")
}

impl ExecState {
    /// The saved state when it is for these inputs and instances, else a new
    /// shard plan over `n` shards from the prior costs.
    pub(super) fn load_or_plan(
        plan: &Plan,
        bundle: &Bundle,
        default_cost: f64,
        n: usize,
    ) -> Result<ExecState> {
        let digest = bundle.digest();
        let keys: Vec<String> = plan.instances.iter().map(|i| i.key()).collect();
        if let Ok(s) = fsutil::read_json::<ExecState>(&dir(plan).join("state.json")) {
            let mut same: Vec<String> = s.shards.iter().flat_map(|x| x.instances.clone()).collect();
            same.sort();
            let mut want = keys.clone();
            want.sort();
            if s.bundle == digest && same == want {
                return Ok(s);
            }
        }
        let (items, _) = shards::costed(plan, default_cost);
        Ok(ExecState {
            bundle: digest,
            shards: shards::assign(&items, n),
            done: Vec::new(),
            job: None,
        })
    }

    pub(super) fn save(&self, plan: &Plan) -> Result<()> {
        fsutil::write_json(&dir(plan).join("state.json"), self)
    }

    /// Where shard `k`'s fetched dataset is kept.
    pub(super) fn shard_data_dir(&self, plan: &Plan, k: usize) -> PathBuf {
        dir(plan).join("shards").join(k.to_string())
    }

    /// The saved state, if any (for `status`).
    pub(super) fn load(plan: &Plan) -> Option<ExecState> {
        fsutil::read_json(&dir(plan).join("state.json")).ok()
    }
}

/// The lock of the shard's own run, fetched beside its dataset.
fn shard_lock(plan: &Plan, st: &ExecState, k: usize) -> Option<Lock> {
    fsutil::read_json(&st.shard_data_dir(plan, k).join(lock::LOCK_FILE)).ok()
}

/// Files the combined run here: a lock built from the plan, the shards'
/// hosts and where each ran, with this side's copies of the records.
pub(super) fn file_combined_run(
    plan: &Plan,
    cache: &Cache,
    st: &ExecState,
    data: &[ShardData],
    remote: &dyn Remote,
) -> Result<PathBuf> {
    let c: crate::records::campaign::CampaignRecord =
        fsutil::read_json(&plan.output_dir.join(crate::records::layout::CAMPAIGN))?;
    let shards_lock = data
        .iter()
        .map(|d| {
            let s = st.shards.iter().find(|s| s.index == d.index);
            ShardLock {
                index: d.index,
                instances: s.map(|s| s.instances.clone()).unwrap_or_default(),
                ran_on: remote.describe(),
                host_fingerprint: d.campaign.host_fingerprint.clone(),
                run_id: shard_lock(plan, st, d.index)
                    .map(|l| l.run_id)
                    .unwrap_or_default(),
                cost_seconds: s.map_or(0.0, |s| s.cost_seconds),
            }
        })
        .collect();
    let mut l = Lock {
        lock_version: lock::LOCK_VERSION,
        run_id: String::new(),
        reproduces: None,
        pqbench_version: env!("CARGO_PKG_VERSION").to_string(),
        stage_logic_version: crate::STAGE_LOGIC_VERSION.to_string(),
        campaign: plan.campaign.clone(),
        system: plan.system.clone(),
        start_utc: c.start_utc.clone(),
        end_utc: c.end_utc.clone(),
        fresh_cache: false,
        plan: crate::plan::recorded::relative_plan(plan)?,
        config_files: crate::plan::recorded::config_files(plan),
        compiler: c.compiler.clone(),
        support_version: crate::support::version(),
        seeds: lock::Seeds::fixed(),
        host: lock::HostLock {
            fingerprint: c.host_fingerprint.clone(),
            cpus: c.cpus.clone(),
            checks: c.host_checks.clone(),
            environment: c.environment_start.clone(),
            counter: c.counter.clone(),
            counter_hz: c.counter_hz,
        },
        environment: Default::default(),
        instances: instance_locks(plan, st, data),
        files: Default::default(),
        children: Vec::new(),
        shards: shards_lock,
    };
    crate::pipeline::rundir::file_run(
        plan,
        &crate::stages::registry(),
        cache,
        &mut l,
        &plan.output_dir.join(crate::records::layout::RUNS),
    )
}

/// Every instance's lock entry, from the shard that ran it, in plan order.
fn instance_locks(plan: &Plan, st: &ExecState, data: &[ShardData]) -> Vec<lock::InstanceLock> {
    let mut all: Vec<lock::InstanceLock> = data
        .iter()
        .filter_map(|d| shard_lock(plan, st, d.index))
        .flat_map(|l| l.instances)
        .collect();
    let rank = |key: &str| plan.instances.iter().position(|i| i.key() == key);
    all.sort_by_key(|i| rank(&i.instance));
    all
}
