//! Markdown: `compare.md` and `reproduction.md`, table cells escaped with
//! the `cell` filter.

use anyhow::Result;

use super::view::{CompareView, ReproductionView};
use super::{render, Exporter};
use crate::compare::CompareReport;
use crate::reproduce::report::ReproductionReport;
use crate::reproduce::Reproduction;

#[derive(Debug, Clone, Copy, Default)]
pub struct Markdown;

impl Exporter<CompareReport> for Markdown {
    fn export(&self, report: &CompareReport) -> Result<Vec<u8>> {
        render("compare.md", &CompareView::new(report))
    }
}

impl Exporter<ReproductionReport> for Markdown {
    fn export(&self, report: &ReproductionReport) -> Result<Vec<u8>> {
        render("reproduction.md", &ReproductionView::new(report))
    }
}

/// The report when the reproduction ran (the bytes of `reproduction.md`),
/// else the summary of why nothing ran.
impl Exporter<Reproduction> for Markdown {
    fn export(&self, r: &Reproduction) -> Result<Vec<u8>> {
        render("reproduction.md", &ReproductionView::of(r))
    }
}
