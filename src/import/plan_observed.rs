//! What the tree's own KAT build adds to an import's plan: the build
//! observed (the user's `--build`, else what the tree's build files name),
//! the sources it compiled and the ones it wrote, and the KAT files its
//! generators made, proven or checked.

use std::collections::BTreeMap;
use std::path::Path;

use super::{add_manifest, emit, katfiles, manifest_key_of_line, observe, submission};
use super::{ImportOptions, Plan};
use crate::error::{ConfigError, Error};

/// The commands of an observed build and the sets they built.
pub(super) type Observed = (Vec<String>, Vec<observe::ObservedSet>);

/// The tree's own KAT build, observed: the user's `--build` (an error when
/// it fails), else what its build files name (a failure is a note, and
/// the draft comes from the sources alone), else nothing.
pub(super) fn observe_build(
    plan: &mut Plan,
    path: &Path,
    opts: &ImportOptions,
) -> Result<Option<Observed>, Error> {
    let (mut commands, given, plain) = match &opts.build {
        Some(b) => (
            observe::expand(b).map_err(|e| {
                ConfigError::new(format!("--build: {e:#}"))
                    .help("write the command as in a shell, with `{a,b,c}` for one build per value")
            })?,
            true,
            None,
        ),
        None => match observe::discover(path) {
            Some(d) => (d.commands, false, d.plain),
            None => return Ok(None),
        },
    };
    let mut observed = observe::observe(path, &commands);
    if let Some(plain) = plain {
        // What looked like a set selector switches something else: its
        // values built the same set, or one of them does not build.
        let why = match &observed {
            Ok(sets) => same_kats(sets).map(|(a, b)| {
                format!("`{a}` and `{b}` wrote the same KAT files: their variable chooses no parameter set")
            }),
            Err(e) => Some(format!(
                "one build per value of a variable that looked like the set selector failed ({})",
                format!("{e:#}").lines().next().unwrap_or_default()
            )),
        };
        if let Some(why) = why {
            plan.lines
                .push(format!("note: {why}; built `{plain}` instead"));
            commands = vec![plain];
            observed = observe::observe(path, &commands);
        }
    }
    match observed {
        Ok(sets) => {
            let checkers = sets.iter().filter(|s| s.checker.is_some()).count();
            let what = match (sets.len() - checkers, checkers) {
                (g, 0) => format!("{g} KAT generator(s) built and run"),
                (0, c) => format!("no KAT generator; {c} KAT checker(s) built"),
                (g, c) => format!("{g} KAT generator(s) built and run, {c} KAT checker(s) built"),
            };
            plan.lines
                .push(format!("observed `{}`: {what}", commands.join("`, `")));
            Ok(Some((commands, sets)))
        }
        Err(e) if given => Err(ConfigError::new(format!("--build: {e:#}"))
            .help("fix the command (it runs in a copy of the tree, with no network and no file outside it)")
            .into()),
        Err(e) => {
            // The first line says what failed, the last ones why.
            let text = format!("{e:#}");
            let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            let why: Vec<String> = lines
                .iter()
                .skip(1)
                .rev()
                .take(3)
                .rev()
                .map(|l| format!("\n  {}", l.trim()))
                .collect();
            plan.lines.push(format!(
                "note: {}{}\n  drafted from the sources alone (give the command with --build)",
                lines.first().copied().unwrap_or_default().trim_end_matches(':'),
                why.concat()
            ));
            Ok(None)
        }
    }
}

/// The commands of two sets whose generators wrote byte-identical KAT
/// files, if any.
fn same_kats(sets: &[observe::ObservedSet]) -> Option<(String, String)> {
    let written: Vec<&observe::ObservedSet> = sets.iter().filter(|s| !s.kats.is_empty()).collect();
    written.iter().enumerate().find_map(|(i, a)| {
        written[i + 1..]
            .iter()
            .find(|b| b.command != a.command && b.kats == a.kats)
            .map(|b| (a.command.clone(), b.command.clone()))
    })
}

/// Queues the sources the builds wrote (kept beside the tree's copy at
/// `dest`, where the draft names them). Two builds that wrote one path
/// differently keep the first; the proof shows the sets it does not serve.
pub(super) fn add_build_sources(plan: &mut Plan, dest: &Path, sets: &[observe::ObservedSet]) {
    let mut kept: BTreeMap<&String, (&Vec<u8>, &str)> = BTreeMap::new();
    for o in sets {
        for (rel, bytes) in &o.generated {
            match kept.get(rel) {
                None => {
                    kept.insert(rel, (bytes, &o.label));
                }
                Some((first, label)) if *first != bytes => plan.lines.push(format!(
                    "note: the builds of {label} and {} wrote {rel} differently; kept {label}'s",
                    o.label
                )),
                Some(_) => {}
            }
        }
    }
    if !kept.is_empty() {
        plan.lines.push(format!(
            "kept {} source file(s) the build wrote beside the copy",
            kept.len()
        ));
    }
    for (rel, (bytes, _)) in kept {
        plan.writes.push((dest.join(rel), bytes.clone()));
    }
}

/// Queues the KAT files the tree's own generators wrote, with their
/// manifest lines marked as generated.
pub(super) fn add_generated(
    plan: &mut Plan,
    id: &str,
    kats: &[observe::KatFile],
    commands: &[String],
    force: bool,
) {
    let kat_dir = plan.root.join("kat").join(id);
    let mut lines = vec![(
        String::new(),
        crate::kat::provenance::Provenance::Generated.comment(&format!(
            "written by the tree's own generators, built by `{}`",
            emit::one_line(&commands.join("`, `"))
        )),
    )];
    for k in kats {
        let dest = kat_dir.join(&k.label).join(&k.file);
        if dest.exists() && !force {
            let d = plan.show(&dest);
            plan.conflicts.push(format!("{d} exists"));
        }
        plan.writes.push((dest, k.bytes.clone()));
        lines.push((k.label.clone(), k.line.clone()));
    }
    add_manifest(plan, id, &lines, "the tree's own KAT generators", force);
}

/// Queues the KAT files found and their manifest lines; without any, says
/// so and checks that a kept manifest names the drafted labels.
pub(super) fn add_kat_files(
    plan: &mut Plan,
    a: &submission::Analysis,
    id: &str,
    shown: &str,
    force: bool,
) -> Result<(), Error> {
    let kat_dir = plan.root.join("kat").join(id);
    for k in &a.kats {
        plan.copies
            .push((k.source.clone(), kat_dir.join(&k.label).join(&k.file)));
    }
    if a.kats.is_empty() {
        let m = kat_dir.join("kat.sha256");
        let shown = format!("kat/{id}/kat.sha256");
        plan.lines.push(match (m.is_file(), &a.generator) {
            (true, _) => format!("no KAT files found; kept {shown}"),
            (false, None) => {
                format!("no KAT files found: after a run, `pqbench bless` writes {shown}")
            }
            (false, Some(g)) => format!(
                "no KAT files found, but the tree ships its KAT generator {g}: what it writes \
                 is the reference. Run the campaign, check that each set's file in \
                 output/<campaign>/<system>/kat/{id}/ equals the generator's output for that \
                 set (build it as the tree's own build does), then `pqbench bless <campaign>` \
                 writes {shown}"
            ),
        });
        // A kept manifest must still name the drafted labels.
        if m.is_file() {
            let labels: Vec<String> = a.draft.labels().into_iter().map(|(_, l)| l).collect();
            let warnings = katfiles::coverage(&m, &shown, &labels)?;
            plan.lines
                .extend(warnings.iter().map(|w| format!("note: {w}")));
        }
    } else {
        let lines: Vec<(String, String)> = a
            .kats
            .iter()
            .map(|k| {
                (
                    manifest_key_of_line(&k.line).unwrap_or_default(),
                    k.line.clone(),
                )
            })
            .collect();
        add_manifest(plan, id, &lines, shown, force);
    }
    Ok(())
}
