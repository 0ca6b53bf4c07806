//! The pipeline engine. Stages are declared once, in a [`Registry`]: each
//! says its name, the stages whose results it needs or reads, how it runs
//! (in parallel on the build pool, sharded on the measuring CPUs, or once per
//! campaign) and what its inputs are (a [`Manifest`]). `run`, `plan`/`status`
//! and the lock file all walk that one list.
//!
//! A stage result is reused whenever the stage's manifest hashes to a key
//! seen before and the stored entry is intact; each instance's last manifest
//! is remembered so `status` can say why something is stale.
//!
//! The engine knows no concrete stage: stages implement [`Stage`] (or
//! [`CampaignStage`]) and are registered by `stages::registry()`.

mod dimension;
mod evidence;
pub(crate) mod freshness;
pub(crate) mod manifest;
mod pages;
pub(crate) mod publication;
pub mod registry;
pub(crate) mod results;
pub(crate) mod schedule;
pub(crate) mod shards;
mod state;
pub mod testing;

use anyhow::Result;
use serde::{de::DeserializeOwned, Deserialize, Serialize};

use crate::context::Cx;
use crate::plan::Instance;
use crate::records::campaign::CampaignRecord;
use crate::records::lock::InstanceLock;
pub use dimension::{ChildPlan, Dimension};
pub use evidence::{misplaced, operation_files, OperationRecords, Records};
pub use evidence::{Recompute, Verdict};
pub use freshness::{states, Freshness, StageState};
pub use manifest::Manifest;
pub use pages::{EvidenceFile, MethodText, PageSection, Part, Section, Slot};
pub use publication::Publication;
pub use registry::{Registry, StageInfo};
pub use results::StageKey;
pub use results::{AllResults, Results};
pub use schedule::{run, Hooks, RealRunner, RunTally, Runner, StageFailure};
pub use shards::cpu_assignment;
pub(crate) use state::recorded_seconds;

/// How a stage's jobs are executed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Policy {
    /// One job per instance, in parallel on the build pool (`--jobs`).
    Parallel,
    /// One job per instance, serially on the instance's measuring CPU;
    /// shards of instances run side by side, one per CPU. Rerun by
    /// `--remeasure`, and never started while a build job is running.
    Measuring,
    /// One job for the whole campaign, after every instance stage.
    Campaign,
}

/// A stored result of another campaign that a job may take instead of
/// producing its own (a campaign's explicit `reuse-measurements-from`): the
/// manifest that campaign's stage has for the same job, and where that
/// campaign records the results it vouches for. Only a result the lender
/// itself recorded under that manifest is taken.
#[derive(Debug, Clone)]
pub struct Lender {
    /// Who made the result (`<campaign>/<system>`), for records and pages.
    pub owner: String,
    pub manifest: Manifest,
    /// The lender's output directory (`output/<campaign>/<system>`).
    pub output_dir: std::path::PathBuf,
}

/// One job of an instance stage: the instance, what earlier stages produced
/// for it, and the CPU it is measured on (measuring stages).
pub struct Job<'a> {
    pub cx: &'a Cx<'a>,
    pub inst: &'a Instance,
    pub prior: &'a Results,
    pub cpu: Option<usize>,
}

/// A stage run once per instance.
pub trait Stage: Send + Sync + 'static {
    type Output: Serialize + DeserializeOwned + Clone + Send + Sync + 'static;
    /// Name in campaigns (`stages = [...]`), cache paths and status lines.
    const NAME: &'static str;
    /// Stages that must run first (added to a campaign that selects this one).
    const REQUIRES: &'static [&'static str];
    /// Further stages whose results this one reads when they ran.
    const READS: &'static [&'static str] = &[];
    const POLICY: Policy;
    /// Run only when a campaign names the stage in `stages` (a campaign
    /// without `stages`, or with `"default"`, leaves it out).
    const OPT_IN: bool = false;

    /// The stage's inputs for this job, or None when the stage does not
    /// apply (e.g. timing an instance that failed its KAT).
    fn manifest(&self, job: &Job) -> Result<Option<Manifest>>;

    fn run(&self, job: &Job) -> Result<Self::Output>;

    /// Another campaign whose result for this job (with manifest `own`)
    /// this one takes when that campaign vouches for one; None by default.
    fn lender(&self, _job: &Job, _own: &Manifest) -> Result<Option<Lender>> {
        Ok(None)
    }

    /// sha256 of the cached blobs a result refers to: a result whose
    /// artifacts are gone or damaged is stale, not reused.
    fn artifacts(&self, _out: &Self::Output) -> Vec<String> {
        Vec::new()
    }

    /// Expected seconds of the job, for progress estimates.
    fn estimate_seconds(&self, _job: &Job) -> Option<f64> {
        None
    }

    /// Validates the campaign's `[stage.<name>]` table for this stage (see
    /// [`settings`]): the error names the key at fault. A stage that
    /// takes no settings refuses any key.
    fn check_settings(&self, table: &serde_json::Value) -> std::result::Result<(), String> {
        match table.as_object().and_then(|t| t.keys().next()) {
            Some(k) => Err(format!(
                "stage `{}` takes no settings (found `{k}`)",
                Self::NAME
            )),
            None => Ok(()),
        }
    }

    /// The folder of record files this stage publishes, if any: the run
    /// directory keeps them, `check` recomputes them, and `publish`,
    /// `merge` and the executors carry every folder the registry names.
    fn records(&self) -> Option<&dyn Records> {
        None
    }

    /// The section this stage adds to each algorithm page, if any.
    fn page_section(&self) -> Option<&dyn PageSection> {
        None
    }

    /// Stages whose verdict this one's replaces when it gives one (the KAT
    /// verdict says more than the build's).
    const SUPERSEDES: &'static [&'static str] = &[];

    /// The failure reported when the campaign selects this stage and it
    /// left no result for an instance; None reports nothing.
    const MISSING: Option<&'static str> = None;

    /// What the result says about the instance, for the run's summary.
    fn verdict(&self, _out: &Self::Output) -> Verdict {
        Verdict::default()
    }

    /// Its part of the instance's entry in the run's lock file; called
    /// for every registered stage, with its result when it has one, in
    /// registry order (a later stage may refine what an earlier one set).
    fn lock(
        &self,
        _cx: &Cx,
        _inst: &Instance,
        _out: Option<&Self::Output>,
        _entry: &mut InstanceLock,
    ) -> Result<()> {
        Ok(())
    }

    /// Its part of `campaign.json`, from every instance's result (in
    /// instance-key order).
    fn campaign(&self, _outs: &[&Self::Output], _record: &mut CampaignRecord) {}

    /// Called once per run, before any instance, when the campaign runs
    /// the stage: opens the shared files it contributes to.
    fn open_publication(&self, _p: &mut Publication) {}

    /// Publishes the stage's result for one instance (`r` holds every
    /// stage's result for it): its own record files, its part of the
    /// shared files. Nothing by default.
    fn publish(
        &self,
        _p: &mut Publication,
        _inst: &Instance,
        _out: &Self::Output,
        _r: &Results,
    ) -> Result<()> {
        Ok(())
    }

    /// Called once per run after every instance, when the campaign runs
    /// the stage: completes what it opened.
    fn close_publication(&self, _p: &mut Publication) -> Result<()> {
        Ok(())
    }
}

/// A stage run once for the whole campaign, after the instance stages.
pub(crate) trait CampaignStage: Send + Sync + 'static {
    type Output: Serialize + DeserializeOwned + Clone + Send + Sync + 'static;
    const NAME: &'static str;
    /// Instance stages whose results (or records) it reads.
    const READS: &'static [&'static str];

    fn manifest(&self, cx: &Cx, all: &AllResults) -> Result<Option<Manifest>>;
    /// `registry` is the run's (a campaign stage may gather what every
    /// stage contributes, such as page sections).
    fn run(&self, cx: &Cx, all: &AllResults, registry: &Registry) -> Result<Self::Output>;

    /// Why a stored result no longer stands (e.g. a file it wrote was
    /// changed or deleted), or None when it does.
    fn verify(&self, _cx: &Cx, _out: &Self::Output) -> Option<String> {
        None
    }

    /// Run before the deferred instances are measured, when the campaign
    /// runs the stage: what it can give of the rest already (pages marking
    /// the deferred instances preliminary).
    fn before_deferred(&self, _cx: &Cx, _registry: &Registry) -> Result<()> {
        Ok(())
    }
}

/// The result this campaign last stored for stage `S` of the instance with
/// key `unit`, when it is intact: for a stage that compares an instance
/// with others of the campaign, run after every instance went through `S`
/// (the stages before the first measuring one run stage by stage).
pub(crate) fn stored_result<S: Stage>(cx: &Cx, unit: &str) -> Option<S::Output> {
    let last = state::read(cx, S::NAME, unit)?;
    match cx.cache.lookup(S::NAME, &last.key) {
        crate::cache::Lookup::Hit { value, .. } => serde_json::from_value(value).ok(),
        _ => None,
    }
}

/// A stage's settings: its table of the campaign (`[stage.<name>]`, or
/// the table of its own name, `config::campaign::OWN_TABLES`), or the
/// defaults when the campaign has none. `T` should deny unknown fields, so
/// a misspelt key is an error naming it.
pub fn settings<T: DeserializeOwned + Default>(plan: &crate::plan::Plan, stage: &str) -> Result<T> {
    match plan.stage_settings.get(stage) {
        Some(v) => serde_json::from_value(v.clone()).map_err(|e| {
            let at = crate::config::campaign::settings_table(stage);
            anyhow::anyhow!("[{at}]: {e}")
        }),
        None => Ok(T::default()),
    }
}
