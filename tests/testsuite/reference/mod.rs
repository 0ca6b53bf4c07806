//! Helpers of the golden tests that rebuild a published reference page:
//! trials whose statistics print as the page's figures, and the cell-by-cell
//! comparison of a rendered Markdown page with the page's plain-text copy
//! (tab-separated tables under numbered section titles).
#![allow(dead_code)]

use pqbench::render::synth;
use pqbench::stats::Trial;

/// `4.13 ms` → the interval of seconds that prints so.
pub fn interval(text: &str) -> (f64, f64) {
    let (num, unit) = text.split_once(' ').unwrap();
    let scale = match unit {
        "s" => 1.0,
        "ms" => 1e-3,
        "µs" => 1e-6,
        "ns" => 1e-9,
        _ => panic!("unit {unit}"),
    };
    let v: f64 = num.parse().unwrap();
    let exp = v.log10().floor() as i32;
    let half = 0.5 * 10f64.powi(exp - 2);
    ((v - half) * scale, (v + half) * scale)
}

/// A mean time inside `mean`'s interval whose reciprocal prints as `ops`,
/// the one nearest the printed value.
pub fn mean_seconds(mean: &str, ops: &str) -> f64 {
    let (lo, hi) = interval(mean);
    let centre = (lo + hi) / 2.0;
    (0..=2000)
        .map(|i| lo + (hi - lo) * f64::from(i) / 2000.0)
        .filter(|t| {
            pqbench::format::duration(*t) == mean && pqbench::format::ops_per_sec(1.0 / t) == ops
        })
        .min_by(|a, b| (a - centre).abs().total_cmp(&(b - centre).abs()))
        .unwrap_or_else(|| panic!("no mean time prints as {mean} with {ops} ops/s"))
}

/// Five trials of `calls` whose mean is `t`, whose median trial is `m`,
/// with a small spread, and cycles proportional to time around `cycles`.
pub fn reference_trials(calls: u64, cycles: f64, t: f64, m: f64) -> Vec<Trial> {
    let d = m * 2e-4;
    let x = (5.0 * t - 3.0 * m) / 2.0;
    let e = (x - m).abs() + d;
    let secs = [m - d, m, m + d, x - e, x + e];
    let cyc: Vec<f64> = secs.iter().map(|s| cycles * s / t).collect();
    synth::trials(calls, &cyc, &secs)
}

/// Cells of a Markdown table row: split on unescaped pipes.
pub fn md_cells(line: &str) -> Vec<String> {
    let mut cells = vec![String::new()];
    let mut chars = line.trim().chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cells.last_mut().unwrap().push(chars.next().unwrap())
            }
            '|' => cells.push(String::new()),
            c => cells.last_mut().unwrap().push(c),
        }
    }
    let n = cells.len();
    cells[1..n - 1]
        .iter()
        .map(|c| c.trim().to_string())
        .collect()
}

/// `[text](url)` → `text`, for comparing with the plain-text copy.
pub fn strip_links(s: &str) -> String {
    regex::Regex::new(r"\[([^\]]*)\]\([^)]*\)")
        .unwrap()
        .replace_all(s, "$1")
        .into_owned()
}

/// Tables of one section: rows of cells.
pub type Tables = Vec<Vec<Vec<String>>>;

/// Section title → its tables.
fn sections(
    lines: &[String],
    heading: impl Fn(&str) -> Option<String>,
    row: impl Fn(&str) -> Option<Vec<String>>,
) -> Vec<(String, Tables)> {
    let mut out: Vec<(String, Tables)> = vec![("".into(), Vec::new())];
    let mut in_table = false;
    for l in lines {
        if let Some(h) = heading(l) {
            out.push((h, Vec::new()));
            in_table = false;
        } else if let Some(cells) = row(l) {
            let tables = &mut out.last_mut().unwrap().1;
            if !in_table {
                tables.push(Vec::new());
            }
            if !cells.is_empty() {
                tables.last_mut().unwrap().push(cells);
            }
            in_table = true;
        } else {
            in_table = false;
        }
    }
    out
}

/// The sections of the reference page whose tables a rendered page must
/// reproduce.
pub const CHECKED: [&str; 6] = [
    "2. Assessment environment",
    "3. Functional testing (KAT)",
    "4. Performance",
    "5. Resource consumption",
    "6. Transmission and storage overhead",
    "Symmetric primitives",
];

/// Compares the rendered Markdown page `md` with the reference's text copy
/// `reference`: crumb line, title, section 1's bullets, and every cell of
/// the tables of `CHECKED` (a rendered table may add rows to the
/// environment table and columns after the reference's). Returns the
/// number of cells compared.
pub fn compare_tables(md: &str, reference: &str) -> usize {
    let ref_lines: Vec<String> = reference.lines().map(String::from).collect();
    let md_lines: Vec<String> = md.lines().map(String::from).collect();

    assert_eq!(strip_links(&md_lines[0]), ref_lines[0], "crumb line");
    assert_eq!(md_lines[2], format!("# {}", ref_lines[2]), "title");

    let numbered = regex::Regex::new(r"^(\d+\. .+|Symmetric primitives)$").unwrap();
    let theirs = sections(
        &ref_lines,
        |l| numbered.is_match(l).then(|| l.to_string()),
        |l| {
            l.contains('\t')
                .then(|| l.split('\t').map(String::from).collect())
        },
    );
    let ours = sections(
        &md_lines,
        |l| l.strip_prefix("## ").map(String::from),
        |l| {
            l.starts_with('|').then(|| {
                if l.starts_with("|---") {
                    vec![]
                } else {
                    md_cells(l)
                }
            })
        },
    );
    let find = |v: &Vec<(String, Tables)>, name: &str| {
        v.iter()
            .find(|(h, _)| h == name)
            .unwrap_or_else(|| panic!("section {name}"))
            .1
            .clone()
    };
    let mut compared = 0;
    for name in CHECKED {
        let (want, have) = (find(&theirs, name), find(&ours, name));
        assert!(!want.is_empty(), "{name}: no table in the reference");
        for (t, table) in want.iter().enumerate() {
            let mine = &have[t];
            if name.starts_with("2.") {
                assert!(mine.len() >= table.len(), "{name}");
            } else {
                assert_eq!(mine.len(), table.len(), "{name}: row count");
            }
            for (r, row) in table.iter().enumerate() {
                assert_eq!(
                    &mine[r][..row.len()],
                    row.as_slice(),
                    "{name}, table {t}, row {r}"
                );
                compared += row.len();
            }
        }
    }

    let bullets = |lines: &[String], from: &str, to: &str, prefix: &str| -> Vec<String> {
        let start = lines.iter().position(|l| l.ends_with(from)).unwrap();
        let end = lines.iter().position(|l| l.ends_with(to)).unwrap();
        lines[start + 1..end]
            .iter()
            .filter_map(|l| l.strip_prefix(prefix))
            .map(strip_links)
            .collect()
    };
    let mine = bullets(
        &md_lines,
        "1. Basic information",
        "2. Assessment environment",
        "- ",
    );
    for b in bullets(
        &ref_lines,
        "1. Basic information",
        "2. Assessment environment",
        "",
    ) {
        if !b.is_empty() {
            assert!(mine.contains(&b), "bullet `{b}` missing from {mine:?}");
        }
    }
    compared
}

/// Every file under `dir`, as sorted relative paths.
pub fn files(dir: &std::path::Path) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            out.extend(files(&p).into_iter().map(|f| format!("{name}/{f}")));
        } else {
            out.push(name);
        }
    }
    out.sort();
    out
}

pub fn copy(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}
