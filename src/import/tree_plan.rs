//! Writing what a public tree's import drafted (`tree`): one TOML and
//! manifest per scheme, the shared components once, and the tree copied
//! under `algorithms/` with its layout, all conflicts found first.

use std::path::{Path, PathBuf};

use super::{
    add_manifest, add_toml, choose_id, copy_plan, tree, ImportOptions, ImportReport, Plan,
};
use crate::config::algorithm::ApiFamily;
use crate::error::{ConfigError, Error};
use crate::fsutil;

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
    let cx = tree::tree_cx(layout, &alg_dir, shown.clone());
    let mut plan = Plan {
        root: root.to_path_buf(),
        ..Plan::default()
    };
    let mut ids = Vec::new();
    let mut components: std::collections::BTreeMap<String, String> = Default::default();
    for dir in &layout.schemes {
        let fallback = dir
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        let id = choose_id(opts.id.as_deref(), &fallback)?;
        let s = tree::scheme(&cx, dir, &id)?;
        add_toml(
            &mut plan,
            &alg_dir.join(format!("{id}.toml")),
            &tree::render(&s),
            opts.force,
        )?;
        if s.manifest.is_empty() {
            plan.lines.push(format!(
                "no KAT digest for {id}: after a run, `pqbench bless` writes kat/{id}/kat.sha256"
            ));
        } else {
            add_manifest(&mut plan, &id, &s.manifest, &shown, opts.force);
        }
        plan.lines
            .extend(s.notes.iter().map(|n| format!("note: {n}")));
        components.extend(s.components);
        ids.push(id);
    }
    for (name, text) in &components {
        let path = alg_dir.join("components").join(format!("{name}.toml"));
        let shown = plan.show(&path);
        match std::fs::read_to_string(&path) {
            Ok(old) if old == *text => {
                plan.lines.push(format!("kept {shown} (unchanged)"));
                continue;
            }
            Ok(_) if !opts.force => plan.conflicts.push(format!("{shown} exists")),
            _ => {}
        }
        plan.lines.push(format!("wrote {shown}"));
        plan.writes.push((path, text.clone().into_bytes()));
    }
    // The tree keeps its layout under algorithms/: the schemes imported
    // and common/.
    if layout.root.strip_prefix(&alg_dir).is_err() {
        let dest_root = alg_dir.join(&cx.base);
        let mut trees: Vec<PathBuf> = layout.schemes.clone();
        trees.extend(Some(layout.root.join("common")).filter(|c| c.is_dir()));
        for from in trees {
            let rel = from.strip_prefix(&layout.root).unwrap_or(&from);
            let mut copies = Vec::new();
            copy_plan(&from, &dest_root.join(rel), &[], &mut copies);
            for (src, dest) in copies {
                let same = std::fs::read(&dest).ok() == std::fs::read(&src).ok();
                if same {
                    continue;
                }
                if dest.exists() && !opts.force {
                    let d = plan.show(&dest);
                    plan.conflicts
                        .push(format!("{d} exists (the tree would be copied there)"));
                }
                plan.copies.push((src, dest));
            }
            plan.lines.push(format!(
                "copied {} to algorithms/{}/{}",
                from.display(),
                cx.base,
                rel.display()
            ));
        }
    }
    if !plan.conflicts.is_empty() {
        return Err(ConfigError::new(format!(
            "import would overwrite:\n  {}",
            plan.conflicts.join("\n  ")
        ))
        .help("pass --force to replace them")
        .into());
    }
    for (from, to) in &plan.copies {
        fsutil::copy_atomic(from, to)?;
    }
    for (p, bytes) in &plan.writes {
        fsutil::write_atomic(p, bytes)?;
    }
    let tomls: Vec<PathBuf> = ids
        .iter()
        .map(|id| alg_dir.join(format!("{id}.toml")))
        .collect();
    Ok(ImportReport {
        id: ids.join(", "),
        toml: tomls[0].clone(),
        tomls,
        lines: plan.lines,
    })
}
