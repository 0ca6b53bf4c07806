//! Validated settings of the opt-in `count` and `ct` stages, and the
//! constant-time annotations of an algorithm.

use serde::{Deserialize, Serialize};

use crate::config::algorithm::Kind;
pub(crate) use crate::config::exact::CountMethod;
use crate::config::exact::{RawCount, RawCt, RawCtAnnotation};

/// `[count]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CountSettings {
    pub calls: u32,
    pub warmup: u32,
    pub method: CountMethod,
    pub timeout_seconds: f64,
}

impl Default for CountSettings {
    fn default() -> Self {
        count_settings(&RawCount::default())
    }
}

/// `[ct]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CtSettings {
    pub calls: u32,
    pub timeout_seconds: f64,
}

impl Default for CtSettings {
    fn default() -> Self {
        ct_settings(&RawCt::default())
    }
}

/// Defaults: 3 counted calls after 1 warm-up (counts are exact, so a few
/// calls show whether they vary from call to call); one checked call (a
/// call under memcheck costs tens of times a native one).
pub(crate) fn count_settings(r: &RawCount) -> CountSettings {
    CountSettings {
        calls: r.calls.unwrap_or(3),
        warmup: r.warmup.unwrap_or(1),
        method: r.method.unwrap_or_default(),
        timeout_seconds: r.timeout_seconds.unwrap_or(600.0),
    }
}

pub(crate) fn ct_settings(r: &RawCt) -> CtSettings {
    CtSettings {
        calls: r.calls.unwrap_or(1),
        timeout_seconds: r.timeout_seconds.unwrap_or(600.0),
    }
}

pub(crate) use crate::records::settings::CtAnnotation;

impl CtAnnotation {
    pub(crate) fn from_raw(r: &RawCtAnnotation) -> CtAnnotation {
        CtAnnotation {
            site: r.site.get_ref().clone(),
            reason: r.reason.clone(),
            labels: r.labels.as_ref().map(|l| l.get_ref().clone()),
            ops: r.ops.clone(),
        }
    }

    /// Whether it applies to instance `label` at all.
    pub(crate) fn applies_to(&self, label: &str) -> bool {
        self.labels.as_ref().is_none_or(|l| {
            regex::Regex::new(&format!("^(?:{l})$")).is_ok_and(|r| r.is_match(label))
        })
    }
}

/// What is wrong with one annotation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum AnnotationProblem {
    Labels(String),
    Site(String),
    /// An operation the kind does not have, and the kind's operations.
    Op(String, Vec<String>),
}

impl std::fmt::Display for AnnotationProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AnnotationProblem::Labels(e) => write!(f, "bad label pattern: {e}"),
            AnnotationProblem::Site(e) => write!(f, "bad site pattern: {e}"),
            AnnotationProblem::Op(op, _) => write!(f, "unknown operation `{op}`"),
        }
    }
}

pub(crate) fn annotation_problems(c: &RawCtAnnotation, kind: Kind) -> Vec<AnnotationProblem> {
    let mut out = Vec::new();
    if let Some(l) = &c.labels {
        if let Err(e) = regex::Regex::new(l.get_ref()) {
            out.push(AnnotationProblem::Labels(e.to_string()));
        }
    }
    if c.site.get_ref().trim().is_empty() {
        out.push(AnnotationProblem::Site("empty".into()));
    } else if let Err(e) = glob::Pattern::new(c.site.get_ref()) {
        out.push(AnnotationProblem::Site(e.to_string()));
    }
    let ops: Vec<String> = kind.operations().iter().map(|o| o.to_string()).collect();
    for op in c.ops.iter().filter(|o| !ops.contains(o)) {
        out.push(AnnotationProblem::Op(op.clone(), ops.clone()));
    }
    out
}
