//! The per-algorithm, per-system page: sections 1–7 of the reference page,
//! plus the distribution figures, resource columns and the chart beyond it.

use std::collections::BTreeMap;

use crate::format;
use crate::records::campaign::{AlgorithmInfo, KnownIssueInfo};
use crate::records::operation::OperationRecord;
use crate::records::BuildRecord;

use super::chart;
use super::dataset::Dataset;
use super::model::*;
use super::{anchor, crumb, kind_function, Systems};

const DASH: &str = "–";

/// The known issues whose label pattern matches `label` in full (the same
/// rule as `plan::Algorithm::issues_for`, applied to the recorded TOML).
pub fn issues_for<'a>(a: &'a AlgorithmInfo, label: &str) -> Vec<&'a KnownIssueInfo> {
    a.known_issues
        .iter()
        .filter(|k| {
            regex::Regex::new(&format!("^(?:{})$", k.labels)).is_ok_and(|r| r.is_match(label))
        })
        .collect()
}

/// Footnotes numbered in order of first use; equal texts share a number.
#[derive(Default)]
struct Notes(Vec<String>);

impl Notes {
    fn add(&mut self, text: &str) -> usize {
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
struct Inst<'a> {
    label: &'a str,
    build: Option<&'a BuildRecord>,
    issues: Vec<&'a KnownIssueInfo>,
    /// Footnote numbers of `issues`, then of the KAT detail.
    notes: Vec<usize>,
    issue_notes: Vec<usize>,
}

impl Inst<'_> {
    fn kat_status(&self) -> &str {
        self.build.map_or("NOT BUILT", |b| b.kat_status.as_str())
    }
}

/// `label: value` lines of the environment table.
fn environment(ds: &Dataset, cpus: &[usize]) -> Vec<Row2> {
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
            many.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", ")
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
        .flat_map(|h| h.problems.iter().map(move |p| format!("CPU {}: {p}", h.cpu)))
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
            format!("{} / {}", c.start_utc, c.end_utc),
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
            env.virtualization.clone().unwrap_or_else(|| "none detected".into()),
        ),
    ]
}

/// Links of the algorithm TOML: a value `Text <url>` shows `Text`; only
/// web and relative links become hyperlinks (no `javascript:` from a TOML).
fn toml_link(key: &str, value: &str) -> Bullet {
    let (text, url) = match value.trim().strip_suffix('>').and_then(|v| v.rsplit_once('<')) {
        Some((text, url)) if !text.trim().is_empty() => (text.trim(), url.trim()),
        _ => (value.trim(), value.trim()),
    };
    let scheme = url.split_once(':').map(|(s, _)| s.to_ascii_lowercase());
    let linkable = match scheme.as_deref() {
        Some("http") | Some("https") => true,
        Some(s) => s.contains('/') || s.contains('#'),
        None => true,
    };
    let item = if linkable && !url.is_empty() {
        Link::file(text, url)
    } else {
        Link::text(text)
    };
    Bullet {
        label: key.into(),
        items: vec![item],
    }
}

fn op_rows(
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
    if rec.status != "ok" {
        notes.push(rec.detail.clone().unwrap_or_else(|| rec.status.clone()));
    }
    if let Some(p) = &rec.plan {
        if p.budget_limited {
            notes.push("iterations cut by the time budget".into());
        }
        if p.below_min_calls {
            notes.push("fewer timed calls than min-calls".into());
        }
    }
    if rec.repeated_trials > 0 {
        notes.push(format!("{} trial(s) repeated after losing the CPU", rec.repeated_trials));
    }
    let notes = notes.join("; ");
    let Some(s) = &rec.statistics else {
        let row = PerfRow {
            label,
            op: op.into(),
            mean_cycles: rec.status.clone(),
            mean_time: DASH.into(),
            ops_per_sec: DASH.into(),
            median_trial: DASH.into(),
            n: DASH.into(),
            notes,
        };
        return (row, None);
    };
    let calls: Vec<u64> = rec.trials.iter().map(|t| t.calls).collect();
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
            format::retries_suffix(rec.sign_failures_retried)
        ),
        notes,
    };
    let pair = |(a, b): (f64, f64)| format!("{} – {}", format::cycles(a), format::cycles(b));
    let dist = DistRow {
        label,
        op: op.into(),
        basis: if s.basis == "per-call samples" { "calls" } else { "trials" }.into(),
        median: format::cycles(s.median_cycles),
        p5_p95: pair((s.p5_cycles, s.p95_cycles)),
        ci_median: pair(s.ci_median_cycles),
        cv: format::percent(s.cv),
        outliers: format!("{} low, {} high", s.outliers_low, s.outliers_high),
    };
    (perf, Some(dist))
}

fn mem_row(inst: &Inst, op: &str, rec: &OperationRecord) -> MemRow {
    let num = |v: Option<u64>| v.map_or(DASH.to_string(), |v| v.to_string());
    let kib = |v: Option<u64>| v.map_or(DASH.to_string(), format::kib);
    let load = rec
        .memory
        .as_ref()
        .and_then(|m| m.load_bytes)
        .or(inst.build.and_then(|b| b.load_bytes));
    let mut row = MemRow {
        label: inst.label.into(),
        op: op.into(),
        static_bytes: num(load),
        baseline_rss: DASH.into(),
        peak_rss: DASH.into(),
        stack_bytes: DASH.into(),
        heap_peak_bytes: DASH.into(),
    };
    match &rec.memory {
        Some(m) if m.status == "ok" => {
            row.baseline_rss = kib(m.baseline_rss_kib);
            row.peak_rss = kib(m.peak_rss_kib);
            row.stack_bytes = num(m.stack_bytes);
            row.heap_peak_bytes = num(m.heap_peak_bytes);
        }
        Some(m) => row.baseline_rss = m.status.clone(),
        None => row.baseline_rss = "not measured".into(),
    }
    row
}

/// `drng 289, pseudoXOF 349`: the DRNG helpers summed as `drng` first,
/// then every other helper by name.
pub fn calls_text(p: &crate::records::analysis::ProfileRecord) -> String {
    let drng: Vec<&str> = p
        .shapes
        .iter()
        .filter(|s| s.class == "drng")
        .map(|s| s.function.as_str())
        .collect();
    let mut parts = Vec::new();
    let drng_calls: f64 = p
        .calls_per_op
        .iter()
        .filter(|(f, _)| drng.contains(&f.as_str()))
        .map(|(_, v)| v)
        .sum();
    if !drng.is_empty() {
        parts.push(format!("drng {}", format::calls_per_op(drng_calls)));
    }
    for (f, v) in &p.calls_per_op {
        if !drng.contains(&f.as_str()) {
            parts.push(format!("{f} {}", format::calls_per_op(*v)));
        }
    }
    parts.join(", ")
}

pub fn build(ds: &Dataset, a: &AlgorithmInfo, systems: &Systems) -> AlgorithmPage {
    let system = ds.system().to_string();
    let ops = a.kind.operations();
    let mut notes = Notes::default();
    let insts: Vec<Inst> = a
        .labels
        .iter()
        .map(|label| {
            let build = ds.build_record(&a.id, label);
            let issues = issues_for(a, label);
            let issue_notes: Vec<usize> = issues.iter().map(|k| notes.add(&k.cause)).collect();
            let mut all = issue_notes.clone();
            if let Some(b) = build.filter(|b| b.kat_status != "PASS") {
                if let Some(d) = &b.kat_detail {
                    all.push(notes.add(&format!("{label} {}: {d}", b.kat_status)));
                }
            }
            Inst {
                label,
                build,
                issues,
                notes: all,
                issue_notes,
            }
        })
        .collect();

    let kat_rows = insts
        .iter()
        .map(|i| KatRow {
            label: i.label.into(),
            flags: flags_text(i.build),
            status: i.kat_status().into(),
            notes: i.notes.clone(),
        })
        .collect();

    let mut perf_rows = Vec::new();
    let mut dist_rows = Vec::new();
    let mut mem_rows = Vec::new();
    let mut share_rows = Vec::new();
    let mut warnings = Vec::new();
    let mut evidence = Vec::new();
    let mut chart_rows = Vec::new();
    let mut cpus: Vec<usize> = Vec::new();
    let href = |p: &str| format!("../{}/{p}", ds.href);
    for inst in &insts {
        let recs: Vec<(&str, &OperationRecord)> = ops
            .iter()
            .filter_map(|op| ds.record(&a.id, inst.label, op).map(|r| (*op, r)))
            .collect();
        let measured: Vec<&&KnownIssueInfo> =
            inst.issues.iter().filter(|k| k.action == "measure").collect();
        let mut warn = String::new();
        if !recs.is_empty() && !measured.is_empty() {
            let refs: Vec<String> = inst.issue_notes.iter().map(|n| format!("[{n}]")).collect();
            warn = format!("⚠ {}", refs.join(" "));
            for k in &measured {
                warnings.push(format!(
                    "{} (KAT {}): timed despite a known issue: {}",
                    inst.label,
                    inst.kat_status(),
                    k.cause
                ));
            }
        } else if !recs.is_empty() && inst.kat_status() != "PASS" {
            warn = format!("⚠ timed despite KAT {}", inst.kat_status());
        }
        if recs.is_empty() {
            let why = if inst.build.is_none() {
                "not built".to_string()
            } else if inst.issues.iter().any(|k| k.action == "exclude") {
                "excluded by a known issue".to_string()
            } else {
                format!("KAT {}", inst.kat_status())
            };
            perf_rows.push(PerfRow {
                label: inst.label.into(),
                op: DASH.into(),
                mean_cycles: format!("not timed ({why})"),
                mean_time: DASH.into(),
                ops_per_sec: DASH.into(),
                median_trial: DASH.into(),
                n: DASH.into(),
                notes: String::new(),
            });
        }
        for (op, rec) in &recs {
            let (p, d) = op_rows(inst, op, rec, &warn);
            perf_rows.push(p);
            dist_rows.extend(d);
            mem_rows.push(mem_row(inst, op, rec));
            cpus.extend(rec.cpu.filter(|c| !cpus.contains(c)));
            if let Some(s) = &rec.statistics {
                chart_rows.push(chart::Bar {
                    label: format!("{} {op}", inst.label),
                    value: s.mean_cycles,
                    low: s.ci_median_cycles.0,
                    high: s.ci_median_cycles.1,
                    series: ops.iter().position(|o| o == op).unwrap_or(0),
                });
            }
        }
        for op in ops {
            if let Some(p) = ds.profile(&a.id, inst.label, op) {
                let ok = p.status == "ok";
                share_rows.push(ShareRow {
                    label: inst.label.into(),
                    op: op.to_string(),
                    hash: if ok { format::percent(p.hash_share) } else { p.status.clone() },
                    drng: if ok { format::percent(p.drng_share) } else { DASH.into() },
                    calls: if ok { calls_text(p) } else { p.detail.clone().unwrap_or_default() },
                });
            }
        }
        if let Some(b) = inst.build {
            if let Some(log) = &b.kat_log {
                evidence.push(EvidenceRow {
                    label: inst.label.into(),
                    item: "KAT log".into(),
                    sha256: b.kat_log_sha256.as_deref().map(format::hex_prefix),
                    file: Link::file(log.clone(), href(log)),
                });
            }
        }
        for (op, _) in &recs {
            let p = crate::records::operation::record_path(&a.id, inst.label, op);
            evidence.push(EvidenceRow {
                label: inst.label.into(),
                item: format!("timing {op}"),
                sha256: None,
                file: Link::file(p.clone(), href(&p)),
            });
        }
        for op in ops {
            if ds.profile(&a.id, inst.label, op).is_some() {
                let p = crate::records::analysis::profile_path(&a.id, inst.label, op);
                evidence.push(EvidenceRow {
                    label: inst.label.into(),
                    item: format!("hash profile {op}"),
                    sha256: None,
                    file: Link::file(p.clone(), href(&p)),
                });
            }
        }
    }
    if cpus.is_empty() {
        cpus = ds.campaign.cpus.clone();
    }

    let size_columns: Vec<String> = match a.kind {
        crate::plan::Kind::Sign => vec!["public key", "secret key", "signature"],
        crate::plan::Kind::Kem => vec!["public key", "secret key", "ciphertext", "shared secret"],
    }
    .into_iter()
    .map(String::from)
    .collect();
    let size_rows = insts
        .iter()
        .filter_map(|i| {
            let row = ds.sizes.as_ref()?.instances.iter().find(|r| {
                r.algorithm == a.id && r.label == i.label
            })?;
            let cells = size_columns
                .iter()
                .map(|c| {
                    row.figures
                        .get(c)
                        .and_then(|f| f.shown)
                        .map_or(DASH.to_string(), |v| v.to_string())
                })
                .collect();
            Some(CellsRow {
                label: i.label.into(),
                cells,
            })
        })
        .collect();

    let survey = ds
        .survey
        .as_ref()
        .and_then(|s| s.algorithms.iter().find(|x| x.algorithm == a.id))
        .map(|s| SurveyLine {
            verdict: Link::page(s.verdict.clone(), "../survey")
                .with_fragment(anchor(&[&system, &a.id])),
            note: s.note.clone(),
            reason: s.reason.clone(),
        });
    let mut builds: Vec<&str> = insts
        .iter()
        .filter_map(|i| i.build.map(|b| b.implementation.as_str()))
        .collect();
    builds.dedup();

    let title_system = ds.campaign.system_title.clone().unwrap_or_else(|| system.clone());
    let mut basic = vec![
        Bullet {
            label: "Category".into(),
            items: vec![Link::text(format!(
                "public-key algorithm; function: {}",
                kind_function(a.kind)
            ))],
        },
        Bullet {
            label: "Algorithm".into(),
            items: vec![Link::text(a.name.clone())],
        },
        Bullet {
            label: "Implementation versions measured".into(),
            items: a.implementations.iter().cloned().map(Link::text).collect(),
        },
        Bullet {
            label: "Parameter sets".into(),
            items: a.labels.iter().cloned().map(Link::text).collect(),
        },
    ];
    basic.extend(a.links.iter().map(|(k, v)| toml_link(k, v)));
    basic.push(Bullet {
        label: "Measurement method".into(),
        items: vec![Link::page(format!("{system} method"), "method")],
    });

    AlgorithmPage {
        crumb: crumb(systems, &system, Some(&a.id), |other| {
            systems
                .has(other, &a.id)
                .then(|| format!("../{other}/{}", a.id))
        }),
        title: format!("{} {} — performance on {title_system} (system {system})", a.id, a.name),
        system,
        id: a.id.clone(),
        name: a.name.clone(),
        description: a.description.clone(),
        basic,
        environment: environment(ds, &cpus),
        kat_manifest: a.kat_manifest.clone(),
        kat_rows,
        footnotes: notes
            .0
            .into_iter()
            .enumerate()
            .map(|(i, text)| Footnote { n: i + 1, text })
            .collect(),
        perf_has_notes: perf_rows.iter().any(|r| !r.notes.is_empty()),
        perf_rows,
        warnings,
        dist_rows,
        chart_svg: chart::svg(
            &format!("{} mean cycles per operation", a.id),
            ops,
            &chart_rows,
        ),
        chart_file: format!("{}.svg", a.id),
        mem_rows,
        size_columns,
        size_rows,
        sizes_catalog: ds.sizes.as_ref().and_then(|s| s.catalog.clone()),
        size_audit: Link::page("size audit", "../sizes"),
        survey,
        share_build: builds.join(", "),
        share_rows,
        dataset: ds.href.rsplit('/').next().unwrap_or_default().to_string(),
        evidence,
    }
}

/// The flag profile whose library was measured, and any profile it fell
/// back from with that profile's outcome.
fn flags_text(b: Option<&BuildRecord>) -> String {
    let Some(b) = b else { return DASH.into() };
    let Some(profile) = &b.profile else {
        return "no profile built".into();
    };
    let failed: Vec<String> = b
        .attempts
        .iter()
        .filter(|t| &t.profile != profile)
        .map(|t| {
            let outcome = t
                .kat_status
                .clone()
                .unwrap_or_else(|| if t.built { "built" } else { "build failed" }.into());
            format!("{}: {outcome}", t.profile)
        })
        .collect();
    if failed.is_empty() {
        profile.clone()
    } else {
        format!("{profile} (after {})", failed.join(", "))
    }
}

/// The operations timed per instance, for the summary: label → op → record.
pub fn timed<'a>(
    ds: &'a Dataset,
    a: &AlgorithmInfo,
) -> BTreeMap<String, BTreeMap<String, &'a OperationRecord>> {
    let mut out: BTreeMap<String, BTreeMap<String, &OperationRecord>> = BTreeMap::new();
    for label in &a.labels {
        for op in a.kind.operations() {
            if let Some(r) = ds.record(&a.id, label, op) {
                out.entry(label.clone()).or_default().insert(op.to_string(), r);
            }
        }
    }
    out
}
