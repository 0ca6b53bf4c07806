//! Rows and cells of the algorithm page: the environment table, TOML
//! links, footnotes and the performance rows.

use crate::format;
use crate::records::campaign::{AlgorithmInfo, KnownIssueInfo};
use crate::records::kat::KatStatus as Status;
use crate::records::operation::OperationRecord;
use crate::records::BuildRecord;

use super::model::*;
use crate::records::dataset::Dataset;

pub(crate) const DASH: &str = "–";

/// The known issues whose label pattern matches `label` in full (the same
/// rule as `plan::Algorithm::issues_for`, applied to the recorded TOML).
pub(crate) fn issues_for<'a>(a: &'a AlgorithmInfo, label: &str) -> Vec<&'a KnownIssueInfo> {
    a.known_issues
        .iter()
        .filter(|k| {
            regex::Regex::new(&format!("^(?:{})$", k.labels)).is_ok_and(|r| r.is_match(label))
        })
        .collect()
}

/// Footnotes numbered in order of first use; equal texts share a number.
#[derive(Default)]
pub(crate) struct Notes(pub Vec<String>);

impl Notes {
    pub(crate) fn add(&mut self, text: &str) -> usize {
        match self.0.iter().position(|t| t == text) {
            Some(i) => i + 1,
            None => {
                self.0.push(text.to_string());
                self.0.len()
            }
        }
    }
}

/// One instance of the algorithm with what the dataset holds about it.
pub(crate) struct Inst<'a> {
    pub label: &'a str,
    pub build: Option<&'a BuildRecord>,
    pub issues: Vec<&'a KnownIssueInfo>,
    /// Footnote numbers of `issues`, then of the KAT detail.
    pub notes: Vec<usize>,
    pub issue_notes: Vec<usize>,
}

impl Inst<'_> {
    pub(crate) fn kat_status(&self) -> &str {
        kat_status_text(self.build)
    }

    /// Whether the instance passed its KAT (not when it was not built).
    pub(crate) fn passed(&self) -> bool {
        self.build.is_some_and(|b| b.kat_status == Status::Pass)
    }
}

/// An instance's KAT status as pages print it (`NOT BUILT` without a build
/// record).
pub(crate) fn kat_status_text(build: Option<&BuildRecord>) -> &'static str {
    build.map_or("NOT BUILT", |b| b.kat_status.as_str())
}

/// `label: value` lines of the environment table.
pub(crate) fn environment(ds: &Dataset, cpus: &[usize]) -> Vec<Row2> {
    let c = &ds.campaign;
    let env = &c.environment_start;
    let row = |item: &str, value: String| Row2 {
        item: item.into(),
        value,
    };
    let cores = match cpus {
        [one] => format!("CPU {one}, one core"),
        many => format!(
            "CPUs {}, one core each",
            many.iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let check = cpus
        .first()
        .and_then(|cpu| c.host_checks.iter().find(|h| h.cpu == *cpu))
        .or(c.host_checks.first());
    let mut clock = Vec::new();
    clock.push(match env.max_mhz {
        Some(mhz) => format!("max {:.2} GHz", mhz / 1000.0),
        None => "clock unknown".into(),
    });
    if let Some(h) = check {
        clock.push(format!(
            "governor {}",
            h.governor.as_deref().unwrap_or("unknown")
        ));
        clock.push(
            match h.turbo {
                Some(true) => "turbo on",
                Some(false) => "turbo off",
                None => "turbo unknown",
            }
            .into(),
        );
        clock.push(if h.smt_siblings_online.is_empty() {
            "SMT off".into()
        } else {
            format!("SMT on (sibling {:?} online)", h.smt_siblings_online)
        });
    }
    let problems: Vec<String> = c
        .host_checks
        .iter()
        .flat_map(|h| {
            h.problems
                .iter()
                .map(move |p| format!("CPU {}: {p}", h.cpu))
        })
        .collect();
    let counter = match (&c.counter, c.counter_hz) {
        (Some(name), Some(hz)) => format!("{name} at {:.3} GHz", hz / 1e9),
        (Some(name), None) => name.clone(),
        _ => "not recorded".into(),
    };
    vec![
        row("processor", format!("{} ({cores})", env.cpu_model)),
        row("clock", clock.join(", ")),
        row("memory", format!("{} MiB", env.memory_mib)),
        row("OS / kernel", format!("{} / {}", env.os, env.kernel)),
        row(
            "compiler / build tool",
            format!("{} / {}", c.compiler.version, c.build_tool),
        ),
        row(
            "campaign start / end (UTC)",
            format!("{} / {}", c.span().0, c.span().1),
        ),
        row("cycle counter", counter),
        row(
            "host problems recorded",
            if problems.is_empty() {
                "none".into()
            } else {
                problems.join("; ")
            },
        ),
        row(
            "virtualisation",
            env.virtualization
                .clone()
                .unwrap_or_else(|| "none detected".into()),
        ),
    ]
}

/// Links of the algorithm TOML: a value `Text <url>` shows `Text`; only
/// web links (http, https) become hyperlinks: no `javascript:` or `data:`
/// from a TOML, and no relative path that would resolve inside the site.
pub(crate) fn toml_link(key: &str, value: &str) -> Bullet {
    let (text, url) = match value
        .trim()
        .strip_suffix('>')
        .and_then(|v| v.rsplit_once('<'))
    {
        Some((text, url)) if !text.trim().is_empty() => (text.trim(), url.trim()),
        _ => (value.trim(), value.trim()),
    };
    Bullet {
        label: key.into(),
        items: vec![Link::foreign(text, url)],
    }
}

/// The kernel's figure beside the claimed ones: the per-call CPU time
/// the trial processes' task-clock gives, or why there is none.
fn witness_note(rec: &OperationRecord) -> Option<String> {
    let w = rec.witness.as_ref()?;
    match (w.per_call_seconds, &w.missing) {
        (Some(per_call), _) => Some(format!(
            "kernel-witnessed CPU {} per call{}",
            format::duration(per_call),
            w.per_call_ceilings_seconds
                .iter()
                .copied()
                .reduce(f64::max)
                .map_or(String::new(), |c| format!(
                    ", at most {} in any kept trial (set-up included)",
                    format::duration(c)
                ))
        )),
        (None, Some(why)) => Some(format!("no CPU witness: {why}")),
        (None, None) => None,
    }
}

/// Trials the CPU witness asked for beyond the first set: the kept ones
/// may run more calls than the plan says.
fn witness_sets_note(rec: &OperationRecord) -> Option<String> {
    let w = rec.witness_sets.as_ref()?;
    Some(match w.scale {
        1 => format!("trials run {} times for the CPU witness", w.sets),
        n => format!(
            "kept trials of {n}× the planned calls (set {} of the CPU witness)",
            w.sets
        ),
    })
}

/// Outputs (signatures, key pairs, ciphertexts) the replay could not make
/// again from the driver's randomness: they were judged by their
/// counterpart alone (verification, a round trip, decapsulation). An
/// honest library with entropy of its own looks the same as one that
/// makes its replays differ on purpose, so it is shown, not accused.
fn unrepeatable_note(op: &str, rec: &OperationRecord) -> Option<String> {
    let not = rec
        .output_checks
        .iter()
        .filter(|c| c.repeatable == Some(false))
        .count();
    let by = match op {
        "keygen" => "a round trip",
        "enc" => "decapsulation",
        op if crate::kinds::is_kex_operation(op) => "the two sides' agreement",
        _ => "verification",
    };
    (not > 0).then(|| {
        format!(
            "outputs checked by {by} only: {not} of {} replayed calls did not repeat from the driver's randomness",
            rec.output_checks.len()
        )
    })
}

pub(crate) fn op_rows(
    inst: &Inst,
    op: &str,
    rec: &OperationRecord,
    warn: &str,
) -> (PerfRow, Option<DistRow>) {
    let label = inst.label.to_string();
    let mut notes = Vec::new();
    if !warn.is_empty() {
        notes.push(warn.to_string());
    }
    if !rec.status.is_ok() {
        notes.push(rec.detail.clone().unwrap_or_else(|| rec.status.to_string()));
    }
    if let Some(p) = &rec.plan {
        if p.budget_limited {
            notes.push("iterations cut by the time budget".into());
        }
        if p.below_min_calls {
            notes.push("fewer timed calls than min-calls".into());
        }
        if p.slow_calls {
            notes.push("no warm-up call: a call is as long as a trial".into());
        }
    }
    if rec.processes.iter().any(|p| p.line("keys").is_some()) {
        notes.push("one key pair, made once, shared by its processes".into());
    }
    if let Some(d) = disturbance(rec) {
        notes.push(format!("⚠ disturbed: {}", d.reasons().join(", ")));
    }
    if let Some(by) = &rec.measured_by {
        notes.push(format!("taken from campaign {by}"));
    }
    notes.extend(witness_note(rec));
    notes.extend(witness_sets_note(rec));
    notes.extend(unrepeatable_note(op, rec));
    let notes = notes.join("; ");
    let Some(s) = &rec.statistics else {
        let row = PerfRow {
            label,
            op: op.into(),
            mean_cycles: rec.status.to_string(),
            mean_time: DASH.into(),
            ops_per_sec: DASH.into(),
            median_trial: DASH.into(),
            n: DASH.into(),
            median_cycles: DASH.into(),
            ci_median: DASH.into(),
            notes,
        };
        return (row, None);
    };
    let calls: Vec<u64> = rec.trials.iter().map(|t| t.calls).collect();
    let pair = |(a, b): (f64, f64)| format!("{} – {}", format::cycles(a), format::cycles(b));
    let perf = PerfRow {
        label: label.clone(),
        op: op.into(),
        mean_cycles: format::cycles(s.mean_cycles),
        mean_time: format::duration(s.mean_seconds),
        ops_per_sec: format::ops_per_sec(s.ops_per_sec),
        median_trial: format::duration(s.median_trial_seconds),
        n: format!(
            "{}{}",
            format::count_n(&calls),
            // Verify's come from its setup's signature, as the reference
            // pages show them.
            format::retries_suffix(rec.sign_failures_retried + rec.setup_sign_failures_retried)
        ),
        median_cycles: format::cycles(s.median_cycles),
        ci_median: pair(s.ci_median_cycles),
        notes,
    };
    let dist = DistRow {
        label,
        op: op.into(),
        basis: if s.basis == "per-call samples" {
            "calls"
        } else {
            "trials"
        }
        .into(),
        p5_p95: pair((s.p5_cycles, s.p95_cycles)),
        cv: format::percent(s.cv),
        outliers: format!("{} low, {} high", s.outliers_low, s.outliers_high),
    };
    (perf, Some(dist))
}

/// A mean above the median by more than this factor says the host
/// disturbed the measurement (a few slow calls pull the mean, not the
/// median).
pub(crate) const DISTURBED_MEAN_OVER_MEDIAN: f64 = 1.25;

/// Why an operation's figures are flagged `⚠ disturbed`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Disturbance {
    /// Mean over median, when above `DISTURBED_MEAN_OVER_MEDIAN`.
    pub mean_over_median: Option<f64>,
    /// Trials run again after losing the CPU.
    pub repeated_trials: u32,
}

impl Disturbance {
    pub(crate) fn reasons(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(r) = self.mean_over_median {
            out.push(format!("mean {}× the median", format::g(r, 2)));
        }
        match self.repeated_trials {
            0 => {}
            1 => out.push("1 trial repeated after losing the CPU".into()),
            n => out.push(format!("{n} trials repeated after losing the CPU")),
        }
        out
    }
}

/// Whether an operation's figures were disturbed: its mean exceeds its
/// median by more than 25 %, or trials were repeated after losing the CPU.
pub(crate) fn disturbance(rec: &OperationRecord) -> Option<Disturbance> {
    let ratio = rec
        .statistics
        .as_ref()
        .filter(|s| s.median_cycles > 0.0)
        .map(|s| s.mean_cycles / s.median_cycles)
        .filter(|r| *r > DISTURBED_MEAN_OVER_MEDIAN);
    (ratio.is_some() || rec.repeated_trials > 0).then_some(Disturbance {
        mean_over_median: ratio,
        repeated_trials: rec.repeated_trials,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::measure::OutputCheck;

    fn check(repeatable: Option<bool>) -> OutputCheck {
        OutputCheck {
            trial: 1,
            seed: "00".repeat(32),
            pool: 1,
            warmup: 0,
            wraps: 0,
            call: 3,
            timed_hash: "0000000000000001".into(),
            replay_hash: Some("0000000000000002".into()),
            agrees: Some(true),
            repeatable,
        }
    }

    #[test]
    fn a_sign_whose_replays_did_not_repeat_is_shown_as_checked_by_verification_only() {
        let mut rec = crate::records::testutil::record("sign", "tsc", &[vec![10, 11]]);
        rec.output_checks = vec![check(Some(true)), check(Some(false)), check(Some(false))];
        assert_eq!(
            unrepeatable_note("sign", &rec).as_deref(),
            Some(
                "outputs checked by verification only: 2 of 3 replayed calls did not \
                 repeat from the driver's randomness"
            )
        );
        // A keygen or enc with entropy of its own is judged by its round
        // trip, and the note says which.
        let keygen = unrepeatable_note("keygen", &rec).unwrap_or_default();
        assert!(keygen.starts_with("outputs checked by a round trip only: 2 of 3"));
        let enc = unrepeatable_note("enc", &rec).unwrap_or_default();
        assert!(enc.starts_with("outputs checked by decapsulation only: 2 of 3"));
        let kex = unrepeatable_note("derive_a", &rec).unwrap_or_default();
        assert!(kex.starts_with("outputs checked by the two sides' agreement only"));
        rec.output_checks = vec![check(Some(true)), check(None)];
        assert_eq!(unrepeatable_note("sign", &rec), None);
    }
}
