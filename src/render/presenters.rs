//! The stages' presenters on the pages (`engine::PageSection`), walked in
//! registry order: their parts of an algorithm page, their summary
//! columns, evidence rows, method sections and limitations. No stage is
//! named here.

use anyhow::Result;

use super::model::{EvidenceRow, Link, MethodSection, SummaryRow};
use super::rows::DASH;
use crate::engine::{PageSection, Part, Section};
use crate::records::campaign::AlgorithmInfo;
use crate::records::dataset::Dataset;

/// The registry's presenters, in registry order.
pub(crate) type Presenters<'a> = &'a [&'a dyn PageSection];

/// The stages' parts of `a`'s page.
pub(crate) fn parts(stages: Presenters, ds: &Dataset, a: &AlgorithmInfo) -> Result<Vec<Part>> {
    let ops = a.kind.operations();
    let mut out = Vec::new();
    for s in stages {
        out.extend(s.part(ds, &a.id, &a.labels, ops)?);
    }
    Ok(out)
}

/// The stages' table sections of `a`'s page, over its instances built on
/// this system (in build order), after `first` (the page's own).
pub(crate) fn sections(
    stages: Presenters,
    ds: &Dataset,
    a: &AlgorithmInfo,
    first: Option<Section>,
) -> Result<Vec<Section>> {
    let labels: Vec<String> = ds
        .build
        .instances
        .iter()
        .filter(|b| b.algorithm == a.id)
        .map(|b| b.label.clone())
        .collect();
    let mut out: Vec<Section> = first.into_iter().collect();
    for s in stages {
        out.extend(s.section(ds, &a.id, &labels)?);
    }
    Ok(out)
}

/// One summary row's stage cells, one per presenter with a column (empty
/// where it has nothing for the instance).
pub(crate) fn cells(
    stages: Presenters,
    ds: &Dataset,
    id: &str,
    label: &str,
    ops: &[&str],
) -> Vec<String> {
    stages
        .iter()
        .filter(|s| s.summary_column().is_some())
        .map(|s| s.summary_cell(ds, id, label, ops).unwrap_or_default())
        .collect()
}

/// The stage columns a table shows: those with a cell in some row. The
/// rows keep the shown columns' cells, `–` where empty.
pub(crate) fn settle_columns(stages: Presenters, rows: &mut [SummaryRow]) -> Vec<String> {
    let names: Vec<&str> = stages.iter().filter_map(|s| s.summary_column()).collect();
    let shown: Vec<bool> = (0..names.len())
        .map(|j| {
            rows.iter()
                .any(|r| r.stage_cells.get(j).is_some_and(|c| !c.is_empty()))
        })
        .collect();
    for r in rows.iter_mut() {
        let cells = std::mem::take(&mut r.stage_cells);
        r.stage_cells = cells
            .into_iter()
            .zip(&shown)
            .filter(|(_, keep)| **keep)
            .map(|(c, _)| if c.is_empty() { DASH.to_string() } else { c })
            .collect();
    }
    names
        .into_iter()
        .zip(&shown)
        .filter(|(_, keep)| **keep)
        .map(|(n, _)| n.to_string())
        .collect()
}

/// The stages' evidence rows of one instance, operation by operation.
pub(crate) fn evidence(
    stages: Presenters,
    ds: &Dataset,
    id: &str,
    label: &str,
    ops: &[&str],
) -> Vec<EvidenceRow> {
    let mut out = Vec::new();
    for op in ops {
        for s in stages {
            out.extend(
                s.evidence(ds, id, label, op)
                    .into_iter()
                    .map(|f| EvidenceRow {
                        label: label.into(),
                        item: f.item,
                        sha256: None,
                        file: Link::file(f.path.clone(), format!("../{}/{}", ds.href, f.path)),
                    }),
            );
        }
    }
    out
}

/// The stages' method sections; adjacent stages naming the same title
/// share one.
pub(crate) fn method_sections(stages: Presenters, ds: &Dataset) -> Vec<MethodSection> {
    let mut out: Vec<MethodSection> = Vec::new();
    for m in stages.iter().filter_map(|s| s.method(ds)) {
        match out.last_mut() {
            Some(last) if last.title == m.title => last.bullets.extend(m.bullets),
            _ => out.push(MethodSection {
                title: m.title.to_string(),
                bullets: m.bullets,
            }),
        }
    }
    out
}

/// The stages' limitations, for the method page.
pub(crate) fn limitations(stages: Presenters, ds: &Dataset) -> Vec<String> {
    stages.iter().flat_map(|s| s.limitations(ds)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A presenter with a summary column whose cell is the label when the
    /// label starts with `with`.
    struct Column(&'static str, &'static str);

    impl PageSection for Column {
        fn summary_column(&self) -> Option<&'static str> {
            Some(self.0)
        }
        fn summary_cell(&self, _: &Dataset, _: &str, label: &str, _: &[&str]) -> Option<String> {
            label.starts_with(self.1).then(|| label.to_string())
        }
    }

    /// A presenter with no column.
    struct Nothing;
    impl PageSection for Nothing {}

    fn row(cells: &[&str]) -> SummaryRow {
        SummaryRow {
            algorithm: Link::page("a", "a"),
            name: String::new(),
            label: String::new(),
            ops: Vec::new(),
            sizes: Vec::new(),
            notes: String::new(),
            stage_cells: cells.iter().map(|c| c.to_string()).collect(),
            best: String::new(),
        }
    }

    #[test]
    fn a_column_shows_when_a_row_has_a_cell_and_its_empty_cells_read_a_dash() {
        let (a, b) = (Column("first", "x"), Column("second", "y"));
        let stages: [&dyn PageSection; 3] = [&a, &Nothing, &b];
        // The first column has a cell in one row; the second in none.
        let mut rows = vec![row(&["x1", ""]), row(&["", ""])];
        let columns = settle_columns(&stages, &mut rows);
        assert_eq!(columns, ["first"]);
        assert_eq!(rows[0].stage_cells, ["x1"]);
        assert_eq!(rows[1].stage_cells, [DASH]);
        // Neither: no column and no cell.
        let mut rows = vec![row(&["", ""])];
        assert!(settle_columns(&stages, &mut rows).is_empty());
        assert!(rows[0].stage_cells.is_empty());
    }
}
