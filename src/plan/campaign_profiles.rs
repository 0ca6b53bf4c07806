//! A campaign's flag profiles: the ones it names, checked (its own
//! `[flag-profile.<name>]` or a built-in one, with no flag that would
//! escape the build), and the instances none of them can build.

use std::collections::BTreeSet;

use super::names::{self, NAME_RULE};
use super::problems::Problems;
use super::{FlagProfile, Instance};
use crate::config::campaign::RawCampaign;
use crate::config::{Loaded, Step};

/// The campaign's flag profiles, each checked: its name, that it exists
/// (the campaign's own or a built-in one), and its flags.
pub(super) fn flag_profiles(raw: &Loaded<RawCampaign>, p: &mut Problems) -> Vec<FlagProfile> {
    let c = &raw.value;
    if c.flag_profiles.is_empty() {
        p.push(
            raw.error_at_value(&[Step::Key("flag-profiles")], "`flag-profiles` is empty")
                .help("name at least one profile"),
        );
    }
    for (name, def) in &c.flag_profile_defs {
        refused_flags(raw, name, "cflags", &def.cflags, p);
        refused_flags(raw, name, "ldflags", &def.ldflags, p);
    }
    c.flag_profiles
        .iter()
        .filter_map(|name| {
            let n = name.get_ref();
            let found = lookup_profile(c, n);
            // Profile names are shown in records and page tables.
            if let Err(why) = names::check_name(n) {
                p.push(
                    raw.error_at(name, format!("flag profile name `{n}` {why}"))
                        .help(NAME_RULE),
                );
            } else if found.is_none() {
                p.push(
                    raw.error_at(name, format!("unknown flag profile `{n}`"))
                        .help("use `guide`, `harness-default`, `o3-native` or `submitter`, or define it under [flag-profile.<name>]"),
                );
            }
            found
        })
        .collect()
}

/// The profile `name`: the campaign's `[flag-profile.<name>]`, else a
/// built-in one.
pub(super) fn lookup_profile(c: &RawCampaign, name: &str) -> Option<FlagProfile> {
    c.flag_profile_defs
        .get(name)
        .map(|d| FlagProfile {
            name: name.to_string(),
            cflags: d.cflags.clone(),
            ldflags: d.ldflags.clone(),
            submitter: false,
        })
        .or_else(|| FlagProfile::builtin(name))
}

/// An instance none of the campaign's profiles applies to (the submitter
/// profile alone, for an implementation that declares no flags of its
/// own) is an error at `flag-profiles`, naming the implementations.
pub(super) fn unbuildable(
    raw: &Loaded<RawCampaign>,
    profiles: &[FlagProfile],
    instances: &[Instance],
    p: &mut Problems,
) {
    if profiles.is_empty() || profiles.iter().any(|f| !f.submitter) {
        return;
    }
    let without: BTreeSet<String> = instances
        .iter()
        .filter(|i| i.submitter_cflags.is_none())
        .map(|i| format!("{}/{}", i.algorithm, i.implementation))
        .collect();
    if without.is_empty() {
        return;
    }
    p.push(
        raw.error_at_value(
            &[Step::Key("flag-profiles")],
            format!(
                "`submitter` is the only flag profile, and these implementations declare no `submitter-cflags`: {}",
                without.into_iter().collect::<Vec<_>>().join(", ")
            ),
        )
        .help("add a profile after it (e.g. \"guide\"), or give each implementation its build's flags as `submitter-cflags`"),
    );
}

/// A `[flag-profile.<name>]` flag that would escape the build is an
/// error at its place in the list.
fn refused_flags(
    raw: &Loaded<RawCampaign>,
    name: &str,
    key: &'static str,
    flags: &[String],
    p: &mut Problems,
) {
    for (n, flag) in flags.iter().enumerate() {
        if let Some(why) = super::flags::refused(flag) {
            let at = [
                Step::Key("flag-profile"),
                Step::Key(name),
                Step::Key(key),
                Step::Index(n),
            ];
            p.push(
                raw.error_at_value(&at, format!("flag `{flag}` is refused: it {why}"))
                    .help("a profile holds code-generation and warning flags only; pqbench chooses every file the compiler reads and writes"),
            );
        }
    }
}
