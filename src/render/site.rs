//! Building the whole site model from the datasets of one campaign: the
//! campaign-wide pages (index, survey, size audit) and every system's pages.

use std::collections::BTreeSet;

use crate::plan::Kind;

use super::model::*;
use anyhow::Result;

use super::presenters::Presenters;
use super::{algorithm, system};
use crate::records::dataset::Dataset;

/// Which systems the site covers and which algorithms each has, for the
/// crumb line's links to the same page on another system.
pub struct Systems(pub Vec<(String, BTreeSet<String>)>);

impl Systems {
    pub fn new(datasets: &[Dataset]) -> Systems {
        Systems(
            datasets
                .iter()
                .map(|d| {
                    let ids = d.campaign.algorithms.iter().map(|a| a.id.clone()).collect();
                    (d.system().to_string(), ids)
                })
                .collect(),
        )
    }

    /// The campaign's first system (the one the survey page covers).
    pub(crate) fn first(&self) -> Option<&String> {
        self.0.first().map(|(s, _)| s)
    }

    pub(crate) fn has(&self, system: &str, id: &str) -> bool {
        self.0
            .iter()
            .any(|(s, ids)| s == system && ids.contains(id))
    }
}

/// `Performance measurements › <system> › <here> · system: <this> · <others>`;
/// `other_href` gives the page on another system, None to leave it out.
pub(crate) fn crumb(
    systems: &Systems,
    here_system: &str,
    here: Option<&str>,
    other_href: impl Fn(&str) -> Option<String>,
) -> Crumb {
    Crumb {
        root: Link::page("Performance measurements", "../index"),
        system: Link::page(here_system, "summary"),
        here: here.map(String::from),
        // This system first, as on the reference pages, then the others.
        systems: std::iter::once(Link::text(here_system))
            .chain(
                systems
                    .0
                    .iter()
                    .filter(|(s, _)| s != here_system)
                    .filter_map(|(s, _)| other_href(s).map(|h| Link::page(s.clone(), h))),
            )
            .collect(),
    }
}

/// An HTML id from names: letters, digits, `-` and `_` kept, the rest `_`.
pub(crate) fn anchor(parts: &[&str]) -> String {
    parts
        .iter()
        .map(|p| {
            p.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("-")
}

pub(crate) fn kind_function(kind: Kind) -> &'static str {
    kind.def().function()
}

/// The survey of the campaign's first system only, as the reference
/// campaign publishes it (the verdicts come from the built objects and do
/// not differ between machines of one architecture).
fn survey_page(datasets: &[Dataset]) -> SurveyPage {
    let systems = datasets
        .iter()
        .take(1)
        .map(|ds| SurveySystem {
            system: ds.system().into(),
            rows: ds
                .survey
                .iter()
                .flat_map(|s| &s.algorithms)
                .map(|s| {
                    let info = ds.algorithm(&s.algorithm);
                    let name = info.map(|a| a.name.clone());
                    SurveyRow {
                        anchor: anchor(&[ds.system(), &s.algorithm]),
                        algorithm: Link::page(
                            s.algorithm.clone(),
                            format!("{}/{}", ds.system(), s.algorithm),
                        ),
                        name: name.unwrap_or_default(),
                        verdict: algorithm::verdict_words(info, &s.verdict),
                        note: s.note.clone(),
                        reason: s.reason.clone(),
                    }
                })
                .collect(),
        })
        .collect();
    SurveyPage {
        campaign: campaign_name(datasets),
        root: Link::page("Performance measurements", "index"),
        systems,
    }
}

fn sizes_page(datasets: &[Dataset]) -> SizesPage {
    let mut rows = Vec::new();
    let mut catalogs = Vec::new();
    let num = |v: Option<u64>| v.map_or("–".to_string(), |v| v.to_string());
    for ds in datasets {
        let Some(sizes) = &ds.sizes else { continue };
        if let Some(c) = &sizes.catalog {
            catalogs.push(Row2 {
                item: ds.system().into(),
                value: c.clone(),
            });
        }
        for r in &sizes.instances {
            for d in &r.disagreements {
                // Each disagreement line starts with the figure's name.
                let item = d.split_once(':').map_or(d.as_str(), |(n, _)| n);
                let f = r.figures.get(item);
                rows.push(SizeAuditRow {
                    system: ds.system().into(),
                    algorithm: Link::page(
                        r.algorithm.clone(),
                        format!("{}/{}", ds.system(), r.algorithm),
                    ),
                    label: r.label.clone(),
                    item: item.into(),
                    api: num(f.and_then(|f| f.api)),
                    observed: num(f.and_then(|f| f.observed)),
                    catalog: num(f.and_then(|f| f.catalog)),
                    basis: r.basis.clone().unwrap_or_else(|| "–".into()),
                });
            }
        }
    }
    SizesPage {
        campaign: campaign_name(datasets),
        root: Link::page("Performance measurements", "index"),
        catalogs,
        rows,
    }
}

fn campaign_name(datasets: &[Dataset]) -> String {
    datasets
        .first()
        .map(|d| d.campaign.campaign.clone())
        .unwrap_or_default()
}

fn index_page(datasets: &[Dataset]) -> IndexPage {
    IndexPage {
        campaign: campaign_name(datasets),
        description: datasets
            .first()
            .map(|d| d.campaign.description.clone())
            .unwrap_or_default(),
        survey: Link::page("Symmetric-primitive survey", "survey"),
        sizes: Link::page("Size audit", "sizes"),
        systems: datasets
            .iter()
            .map(|ds| {
                let s = ds.system();
                IndexSystem {
                    system: s.into(),
                    link: Link::page(s, format!("{s}/summary")),
                    emulated: ds.campaign.emulated(),
                    title: ds.campaign.system_title.clone().unwrap_or_else(|| s.into()),
                    start_utc: ds.campaign.span().0.to_string(),
                    end_utc: ds.campaign.span().1.to_string(),
                    summary: Link::page("summary", format!("{s}/summary")),
                    method: Link::page("method", format!("{s}/method")),
                    algorithms: ds
                        .campaign
                        .algorithms
                        .iter()
                        .map(|a| IndexAlgorithm {
                            link: Link::page(a.id.clone(), format!("{s}/{}", a.id)),
                            name: a.name.clone(),
                            kind: kind_function(a.kind).into(),
                            instances: a.labels.len(),
                        })
                        .collect(),
                }
            })
            .collect(),
    }
}

/// The model of every page, in a fixed order.
pub(crate) fn build(datasets: &[Dataset], stages: Presenters) -> Result<Site> {
    let systems = Systems::new(datasets);
    Ok(Site {
        index: index_page(datasets),
        survey: survey_page(datasets),
        sizes: sizes_page(datasets),
        systems: datasets
            .iter()
            .map(|ds| {
                Ok(SystemPages {
                    system: ds.system().into(),
                    summary: system::summary(ds, &systems, stages),
                    method: system::method(ds, &systems, stages),
                    algorithms: ds
                        .campaign
                        .algorithms
                        .iter()
                        .map(|a| algorithm::build(ds, a, &systems, stages))
                        .collect::<Result<_>>()?,
                })
            })
            .collect::<Result<_>>()?,
    })
}
