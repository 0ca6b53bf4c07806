//! `pqbench validate <toml>`: checks an algorithm TOML, compiling and
//! trial-linking its units but running none of its code, and lists every
//! problem with its position.
//!
//! The file is resolved exactly as a run resolves it
//! (`plan::check_algorithm`, the one place the rules of an algorithm file
//! live), so validate never accepts what `run` rejects and says it in the
//! same words. Then it checks what only the sources can tell: that every
//! API header is in the instance's include directories and that the sources
//! define every API function the adapter will call (namespacing macros
//! expanded); how the KAT manifest covers the labels is reported as
//! warnings. Last, every implementation's units are compiled and linked
//! as `run` would (`trial`, objects cached for the run), so an include
//! that does not resolve or a symbol nothing defines is named with its
//! unit.

mod trial;

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::config::algorithm::RawAlgorithm;
use crate::config::{Loaded, Step};
use crate::error::{exit, ConfigError, Error};
use crate::import::{katfiles, symbols};
use crate::plan::{self, Binding, Instance, Problems, Project, Selection};

/// The outcome: problems (each positioned) and warnings.
#[derive(Debug)]
pub struct Report {
    pub file: PathBuf,
    pub problems: Vec<ConfigError>,
    pub warnings: Vec<String>,
    pub instances: usize,
}

impl Report {
    pub fn exit_code(&self) -> i32 {
        if self.problems.is_empty() {
            exit::OK
        } else {
            exit::BAD_INPUT
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for p in &self.problems {
            writeln!(f, "error: {p}\n")?;
        }
        for w in &self.warnings {
            writeln!(f, "warning: {w}")?;
        }
        match self.problems.len() {
            0 => writeln!(
                f,
                "{}: OK ({} instances: paths, sources and API symbols checked, every unit compiled and linked)",
                self.file.display(),
                self.instances
            ),
            n => writeln!(
                f,
                "{}: {n} problem{}",
                self.file.display(),
                if n == 1 { "" } else { "s" }
            ),
        }
    }
}

/// Validates `toml`; a relative path is taken from the project directory
/// (`-C DIR`), as campaign names are.
pub fn validate(project_root: &Path, toml: &Path) -> Result<Report, Error> {
    let project = Project::new(project_root).map_err(|e| {
        ConfigError::new(format!("project directory {}: {e}", project_root.display()))
            .help("give an existing project directory with -C")
    })?;
    let given = project.root.join(toml);
    let file = given.canonicalize().map_err(|e| {
        ConfigError::new(format!("cannot read {}: {e}", given.display()))
            .in_file(&given)
            .help("a relative path is taken from the project directory (-C); check it exists")
    })?;
    let check = plan::check_algorithm(&project, &file, Selection::default());
    let mut p = Problems::default();
    p.extend(check.problems);
    let mut warnings = check.warnings;
    if let Some(raw) = &check.raw {
        let mut scans = symbols::Cache::new();
        let mut known = BTreeSet::new();
        let show = |q: &Path| {
            q.strip_prefix(&project.root)
                .unwrap_or(q)
                .display()
                .to_string()
        };
        for (inst, set) in &check.instances {
            // CMake builds its own file list.
            if inst.cmake.is_some() {
                continue;
            }
            headers(raw, inst, &mut p);
            let label = &raw.value.parameter_sets[*set].label;
            for m in symbols::missing(inst, &mut scans, &show) {
                known.insert((inst.label.clone(), m.symbol.clone()));
                p.push(
                    raw.error_at(
                        label,
                        format!(
                            "{}: API function `{}` is not defined ({})",
                            inst.label, m.symbol, m.detail
                        ),
                    )
                    .help("define it, fix the set's `defines`/`namespace`, or add its file to `sources`"),
                );
            }
        }
        // The trial build once the file itself is right: its compiler
        // errors would only repeat the problems above.
        let built: Vec<&Instance> = check.instances.iter().map(|(i, _)| i).collect();
        if !built.is_empty() && p.is_empty() {
            match trial::Trial::new(&project.root) {
                Ok(t) => {
                    for f in t.check(&built, &known) {
                        p.push(finding_error(raw, &check.instances, f));
                    }
                }
                Err(e) => warnings.push(format!("nothing compiled: {e:#}")),
            }
        }
        // Against the labels of the instances that resolved: with a
        // problem above some did not, and their manifest lines would read
        // as naming no label.
        if let Some(alg) = check.algorithm.as_ref().filter(|_| p.is_empty()) {
            let shown = show(&alg.kat_manifest);
            if let Some(w) = p.take(katfiles::coverage(&alg.kat_manifest, &shown, &alg.labels)) {
                warnings.extend(w);
            }
        }
    }
    Ok(Report {
        file,
        problems: p.into_vec(),
        warnings,
        instances: check.instances.len(),
    })
}

/// A trial-build finding at the key it comes from: an `#error` in a set
/// that has defines at that set's `defines` (they choose what the sources
/// stop on), anything else at the implementation's name.
fn finding_error(
    raw: &Loaded<RawAlgorithm>,
    instances: &[(Instance, usize)],
    f: trial::Finding,
) -> ConfigError {
    let set = instances
        .iter()
        .find(|(i, _)| f.labels.contains(&i.label))
        .map(|(_, j)| *j)
        .filter(|&j| {
            raw.value
                .parameter_sets
                .get(j)
                .is_some_and(|s| !s.defines.is_empty())
        });
    if let Some(j) = set.filter(|_| f.message.contains("#error")) {
        let at = [
            Step::Key("parameter-set"),
            Step::Index(j),
            Step::Key("defines"),
        ];
        return raw.error_at_key(&at, f.message).help(
            "the set's defines reach an `#error` of the sources: check each value against those the sources accept",
        );
    }
    let imp = raw
        .value
        .implementations
        .iter()
        .find(|i| i.name.get_ref() == &f.implementation);
    match imp {
        Some(i) => raw.error_at(&i.name, f.message),
        None => raw.error(f.message),
    }
    .help(f.help)
}

/// The API headers the adapter force-includes must be findable.
fn headers(raw: &Loaded<RawAlgorithm>, inst: &Instance, p: &mut Problems) {
    let names: Vec<(&String, Vec<Step>)> = match &inst.binding {
        Binding::Ngcc { headers } => headers
            .iter()
            .enumerate()
            .map(|(i, h)| {
                (
                    h,
                    vec![Step::Key("ngcc"), Step::Key("headers"), Step::Index(i)],
                )
            })
            .collect(),
        Binding::Nist { header, .. } => {
            vec![(header, vec![Step::Key("nist"), Step::Key("header")])]
        }
    };
    for (h, at) in names {
        if inst.include_dirs.iter().any(|d| d.join(h).is_file()) {
            continue;
        }
        p.push(
            raw.error_at_value(
                &at,
                format!(
                    "{}: API header `{h}` is in none of its include directories",
                    inst.label
                ),
            )
            .help("fix the header name, or add its directory to `include-dirs` (or `uses`)"),
        );
    }
}
