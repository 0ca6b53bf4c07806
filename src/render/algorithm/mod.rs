//! The per-algorithm, per-system page: sections 1–7 of the reference page,
//! plus the distribution figures, resource columns and the chart beyond it.
//! `build` assembles the page from one builder per section.

mod evidence;
mod timing;

use crate::kinds::{Chart, Sizes};
use crate::records::campaign::AlgorithmInfo;
use crate::records::kat::KatStatus;
use crate::records::BuildRecord;

use super::kat_text::{attempts_text, kat_sentence, parameter_sets, size_cell, VARIABLE_NOTE};
use super::model::*;
use super::presenters::Presenters;
use super::rows::{environment, issues_for, toml_link, Inst, Notes};
use super::{anchor, crumb, kind_function, Systems};
use crate::records::dataset::Dataset;
use anyhow::Result;

pub fn build(
    ds: &Dataset,
    a: &AlgorithmInfo,
    systems: &Systems,
    stages: Presenters,
) -> Result<AlgorithmPage> {
    let system = ds.system().to_string();
    let def = a.kind.def();
    let mut notes = Notes::default();
    let insts = instances(ds, a, &mut notes);
    let timing = timing::table(ds, a, &insts);
    let sizes = sizes_table(ds, a, &insts);
    Ok(AlgorithmPage {
        functional_only: super::system::functional_only(ds),
        unfixed: super::system::unfixed(ds),
        crumb: crumb(systems, &system, Some(&a.id), |other| {
            systems
                .has(other, &a.id)
                .then(|| format!("../{other}/{}", a.id))
        }),
        title: title(ds, a, &system),
        id: a.id.clone(),
        name: a.name.clone(),
        description: a.description.clone(),
        basic: basic_info(ds, a, &system),
        environment: environment(ds, &timing::measuring_cpus(ds, a, &insts)),
        kat_manifest: a.kat_manifest.clone(),
        kat_sentence: kat_sentence_parts(&insts),
        size_note: sizes.variable.then(|| VARIABLE_NOTE.to_string()),
        kat_rows: kat_rows(&insts),
        footnotes: footnotes(notes),
        perf_has_notes: timing.perf_rows.iter().any(|r| !r.notes.is_empty()),
        perf_rows: timing.perf_rows,
        hash_rows: if def.chart() == Chart::ByMessageSize {
            super::kinds::hash_rows(ds, a, &insts)
        } else {
            Vec::new()
        },
        kind_notes: super::kinds::notes(ds, a),
        show_sizes: def.sizes() != Sizes::Digest,
        sizes_text: (def.sizes() == Sizes::PerRole).then(|| {
            super::kinds::kex_sizes_text(ds.sizes.as_ref().and_then(|s| s.kex_catalog.as_deref()))
        }),
        show_symmetric: def.public_key(),
        warnings: timing.warnings,
        measured_by: timing::lenders(ds, a, &insts),
        preliminary: timing.preliminary,
        dist_rows: timing.dist_rows,
        chart_svg: timing::chart_svg(ds, a, timing::chart_bars(ds, a, &insts)),
        chart_file: format!("{}.svg", a.id),
        size_columns: sizes.columns,
        size_rows: sizes.rows,
        sizes_catalog: ds.sizes.as_ref().and_then(|s| s.catalog.clone()),
        size_audit: Link::page("size audit", "../sizes"),
        survey: survey_line(ds, a, systems, &system),
        dataset: ds.href.rsplit('/').next().unwrap_or_default().to_string(),
        evidence: evidence::index(ds, a, &insts, stages),
        parts: super::presenters::parts(stages, ds, a)?,
        sections: super::presenters::sections(stages, ds, a, super::matrix::section(ds, a))?,
        system,
    })
}

fn title(ds: &Dataset, a: &AlgorithmInfo, system: &str) -> String {
    // A system the registry gives no title of its own is named by the
    // architecture its compiler built for, and by its name once.
    let machine = ds
        .campaign
        .system_title
        .clone()
        .filter(|t| t != system)
        .or_else(|| architecture(&ds.campaign.compiler.target));
    match machine {
        Some(t) => format!("{} {} — performance on {t} (system {system})", a.id, a.name),
        None => format!("{} {} — performance on system {system}", a.id, a.name),
    }
}

/// The architecture of a target triple as evaluators write it (`x86-64`,
/// `AArch64`); None when the triple says nothing.
fn architecture(target: &str) -> Option<String> {
    let arch = target.split('-').next().filter(|a| !a.is_empty())?;
    Some(match arch {
        "x86_64" => "x86-64".into(),
        "aarch64" => "AArch64".into(),
        other => other.into(),
    })
}

/// Section 1: category, names, implementations, parameter sets, the TOML's
/// links and the method page.
fn basic_info(ds: &Dataset, a: &AlgorithmInfo, system: &str) -> Vec<Bullet> {
    let skipped_everywhere = |imp: &str| {
        let mut records = a
            .labels
            .iter()
            .filter_map(|l| ds.build_record(&a.id, l))
            .filter(|r| r.implementation == imp)
            .peekable();
        records.peek().is_some() && records.all(|r| r.kat_status == KatStatus::Skipped)
    };
    let (elsewhere, built): (Vec<&String>, Vec<&String>) = a
        .implementations
        .iter()
        .partition(|i| skipped_everywhere(i));
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
            items: built.iter().map(|i| Link::text(i.to_string())).collect(),
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
    // An implementation this system did not build (written for another
    // architecture, or needing CPU features it lacks) was not measured
    // here; its instances say why.
    if !elsewhere.is_empty() {
        basic.push(Bullet {
            label: "Not built on this system (see its instances)".into(),
            items: elsewhere
                .iter()
                .map(|i| Link::text(i.to_string()))
                .collect(),
        });
    }
    basic.extend(a.links.iter().map(|(k, v)| toml_link(k, v)));
    basic.push(Bullet {
        label: "Measurement method".into(),
        items: vec![Link::page(format!("{system} method"), "method")],
    });
    basic
}

/// Every instance with its build, known issues and footnotes (issues
/// first, then the KAT detail of a failed KAT), numbered into `notes`.
fn instances<'a>(ds: &'a Dataset, a: &'a AlgorithmInfo, notes: &mut Notes) -> Vec<Inst<'a>> {
    a.labels
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
        .collect()
}

/// Section 3: the KAT table.
fn kat_rows(insts: &[Inst]) -> Vec<KatRow> {
    insts
        .iter()
        .map(|i| KatRow {
            label: i.label.into(),
            flags: attempts_text(i.build),
            status: i.kat_status().into(),
            notes: i.notes.clone(),
        })
        .collect()
}

/// The KAT sentence before and after its reference to the manifest.
fn kat_sentence_parts(insts: &[Inst]) -> (String, String) {
    let pairs: Vec<(&str, Option<&BuildRecord>)> =
        insts.iter().map(|i| (i.label, i.build)).collect();
    let s = kat_sentence(&pairs);
    (s.lead, s.tail)
}

fn footnotes(notes: Notes) -> Vec<Footnote> {
    notes
        .0
        .into_iter()
        .enumerate()
        .map(|(i, text)| Footnote { n: i + 1, text })
        .collect()
}

/// Section 6: key and output sizes, one row per instance in `sizes.json`.
struct SizeTable {
    columns: Vec<String>,
    rows: Vec<CellsRow>,
    /// Some cell shows an observed range.
    variable: bool,
}

fn size_columns(ds: &Dataset, a: &AlgorithmInfo) -> Vec<String> {
    match a.kind.def().sizes() {
        Sizes::Fixed(fields) => fields.iter().map(|f| f.name.to_string()).collect(),
        Sizes::PerRole => super::kinds::kex_size_columns(ds, a),
        Sizes::Digest => Vec::new(),
    }
}

fn sizes_table(ds: &Dataset, a: &AlgorithmInfo, insts: &[Inst]) -> SizeTable {
    let columns = size_columns(ds, a);
    let mut variable = false;
    let rows = insts
        .iter()
        .filter_map(|i| {
            let row = ds
                .sizes
                .as_ref()?
                .instances
                .iter()
                .find(|r| r.algorithm == a.id && r.label == i.label)?;
            let cells = columns
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
    SizeTable {
        columns,
        rows,
        variable,
    }
}

/// A survey verdict as the pages word it. NIST-API code has no ICCS
/// helpers to call: what the survey calls `bypass` (primitives of its own)
/// is, for it, simply its own primitives, not a departure from the rules
/// NGCC submissions are held to.
pub(crate) fn verdict_words(
    a: Option<&crate::records::campaign::AlgorithmInfo>,
    verdict: &str,
) -> String {
    let nist = a.is_some_and(|a| a.api == crate::records::kinds::ApiFamily::Nist);
    match (nist, verdict) {
        (true, "bypass") => "own primitives (NIST API: no ICCS helpers to use)".into(),
        _ => verdict.to_string(),
    }
}

/// Section 7: the algorithm's survey verdict, linked to the survey page.
fn survey_line(
    ds: &Dataset,
    a: &AlgorithmInfo,
    systems: &Systems,
    system: &str,
) -> Option<SurveyLine> {
    ds.survey
        .as_ref()
        .and_then(|s| s.algorithms.iter().find(|x| x.algorithm == a.id))
        .map(|s| SurveyLine {
            // The survey page lists the campaign's first system only.
            verdict: Link::page(verdict_words(Some(a), &s.verdict), "../survey").with_fragment(
                anchor(&[systems.first().map_or(system, String::as_str), &a.id]),
            ),
            note: s.note.clone(),
            reason: s.reason.clone(),
        })
}
