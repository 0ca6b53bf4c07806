//! What a finished run reports: counts of reused and computed results, KAT
//! outcomes by status, every failed item with what to do about it, and
//! where the records and pages are. Printed as text or JSON by the CLI.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::Ordering;

use serde::Serialize;

use crate::engine::{AllResults, Registry, RunTally, Stage, StageFailure};
use crate::kat::Status;
use crate::measure::OpStatus;
use crate::plan::Plan;
use crate::stages::build::BuildStage;
use crate::stages::kat::KatStage;
use crate::stages::memory::MemoryStage;
use crate::stages::profile::ProfileStage;
use crate::stages::time::TimeStage;

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
    /// Stage jobs that produced no result at all.
    pub errors: Vec<StageFailure>,
    /// Instances `--deferred-only` did not measure although their stored
    /// measurement is stale or missing (their pages say preliminary).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_measured: Vec<String>,
    /// Directories and files relative to the project root.
    pub records: String,
    pub run_dir: String,
    pub site_index: Option<String>,
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
        let selected: Vec<&str> = registry
            .selected(&plan.stages)
            .iter()
            .map(|s| s.name)
            .collect();
        let mut kat = BTreeMap::new();
        for inst in &plan.instances {
            if let Some(k) = all.of(&inst.key()).get::<KatStage>() {
                *kat.entry(k.status().to_string()).or_insert(0) += 1;
            }
        }
        let index = plan.site_dir.join("index.html");
        RunSummary {
            campaign: plan.campaign.clone(),
            system: plan.system.clone(),
            instances: plan.instances.len(),
            reused: tally.reused.load(Ordering::Relaxed),
            computed: tally.computed.load(Ordering::Relaxed),
            kat,
            failures: failures(plan, &selected, all),
            errors: tally.failures(),
            not_measured: tally.not_measured_units(),
            records: plan.display_path(&plan.output_dir),
            run_dir: plan.display_path(run_dir),
            site_index: (selected.contains(&"render") && index.is_file())
                .then(|| plan.display_path(&index)),
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
        for e in &self.errors {
            s.push_str(&format!("error: {e}\n"));
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

    /// Failures of single items still let the run finish, but not exit 0.
    pub fn exit_code(&self) -> i32 {
        if self.errors.is_empty() && self.failures.is_empty() {
            crate::error::exit::OK
        } else {
            crate::error::exit::ITEM_FAILURES
        }
    }
}

/// Every instance that did not build or pass its KAT, and every operation
/// whose measurement, memory probe or profile failed.
fn failures(plan: &Plan, selected: &[&str], all: &AllResults) -> Vec<ItemFailure> {
    let mut out = Vec::new();
    for inst in &plan.instances {
        let r = all.of(&inst.key());
        let mut fail = |what: String, detail: Option<String>| {
            out.push(ItemFailure {
                instance: inst.key(),
                what,
                detail,
            })
        };
        match r.get::<KatStage>() {
            Some(k) if k.status() != Status::Pass => fail(
                format!("KAT {}", k.status()),
                k.final_attempt().detail.clone(),
            ),
            Some(_) => {}
            None if selected.contains(&KatStage::NAME) => fail("no KAT result".into(), None),
            None => match r.get::<BuildStage>() {
                Some(b) if b.built().is_none() => fail(
                    "BUILDFAIL".into(),
                    b.attempts.last().map(|a| first_error_line(&a.log)),
                ),
                None if selected.contains(&BuildStage::NAME) => {
                    fail("no build result".into(), None)
                }
                _ => {}
            },
        }
        for o in r.get::<TimeStage>().iter().flat_map(|t| &t.ops) {
            if !o.status.is_ok() {
                fail(format!("timing {}: {}", o.op, o.status), o.detail.clone());
            }
        }
        for o in r.get::<MemoryStage>().iter().flat_map(|m| &m.ops) {
            if !o.status.is_ok() {
                fail(format!("memory {}: {}", o.op, o.status), o.detail.clone());
            }
        }
        if let Some(p) = r.get::<ProfileStage>() {
            if p.status == OpStatus::RelinkFailed {
                fail("profile relink: relink-failed".into(), p.detail.clone());
            }
            for o in &p.ops {
                if !matches!(o.status, OpStatus::Ok | OpStatus::NoHelpers) {
                    fail(format!("profile {}: {}", o.op, o.status), o.detail.clone());
                }
            }
        }
    }
    out
}

/// The first compiler `error:` line of a build log, else its first line.
pub fn first_error_line(log: &str) -> String {
    log.lines()
        .find(|l| l.contains("error:"))
        .or_else(|| log.lines().find(|l| l.contains("error")))
        .or_else(|| log.lines().next())
        .unwrap_or("")
        .trim()
        .to_string()
}
