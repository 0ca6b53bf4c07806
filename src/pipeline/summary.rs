//! What a finished run reports: counts of reused and computed results, KAT
//! outcomes by status, every failed item with what to do about it, and
//! where the records and pages are. Printed as text or JSON by the CLI.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::Ordering;

use serde::Serialize;

use crate::engine::{AllResults, Registry, RunTally, StageFailure, Verdict};
use crate::kat::Status;
use crate::plan::Plan;

#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    pub campaign: String,
    pub system: String,
    pub instances: usize,
    pub reused: usize,
    pub computed: usize,
    /// KAT statuses and how many instances have each.
    pub kat: BTreeMap<String, usize>,
    /// Items that did not pass or could not be measured.
    pub failures: Vec<ItemFailure>,
    /// Instances not built on this system (written for another
    /// architecture, or needing a CPU feature it lacks): neither passed
    /// nor failed.
    #[serde(default)]
    pub skipped: Vec<ItemFailure>,
    /// Stage jobs that produced no result at all.
    pub errors: Vec<StageFailure>,
    /// Shards submitted and not finished yet (`run --detach`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<String>,
    /// Instances `--deferred-only` did not measure although their stored
    /// measurement is stale or missing (their pages say preliminary).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_measured: Vec<String>,
    /// Directories and files relative to the project root.
    pub records: String,
    pub run_dir: String,
    pub site_index: Option<String>,
    /// The further datasets (a `[matrix]`'s combinations, or another
    /// dimension's), in the order they ran.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<ChildSummary>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ItemFailure {
    pub instance: String,
    pub what: String,
    pub detail: Option<String>,
}

impl RunSummary {
    pub fn new(
        plan: &Plan,
        registry: &Registry,
        all: &AllResults,
        tally: &RunTally,
        run_dir: &Path,
    ) -> RunSummary {
        let selected = registry.selected(&plan.stages);
        let verdicts: Vec<(String, Verdict)> = plan
            .instances
            .iter()
            .map(|i| (i.key(), registry.verdict(&selected, all.of(&i.key()))))
            .collect();
        let mut kat = BTreeMap::new();
        for status in verdicts.iter().filter_map(|(_, v)| v.status.clone()) {
            *kat.entry(status).or_insert(0) += 1;
        }
        let index = plan.site_dir.join("index.html");
        RunSummary {
            campaign: plan.campaign.clone(),
            system: plan.system.clone(),
            instances: plan.instances.len(),
            reused: tally.reused.load(Ordering::Relaxed),
            computed: tally.computed.load(Ordering::Relaxed),
            kat,
            failures: failures(&verdicts),
            skipped: skipped(&verdicts),
            errors: tally.failures(),
            pending: Vec::new(),
            not_measured: tally.not_measured_units(),
            records: plan.display_path(&plan.output_dir),
            run_dir: plan.display_path(run_dir),
            // Pages are named when a campaign stage (the one rendering
            // them) ran or was reused in this run.
            site_index: (!all.campaign.keys().is_empty() && index.is_file())
                .then(|| plan.display_path(&index)),
            children: Vec::new(),
        }
    }

    /// What `pqbench run` prints at the end.
    pub fn report(&self) -> String {
        let mut s = String::new();
        if !self.kat.is_empty() {
            let counts: Vec<String> = self.kat.iter().map(|(k, n)| format!("{n} {k}")).collect();
            s.push_str(&format!(
                "KAT: {} of {} instances\n",
                counts.join(", "),
                self.instances
            ));
        }
        for f in &self.failures {
            s.push_str(&format!("FAIL {}: {}", f.instance, f.what));
            if let Some(d) = &f.detail {
                s.push_str(&format!(" ({d})"));
            }
            s.push('\n');
        }
        for f in &self.skipped {
            s.push_str(&format!("SKIP {}: {}", f.instance, f.what));
            if let Some(d) = &f.detail {
                s.push_str(&format!(" ({d})"));
            }
            s.push('\n');
        }
        for e in &self.errors {
            s.push_str(&format!("error: {e}\n"));
        }
        for c in &self.children {
            s.push_str(&c.line());
            s.push('\n');
        }
        for p in &self.pending {
            s.push_str(&format!("pending: {p}\n"));
        }
        if self.failures.iter().any(|f| f.what == "KAT NOKAT") {
            s.push_str(&format!(
                "hint: NOKAT means no reference KAT; check the generated files under {}/kat/, then record them with `pqbench bless {}`\n",
                self.records, self.campaign
            ));
        }
        if !self.not_measured.is_empty() {
            s.push_str(&format!(
                "not measured (--deferred-only keeps the other instances as stored): {}\n",
                self.not_measured.join(", ")
            ));
        }
        s.push_str(&format!(
            "{} stage results reused, {} computed; records in {}, run {}\n",
            self.reused, self.computed, self.records, self.run_dir
        ));
        if let Some(i) = &self.site_index {
            s.push_str(&format!("pages: {i}\n"));
        }
        s
    }

    /// The summary of a run whose shards ran elsewhere, from the combined
    /// dataset's `build.json` and records; `shards` names the shards
    /// without results (lost, or still running).
    pub(crate) fn from_dataset(
        plan: &Plan,
        run_dir: Option<&Path>,
        shards: Vec<StageFailure>,
        pending: Vec<String>,
    ) -> anyhow::Result<RunSummary> {
        use crate::records::operation::OperationRecord;
        let mut kat = BTreeMap::new();
        let mut failures = Vec::new();
        let mut fail = |instance: String, what: String, detail: Option<String>| {
            failures.push(ItemFailure {
                instance,
                what,
                detail,
            })
        };
        let build: Option<crate::records::BuildJson> =
            crate::fsutil::read_json(&plan.output_dir.join(crate::records::layout::BUILD)).ok();
        let mut skipped = Vec::new();
        for r in build.iter().flat_map(|b| &b.instances) {
            *kat.entry(r.kat_status.to_string()).or_insert(0) += 1;
            if r.kat_status == Status::Skipped {
                skipped.push(ItemFailure {
                    instance: format!("{}/{}", r.algorithm, r.label),
                    what: "not built on this system".into(),
                    detail: r.kat_detail.clone(),
                });
            }
            if !matches!(r.kat_status, Status::Pass | Status::Skipped) {
                fail(
                    format!("{}/{}", r.algorithm, r.label),
                    format!("KAT {}", r.kat_status),
                    r.kat_detail.clone(),
                );
            }
        }
        let records = crate::records::folder::json_files(
            &plan.output_dir.join(crate::records::layout::RECORDS),
        )
        .unwrap_or_default();
        for f in records {
            if let Ok(r) = crate::fsutil::read_json::<OperationRecord>(&f) {
                if !r.status.is_success() {
                    fail(
                        format!("{}/{}", r.algorithm, r.label),
                        format!("timing {}: {}", r.op, r.status),
                        r.detail.clone(),
                    );
                }
            }
        }
        let errors = shards;
        let index = plan.site_dir.join("index.html");
        Ok(RunSummary {
            campaign: plan.campaign.clone(),
            system: plan.system.clone(),
            instances: plan.instances.len(),
            reused: 0,
            computed: 0,
            kat,
            failures,
            errors,
            pending,
            not_measured: Vec::new(),
            skipped,
            records: plan.display_path(&plan.output_dir),
            run_dir: run_dir.map(|d| plan.display_path(d)).unwrap_or_default(),
            site_index: index.is_file().then(|| plan.display_path(&index)),
            children: Vec::new(),
        })
    }

    /// Failures of single items still let the run finish, but not exit 0.
    /// A further dataset's failed build or KAT is a finding on its page
    /// (a matrix cell), not a failure of the run; one that could not run
    /// is.
    pub fn exit_code(&self) -> i32 {
        let children_ran = self.children.iter().all(|c| c.errors.is_empty());
        if self.errors.is_empty() && self.failures.is_empty() && children_ran {
            crate::error::exit::OK
        } else {
            crate::error::exit::ITEM_FAILURES
        }
    }
}

/// Every failure of every instance not skipped, in plan order and, within
/// an instance, in registry order.
fn failures(verdicts: &[(String, Verdict)]) -> Vec<ItemFailure> {
    verdicts
        .iter()
        .filter(|(_, v)| !v.skipped)
        .flat_map(|(instance, v)| {
            v.failures.iter().map(|(what, detail)| ItemFailure {
                instance: instance.clone(),
                what: what.clone(),
                detail: detail.clone(),
            })
        })
        .collect()
}

/// Instances this host cannot build, with the reason.
fn skipped(verdicts: &[(String, Verdict)]) -> Vec<ItemFailure> {
    verdicts
        .iter()
        .filter(|(_, v)| v.skipped)
        .map(|(instance, v)| ItemFailure {
            instance: instance.clone(),
            what: "not built on this host".into(),
            detail: v.skip_reason.clone(),
        })
        .collect()
}

/// What one further dataset's run came to.
#[derive(Debug, Clone, Serialize)]
pub struct ChildSummary {
    pub dimension: String,
    pub name: String,
    /// Stage results reused from the cache and computed by this run.
    pub reused: usize,
    pub computed: usize,
    /// KAT statuses and how many instances have each.
    pub kat: BTreeMap<String, usize>,
    /// Instances that did not pass or could not be timed (findings of the
    /// further dataset, shown on its pages).
    pub failures: Vec<ItemFailure>,
    /// Why the further dataset could not run, or stage jobs that produced
    /// nothing: these do set the exit code.
    pub errors: Vec<String>,
}
