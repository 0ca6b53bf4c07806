//! The `matrix` dimension: every further `[matrix]` combination of
//! compiler and flag profile is a further dataset of the campaign
//! (`Plan::combination_plan` says what it runs).

use crate::engine::Dimension;
use crate::plan::Plan;
use crate::records::campaign::CampaignRecord;

pub(crate) struct MatrixDimension;

impl Dimension for MatrixDimension {
    fn name(&self) -> &'static str {
        crate::records::layout::MATRIX
    }

    fn children(&self, plan: &Plan) -> Vec<(String, Plan)> {
        plan.combinations()
            .iter()
            .filter(|c| !c.primary)
            .map(|c| (c.name.clone(), plan.combination_plan(c)))
            .collect()
    }

    fn applies_to_none(&self) -> &'static str {
        // Only `submitter` can apply to nothing.
        "no implementation declares submitter-cflags"
    }

    /// Every combination, the primary first, with its compiler and
    /// profile: the pages' columns (a further combination's own plan has
    /// none).
    fn describe(&self, plan: &Plan, record: &mut CampaignRecord) {
        record.matrix = plan.combinations();
    }
}
