//! `ct/<id>/<label>__<op>.json`: the constant-time check of one operation
//! (stage `ct`): what was marked secret, every memcheck error raised while
//! the operation ran (with its stack, each frame classified), and the
//! sites derived from them, deduplicated and annotated, which `pqbench
//! check` recomputes from the errors and the annotations held here.

use serde::{Deserialize, Serialize};

use super::process::ProcessRecord;
use super::settings::CtAnnotation;

/// memcheck error kinds that mean "depends on secret data": a conditional
/// jump or move, and a value used as an address (a table index).
pub(crate) const BRANCH_KIND: &str = "UninitCondition";
pub(crate) const INDEX_KIND: &str = "UninitValue";

/// Where a stack frame's code comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FrameOrigin {
    /// The instance library, from the submission's (or a component's) sources.
    Instance,
    /// The instance library, from pqbench's own sources (adapter, DRBG,
    /// randomness hooks).
    Pqbench,
    /// The instance library, from a file outside the project (a system
    /// header inlined into it).
    System,
    /// Another object: pqbench's driver, libc, Valgrind's preloads.
    Outside,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CtFrame {
    pub function: Option<String>,
    /// Project-relative, `pqbench:<name>` for pqbench's sources, the bare
    /// name for files elsewhere.
    pub file: Option<String>,
    pub line: Option<u32>,
    pub origin: FrameOrigin,
}

/// One distinct memcheck error (memcheck merges identical stacks).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CtError {
    pub kind: String,
    pub what: String,
    /// How often it occurred.
    pub count: u64,
    pub frames: Vec<CtFrame>,
}

/// One secret-dependent site of the instance's code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CtSite {
    pub function: String,
    pub file: Option<String>,
    pub line: Option<u32>,
    /// `branch` and/or `memory index`.
    pub kinds: Vec<String>,
    pub occurrences: u64,
    /// Functions outside the instance's own code the error was raised in
    /// (e.g. `memcmp` called on secret data).
    pub via: Vec<String>,
    /// The annotation that expects this site: its pattern and reason.
    pub annotation: Option<CtAnnotation>,
}

impl CtSite {
    /// `wots.c:62` (the file's last component) or the function alone.
    pub fn location(&self) -> String {
        match (&self.file, self.line) {
            (Some(f), Some(l)) => format!("{f}:{l}"),
            (Some(f), None) => f.clone(),
            _ => "(no line information)".to_string(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CtStatus {
    Clean,
    Flagged,
    Error,
    Skipped,
    /// The instance's own code makes Valgrind client requests, which can
    /// hide what memcheck would report: no verdict stands.
    Suspicious,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CtRecord {
    pub algorithm: String,
    pub label: String,
    pub op: String,
    pub status: CtStatus,
    pub detail: Option<String>,
    /// e.g. `valgrind-3.19.0 memcheck`.
    pub tool: Option<String>,
    /// The library checked: the measured sources rebuilt with debug
    /// information (`cflags`) and the randomness wrapper.
    pub library_sha256: Option<String>,
    pub cflags: Vec<String>,
    /// The randomness function whose output was marked secret.
    pub random_symbol: Option<String>,
    /// What was marked secret (`secret-key`, `randomness`).
    pub secrets: Vec<String>,
    pub calls: u64,
    /// Draws of randomness marked during the checked calls.
    pub random_draws: Option<u64>,
    /// Wall seconds of the memcheck process (set-up and start included).
    pub seconds: Option<f64>,
    /// The algorithm's annotations that apply to this instance.
    pub annotations: Vec<CtAnnotation>,
    /// Every error memcheck reported during the checked calls (raw).
    pub errors: Vec<CtError>,
    /// Derived from `errors` and `annotations`.
    pub sites: Vec<CtSite>,
    /// Derived: errors of other kinds (invalid reads, ...) in the library.
    pub other_errors: u64,
    pub process: Option<ProcessRecord>,
}

impl CtRecord {
    /// The derived fields as the raw ones give them: (status, sites,
    /// other errors).
    pub fn recomputed(&self) -> (CtStatus, Vec<CtSite>, u64) {
        let sites = derive_sites(&self.errors, &self.annotations, &self.op);
        let status = match self.status {
            CtStatus::Clean | CtStatus::Flagged if sites.is_empty() => CtStatus::Clean,
            CtStatus::Clean | CtStatus::Flagged => CtStatus::Flagged,
            s => s,
        };
        (status, sites, other_errors(&self.errors))
    }

    /// `ct-clean`, `ct-flagged (N sites)`, `ct-error`, `ct-suspicious` or
    /// `not run`.
    pub fn status_text(&self) -> String {
        match self.status {
            CtStatus::Clean => "ct-clean".into(),
            CtStatus::Flagged => format!(
                "ct-flagged ({} site{})",
                self.sites.len(),
                if self.sites.len() == 1 { "" } else { "s" }
            ),
            CtStatus::Error => "ct-error".into(),
            CtStatus::Skipped => "not run".into(),
            CtStatus::Suspicious => "ct-suspicious".into(),
        }
    }

    pub(crate) fn annotated(&self) -> usize {
        self.sites.iter().filter(|s| s.annotation.is_some()).count()
    }
}

pub(crate) fn ct_path(algorithm: &str, label: &str, op: &str) -> String {
    super::layout::operation_file(super::layout::CT, algorithm, label, op)
}

fn kind_name(kind: &str) -> Option<&'static str> {
    match kind {
        BRANCH_KIND => Some("branch"),
        INDEX_KIND => Some("memory index"),
        _ => None,
    }
}

/// Errors of other kinds raised inside the library.
pub(crate) fn other_errors(errors: &[CtError]) -> u64 {
    errors
        .iter()
        .filter(|e| kind_name(&e.kind).is_none())
        .filter(|e| e.frames.iter().any(|f| f.origin != FrameOrigin::Outside))
        .count() as u64
}

/// Sites of `errors`: each secret-dependent error belongs to the innermost
/// frame of the instance's own code (errors with none, in pqbench's driver
/// or adapter only, are not the instance's); one site per (file, line,
/// function), in file and line order, with the first annotation (in TOML
/// order) for `op` that matches it.
pub(crate) fn derive_sites(
    errors: &[CtError],
    annotations: &[CtAnnotation],
    op: &str,
) -> Vec<CtSite> {
    let mut sites: Vec<CtSite> = Vec::new();
    for e in errors {
        let Some(kind) = kind_name(&e.kind) else {
            continue;
        };
        let Some(i) = e
            .frames
            .iter()
            .position(|f| f.origin == FrameOrigin::Instance)
        else {
            continue;
        };
        let f = &e.frames[i];
        let function = f.function.clone().unwrap_or_else(|| "?".into());
        let via = (i > 0).then(|| e.frames[0].function.clone().unwrap_or_else(|| "?".into()));
        let site = match sites
            .iter_mut()
            .find(|s| s.function == function && s.file == f.file && s.line == f.line)
        {
            Some(s) => s,
            None => {
                sites.push(CtSite {
                    function,
                    file: f.file.clone(),
                    line: f.line,
                    kinds: Vec::new(),
                    occurrences: 0,
                    via: Vec::new(),
                    annotation: None,
                });
                sites.last_mut().expect("just pushed")
            }
        };
        site.occurrences += e.count;
        if !site.kinds.iter().any(|k| k == kind) {
            site.kinds.push(kind.to_string());
            site.kinds.sort();
        }
        if let Some(v) = via.filter(|v| !site.via.contains(v)) {
            site.via.push(v);
            site.via.sort();
        }
    }
    sites.sort_by(|a, b| (&a.file, a.line, &a.function).cmp(&(&b.file, b.line, &b.function)));
    for s in &mut sites {
        s.annotation = annotations
            .iter()
            .find(|a| (a.ops.is_empty() || a.ops.iter().any(|o| o == op)) && matches(a, s))
            .cloned();
    }
    sites
}

/// Whether `a.site` (a glob) matches the site's function, its file (the
/// recorded path or any of its trailing components), or either file form
/// with `:line`.
pub(crate) fn matches(a: &CtAnnotation, s: &CtSite) -> bool {
    let Ok(p) = glob::Pattern::new(&a.site) else {
        return false;
    };
    let mut names = vec![s.function.clone()];
    if let Some(file) = &s.file {
        let parts: Vec<&str> = file.split('/').collect();
        for k in 0..parts.len() {
            let tail = parts[k..].join("/");
            if let Some(l) = s.line {
                names.push(format!("{tail}:{l}"));
            }
            names.push(tail);
        }
    }
    names.iter().any(|n| p.matches(n))
}

impl super::folder::FolderRecord for CtRecord {
    const DIR: &'static str = super::layout::CT;

    fn key(&self) -> super::folder::OpKey {
        (self.algorithm.clone(), self.label.clone(), self.op.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(function: &str, file: &str, line: u32, origin: FrameOrigin) -> CtFrame {
        CtFrame {
            function: Some(function.into()),
            file: Some(file.into()),
            line: Some(line),
            origin,
        }
    }

    fn error(kind: &str, frames: Vec<CtFrame>) -> CtError {
        CtError {
            kind: kind.into(),
            what: String::new(),
            count: 1,
            frames,
        }
    }

    #[test]
    fn sites_are_the_innermost_instance_frames_deduplicated_and_annotated() {
        use FrameOrigin::*;
        let driver = frame("do_sign", "driver.c", 1, Outside);
        let errors = vec![
            error(
                BRANCH_KIND,
                vec![
                    frame("walk", "algorithms/a/w.c", 62, Instance),
                    driver.clone(),
                ],
            ),
            error(
                INDEX_KIND,
                vec![
                    frame("walk", "algorithms/a/w.c", 62, Instance),
                    driver.clone(),
                ],
            ),
            error(
                BRANCH_KIND,
                vec![
                    frame("memcmp", "memcmp.c", 5, Outside),
                    frame("dec", "algorithms/a/k.c", 9, Instance),
                ],
            ),
            // pqbench's own code and the driver are never the instance's.
            error(
                BRANCH_KIND,
                vec![
                    frame("pqb_sign", "pqbench:adapter_ngcc.c", 3, Pqbench),
                    driver.clone(),
                ],
            ),
            error(BRANCH_KIND, vec![driver.clone()]),
            error(
                "InvalidRead",
                vec![frame("walk", "algorithms/a/w.c", 70, Instance)],
            ),
        ];
        let notes = vec![CtAnnotation {
            site: "w.c:62".into(),
            reason: "public by design".into(),
            labels: None,
            ops: vec!["sign".into()],
        }];
        let sites = derive_sites(&errors, &notes, "sign");
        assert_eq!(sites.len(), 2, "{sites:?}");
        assert_eq!(sites[0].location(), "algorithms/a/k.c:9");
        assert_eq!(sites[0].via, ["memcmp"]);
        assert!(sites[0].annotation.is_none());
        assert_eq!(sites[1].kinds, ["branch", "memory index"]);
        assert_eq!(sites[1].occurrences, 2);
        assert_eq!(
            sites[1].annotation.as_ref().unwrap().reason,
            "public by design"
        );
        // The annotation is for sign only.
        assert!(derive_sites(&errors, &notes, "keygen")[1]
            .annotation
            .is_none());
        assert_eq!(other_errors(&errors), 1);
    }

    #[test]
    fn patterns_match_functions_files_and_lines() {
        let s = CtSite {
            function: "chain_walk".into(),
            file: Some("algorithms/sign-90/wots.c".into()),
            line: Some(62),
            kinds: vec![],
            occurrences: 1,
            via: vec![],
            annotation: None,
        };
        let a = |p: &str| CtAnnotation {
            site: p.into(),
            reason: String::new(),
            labels: None,
            ops: vec![],
        };
        for yes in [
            "chain_*",
            "wots.c:62",
            "sign-90/wots.c:62",
            "wots.c",
            "*.c:6?",
        ] {
            assert!(matches(&a(yes), &s), "{yes}");
        }
        for no in ["wots.c:63", "sign", "other.c"] {
            assert!(!matches(&a(no), &s), "{no}");
        }
    }
}
