//! Writing what a public tree's import drafted (`tree`): one TOML and
//! manifest per scheme, the shared components once, and the tree copied
//! under `algorithms/` with its layout, all conflicts found first.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{
    add_manifest, add_toml, choose_id, copy_plan, tree, ImportOptions, ImportReport, Plan,
};
use crate::config::algorithm::ApiFamily;
use crate::error::{ConfigError, Error};

/// A public tree, or schemes of one: one TOML per scheme, the shared
/// components, the manifests, and the tree copied under `algorithms/`
/// (unless it is there already) with its layout kept.
pub(super) fn import_tree(
    root: &Path,
    layout: &tree::Layout,
    opts: &ImportOptions,
    shown: String,
) -> Result<ImportReport, Error> {
    let alg_dir = root.join("algorithms");
    check_options(layout, opts, &shown)?;
    let cx = tree::tree_cx(layout, &alg_dir, shown);
    let mut plan = Plan {
        root: root.to_path_buf(),
        ..Plan::default()
    };
    let mut ids = Vec::new();
    let mut components: BTreeMap<String, String> = Default::default();
    for dir in &layout.schemes {
        let (id, drafted) = plan_scheme(&mut plan, &cx, dir, opts)?;
        components.extend(drafted);
        ids.push(id);
    }
    add_components(&mut plan, &alg_dir, &components, opts.force);
    // The tree keeps its layout under algorithms/: the schemes imported
    // and common/.
    if layout.root.strip_prefix(&alg_dir).is_err() {
        copy_tree(&mut plan, layout, &alg_dir, &cx.base, opts.force);
    }
    plan.carry_out()?;
    let tomls: Vec<PathBuf> = ids
        .iter()
        .map(|id| alg_dir.join(format!("{id}.toml")))
        .collect();
    Ok(ImportReport {
        id: ids.join(", "),
        toml: tomls[0].clone(),
        tomls,
        lines: plan.lines,
        observed: false,
        checkers: Vec::new(),
    })
}

/// `--id` names one scheme, and a tree holds no NGCC code.
fn check_options(layout: &tree::Layout, opts: &ImportOptions, shown: &str) -> Result<(), Error> {
    if opts.id.is_some() && layout.schemes.len() > 1 {
        return Err(ConfigError::new(format!(
            "--id names one algorithm, but {shown} holds {} schemes",
            layout.schemes.len()
        ))
        .help("import one scheme folder at a time to choose its id, or leave --id out")
        .into());
    }
    if opts.api == Some(ApiFamily::Ngcc) {
        return Err(ConfigError::new("a public tree holds NIST-API code")
            .help("leave --api out")
            .into());
    }
    Ok(())
}

/// Plans one scheme's TOML and manifest. Returns its id and the
/// components it uses (written once for all schemes).
fn plan_scheme(
    plan: &mut Plan,
    cx: &tree::TreeCx,
    dir: &Path,
    opts: &ImportOptions,
) -> Result<(String, BTreeMap<String, String>), Error> {
    let fallback = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let id = choose_id(opts.id.as_deref(), &fallback)?;
    let s = tree::scheme(cx, dir, &id)?;
    let toml = plan.root.join("algorithms").join(format!("{id}.toml"));
    add_toml(plan, &toml, &tree::render(&s), opts.force)?;
    if s.manifest.is_empty() {
        plan.lines.push(format!(
            "no KAT digest for {id}: after a run, `pqbench bless` writes kat/{id}/kat.sha256"
        ));
    } else {
        add_manifest(plan, &id, &s.manifest, &cx.shown, opts.force);
    }
    plan.lines
        .extend(s.notes.iter().map(|n| format!("note: {n}")));
    Ok((id, s.components))
}

/// Queues the shared components, each unless unchanged.
fn add_components(
    plan: &mut Plan,
    alg_dir: &Path,
    components: &BTreeMap<String, String>,
    force: bool,
) {
    for (name, text) in components {
        let path = alg_dir.join("components").join(format!("{name}.toml"));
        let shown = plan.show(&path);
        match std::fs::read_to_string(&path) {
            Ok(old) if old == *text => {
                plan.lines.push(format!("kept {shown} (unchanged)"));
                continue;
            }
            Ok(_) if !force => plan.conflicts.push(format!("{shown} exists")),
            _ => {}
        }
        plan.lines.push(format!("wrote {shown}"));
        plan.writes.push((path, text.clone().into_bytes()));
    }
}

/// Queues copies of the schemes imported, `common/` and `test/common/` to
/// `algorithms/<base>/`, files already there unchanged left out.
fn copy_tree(plan: &mut Plan, layout: &tree::Layout, alg_dir: &Path, base: &str, force: bool) {
    let dest_root = alg_dir.join(base);
    let mut trees: Vec<PathBuf> = layout.schemes.clone();
    // test/common/ holds the KAT RNGs META.yml may name (`hqckatrng.c`).
    for shared in ["common", "test/common"] {
        trees.extend(Some(layout.root.join(shared)).filter(|c| c.is_dir()));
    }
    for from in trees {
        let rel = from.strip_prefix(&layout.root).unwrap_or(&from);
        let mut copies = Vec::new();
        copy_plan(&from, &dest_root.join(rel), &[], &mut copies);
        for (src, dest) in copies {
            let same = std::fs::read(&dest).ok() == std::fs::read(&src).ok();
            if same {
                continue;
            }
            if dest.exists() && !force {
                let d = plan.show(&dest);
                plan.conflicts
                    .push(format!("{d} exists (the tree would be copied there)"));
            }
            plan.copies.push((src, dest));
        }
        plan.lines.push(format!(
            "copied {} to algorithms/{}/{}",
            from.display(),
            base,
            rel.display()
        ));
    }
}
