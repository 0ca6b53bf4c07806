//! Profiled helper symbols and the classes their time is shown under.
//!
//! A campaign's `[profile]` applies to every instance, an algorithm's adds
//! to it (replacing a campaign wrap of the same symbol). A campaign that
//! wraps nothing gets the default profile: the ICCS hash helpers (class
//! `hash`, titled `pseudohash/XOF/sm3`) and `get_random_number` (class
//! `drng`), for NGCC-API instances only. A wrap names `hash`, `xof`, `drng`
//! or a class declared under `[profile.classes]` of the same file, so a
//! misspelt class is an error rather than a new column. Symbols may hold
//! `{namespace}` and `{randombytes}`, expanded per instance from its NIST
//! binding; a wrap whose placeholder an instance cannot fill is skipped for
//! it.

use std::collections::BTreeSet;

use super::names;
use super::problems::Problems;
use super::{ApiFamily, Binding, HelperClass, Instance, Plan, Wrap};
use crate::config::algorithm::RawAlgorithm;
use crate::config::campaign::{RawCampaign, RawProfile};
use crate::config::{Loaded, Step};

pub use crate::records::settings::ClassDef;

const NAMESPACE: &str = "{namespace}";
const RANDOMBYTES: &str = "{randombytes}";

pub use crate::records::settings::ICCS_HASH_TITLE;

/// The campaign's wraps and declared classes (the default profile when it
/// wraps nothing).
pub(super) fn campaign(raw: &Loaded<RawCampaign>, p: &mut Problems) -> (Vec<Wrap>, Vec<ClassDef>) {
    let profile = &raw.value.profile;
    let (wraps, mut classes) = check(raw, profile, p, None);
    if profile.wraps.is_some() {
        return (wraps, classes);
    }
    if !classes.iter().any(|c| c.name == HelperClass::hash()) {
        classes.push(ClassDef {
            name: HelperClass::hash(),
            title: ICCS_HASH_TITLE.into(),
        });
    }
    (Wrap::iccs_defaults(), classes)
}

/// An algorithm's own wraps and declared classes.
pub(super) fn algorithm(
    raw: &Loaded<RawAlgorithm>,
    p: &mut Problems,
) -> (Vec<Wrap>, Vec<ClassDef>) {
    check(raw, &raw.value.profile, p, Some(raw.value.api))
}

/// Checks one file's `[profile]`: each declared class (a class name and a
/// title), each wrap's symbol (a C name with placeholders) and class (a
/// built-in or declared one), and no symbol wrapped twice. `api` is the
/// algorithm's (None for a campaign, whose wraps apply to any API).
fn check<T>(
    raw: &Loaded<T>,
    profile: &RawProfile,
    p: &mut Problems,
    api: Option<ApiFamily>,
) -> (Vec<Wrap>, Vec<ClassDef>) {
    let mut classes = Vec::new();
    for (name, title) in &profile.classes {
        let at = [Step::Key("profile"), Step::Key("classes"), Step::Key(name)];
        if let Err(why) = HelperClass::check_name(name) {
            p.push(
                raw.error_at_key(&at, why)
                    .help("name classes like `keccak` or `sha-2`"),
            );
            continue;
        }
        if title.trim().is_empty() {
            p.push(
                raw.error_at_value(&at, format!("class `{name}` has an empty title"))
                    .help("give the column title the pages show, e.g. \"SHA-256\""),
            );
        }
        classes.push(ClassDef {
            name: HelperClass::new(name.clone()),
            title: title.clone(),
        });
    }
    let known = |c: &str| {
        HelperClass::BUILTIN.iter().any(|(n, _)| *n == c) || profile.classes.contains_key(c)
    };
    let mut seen = BTreeSet::new();
    let mut wraps = Vec::new();
    for w in profile.wraps.iter().flatten() {
        let symbol = w.symbol.get_ref();
        if let Err(why) = check_symbol(symbol, api) {
            p.push(raw.error_at(&w.symbol, why).help(
                "name a function, e.g. \"pseudoXOF\", \"{namespace}shake256\" or \"{randombytes}\"",
            ));
        } else if !seen.insert(symbol.clone()) {
            p.push(
                raw.error_at(&w.symbol, format!("`{symbol}` is wrapped twice"))
                    .help("keep one [[profile.wrap]] per symbol"),
            );
        }
        let class = w.class.get_ref();
        if !known(class) {
            let mut all: Vec<&str> = HelperClass::BUILTIN.iter().map(|(n, _)| *n).collect();
            all.extend(profile.classes.keys().map(String::as_str));
            p.push(
                raw.error_at(&w.class, format!("unknown helper class `{class}`"))
                    .help(format!(
                        "use one of {}, or declare it under [profile.classes] with its column title",
                        all.join(", ")
                    )),
            );
        }
        wraps.push(Wrap {
            symbol: symbol.clone(),
            class: HelperClass::new(class.clone()),
            in_bits_arg: w.in_bits_arg,
            out_bits_arg: w.out_bits_arg,
            api: None,
        });
    }
    (wraps, classes)
}

/// A symbol pattern is a C name once its placeholders are filled.
fn check_symbol(symbol: &str, api: Option<ApiFamily>) -> Result<(), String> {
    if api == Some(ApiFamily::Ngcc) && symbol.contains(RANDOMBYTES) {
        return Err(format!(
            "`{symbol}`: NGCC-API code has no randombytes symbol (its DRNG is get_random_number)"
        ));
    }
    let filled = symbol.replace(NAMESPACE, "x").replace(RANDOMBYTES, "x");
    if filled.contains(['{', '}']) {
        return Err(format!(
            "`{symbol}` holds a placeholder other than {NAMESPACE} and {RANDOMBYTES}"
        ));
    }
    if !names::is_c_identifier(&filled) {
        return Err(format!("`{symbol}` is not a C symbol name"));
    }
    Ok(())
}

/// `symbol` with the instance's placeholders filled, or None when the
/// instance has nothing to fill one with.
fn expand(symbol: &str, binding: &Binding) -> Option<String> {
    let (namespace, randombytes) = match binding {
        Binding::Nist {
            namespace,
            randombytes,
            ..
        } => (namespace.as_str(), Some(randombytes.as_str())),
        Binding::Ngcc { .. } => ("", None),
    };
    let mut out = symbol.replace(NAMESPACE, namespace);
    if out.contains(RANDOMBYTES) {
        out = out.replace(RANDOMBYTES, randombytes?);
    }
    Some(out)
}

impl Plan {
    /// The wrap patterns that apply to the instances of `algorithm` (of
    /// `api`): the campaign's for that API, then the algorithm's own, which
    /// replace a campaign wrap of the same symbol.
    fn wrap_patterns(&self, algorithm: &str, api: ApiFamily) -> Vec<Wrap> {
        let own = self
            .algorithm(algorithm)
            .map(|a| a.profile_wraps.as_slice())
            .unwrap_or_default();
        let mut out: Vec<Wrap> = self
            .profile_wraps
            .iter()
            .filter(|w| w.api.is_none_or(|a| a == api))
            .filter(|w| !own.iter().any(|o| o.symbol == w.symbol))
            .cloned()
            .collect();
        out.extend(own.iter().cloned());
        out
    }

    /// The helper symbols profiled in `inst`, placeholders filled.
    pub(crate) fn wraps_for(&self, inst: &Instance) -> Vec<Wrap> {
        let mut out: Vec<Wrap> = Vec::new();
        for w in self.wrap_patterns(&inst.algorithm, inst.api) {
            let Some(symbol) = expand(&w.symbol, &inst.binding) else {
                continue;
            };
            if !out.iter().any(|o| o.symbol == symbol) {
                out.push(Wrap { symbol, ..w });
            }
        }
        out
    }

    /// The classes `algorithm`'s wraps use, in order of first use but the
    /// DRNG's last (as the published pages order their columns), titled by
    /// the algorithm's declaration, else the campaign's, else the built-in
    /// title.
    pub(crate) fn classes_for(&self, algorithm: &str) -> Vec<ClassDef> {
        let Some(a) = self.algorithm(algorithm) else {
            return Vec::new();
        };
        let mut out: Vec<ClassDef> = Vec::new();
        for w in self.wrap_patterns(algorithm, a.api) {
            if out.iter().any(|c| c.name == w.class) {
                continue;
            }
            let declared = a
                .profile_classes
                .iter()
                .chain(&self.profile_classes)
                .find(|c| c.name == w.class)
                .map(|c| c.title.clone());
            let title = declared
                .or_else(|| w.class.builtin_title().map(String::from))
                .unwrap_or_else(|| w.class.to_string());
            out.push(ClassDef {
                name: w.class,
                title,
            });
        }
        out.sort_by_key(|c| c.name.is_drng());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_fill_placeholders_or_are_skipped() {
        let nist = Binding::Nist {
            header: "api.h".into(),
            namespace: "PQB_X1_".into(),
            suffix: String::new(),
            randombytes: "x_randombytes".into(),
            lengths: Default::default(),
            kat_rng: crate::config::algorithm::KatRng::Builtin,
            rng_init: None,
            signature_api: Default::default(),
        };
        let ngcc = Binding::Ngcc { headers: vec![] };
        assert_eq!(
            expand("{namespace}sha256", &nist).as_deref(),
            Some("PQB_X1_sha256")
        );
        assert_eq!(
            expand("{randombytes}", &nist).as_deref(),
            Some("x_randombytes")
        );
        assert_eq!(expand("{namespace}f", &ngcc).as_deref(), Some("f"));
        assert_eq!(expand("{randombytes}", &ngcc), None);
        assert!(check_symbol("{namespace}shake256", None).is_ok());
        assert!(check_symbol("{randombytes}", Some(ApiFamily::Nist)).is_ok());
        assert!(check_symbol("{randombytes}", Some(ApiFamily::Ngcc)).is_err());
        assert!(check_symbol("{ns}f", None).is_err());
        assert!(check_symbol("a-b", None).is_err());
    }
}
