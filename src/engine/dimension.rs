//! Dimensions: what a campaign varies beyond its headline figures, each
//! value run as a plan of its own whose dataset lies within the campaign's
//! (`<dimension>/<name>/`). A dimension only says which further plans a
//! campaign's plan makes; the pipeline runs them before the campaign's own
//! plan, and records, checks, publication, comparison and reproduction
//! carry their datasets by the names the records give them.

use crate::plan::Plan;
use crate::records::campaign::{CampaignRecord, ChildDataset};

/// A dimension of further datasets (`[matrix]` is one).
pub trait Dimension: Send + Sync {
    /// The dimension's name: the word reports use and the folder its
    /// datasets lie in. Never a record folder's name.
    fn name(&self) -> &'static str;

    /// The further plans of a campaign's own plan along this dimension,
    /// each with its name (a file name), in the order they run: none when
    /// the campaign does not use it.
    fn children(&self, plan: &Plan) -> Vec<(String, Plan)>;

    /// Why a further plan can apply to no instance, for the run's report.
    fn applies_to_none(&self) -> &'static str {
        "it selects none of the campaign's instances"
    }

    /// Its part of the campaign's `campaign.json`, for its pages (the
    /// datasets themselves are listed by the engine).
    fn describe(&self, _plan: &Plan, _record: &mut CampaignRecord) {}
}

/// A further plan, ready to run: its dataset's names and its plan, whose
/// output directory is that dataset's folder.
pub struct ChildPlan {
    pub child: ChildDataset,
    pub plan: Plan,
    /// Why it applies to no instance, when it does not.
    pub applies_to_none: &'static str,
}

impl super::Registry {
    /// The further plans of `plan` along every registered dimension, in
    /// registration order: none for a plan that is itself a further one.
    /// Each plan's output directory is its dataset's folder, and it knows
    /// which further dataset it makes.
    pub fn child_plans(&self, plan: &Plan) -> Vec<ChildPlan> {
        if plan.child.is_some() {
            return Vec::new();
        }
        let mut out = Vec::new();
        for d in &self.dimensions {
            for (name, mut p) in d.children(plan) {
                let child = ChildDataset {
                    dimension: d.name().to_string(),
                    name,
                };
                // A name is checked where the plan is made (the matrix's
                // names are validated with its table); one that could
                // leave the dataset is a dimension's bug.
                let dir = crate::records::layout::child_dir(&child.dimension, &child.name)
                    .unwrap_or_else(|e| panic!("dimension {}: {e}", d.name()));
                p.output_dir = plan.output_dir.join(dir);
                p.child = Some(child.clone());
                out.push(ChildPlan {
                    child,
                    plan: p,
                    applies_to_none: d.applies_to_none(),
                });
            }
        }
        out
    }

    /// The further datasets `plan` makes, in the order they run.
    pub(crate) fn children_of(&self, plan: &Plan) -> Vec<ChildDataset> {
        self.child_plans(plan)
            .into_iter()
            .map(|c| c.child)
            .collect()
    }

    /// Every dimension's part of `campaign.json`, and the further datasets
    /// the plan makes.
    pub(crate) fn describe_children(&self, plan: &Plan, record: &mut CampaignRecord) {
        record.children = self.children_of(plan);
        record.child = plan.child.clone();
        self.dimensions
            .iter()
            .for_each(|d| d.describe(plan, record));
    }
}
