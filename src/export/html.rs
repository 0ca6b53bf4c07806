//! HTML: standalone pages in the report pages' layout; minijinja escapes
//! every value, so labels and inputs from TOMLs cannot inject markup.

use anyhow::Result;

use super::view::{CompareView, ReproductionView};
use super::{render, Exporter};
use crate::compare::CompareReport;
use crate::reproduce::report::ReproductionReport;

#[derive(Debug, Clone, Copy, Default)]
pub struct Html;

impl Exporter<CompareReport> for Html {
    fn export(&self, report: &CompareReport) -> Result<Vec<u8>> {
        render("compare.html", &CompareView::new(report))
    }
}

impl Exporter<ReproductionReport> for Html {
    fn export(&self, report: &ReproductionReport) -> Result<Vec<u8>> {
        render("reproduction.html", &ReproductionView::new(report))
    }
}
