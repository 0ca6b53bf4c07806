//! The trial build of `validate`: every unit of every instance compiled
//! (objects go to the project's cache, so `run` reuses them) with the
//! default flag profiles in their fallback order, then linked as `run`
//! links it. What does not compile is reported per unit (an `#include`
//! that does not resolve by its file and line), what does not link per
//! unit and missing symbol.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::Result;
use rayon::prelude::*;

use crate::cache::Cache;
use crate::plan::{Binding, FlagProfile, Instance};
use crate::support::Support;
use crate::toolchain::build_env::ObjectRef;
use crate::toolchain::deps::Unit;
use crate::toolchain::library::{compile_cached, link_library, target_arch, units};
use crate::toolchain::{diag, BuildEnv, Compiler};

/// One problem of the trial build, with the instances it concerns.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Finding {
    pub implementation: String,
    /// The instances it was found in.
    pub labels: Vec<String>,
    pub message: String,
    pub help: String,
}

/// The compiler and cache the trial needs; None with the reason when the
/// compiler cannot be found (the trial is then skipped with a warning).
pub(super) struct Trial {
    compiler: Compiler,
    cache: Cache,
    support: Support,
    project_root: std::path::PathBuf,
}

impl Trial {
    pub(super) fn new(project_root: &Path) -> Result<Trial> {
        let compiler = Compiler::detect("gcc")?;
        let cache = Cache::new(&project_root.join("output").join(".cache"));
        let dir = Support::sources(&cache, &compiler)?;
        // Only the adapters' sources are needed: no tool is built or run.
        let support = Support {
            kat_runner: dir.join("pqb-kat"),
            driver: dir.join("pqb-driver"),
            version: crate::support::version(),
            dir,
        };
        Ok(Trial {
            compiler,
            cache,
            support,
            project_root: project_root.to_path_buf(),
        })
    }

    fn env(&self) -> BuildEnv<'_> {
        BuildEnv {
            compiler: &self.compiler,
            support_dir: &self.support.dir,
            cache: &self.cache,
            project_root: &self.project_root,
        }
    }

    /// Builds every instance (each with the first profile that compiles
    /// all its units) and returns what failed, each message naming its
    /// instances once. `known` are (label, symbol) pairs already reported.
    pub(super) fn check(
        &self,
        instances: &[&Instance],
        known: &BTreeSet<(String, String)>,
    ) -> Vec<Finding> {
        let profiles: Vec<FlagProfile> = ["guide", "harness-default"]
            .iter()
            .filter_map(|p| FlagProfile::builtin(p))
            .collect();
        // message → (implementation, help, labels)
        let mut found: BTreeMap<String, (String, String, Vec<String>)> = BTreeMap::new();
        let arch = target_arch(&self.compiler);
        for inst in instances {
            // Code for another architecture cannot compile here: a run on
            // this system skips it with the reason.
            let elsewhere = !inst.arch.is_empty() && !inst.arch.iter().any(|a| a == arch);
            if inst.cmake.is_some() || elsewhere {
                continue;
            }
            for (message, help) in self.instance(inst, &profiles, known) {
                found
                    .entry(message)
                    .or_insert_with(|| (inst.implementation.clone(), help, Vec::new()))
                    .2
                    .push(inst.label.clone());
            }
        }
        found
            .into_iter()
            .map(|(message, (implementation, help, labels))| Finding {
                implementation,
                message: format!("{}: {message}", labels.join(", ")),
                labels,
                help,
            })
            .collect()
    }

    /// (message, help) pairs for one instance.
    fn instance(
        &self,
        inst: &Instance,
        profiles: &[FlagProfile],
        known: &BTreeSet<(String, String)>,
    ) -> Vec<(String, String)> {
        let env = self.env();
        let mut failures = Vec::new();
        for profile in profiles {
            let list = units(
                inst,
                profile,
                &self.support.dir,
                crate::toolchain::library::target_arch(&self.compiler),
            );
            let reads = env.reads(inst);
            let results: Vec<Result<(String, String)>> = list
                .par_iter()
                .map(|u| compile_cached(&env, u, &reads))
                .collect();
            failures = list
                .iter()
                .zip(&results)
                .filter_map(|(u, r)| {
                    r.as_ref()
                        .err()
                        .map(|e| self.compile_problem(inst, u, &format!("{e:#}")))
                })
                .collect();
            if !failures.is_empty() {
                continue;
            }
            let objects: Vec<(ObjectRef, &Unit)> = results
                .into_iter()
                .zip(&list)
                .filter_map(|(r, u)| {
                    r.ok().map(|(key, _)| {
                        (
                            ObjectRef {
                                source: env.display_path(&u.source),
                                key,
                                submission: u.submission,
                            },
                            u,
                        )
                    })
                })
                .collect();
            return self.link(inst, profile, &objects, known);
        }
        failures
    }

    fn compile_problem(&self, inst: &Instance, unit: &Unit, log: &str) -> (String, String) {
        let shown = self.show(&unit.source);
        let log = log.replace(&format!("{}/", self.project_root.display()), "");
        // gcc: `file:line:col: fatal error: name: No such file or directory`.
        let missing = log.lines().find_map(|l| {
            let (at, rest) = l.split_once(": fatal error: ")?;
            let name = rest.strip_suffix(": No such file or directory")?;
            Some((at.to_string(), name.to_string()))
        });
        match missing {
            Some((at, name)) => (
                format!("`#include` of `{name}` at {at} does not resolve (unit {shown})"),
                "add the directory holding it to `include-dirs`, or the component that has it to `uses`".into(),
            ),
            None => {
                let detail = diag::detail(&log);
                let pasted = detail.starts_with("the NIST adapter pastes `namespace`");
                if let Some(problem) = pasted.then(|| header_problem(inst)).flatten() {
                    return problem;
                }
                let help = if pasted {
                    "set `namespace` (under `[nist]`, the implementation or the parameter set) to the header's prefix, or remove it"
                } else {
                    "fix the source, its defines, or the implementation's `cpu-features`"
                };
                (format!("unit {shown} does not compile: {detail}"), help.into())
            }
        }
    }

    /// Links as `run` does (`--no-undefined`); each undefined symbol is
    /// reported with the units that use it.
    fn link(
        &self,
        inst: &Instance,
        profile: &FlagProfile,
        objects: &[(ObjectRef, &Unit)],
        known: &BTreeSet<(String, String)>,
    ) -> Vec<(String, String)> {
        let env = self.env();
        let Ok(scratch) = crate::toolchain::scratch() else {
            return Vec::new();
        };
        let refs: Vec<ObjectRef> = objects.iter().map(|(o, _)| o.clone()).collect();
        let lib = scratch.path().join("trial.so");
        let Err(e) = link_library(&env, inst, profile, &refs, &[], &lib) else {
            return Vec::new();
        };
        let log = format!("{e:#}");
        let missing: BTreeSet<String> = log
            .lines()
            .filter_map(|l| {
                l.split_once("undefined reference to `")?
                    .1
                    .split_once('\'')
                    .map(|(s, _)| s.to_string())
            })
            .collect();
        if missing.is_empty() {
            return vec![(
                format!("the trial link fails: {}", diag::detail(&log)),
                "look for duplicate definitions, or sources missing from `sources`".into(),
            )];
        }
        // unit(s) → the symbols they miss
        let mut by_users: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for sym in missing {
            if known.contains(&(inst.label.clone(), sym.clone())) {
                continue;
            }
            let users: Vec<String> = objects
                .iter()
                .filter(|(o, _)| {
                    crate::elf::undefined_symbols(&self.cache.object_path(&o.key))
                        .is_ok_and(|u| u.contains(&sym))
                })
                .map(|(_, u)| self.show(&u.source))
                .collect();
            let by = if users.is_empty() {
                "the library".to_string()
            } else {
                format!("unit {}", users.join(", unit "))
            };
            by_users.entry(by).or_default().push(format!("`{sym}`"));
        }
        by_users
            .into_iter()
            .map(|(by, syms)| {
                let what = if syms.len() == 1 { "symbol" } else { "symbols" };
                (
                    format!("undefined {what} {}, used by {by}", syms.join(", ")),
                    "add the source defining it to `sources` (or its component to `uses`), or check `randombytes`, `namespace` and `kat-rng`".into(),
                )
            })
            .collect()
    }

    /// Project-relative for the project's files, the file name for
    /// pqbench's support code.
    fn show(&self, p: &Path) -> String {
        if p.starts_with(&self.support.dir) {
            return p
                .file_name()
                .map(|n| format!("{} (pqbench's)", n.to_string_lossy()))
                .unwrap_or_default();
        }
        p.strip_prefix(&self.project_root)
            .unwrap_or(p)
            .display()
            .to_string()
    }
}

/// With no namespace to blame, a size the adapter cannot find means the
/// header is the wrong one: said so, with the headers of the instance's
/// include directories that do define the sizes.
fn header_problem(inst: &Instance) -> Option<(String, String)> {
    let Binding::Nist {
        header, namespace, ..
    } = &inst.binding
    else {
        return None;
    };
    if !namespace.is_empty() {
        return None;
    }
    const SIZE: &str = "CRYPTO_PUBLICKEYBYTES";
    let mut defining: Vec<String> = Vec::new();
    for dir in &inst.include_dirs {
        let Ok(rd) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut names: Vec<String> = rd
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".h"))
            .collect();
        names.sort();
        for n in names {
            let text = std::fs::read_to_string(dir.join(&n)).unwrap_or_default();
            let defines = text.lines().any(|l| {
                let l = l.trim_start().trim_start_matches('#').trim_start();
                l.strip_prefix("define")
                    .and_then(|r| r.split_whitespace().next())
                    .is_some_and(|name| name.ends_with(SIZE))
            });
            if defines && !defining.contains(&n) {
                defining.push(n);
            }
        }
    }
    defining.retain(|n| n != header);
    let help = match defining.as_slice() {
        [] => format!("set `[nist] header` to the header that defines `{SIZE}` and the API's prototypes"),
        found => format!(
            "set `[nist] header` to the header that defines them: {} (in the include directories) {}",
            found.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "),
            if found.len() == 1 { "does" } else { "do" }
        ),
    };
    Some((
        format!(
            "{}: the header `{header}` does not define `{SIZE}` (the adapter reads the sizes and the API from it)",
            inst.label
        ),
        help,
    ))
}
