//! Import from the build its authors wrote: the tree's own KAT build runs
//! confined with pqbench standing in as its compilers (`record.rs`,
//! `build.rs`); each KAT generator it links is one parameter set
//! (`graph.rs`), labelled by the `CRYPTO_ALGNAME` its build evaluates
//! (`label.rs`); the generator runs and what it writes is the set's KAT
//! reference; the draft is written from the recorded calls (`draft.rs`).
//!
//! The command is the one the tree documents (`command.rs`) or the user's
//! `--build`, whose brace lists make one build per value.

mod argv;
mod build;
mod command;
mod draft;
mod generated;
mod graph;
mod header;
mod label;
mod record;
mod selector;

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

pub use record::record_entry;

pub(super) use build::run_program;
pub(super) use command::{discover, expand};
pub(super) use draft::{apply, KatFile, Placement, References};

use super::csource::CFile;
use super::folder;
use argv::CompilerCall;

/// One parameter set as its own build made it.
#[derive(Debug, Clone)]
pub(super) struct ObservedSet {
    /// The evaluated `CRYPTO_ALGNAME`, else the generator's name.
    pub label: String,
    /// Whether `label` is the evaluated `CRYPTO_ALGNAME`.
    pub evaluated: bool,
    pub command: String,
    /// The generator, relative to the tree.
    pub generator: String,
    /// The library's sources (tree-relative) and the calls that compiled
    /// them.
    pub units: Vec<(String, CompilerCall)>,
    /// What the generator also compiled that is not the library, and why.
    pub excluded: Vec<(String, String)>,
    /// System libraries its link named.
    pub libraries: Vec<String>,
    /// The generator's KAT files (none from a checker).
    pub kats: build::Written,
    /// A tree that ships KAT checkers and no generator: this set's checker
    /// (its bytes), which proves pqbench's KAT file instead.
    pub checker: Option<Vec<u8>>,
    /// The header the generator calls the library through.
    pub api_header: Option<header::ApiHeader>,
    pub notes: Vec<String>,
    /// Where the tree's copy was while it built (the recorded calls' paths
    /// start there).
    pub root: PathBuf,
    /// The imported tree.
    pub tree: PathBuf,
    /// Sources the build wrote that the tree lacks, which the draft names.
    pub generated: generated::Files,
}

/// More generators than one build of a submission links: each is run,
/// for up to an hour.
const MAX_GENERATORS: usize = 64;

/// Runs each command (one build each) on `tree` and returns every set the
/// builds linked a generator for.
pub(super) fn observe(tree: &Path, commands: &[String]) -> Result<Vec<ObservedSet>> {
    let tools = build::Tools::new()?;
    let mut sets = Vec::new();
    for command in commands {
        let o = build::observe(tree, command, &tools)?;
        let gens = graph::generators(&o.calls, &archive_members);
        if gens.len() > MAX_GENERATORS {
            bail!(
                "the build `{command}` linked {} programs that could be KAT generators; at most {MAX_GENERATORS} are run: give the command that builds the generators with --build",
                gens.len()
            );
        }
        if gens.is_empty() {
            bail!(
                "the build `{command}` linked no KAT generator ({} compiler calls recorded): give the command that builds it with --build",
                o.calls.len()
            );
        }
        // A program that is no generator (a benchmark, a test) writes no
        // KAT file: it is left out when another one does.
        let mut failures = Vec::new();
        let before = sets.len();
        for g in gens {
            match observed_set(tree, &o, &g, Role::Generator) {
                Ok(set) => sets.push(set),
                Err(e) => failures.push(e),
            }
        }
        // No generator wrote a KAT file: the checkers the build linked
        // prove pqbench's own instead.
        if sets.len() == before {
            for c in graph::checkers(&o.calls, &archive_members) {
                if let Ok(set) = observed_set(tree, &o, &c, Role::Checker) {
                    sets.push(set);
                }
            }
        }
        if sets.len() == before {
            if let Some(e) = failures.into_iter().next() {
                return Err(e);
            }
        } else if let Some(first) = sets.get_mut(before) {
            for e in failures {
                // Paths in the build's scratch copy, named as in the tree.
                let text = format!("{e:#}").replace(&format!("{}/", o.root.display()), "");
                first.notes.push(format!(
                    "left out: {}",
                    text.lines().next().unwrap_or_default()
                ));
            }
        }
    }
    Ok(sets)
}

/// Why a compiled file is not the library's: as for a tree read
/// statically (and NIST's DRBG whatever its file is called), except that a
/// file that defines `randombytes` beside more than a few other functions
/// is library code whose own randomness sits under a build switch
/// (`#ifdef NO_RANDOM`), kept.
fn exclusion(file: &CFile) -> Option<&'static str> {
    if file.defines_fn("randombytes_init") && !file.defines_fn("main") {
        return Some("NIST's DRBG (defines randombytes_init): pqbench's builtin KAT DRBG provides the randomness");
    }
    let why = folder::exclusion(file)?;
    let randomness_only = file.defs.len() <= 4;
    if why.starts_with("defines randombytes") && !randomness_only {
        return None;
    }
    Some(why)
}

/// The member names of a static library on disk (none when it is not one).
fn archive_members(path: &Path) -> Vec<String> {
    let Ok(data) = crate::fsutil::foreign::read_regular(path, 1 << 30) else {
        return Vec::new();
    };
    let Ok(ar) = object::read::archive::ArchiveFile::parse(&*data) else {
        return Vec::new();
    };
    ar.members()
        .flatten()
        .map(|m| {
            String::from_utf8_lossy(m.name())
                .trim_end_matches('/')
                .to_string()
        })
        .collect()
}

/// The label names folders (`kat/<id>/<label>/`): text the build made is
/// kept only when it is a safe name, else made one and said so.
fn safe_label(label: String, notes: &mut Vec<String>) -> String {
    let Err(why) = crate::plan::names::check_name(&label) else {
        return label;
    };
    let safe = super::sanitize(&label)
        .trim_start_matches(['-', '.', '_', '+'])
        .to_string();
    notes.push(format!(
        "the build's label `{}` {why}: drafted as `{safe}`",
        super::emit::one_line(&label)
    ));
    if safe.is_empty() {
        "set".to_string()
    } else {
        safe
    }
}

/// What a program the build linked is to the import.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// It writes the set's KAT file, the reference.
    Generator,
    /// It reads a KAT file and checks the library against it.
    Checker,
}

fn observed_set(
    tree: &Path,
    o: &build::Observed,
    g: &graph::Generator,
    role: Role,
) -> Result<ObservedSet> {
    let rel = |p: &Path| -> Option<String> {
        p.strip_prefix(&o.root)
            .ok()
            .map(|r| r.to_string_lossy().replace('\\', "/"))
    };
    let mut notes = Vec::new();
    if o.unparsed > 0 {
        notes.push(format!(
            "{} lines of the build's call log were not calls (the build wrote to the log)",
            o.unparsed
        ));
    }
    // The build made the paths it reports, and its copy may hold links it
    // placed: a path is read only when it resolves inside the copy.
    let copy = o.root.canonicalize()?;
    let inside = |p: &Path| p.canonicalize().is_ok_and(|c| c.starts_with(&copy));
    if !inside(&g.output) || !g.output.is_file() {
        bail!(
            "the generator {} is not a file in the tree's copy",
            g.output.display()
        );
    }
    let mut units = Vec::new();
    let mut excluded = Vec::new();
    let mut main_unit = None;
    for u in &g.units {
        let Some(r) = rel(&u.source).filter(|_| inside(&u.source)) else {
            notes.push(format!(
                "the generator compiled {}, outside the tree: left out",
                u.source.display()
            ));
            continue;
        };
        let file = CFile::read(&u.source, &r).unwrap_or_else(|_| CFile::parse(&r, ""));
        match exclusion(&file) {
            Some(why) => {
                let main = file.defines_fn("main") || header::includes_main(&u.source, &copy);
                if main && main_unit.is_none() {
                    main_unit = Some(u);
                }
                excluded.push((r, why.to_string()));
            }
            None => units.push((r, u.call.clone())),
        }
    }
    for f in &g.foreign_objects {
        notes.push(format!(
            "the generator linked {}, which the build did not compile: left out",
            rel(f).unwrap_or_else(|| f.display().to_string())
        ));
    }
    let generator = rel(&g.output).unwrap_or_else(|| g.output.display().to_string());
    let name = g
        .output
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let algname = match main_unit {
        Some(u) => label::algname(o.scratch.path(), u)?,
        None => None,
    };
    let includes: Vec<String> = units
        .iter()
        .flat_map(|(_, c)| &c.includes)
        .filter(|i| inside(i))
        .filter_map(|i| rel(i))
        .collect();
    let sources: Vec<String> = units.iter().map(|(s, _)| s.clone()).collect();
    let generated = generated::collect(&o.root, tree, &sources, &includes, &mut notes);
    let api_header = main_unit.and_then(|u| header::api_header(u, &copy));
    let (kats, checker) = match role {
        Role::Generator => (build::run_generator(&g.output)?, None),
        Role::Checker => (
            Vec::new(),
            Some(crate::fsutil::foreign::read_regular(&g.output, 1 << 30)?),
        ),
    };
    let evaluated = algname.is_some();
    let label = safe_label(algname.unwrap_or(name), &mut notes);
    Ok(ObservedSet {
        evaluated,
        label,
        command: o.command.clone(),
        generator,
        units,
        excluded,
        libraries: g.libraries.clone(),
        kats,
        checker,
        api_header,
        notes,
        root: o.root.clone(),
        tree: tree.to_path_buf(),
        generated,
    })
}
