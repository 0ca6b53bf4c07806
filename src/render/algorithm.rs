//! The per-algorithm, per-system page: sections 1–7 of the reference page,
//! plus the distribution figures, resource columns and the chart beyond it.

use crate::format;
use crate::records::campaign::{AlgorithmInfo, KnownIssueInfo};
use crate::records::operation::OperationRecord;

use super::chart;
use super::dataset::Dataset;
use super::kat_text::{attempts_text, kat_sentence, parameter_sets, size_cell, VARIABLE_NOTE};
use super::model::*;
use super::rows::{
    environment, issues_for, mem_row, op_rows, share_row, toml_link, Inst, Notes, DASH,
};
use super::{anchor, crumb, kind_function, Systems};

pub fn build(ds: &Dataset, a: &AlgorithmInfo, systems: &Systems) -> AlgorithmPage {
    let system = ds.system().to_string();
    let ops = a.kind.operations();
    let classes = a.helper_classes();
    let mut notes = Notes::default();
    let insts: Vec<Inst> = a
        .labels
        .iter()
        .map(|label| {
            let build = ds.build_record(&a.id, label);
            let issues = issues_for(a, label);
            let issue_notes: Vec<usize> = issues.iter().map(|k| notes.add(&k.cause)).collect();
            let mut all = issue_notes.clone();
            if let Some(b) = build.filter(|b| b.kat_status != crate::kat::Status::Pass) {
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
            flags: attempts_text(i.build),
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
    let mut measured_by: Vec<String> = Vec::new();
    let mut preliminary_labels: Vec<String> = Vec::new();
    let href = |p: &str| format!("../{}/{p}", ds.href);
    for inst in &insts {
        let recs: Vec<(&str, &OperationRecord)> = ops
            .iter()
            .filter_map(|op| ds.record(&a.id, inst.label, op).map(|r| (*op, r)))
            .collect();
        let measured: Vec<&&KnownIssueInfo> = inst
            .issues
            .iter()
            .filter(|k| k.action == "measure")
            .collect();
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
        } else if !recs.is_empty() && !inst.passed() {
            warn = format!("⚠ timed despite KAT {}", inst.kat_status());
        }
        let key = format!("{}/{}", a.id, inst.label);
        let deferred = ds.campaign.deferred.contains(&key);
        let preliminary = ds.campaign.preliminary.contains(&key);
        if preliminary {
            let note = if deferred {
                "preliminary: deferred, not yet measured by this run"
            } else {
                "preliminary: not measured by this run"
            };
            warn = [warn.as_str(), note]
                .iter()
                .filter(|s| !s.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join("; ");
            preliminary_labels.push(inst.label.to_string());
        }
        if recs.is_empty() {
            let why = if preliminary && deferred {
                "deferred: not yet measured".to_string()
            } else if inst.build.is_none() {
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
            let profile = ds.profile(&a.id, inst.label, op);
            for by in [
                rec.measured_by.as_ref(),
                profile.and_then(|p| p.measured_by.as_ref()),
            ]
            .into_iter()
            .flatten()
            {
                if !measured_by.contains(by) {
                    measured_by.push(by.clone());
                }
            }
            let (p, d) = op_rows(inst, op, rec, &warn);
            perf_rows.push(p);
            dist_rows.extend(d);
            mem_rows.push(mem_row(inst, op, rec));
            cpus.extend(rec.cpu.filter(|c| !cpus.contains(c)));
            if let Some(s) = &rec.statistics {
                // Table 4's headline is the mean: the chart shows it with
                // the mean's own interval.
                chart_rows.push(chart::Bar::of(
                    chart::Statistic::Mean,
                    format!("{} {op}", inst.label),
                    s,
                    ops.iter().position(|o| o == op).unwrap_or(0),
                ));
            }
        }
        for op in ops {
            if let Some(p) = ds.profile(&a.id, inst.label, op) {
                share_rows.push(share_row(inst.label, op, p, &classes));
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
        evidence.extend(super::exact::evidence(ds, &a.id, inst.label, ops));
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
        crate::plan::Kind::Kex | crate::plan::Kind::Hash => Vec::new(),
    }
    .into_iter()
    .map(String::from)
    .collect();
    let mut variable = false;
    let size_columns = match a.kind {
        crate::plan::Kind::Kex => super::kinds::kex_size_columns(ds, a),
        _ => size_columns,
    };
    let size_rows = insts
        .iter()
        .filter_map(|i| {
            let row = ds
                .sizes
                .as_ref()?
                .instances
                .iter()
                .find(|r| r.algorithm == a.id && r.label == i.label)?;
            let cells = size_columns
                .iter()
                .map(|c| {
                    let (text, ranged) = size_cell(row.figures.get(c));
                    variable |= ranged;
                    text
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
            // The survey page lists the campaign's first system only.
            verdict: Link::page(s.verdict.clone(), "../survey")
                .with_fragment(anchor(&[systems.first().unwrap_or(&system), &a.id])),
            note: s.note.clone(),
            reason: s.reason.clone(),
        });
    let mut builds: Vec<&str> = insts
        .iter()
        .filter_map(|i| i.build.map(|b| b.implementation.as_str()))
        .collect();
    builds.dedup();

    let title_system = ds
        .campaign
        .system_title
        .clone()
        .unwrap_or_else(|| system.clone());
    let mut basic = vec![
        Bullet {
            label: "Category".into(),
            items: vec![Link::text(format!(
                "{}; function: {}",
                super::kinds::category(a.kind),
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
            items: parameter_sets(a).into_iter().map(Link::text).collect(),
        },
    ];
    // Instances are parameter sets × implementations: named apart when
    // they are not the parameter sets themselves.
    if parameter_sets(a) != a.labels {
        basic.push(Bullet {
            label: "Instances (parameter set.implementation)".into(),
            items: a.labels.iter().cloned().map(Link::text).collect(),
        });
    }
    basic.extend(a.links.iter().map(|(k, v)| toml_link(k, v)));
    basic.push(Bullet {
        label: "Measurement method".into(),
        items: vec![Link::page(format!("{system} method"), "method")],
    });

    AlgorithmPage {
        functional_only: super::system::functional_only(ds),
        crumb: crumb(systems, &system, Some(&a.id), |other| {
            systems
                .has(other, &a.id)
                .then(|| format!("../{other}/{}", a.id))
        }),
        title: format!(
            "{} {} — performance on {title_system} (system {system})",
            a.id, a.name
        ),
        system,
        id: a.id.clone(),
        name: a.name.clone(),
        description: a.description.clone(),
        basic,
        environment: environment(ds, &cpus),
        kat_manifest: a.kat_manifest.clone(),
        kat_sentence: {
            let pairs: Vec<(&str, Option<&crate::records::BuildRecord>)> =
                insts.iter().map(|i| (i.label, i.build)).collect();
            let s = kat_sentence(&pairs);
            (s.lead, s.tail)
        },
        size_note: variable.then(|| VARIABLE_NOTE.to_string()),
        kat_rows,
        footnotes: notes
            .0
            .into_iter()
            .enumerate()
            .map(|(i, text)| Footnote { n: i + 1, text })
            .collect(),
        perf_has_notes: perf_rows.iter().any(|r| !r.notes.is_empty()),
        perf_rows,
        hash_rows: if a.kind == crate::plan::Kind::Hash {
            super::kinds::hash_rows(ds, a, &insts)
        } else {
            Vec::new()
        },
        kind_notes: super::kinds::notes(ds, a),
        show_sizes: a.kind != crate::plan::Kind::Hash,
        sizes_text: (a.kind == crate::plan::Kind::Kex).then(|| {
            super::kinds::kex_sizes_text(ds.sizes.as_ref().and_then(|s| s.kex_catalog.as_deref()))
        }),
        show_symmetric: a.kind != crate::plan::Kind::Hash,
        warnings,
        measured_by,
        preliminary: preliminary_labels,
        dist_rows,
        chart_svg: match a.kind {
            crate::plan::Kind::Hash => super::kinds::hash_chart(ds, a),
            crate::plan::Kind::Kex => {
                // The legend names the operations this protocol has.
                let present: Vec<&str> = ops
                    .iter()
                    .copied()
                    .filter(|op| ds.records.keys().any(|k| k.0 == a.id && k.2 == *op))
                    .collect();
                for b in &mut chart_rows {
                    let op = ops.get(b.series).copied().unwrap_or_default();
                    b.series = present.iter().position(|o| *o == op).unwrap_or(0);
                }
                chart::svg(
                    &format!("{} mean cycles per operation", a.id),
                    chart::Statistic::Mean,
                    &present,
                    &chart_rows,
                )
            }
            _ => chart::svg(
                &format!("{} mean cycles per operation", a.id),
                chart::Statistic::Mean,
                ops,
                &chart_rows,
            ),
        },
        chart_file: format!("{}.svg", a.id),
        mem_rows,
        size_columns,
        size_rows,
        sizes_catalog: ds.sizes.as_ref().and_then(|s| s.catalog.clone()),
        size_audit: Link::page("size audit", "../sizes"),
        survey,
        share_build: builds.join(", "),
        share_columns: classes.iter().map(|c| c.title.clone()).collect(),
        share_rows,
        dataset: ds.href.rsplit('/').next().unwrap_or_default().to_string(),
        evidence,
        exact: super::exact::view(ds, &a.id, &a.labels, ops),
        sections: Vec::new(),
    }
}
