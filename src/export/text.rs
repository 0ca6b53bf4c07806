//! Plain text of `pqbench reproduce` for people: the run and its changed
//! inputs (`start`, which the binary prints before the campaign runs), then
//! the outcome (`outcome`).

use anyhow::Result;

use super::view::counts_text;
use super::Exporter;
use crate::reproduce::{Reproduction, RunStart};

#[derive(Debug, Clone, Copy, Default)]
pub struct Text;

/// The run and whether its inputs still match the lock.
pub fn start(run: &RunStart) -> String {
    let mut s = format!(
        "run {} (campaign {}, system {}, started {})\n",
        run.run_id, run.campaign, run.system, run.start_utc
    );
    if run.input_differences.is_empty() {
        s.push_str("inputs: identical to the lock\n");
    } else {
        s.push_str("inputs that differ from the lock:\n");
        for d in &run.input_differences {
            s.push_str(&format!("  {d}\n"));
        }
    }
    s
}

/// Per instance and operation what the reproduction found, and whether it
/// reproduced; or why nothing ran.
pub fn outcome(r: &Reproduction) -> String {
    let Some(rep) = &r.report else {
        return format!("{}\n", super::view::STOPPED);
    };
    let mut s = String::new();
    for i in &rep.instances {
        s.push_str(&format!(
            "{}: library {}, KAT {}\n",
            i.instance, i.library, i.kat
        ));
    }
    for o in &rep.timing.operations {
        let detail = match (o.ratio, o.ci, &o.reason) {
            (Some(r), Some((lo, hi)), _) => format!(" (ratio {r:.3}, {lo:.3}–{hi:.3})"),
            (_, _, Some(why)) => format!(" ({why})"),
            _ => String::new(),
        };
        s.push_str(&format!(
            "{} {}: {}{detail}\n",
            o.instance,
            o.op,
            o.verdict.as_str()
        ));
    }
    for c in &rep.timing.instructions {
        let detail = match (c.per_call_a, c.per_call_b, &c.reason) {
            (Some(a), Some(b), None) => format!(" ({a} → {b} per call)"),
            (_, _, Some(why)) => format!(" ({why})"),
            _ => String::new(),
        };
        s.push_str(&format!(
            "{} {} instructions: {}{detail}\n",
            c.instance,
            c.op,
            c.verdict.as_str()
        ));
    }
    s.push_str(&format!(
        "fixed figures (lengths, load bytes, stack, heap): {} identical\n",
        rep.fixed_figures_identical
    ));
    for d in &rep.fixed_figures_differing {
        s.push_str(&format!("fixed figure differs: {d}\n"));
    }
    if let Some(file) = &r.report_file {
        s.push_str(&format!("report: {file}\n"));
    }
    if rep.failures.is_empty() {
        s.push_str(&format!(
            "reproduced: {}\n",
            counts_text(&rep.timing.counts)
        ));
    } else {
        for f in &rep.failures {
            s.push_str(&format!("not reproduced: {f}\n"));
        }
    }
    s
}

impl Exporter<Reproduction> for Text {
    fn export(&self, r: &Reproduction) -> Result<Vec<u8>> {
        Ok((start(&r.run) + &outcome(r)).into_bytes())
    }
}
