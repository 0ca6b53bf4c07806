//! The one list of stages: declared order, dependencies and policies, with
//! each typed stage wrapped behind an object-safe interface the scheduler,
//! `status` and the lock use alike.

use std::any::Any;
use std::sync::Arc;

use anyhow::{Context, Result};
use serde_json::Value;

use super::results::{AllResults, Results};
use super::{CampaignStage, Job, Lender, Manifest, Policy, Publication, Stage};
use super::{PageSection, Records, Verdict};
use crate::context::Cx;
use crate::plan::Instance;
use crate::records::campaign::CampaignRecord;
use crate::records::lock::InstanceLock;

/// What every consumer needs to know about a stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StageInfo {
    pub name: &'static str,
    pub requires: &'static [&'static str],
    pub reads: &'static [&'static str],
    pub policy: Policy,
    /// Left out of the default selection (`Stage::OPT_IN`).
    pub opt_in: bool,
}

impl StageInfo {
    /// Every stage this one depends on, needed or read.
    pub(crate) fn depends_on(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.requires.iter().chain(self.reads).copied()
    }
}

pub(crate) type Slot = Arc<dyn Any + Send + Sync>;

/// A decoded result and the blobs it refers to.
pub(crate) struct Decoded {
    pub slot: Slot,
    pub artifacts: Vec<String>,
}

/// An instance stage, type-erased.
pub(crate) trait ErasedStage: Sync {
    fn info(&self) -> StageInfo;
    fn manifest(&self, job: &Job) -> Result<Option<Manifest>>;
    fn run(&self, job: &Job) -> Result<Value>;
    fn decode(&self, value: Value) -> Result<Decoded>;
    fn estimate_seconds(&self, job: &Job) -> Option<f64>;
    fn lender(&self, job: &Job, own: &Manifest) -> Result<Option<Lender>>;
    fn records(&self) -> Option<&dyn Records>;
    fn check_settings(&self, table: &Value) -> std::result::Result<(), String>;
    fn page_section(&self) -> Option<&dyn PageSection>;
    fn supersedes(&self) -> &'static [&'static str];
    fn missing(&self) -> Option<&'static str>;
    fn verdict(&self, r: &Results) -> Option<Verdict>;
    fn lock(&self, cx: &Cx, inst: &Instance, r: &Results, entry: &mut InstanceLock) -> Result<()>;
    fn campaign(&self, all: &AllResults, record: &mut CampaignRecord);
    fn open_publication(&self, p: &mut Publication);
    fn publish(&self, p: &mut Publication, inst: &Instance, r: &Results) -> Result<()>;
    fn close_publication(&self, p: &mut Publication) -> Result<()>;
}

struct Typed<S>(S);

impl<S: Stage> ErasedStage for Typed<S> {
    fn info(&self) -> StageInfo {
        StageInfo {
            name: S::NAME,
            requires: S::REQUIRES,
            reads: S::READS,
            policy: S::POLICY,
            opt_in: S::OPT_IN,
        }
    }
    fn manifest(&self, job: &Job) -> Result<Option<Manifest>> {
        self.0.manifest(job)
    }
    fn run(&self, job: &Job) -> Result<Value> {
        let out = self.0.run(job)?;
        serde_json::to_value(&out).context("encoding the stage result")
    }
    fn decode(&self, value: Value) -> Result<Decoded> {
        let out: S::Output = serde_json::from_value(value)
            .with_context(|| format!("stored {} result has another shape", S::NAME))?;
        let artifacts = self.0.artifacts(&out);
        Ok(Decoded {
            slot: Arc::new(out),
            artifacts,
        })
    }
    fn estimate_seconds(&self, job: &Job) -> Option<f64> {
        self.0.estimate_seconds(job)
    }
    fn lender(&self, job: &Job, own: &Manifest) -> Result<Option<Lender>> {
        self.0.lender(job, own)
    }
    fn records(&self) -> Option<&dyn Records> {
        self.0.records()
    }
    fn check_settings(&self, table: &Value) -> std::result::Result<(), String> {
        self.0.check_settings(table)
    }
    fn page_section(&self) -> Option<&dyn PageSection> {
        self.0.page_section()
    }
    fn supersedes(&self) -> &'static [&'static str] {
        S::SUPERSEDES
    }
    fn missing(&self) -> Option<&'static str> {
        S::MISSING
    }
    fn verdict(&self, r: &Results) -> Option<Verdict> {
        r.get::<S>().map(|out| self.0.verdict(out))
    }
    fn lock(&self, cx: &Cx, inst: &Instance, r: &Results, entry: &mut InstanceLock) -> Result<()> {
        self.0.lock(cx, inst, r.get::<S>(), entry)
    }
    fn campaign(&self, all: &AllResults, record: &mut CampaignRecord) {
        let outs: Vec<&S::Output> = all
            .instances
            .values()
            .filter_map(|r| r.get::<S>())
            .collect();
        self.0.campaign(&outs, record);
    }
    fn open_publication(&self, p: &mut Publication) {
        self.0.open_publication(p);
    }
    fn publish(&self, p: &mut Publication, inst: &Instance, r: &Results) -> Result<()> {
        match r.get::<S>() {
            Some(out) => self
                .0
                .publish(p, inst, out, r)
                .with_context(|| format!("publishing {} of {}", S::NAME, inst.key())),
            None => Ok(()),
        }
    }
    fn close_publication(&self, p: &mut Publication) -> Result<()> {
        self.0.close_publication(p)
    }
}

/// A campaign stage, type-erased.
pub(crate) trait ErasedCampaign: Sync {
    fn info(&self) -> StageInfo;
    fn manifest(&self, cx: &Cx, all: &AllResults) -> Result<Option<Manifest>>;
    fn run(&self, cx: &Cx, all: &AllResults, registry: &Registry) -> Result<Value>;
    /// The decoded result, or why it no longer stands.
    fn decode(&self, cx: &Cx, value: Value) -> Result<Result<Slot, String>>;
    fn before_deferred(&self, cx: &Cx, registry: &Registry) -> Result<()>;
}

struct TypedCampaign<S>(S);

impl<S: CampaignStage> ErasedCampaign for TypedCampaign<S> {
    fn info(&self) -> StageInfo {
        StageInfo {
            name: S::NAME,
            requires: &[],
            reads: S::READS,
            policy: Policy::Campaign,
            opt_in: false,
        }
    }
    fn manifest(&self, cx: &Cx, all: &AllResults) -> Result<Option<Manifest>> {
        self.0.manifest(cx, all)
    }
    fn run(&self, cx: &Cx, all: &AllResults, registry: &Registry) -> Result<Value> {
        let out = self.0.run(cx, all, registry)?;
        serde_json::to_value(&out).context("encoding the stage result")
    }
    fn decode(&self, cx: &Cx, value: Value) -> Result<Result<Slot, String>> {
        let out: S::Output = serde_json::from_value(value)
            .with_context(|| format!("stored {} result has another shape", S::NAME))?;
        Ok(match self.0.verify(cx, &out) {
            Some(why) => Err(why),
            None => Ok(Arc::new(out)),
        })
    }
    fn before_deferred(&self, cx: &Cx, registry: &Registry) -> Result<()> {
        self.0.before_deferred(cx, registry)
    }
}

pub(crate) enum Entry {
    Instance(Box<dyn ErasedStage>),
    Campaign(Box<dyn ErasedCampaign>),
}

impl Entry {
    pub(crate) fn info(&self) -> StageInfo {
        match self {
            Entry::Instance(s) => s.info(),
            Entry::Campaign(s) => s.info(),
        }
    }
}

/// The stages of a pipeline, in the order they run, and the dimensions
/// of further datasets a campaign may vary.
#[derive(Default)]
pub struct Registry {
    pub(crate) entries: Vec<Entry>,
    pub(crate) dimensions: Vec<Box<dyn super::Dimension>>,
}

impl Registry {
    pub fn new() -> Registry {
        Registry::default()
    }

    /// Adds an instance stage; every stage it depends on must already be
    /// registered (so declared order is a valid run order).
    pub fn stage<S: Stage>(mut self, stage: S) -> Registry {
        self.check_dependencies(S::NAME, S::REQUIRES.iter().chain(S::READS));
        self.entries.push(Entry::Instance(Box::new(Typed(stage))));
        self
    }

    /// Adds a campaign stage (run after every instance stage).
    pub(crate) fn campaign_stage<S: CampaignStage>(mut self, stage: S) -> Registry {
        self.check_dependencies(S::NAME, S::READS.iter());
        self.entries
            .push(Entry::Campaign(Box::new(TypedCampaign(stage))));
        self
    }

    /// Adds a dimension of further datasets.
    pub fn dimension<D: super::Dimension + 'static>(mut self, dimension: D) -> Registry {
        let name = dimension.name();
        // Registration is code: its folder must not be a record folder's
        // or the dataset layout's own.
        assert!(
            crate::records::layout::safe_component(name).is_ok()
                && !self.record_trees().contains(&name)
                && !crate::records::layout::RESERVED.contains(&name)
                && !self.dimensions.iter().any(|d| d.name() == name),
            "dimension {name}: its folder is taken or not a file name"
        );
        self.dimensions.push(Box::new(dimension));
        self
    }

    fn check_dependencies<'a>(&self, name: &str, deps: impl Iterator<Item = &'a &'static str>) {
        // Registration is code, not input: a wrong dependency is a bug that
        // every test run catches at once.
        for d in deps {
            assert!(
                self.info(d).is_some(),
                "stage {name} depends on {d}, which is not registered before it"
            );
        }
        assert!(self.info(name).is_none(), "stage {name} registered twice");
    }

    pub(crate) fn stages(&self) -> Vec<StageInfo> {
        self.entries.iter().map(Entry::info).collect()
    }

    pub(crate) fn names(&self) -> Vec<&'static str> {
        self.entries.iter().map(|e| e.info().name).collect()
    }

    pub(crate) fn info(&self, name: &str) -> Option<StageInfo> {
        self.entries
            .iter()
            .map(Entry::info)
            .find(|i| i.name == name)
    }

    /// The stages a campaign runs: those it selects plus everything they
    /// require, in registry order. `*` selects every stage that is not
    /// opt-in; opt-in stages run only when named.
    pub(crate) fn selected(&self, wanted: &[String]) -> Vec<StageInfo> {
        let mut keep: Vec<&str> = wanted.iter().map(String::as_str).collect();
        if wanted.iter().any(|w| w == crate::plan::ALL_STAGES) {
            keep.extend(self.stages().iter().filter(|i| !i.opt_in).map(|i| i.name));
        }
        // Registry order is a topological order: walk it backwards once.
        for info in self.stages().iter().rev() {
            if keep.contains(&info.name) {
                keep.extend(info.requires.iter().copied());
            }
        }
        self.stages()
            .into_iter()
            .filter(|i| keep.contains(&i.name))
            .collect()
    }

    /// Validates a campaign's `[stage.<name>]` table: None when no
    /// instance stage has that name.
    pub(crate) fn check_settings(
        &self,
        name: &str,
        table: &Value,
    ) -> Option<std::result::Result<(), String>> {
        self.instance_stage(name).map(|s| s.check_settings(table))
    }

    /// The record folders of every registered stage, in registry order.
    pub(crate) fn records(&self) -> Vec<&dyn Records> {
        self.instance_stages().filter_map(|s| s.records()).collect()
    }

    /// The sections stages add to the algorithm pages, in registry order.
    pub fn page_sections(&self) -> Vec<&dyn PageSection> {
        self.instance_stages()
            .filter_map(|s| s.page_section())
            .collect()
    }

    /// What a dataset loads of [`Registry::records`]: each stage's folder
    /// with its own reader.
    pub fn folders(&self) -> Vec<&dyn crate::records::folder::RecordFolder> {
        self.records()
            .into_iter()
            .map(|r| r as &dyn crate::records::folder::RecordFolder)
            .collect()
    }

    /// The dataset folder names of [`Registry::records`].
    pub fn record_trees(&self) -> Vec<&'static str> {
        self.records().iter().map(|r| r.dir()).collect()
    }

    /// Every record file any stage may publish for `inst`.
    pub(crate) fn record_files(&self, inst: &Instance) -> Vec<String> {
        self.records().iter().flat_map(|r| r.files(inst)).collect()
    }

    /// The instance's verdict for the run summary: the verdicts of the
    /// stages with a result for it, or selected without one (when they
    /// say what that means), less those a later verdict supersedes.
    pub(crate) fn verdict(&self, selected: &[StageInfo], r: &Results) -> Verdict {
        let given: Vec<(&dyn ErasedStage, Verdict)> = self
            .instance_stages()
            .filter_map(|s| {
                let v = s.verdict(r).or_else(|| {
                    let chosen = selected.iter().any(|i| i.name == s.info().name);
                    s.missing()
                        .filter(|_| chosen)
                        .map(|m| Verdict::failed(m, None))
                })?;
                Some((s, v))
            })
            .collect();
        let superseded: Vec<&str> = given
            .iter()
            .flat_map(|(s, _)| s.supersedes())
            .copied()
            .collect();
        let mut out = Verdict {
            skip_reason: given.iter().find_map(|(_, v)| v.skip_reason.clone()),
            ..Verdict::default()
        };
        for (_, v) in given
            .into_iter()
            .filter(|(s, _)| !superseded.contains(&s.info().name))
        {
            out.status = out.status.or(v.status);
            out.skipped |= v.skipped;
            out.failures.extend(v.failures);
        }
        out
    }

    /// Every stage's part of one instance's lock entry, in registry order.
    pub(crate) fn lock_entry(
        &self,
        cx: &Cx,
        inst: &Instance,
        r: &Results,
        entry: &mut InstanceLock,
    ) -> Result<()> {
        self.instance_stages()
            .try_for_each(|s| s.lock(cx, inst, r, entry))
    }

    /// Every stage's part of `campaign.json`.
    pub(crate) fn campaign_record(&self, all: &AllResults, record: &mut CampaignRecord) {
        self.instance_stages().for_each(|s| s.campaign(all, record));
    }

    /// Runs the selected campaign stages' work before deferred instances.
    pub(crate) fn before_deferred(&self, selected: &[StageInfo], cx: &Cx) -> Result<()> {
        self.entries.iter().try_for_each(|e| match e {
            Entry::Campaign(s) if selected.iter().any(|i| i.name == s.info().name) => {
                s.before_deferred(cx, self)
            }
            _ => Ok(()),
        })
    }

    /// The instance stages the campaign selects, in registry order.
    fn selected_instance_stages<'r>(
        &'r self,
        selected: &'r [StageInfo],
    ) -> impl Iterator<Item = &'r dyn ErasedStage> + 'r {
        self.instance_stages()
            .filter(move |s| selected.iter().any(|i| i.name == s.info().name))
    }

    fn instance_stages(&self) -> impl Iterator<Item = &dyn ErasedStage> + '_ {
        self.entries.iter().filter_map(|e| match e {
            Entry::Instance(s) => Some(s.as_ref()),
            Entry::Campaign(_) => None,
        })
    }

    /// Opens the publication of every selected stage.
    pub(crate) fn open_publication(&self, selected: &[StageInfo], p: &mut Publication) {
        self.selected_instance_stages(selected)
            .for_each(|s| s.open_publication(p));
    }

    /// Publishes one instance: every stage that has a result for it, in
    /// registry order (so a stage may complete what an earlier one began).
    pub fn publish(&self, p: &mut Publication, inst: &Instance, r: &Results) -> Result<()> {
        self.instance_stages()
            .try_for_each(|s| s.publish(p, inst, r))
    }

    /// Closes the publication of every selected stage.
    pub(crate) fn close_publication(
        &self,
        selected: &[StageInfo],
        p: &mut Publication,
    ) -> Result<()> {
        self.selected_instance_stages(selected)
            .try_for_each(|s| s.close_publication(p))
    }

    pub(crate) fn instance_stage(&self, name: &str) -> Option<&dyn ErasedStage> {
        self.entries.iter().find_map(|e| match e {
            Entry::Instance(s) if s.info().name == name => Some(s.as_ref()),
            _ => None,
        })
    }

    pub(crate) fn campaign_stage_named(&self, name: &str) -> Option<&dyn ErasedCampaign> {
        self.entries.iter().find_map(|e| match e {
            Entry::Campaign(s) if s.info().name == name => Some(s.as_ref()),
            _ => None,
        })
    }
}

/// Stores a decoded slot under its stage's name.
pub(crate) fn store(results: &mut Results, info: StageInfo, slot: Slot) {
    results.put_slot(info.name, slot);
}
