//! `[matrix]`: compilers × flag profiles as a measured dimension. The
//! campaign's own compiler and first flag profile are the headline
//! (primary) combination; every other combination is run as a plan of its
//! own, a further dataset of the campaign's (the `matrix` dimension,
//! registered with the stages).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::names::{self, NAME_RULE};
use super::problems::Problems;
use super::{FlagProfile, Plan};
use crate::config::campaign::RawCampaign;
use crate::config::{Loaded, Step};
use crate::records::settings::Combination;

/// The resolved `[matrix]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Matrix {
    /// Compiler commands; the first is the campaign's compiler.
    pub compilers: Vec<String>,
    /// Flag profiles; the first is the campaign's first profile.
    pub profiles: Vec<FlagProfile>,
}

/// The stages a further combination runs: what its cells show.
const COMBINATION_STAGES: [&str; 3] = ["build", "kat", "time"];

/// Resolves `[matrix]`, checking that its first compiler and profile are
/// the campaign's own (so the headline figures do not move).
pub(super) fn resolve(
    raw: &Loaded<RawCampaign>,
    profiles: &[FlagProfile],
    lookup: &dyn Fn(&str) -> Option<FlagProfile>,
    p: &mut Problems,
) -> Option<Matrix> {
    let m = raw.value.matrix.as_ref()?;
    let compilers = names_of(raw, "compilers", &m.compilers, p);
    let mut resolved = Vec::new();
    for name in names_of(raw, "profiles", &m.profiles, p) {
        match lookup(name.get_ref()) {
            Some(f) => resolved.push(f),
            None => p.push(
                raw.error_at(name, format!("unknown flag profile `{}`", name.get_ref()))
                    .help("use `guide`, `harness-default`, `o3-native` or `submitter`, or define it under [flag-profile.<name>]"),
            ),
        }
    }
    if let (Some(first), Some(configured)) = (m.compilers.first(), &raw.value.compiler) {
        if first.get_ref() != configured {
            p.push(
                raw.error_at(first, format!("the matrix's first compiler is `{}`, the campaign's `compiler` is `{configured}`", first.get_ref()))
                    .help("the first compiler is the headline one: list the campaign's compiler first, or drop `compiler`"),
            );
        }
    }
    if let (Some(first), Some(headline)) = (m.profiles.first(), profiles.first()) {
        if first.get_ref() != &headline.name {
            p.push(
                raw.error_at(first, format!("the matrix's first profile is `{}`, the campaign's first flag profile is `{}`", first.get_ref(), headline.name))
                    .help("the first profile is the headline one: list the first of `flag-profiles` first"),
            );
        }
    }
    Some(Matrix {
        compilers: compilers.iter().map(|c| c.get_ref().clone()).collect(),
        profiles: resolved,
    })
}

/// The names of one matrix list: non-empty, each a safe name, no repeats.
fn names_of<'a>(
    raw: &Loaded<RawCampaign>,
    key: &'static str,
    names: &'a [Spanned<String>],
    p: &mut Problems,
) -> Vec<&'a Spanned<String>> {
    if names.is_empty() {
        p.push(
            raw.error_at_value(
                &[Step::Key("matrix"), Step::Key(key)],
                format!("`matrix.{key}` is empty"),
            )
            .help("name at least one; the first is the campaign's headline one"),
        );
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for n in names {
        if let Err(why) = names::check_name(n.get_ref()) {
            p.push(
                raw.error_at(n, format!("`{}` in matrix.{key} {why}", n.get_ref()))
                    .help(format!(
                        "{NAME_RULE}; a compiler is a command found on PATH"
                    )),
            );
        } else if !seen.insert(n.get_ref().clone()) {
            p.push(
                raw.error_at(
                    n,
                    format!("`{}` is listed twice in matrix.{key}", n.get_ref()),
                )
                .help("list each once"),
            );
        } else {
            out.push(n);
        }
    }
    out
}

impl Plan {
    /// Every combination of the matrix, the primary first; empty without a
    /// matrix. A system that prescribes its compiler (a cross compiler)
    /// varies the profiles only.
    pub(crate) fn combinations(&self) -> Vec<Combination> {
        let Some(m) = &self.matrix else {
            return Vec::new();
        };
        let compilers: Vec<&str> = if self.compiler_from_system {
            vec![self.compiler.as_str()]
        } else {
            m.compilers.iter().map(String::as_str).collect()
        };
        let short = |c: &str| c.rsplit('/').next().unwrap_or(c).to_string();
        let mut out = Vec::new();
        for (ci, c) in compilers.iter().enumerate() {
            for (pi, f) in m.profiles.iter().enumerate() {
                out.push(Combination {
                    name: format!("{}.{}", short(c), f.name),
                    compiler: c.to_string(),
                    profile: f.name.clone(),
                    primary: ci == 0 && pi == 0,
                });
            }
        }
        out
    }

    /// The plan of a further combination: the campaign's instances under
    /// that compiler and that profile alone (no fallback: a failure is the
    /// cell's finding), building, checking and timing only. Where its
    /// dataset goes is the pipeline's to say.
    pub(crate) fn combination_plan(&self, c: &Combination) -> Plan {
        let mut p = self.clone();
        let profile = self
            .matrix
            .as_ref()
            .and_then(|m| m.profiles.iter().find(|f| f.name == c.profile))
            .cloned();
        p.compiler = c.compiler.clone();
        p.flag_profiles = profile.into_iter().collect();
        let times = self
            .stages
            .iter()
            .any(|s| s == super::ALL_STAGES || s == "time");
        p.stages = COMBINATION_STAGES
            .iter()
            .filter(|s| times || **s != "time")
            .map(|s| s.to_string())
            .collect();
        p.stage_locations = vec![None; p.stages.len()];
        p.stage_settings.retain(|k, _| p.stages.contains(k));
        p.stage_settings_at.retain(|k, _| p.stages.contains(k));
        p.reuse_measurements_from = None;
        // The submitter profile builds only what declares its own flags.
        let profiles = p.flag_profiles.clone();
        p.instances
            .retain(|i| profiles.iter().any(|f| f.for_instance(i).is_some()));
        p.algorithms
            .retain(|a| p.instances.iter().any(|i| i.algorithm == a.id));
        p.deferred
            .retain(|d| p.instances.iter().any(|i| &i.key() == d));
        p.matrix = None;
        p
    }
}
