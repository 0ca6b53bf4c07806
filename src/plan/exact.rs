//! The constant-time annotations of an algorithm, validated.

use crate::config::algorithm::Kind;
use crate::config::exact::RawCtAnnotation;

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
