//! What the pages show of a campaign's `[matrix]`: the "Compilers and
//! flags" section of each algorithm page (operation × combination), the
//! summary's best-combination column and the method page's list of
//! combinations with their command lines.

use crate::engine::Section;
use crate::kat::Status;
use crate::records::campaign::AlgorithmInfo;
use crate::records::settings::Combination;

use crate::format::grouped;
use crate::records::dataset::Dataset;

/// The section's heading.
pub(crate) const TITLE: &str = "Compilers and flags";

/// Marks the fastest cell of a row.
const FASTEST: &str = "★";

/// One cell's content before formatting: a median (with the KAT status
/// when it is not PASS: an instance a known issue lets be timed), or why
/// there is none.
enum Cell {
    Median(f64, Option<String>),
    Missing(String),
}

/// The median of the trials' mean cycles: finer than the median call,
/// whose samples a coarse counter quantises, so that combinations a few
/// percent apart do not tie.
fn median(ds: &Dataset, a: &str, label: &str, op: &str) -> Option<f64> {
    let s = ds.record(a, label, op)?.statistics.as_ref()?;
    (s.median_trial_cycles > 0.0).then_some(s.median_trial_cycles)
}

/// The dataset of combination `c`: this one for the primary, else its
/// further dataset, when it was run.
fn dataset_of<'a>(ds: &'a Dataset, c: &Combination) -> Option<&'a Dataset> {
    match c.primary {
        true => Some(ds),
        false => ds.child(crate::records::layout::MATRIX, &c.name),
    }
}

/// The cell of one combination for one operation of one instance.
fn cell(ds: &Dataset, c: &Combination, a: &str, label: &str, op: &str) -> Cell {
    let Some(d) = dataset_of(ds, c) else {
        return Cell::Missing("not run".into());
    };
    let Some(b) = d.build_record(a, label) else {
        return Cell::Missing("–".into());
    };
    let status = (b.kat_status != Status::Pass).then(|| b.kat_status.to_string());
    match (median(d, a, label, op), status) {
        (Some(m), status) => Cell::Median(m, status),
        (None, Some(status)) => Cell::Missing(status),
        // An emulated system times nothing: its cells are the KAT's.
        (None, None) if d.campaign.emulated() => Cell::Missing("PASS".into()),
        (None, None) => Cell::Missing("not timed".into()),
    }
}

impl Cell {
    fn median(&self) -> Option<f64> {
        match self {
            Cell::Median(m, _) => Some(*m),
            Cell::Missing(_) => None,
        }
    }
}

fn header(c: &Combination) -> String {
    match c.primary {
        true => format!("{} (primary)", c.name),
        false => c.name.clone(),
    }
}

/// The "Compilers and flags" section of `a`'s page; None without a matrix.
pub(crate) fn section(ds: &Dataset, a: &AlgorithmInfo) -> Option<Section> {
    let combos = &ds.campaign.matrix;
    if combos.is_empty() {
        return None;
    }
    let mut columns = vec!["instance".to_string(), "operation".to_string()];
    columns.extend(combos.iter().map(header));
    let mut rows = Vec::new();
    for label in &a.labels {
        for op in a.kind.operations() {
            let cells: Vec<Cell> = combos
                .iter()
                .map(|c| cell(ds, c, &a.id, label, op))
                .collect();
            rows.push(row(label, op, &cells));
        }
    }
    Some(Section {
        title: TITLE.into(),
        note: format!(
            "Every instance built, KAT-checked and timed under each compiler × flag profile of the campaign's matrix: the median of the trials' mean cycles, with its ratio to the primary combination ({}), whose figures are those of the rest of this page. {FASTEST} marks the fastest combination of a row; a KAT status other than PASS is shown in the cell, alone when the instance was not timed (it did not build, or failed its KAT). The command lines are on the method page.",
            combos.iter().find(|c| c.primary).map_or("", |c| c.name.as_str())
        ),
        columns,
        rows,
    })
}

fn row(label: &str, op: &str, cells: &[Cell]) -> Vec<String> {
    let primary = cells.first().and_then(Cell::median);
    let timed: Vec<f64> = cells.iter().filter_map(Cell::median).collect();
    let fastest = timed.iter().copied().fold(f64::INFINITY, f64::min);
    let mut out = vec![label.to_string(), op.to_string()];
    out.extend(cells.iter().map(|c| match c {
        Cell::Missing(why) => why.clone(),
        Cell::Median(m, status) => {
            let mut s = status
                .as_ref()
                .map_or(String::new(), |st| format!("{st}: "));
            s.push_str(&grouped(m.round() as u64));
            if let Some(p) = primary {
                s.push_str(&format!(" ({:.2}×)", m / p));
            }
            if timed.len() > 1 && *m == fastest {
                s.push_str(&format!(" {FASTEST}"));
            }
            s
        }
    }));
    out
}

/// The summary's "best combination (ratio to primary)" cell of an
/// instance: the combination with the lowest geometric mean, over the
/// operations both timed, of its medians' ratios to the primary's.
pub(crate) fn best(ds: &Dataset, a: &AlgorithmInfo, label: &str) -> String {
    let combos = &ds.campaign.matrix;
    if combos.is_empty() {
        return String::new();
    }
    let ops = a.kind.operations();
    let ratio = |c: &Combination| -> Option<f64> {
        let d = dataset_of(ds, c)?;
        let logs: Vec<f64> = ops
            .iter()
            .filter_map(|op| {
                Some((median(d, &a.id, label, op)? / median(ds, &a.id, label, op)?).ln())
            })
            .collect();
        (!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp())
    };
    combos
        .iter()
        .filter_map(|c| Some((c, ratio(c)?)))
        .min_by(|x, y| x.1.total_cmp(&y.1))
        .map_or("–".into(), |(c, r)| format!("{} ({r:.2}×)", c.name))
}

/// The method page's bullets: every combination with its compiler and its
/// full command line (from the combination's own `campaign.json`).
pub(crate) fn method_bullets(ds: &Dataset) -> Vec<String> {
    let combos = &ds.campaign.matrix;
    if combos.is_empty() {
        return Vec::new();
    }
    let mut out = vec![format!(
        "The campaign's `[matrix]` builds, KAT-checks and times every instance under {} combinations of compiler and flag profile, each under that profile alone (no fallback); the primary one, {}, gives every other figure of these pages. The others' datasets are the folders of `matrix/` beside this one, one per combination, each with its own records and lock.",
        combos.len(),
        combos.iter().find(|c| c.primary).map_or("", |c| c.name.as_str())
    )];
    for c in combos {
        out.push(match dataset_of(ds, c) {
            None => format!("`{}`: not run.", c.name),
            Some(d) => format!(
                "`{}`: {} (`{}`), {}",
                c.name,
                d.campaign.compiler.version,
                d.campaign.compiler.command,
                command_line(d, &c.profile)
            ),
        });
    }
    out
}

/// `cc -c <cflags>` of a profile as the combination's `build.json` gives
/// it.
fn command_line(d: &Dataset, profile: &str) -> String {
    let Some(p) = d.build.flag_profiles.iter().find(|p| p.name == profile) else {
        return format!("profile `{profile}`: not recorded");
    };
    let mut s = format!(
        "profile `{profile}`: `{} -c {}`",
        d.campaign.compiler.command,
        p.cflags.join(" ")
    );
    if p.submitter {
        s.push_str(" + the implementation's submitter-cflags");
    }
    if p.cflags.iter().any(|f| f == "-march=native") {
        if let Some(native) = &d.campaign.compiler.native_flags {
            s.push_str(&format!(
                ", `-march=native` built as the {} it resolved to (compiler.native_flags in its campaign.json)",
                match native.len() {
                    1 => "flag".to_string(),
                    n => format!("{n} flags"),
                }
            ));
        }
    }
    s
}
