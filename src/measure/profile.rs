//! What the profile stage found for one instance: per operation the calls
//! and ticks of every wrapped helper shape, and the shares derived from them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::OpStatus;
use crate::plan::HelperClass;

pub use crate::records::measure::Shape;

/// Share of `total_ticks` spent in the shapes of `class`.
pub fn class_share(shapes: &[Shape], total_ticks: u64, class: &HelperClass) -> f64 {
    let ticks: u64 = shapes
        .iter()
        .filter(|s| &s.class == class)
        .map(|s| s.ticks)
        .sum();
    ticks as f64 / total_ticks.max(1) as f64
}

pub use crate::records::measure::OpProfile;

impl OpProfile {
    fn ticks_where(&self, pred: impl Fn(&Shape) -> bool) -> u64 {
        self.shapes
            .iter()
            .filter(|s| pred(s))
            .map(|s| s.ticks)
            .sum()
    }

    /// Share of the operation in every wrapped helper but the DRNG.
    pub(crate) fn hash_share(&self) -> f64 {
        self.ticks_where(|s| !s.class.is_drng()) as f64 / self.total_ticks.max(1) as f64
    }

    pub(crate) fn drng_share(&self) -> f64 {
        self.ticks_where(|s| s.class.is_drng()) as f64 / self.total_ticks.max(1) as f64
    }

    /// Calls per operation by function name, sorted by name.
    pub(crate) fn calls_per_op(&self) -> BTreeMap<String, f64> {
        let mut m = BTreeMap::new();
        for s in &self.shapes {
            *m.entry(s.function.clone()).or_insert(0.0) += s.calls as f64;
        }
        m.values_mut().for_each(|v| *v /= self.ops.max(1) as f64);
        m
    }

    /// Share of the operation per function.
    pub(crate) fn share_per_function(&self) -> BTreeMap<String, f64> {
        let mut m = BTreeMap::new();
        for s in &self.shapes {
            *m.entry(s.function.clone()).or_insert(0.0) += s.ticks as f64;
        }
        m.values_mut()
            .for_each(|v| *v /= self.total_ticks.max(1) as f64);
        m
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ProfileOutput {
    /// `ok`, or why there is no profile (e.g. `relink-failed`).
    pub status: OpStatus,
    pub detail: Option<String>,
    /// The helper symbols wrapped (those the objects define).
    pub wrapped: Vec<String>,
    pub ops: Vec<OpProfile>,
}
