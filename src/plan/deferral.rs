//! `defer = ["regex", …]`: instances measured after every other one (or on
//! a CPU of their own, `--deferred-cpu`), so the rest of a long campaign is
//! measured, and its pages rendered, before the slow instances start.

use super::problems::Problems;
use super::{Instance, Plan};
use crate::config::campaign::RawCampaign;
use crate::config::Loaded;

/// A pattern matches an instance when it matches, in full, its
/// `<id>/<label>` or its label.
fn matches(re: &regex::Regex, inst: &Instance) -> bool {
    re.is_match(&inst.key()) || re.is_match(&inst.label)
}

/// The keys of the instances `defer` selects; every pattern must be a
/// regular expression selecting at least one instance.
pub(super) fn deferred(
    raw: &Loaded<RawCampaign>,
    instances: &[Instance],
    p: &mut Problems,
) -> Vec<String> {
    let mut out = Vec::new();
    for pat in &raw.value.defer {
        let re = match regex::Regex::new(&format!("^(?:{})$", pat.get_ref())) {
            Ok(r) => r,
            Err(e) => {
                p.push(
                    raw.error_at(pat, format!("bad `defer` pattern: {e}"))
                        .help("write a regular expression over `<id>/<label>` or labels"),
                );
                continue;
            }
        };
        let hits: Vec<String> = instances
            .iter()
            .filter(|i| matches(&re, i))
            .map(Instance::key)
            .collect();
        // Instances of algorithms that failed to resolve are not known, and
        // their problems are reported already.
        if hits.is_empty() && p.is_empty() {
            p.push(
                raw.error_at(
                    pat,
                    format!("`defer` pattern `{}` matches no instance", pat.get_ref()),
                )
                .help("match `<id>/<label>` or a label, e.g. \"sign-90/WINTER-256\" or \".*-256\""),
            );
        }
        for k in hits {
            if !out.contains(&k) {
                out.push(k);
            }
        }
    }
    out
}

impl Plan {
    /// Whether the campaign defers `inst` (`defer`).
    pub(crate) fn is_deferred(&self, inst: &Instance) -> bool {
        self.deferred.contains(&inst.key())
    }
}
