//! The ICCS helpers as the baseline of hash candidates: when a campaign
//! selects a hash algorithm, `sm3hash` 256, `pseudohash` 512/768/1024 and
//! `pseudoXOF` at every digest width its hash candidates use are built from
//! the component the campaign names (`[iccs] component`, the repository's
//! stand-in by default), wrapped as hash instances of a synthesized
//! algorithm `iccs`, self-checked and measured like the candidates.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::names::{self, NAME_RULE};
use super::paths::{contained, expand_sources};
use super::problems::Problems;
use super::project::{project_rel, Project};
use super::*;
use crate::config::algorithm::RawComponent;
use crate::config::campaign::RawCampaign;
use crate::config::{Loaded, Step};

/// The id of the synthesized baseline algorithm.
pub(crate) const BASELINE_ID: &str = "iccs";
/// The component used when a campaign names none.
pub(crate) const DEFAULT_COMPONENT: &str = "iccs-standin";
/// The support header declaring `CryptHash` for the baseline's wrapper.
pub(crate) const BASELINE_HEADER: &str = "pqb_iccs.h";

/// `(helper, digest bits)` of every baseline instance for hash candidates
/// using the digest widths `widths`.
pub(crate) fn helpers(widths: &BTreeSet<u32>) -> Vec<(&'static str, u32)> {
    let mut v = vec![
        ("sm3hash", 256),
        ("pseudohash", 512),
        ("pseudohash", 768),
        ("pseudohash", 1024),
    ];
    v.extend(widths.iter().map(|w| ("pseudoXOF", *w)));
    v
}

/// The label of a baseline instance: `pseudoXOF-512`.
pub(crate) fn label(helper: &str, bits: u32) -> String {
    format!("{helper}-{bits}")
}

/// The baseline algorithm and its instances, or None when the campaign has
/// no hash candidate (or turns the baseline off, or it did not resolve).
pub(crate) fn baseline(
    project: &Project,
    raw: &Loaded<RawCampaign>,
    algorithms: &[Algorithm],
    instances: &[Instance],
    p: &mut Problems,
) -> Option<(Algorithm, Vec<Instance>)> {
    let widths: BTreeSet<u32> = instances
        .iter()
        .filter(|i| i.kind.def().takes_digest_bits())
        .filter_map(|i| i.spec.digest_bits)
        .collect();
    if widths.is_empty() || raw.value.iccs.baseline == Some(false) {
        return None;
    }
    if algorithms.iter().any(|a| a.id == BASELINE_ID) {
        p.push(
            raw.error_at_value(
                &[Step::Key("algorithms")],
                format!("an algorithm is named `{BASELINE_ID}`, the id of the ICCS baseline"),
            )
            .help("rename the algorithm, or set [iccs] baseline = false"),
        );
        return None;
    }
    let (name, file) = component_file(project, raw, p)?;
    let comp: Loaded<RawComponent> = p.read(&file)?;
    let parts = component_parts(project, &comp, p)?;
    let insts: Vec<Instance> = helpers(&widths)
        .into_iter()
        .map(|(helper, bits)| instance(project, &parts, helper, bits))
        .collect();
    let algorithm = algorithm(project, &name, &file, &comp.value, &insts);
    Some((algorithm, insts))
}

/// The name and file of the component the campaign names (or the
/// default), when the name is valid and the file exists.
fn component_file(
    project: &Project,
    raw: &Loaded<RawCampaign>,
    p: &mut Problems,
) -> Option<(String, PathBuf)> {
    let (name, at) = match &raw.value.iccs.component {
        Some(s) => (s.get_ref().clone(), Some(s)),
        None => (DEFAULT_COMPONENT.to_string(), None),
    };
    // The default has no position in the file: say that it is the default.
    let err = |msg: String, help: String| match at {
        Some(s) => raw.error_at(s, msg).help(help),
        None => raw
            .error(format!("{msg} (the default ICCS component)"))
            .help(help),
    };
    if let Err(why) = names::check_name(&name) {
        p.push(err(
            format!("component name `{name}` {why}"),
            NAME_RULE.into(),
        ));
        return None;
    }
    let file = components_dir(project).join(format!("{name}.toml"));
    if !file.is_file() {
        p.push(err(
            format!("unknown component `{name}`"),
            format!("add algorithms/components/{name}.toml, name another under [iccs] component, or set [iccs] baseline = false"),
        ));
        return None;
    }
    Some((name, file))
}

fn components_dir(project: &Project) -> PathBuf {
    project.algorithms_dir().join("components")
}

/// What the baseline's instances are built from.
struct ComponentParts {
    /// Sorted, without duplicates.
    sources: Vec<PathBuf>,
    /// The component root first.
    include_dirs: Vec<PathBuf>,
    defines: Vec<String>,
}

/// The component's root, sources, include directories and defines, or
/// None (with every problem recorded) unless all of them resolved.
fn component_parts(
    project: &Project,
    comp: &Loaded<RawComponent>,
    p: &mut Problems,
) -> Option<ComponentParts> {
    let before = p.len();
    let cv = &comp.value;
    let alg_root = project.algorithms_dir();
    let root = match contained(&alg_root, &components_dir(project), cv.root.get_ref()) {
        Ok(r) if r.is_dir() => r,
        Ok(_) | Err(_) => {
            p.push(
                comp.error_at(&cv.root, "component root not found inside algorithms/")
                    .help("fix `root`"),
            );
            return None;
        }
    };
    let mut sources = Vec::new();
    for pat in &cv.sources {
        match contained(&root, &root, pat.get_ref()).and_then(|_| {
            expand_sources(
                &root,
                &alg_root,
                std::slice::from_ref(pat.get_ref()),
                &cv.exclude,
            )
        }) {
            Ok(f) => sources.extend(f),
            Err(e) => p.push(
                comp.error_at(pat, e)
                    .help("fix the pattern or add the file"),
            ),
        }
    }
    let mut include_dirs = vec![root.clone()];
    for inc in &cv.include_dirs {
        match contained(&root, &root, inc.get_ref()) {
            Ok(d) if d.is_dir() => include_dirs.push(d),
            _ => p.push(
                comp.error_at(inc, "include directory not found inside the component root")
                    .help("fix `include-dirs`"),
            ),
        }
    }
    if p.len() != before {
        return None;
    }
    sources.sort();
    sources.dedup();
    Some(ComponentParts {
        sources,
        include_dirs,
        defines: cv.defines.iter().filter_map(|(k, v)| v.flag(k)).collect(),
    })
}

/// The baseline instance of one helper at one digest width.
fn instance(project: &Project, parts: &ComponentParts, helper: &str, bits: u32) -> Instance {
    Instance {
        algorithm: BASELINE_ID.into(),
        label: label(helper, bits),
        implementation: "reference".into(),
        kind: Kind::Hash,
        api: ApiFamily::Ngcc,
        sources: parts
            .sources
            .iter()
            .map(|s| SourceFile {
                display: project_rel(project, s),
                path: s.clone(),
                ..SourceFile::default()
            })
            .collect(),
        include_dirs: parts.include_dirs.clone(),
        defines: parts.defines.clone(),
        binding: Binding::Ngcc {
            headers: vec!["auxfunc.h".into(), "drng.h".into(), BASELINE_HEADER.into()],
        },
        cpu_features: Vec::new(),
        libraries: Vec::new(),
        arch: Vec::new(),
        submitter_cflags: None,
        kat_records: 1,
        cmake: None,
        spec: KindSpec {
            digest_bits: Some(bits),
            kex_names: Default::default(),
            iccs_helper: Some(helper.into()),
        },
    }
}

/// The synthesized algorithm `iccs` of the baseline instances.
fn algorithm(
    project: &Project,
    name: &str,
    file: &Path,
    cv: &RawComponent,
    insts: &[Instance],
) -> Algorithm {
    Algorithm {
        id: BASELINE_ID.into(),
        name: "ICCS hash helpers".into(),
        kind: Kind::Hash,
        api: ApiFamily::Ngcc,
        description: format!(
            "The ICCS helpers sm3hash, pseudohash and pseudoXOF built from the component `{name}` ({}), measured as the baseline of the hash candidates.",
            cv.description
        ),
        links: Default::default(),
        toml: project_rel(project, file),
        known_issues: Vec::new(),
        survey_note: None,
        kat_manifest: project.root.join("kat").join(BASELINE_ID).join("kat.sha256"),
        kat_reference_dir: None,
        implementations: vec!["reference".into()],
        labels: insts.iter().map(|i| i.label.clone()).collect(),
        ct_annotations: Vec::new(),
        profile_wraps: Vec::new(),
        profile_classes: Vec::new(),
    }
}
