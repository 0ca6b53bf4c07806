//! Pages rendered from the reference dataset: the Markdown tables match
//! the reference page cell by cell, snapshots pin the full output, every
//! HTML link resolves, and rendering is byte-for-byte repeatable.

use std::path::{Path, PathBuf};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reference-dataset")
}

fn copy(from: &Path, to: &Path) {
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

/// The fixture copied into a temporary campaign directory (so evidence
/// links do not depend on where the checkout is): its two datasets.
fn campaign() -> (tempfile::TempDir, [PathBuf; 2]) {
    let tmp = tempfile::tempdir().unwrap();
    copy(&fixture().join("x86_1"), &tmp.path().join("x86_1"));
    copy(&fixture().join("arm_1"), &tmp.path().join("arm_1"));
    let data = [tmp.path().join("x86_1"), tmp.path().join("arm_1")];
    (tmp, data)
}

/// Renders both systems of the fixture into `<campaign>/site`.
fn render() -> (tempfile::TempDir, PathBuf) {
    let (tmp, data) = campaign();
    let site = tmp.path().join("site");
    pqbench::render::render_dataset_dirs(&data, &site, None, &pqbench::stages::registry()).unwrap();
    (tmp, site)
}

/// Cells of a Markdown table row: split on unescaped pipes.
fn md_cells(line: &str) -> Vec<String> {
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
fn strip_links(s: &str) -> String {
    regex::Regex::new(r"\[([^\]]*)\]\([^)]*\)")
        .unwrap()
        .replace_all(s, "$1")
        .into_owned()
}

/// Section title → its tables (rows of cells), for both formats.
fn sections(
    lines: &[String],
    heading: impl Fn(&str) -> Option<String>,
    row: impl Fn(&str) -> Option<Vec<String>>,
) -> Vec<(String, Vec<Vec<Vec<String>>>)> {
    let mut out: Vec<(String, Vec<Vec<Vec<String>>>)> = vec![("".into(), Vec::new())];
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

#[test]
fn markdown_tables_match_the_reference_page() {
    let (_tmp, site) = render();
    let md = std::fs::read_to_string(site.join("x86_1/sign-23.md")).unwrap();
    let reference = std::fs::read_to_string(fixture().join("reference.txt")).unwrap();
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
    let find = |v: &Vec<(String, Vec<Vec<Vec<String>>>)>, name: &str| {
        v.iter()
            .find(|(h, _)| h == name)
            .unwrap_or_else(|| panic!("section {name}"))
            .1
            .clone()
    };
    let checked = [
        "2. Assessment environment",
        "3. Functional testing (KAT)",
        "4. Performance",
        "5. Resource consumption",
        "6. Transmission and storage overhead",
        "Symmetric primitives",
    ];
    let mut compared = 0;
    for name in checked {
        let (want, have) = (find(&theirs, name), find(&ours, name));
        assert!(!want.is_empty(), "{name}: no table in the reference");
        for (t, table) in want.iter().enumerate() {
            let mine = &have[t];
            // The environment table adds rows after the reference's.
            if name.starts_with("2.") {
                assert!(mine.len() >= table.len(), "{name}");
            } else {
                assert_eq!(mine.len(), table.len(), "{name}: row count");
            }
            for (r, row) in table.iter().enumerate() {
                // Added columns come after the reference's.
                assert_eq!(
                    &mine[r][..row.len()],
                    row.as_slice(),
                    "{name}, table {t}, row {r}"
                );
                compared += row.len();
            }
        }
    }
    assert_eq!(compared, 212, "cells compared");

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
}

#[test]
fn reference_pages_snapshot() {
    let (_tmp, site) = render();
    let read = |p: &str| std::fs::read_to_string(site.join(p)).unwrap();
    insta::assert_snapshot!("sign-23.md", read("x86_1/sign-23.md"));
    insta::assert_snapshot!("summary.md", read("x86_1/summary.md"));
    insta::assert_snapshot!("kem-7.md", read("x86_1/kem-7.md"));
    insta::assert_snapshot!("method.md", read("x86_1/method.md"));
    insta::assert_snapshot!("sizes.md", read("sizes.md"));
    insta::assert_snapshot!("index.md", read("index.md"));
}

#[test]
fn every_html_link_resolves() {
    let (_tmp, site) = render();
    let html = std::fs::read_to_string(site.join("x86_1/sign-23.html")).unwrap();
    assert!(
        html.contains("<svg") && html.contains("href=\"..&#x2f;..&#x2f;x86_1&#x2f;records"),
        "evidence links and chart inline"
    );
    assert_eq!(pqbench::render::check_links(&site), Vec::<String>::new());
    // A broken link is reported, naming the page.
    std::fs::remove_file(site.join("x86_1/method.html")).unwrap();
    let broken = pqbench::render::check_links(&site);
    assert!(
        broken
            .iter()
            .any(|b| b.starts_with("x86_1/sign-23.html: method.html")),
        "{broken:?}"
    );
}

#[test]
fn rendering_is_repeatable() {
    let (tmp, site) = render();
    let data = [tmp.path().join("x86_1"), tmp.path().join("arm_1")];
    let again =
        pqbench::render::render_dataset_dirs(&data, &site, None, &pqbench::stages::registry())
            .unwrap();
    assert_eq!((again.written, again.removed), (0, 0));
    let loaded =
        pqbench::render::load_datasets(&data, &site, &pqbench::stages::registry()).unwrap();
    let first = pqbench::render::render_files(&loaded, None, &pqbench::stages::registry()).unwrap();
    for (rel, bytes) in &first {
        assert_eq!(&std::fs::read(site.join(rel)).unwrap(), bytes, "{rel}");
    }
    // A stale page of an algorithm that no longer exists is removed.
    std::fs::write(site.join("x86_1/gone.md"), "old").unwrap();
    let r = pqbench::render::render_dataset_dirs(&data, &site, None, &pqbench::stages::registry())
        .unwrap();
    assert_eq!(r.removed, 1);
}

#[test]
fn user_templates_replace_builtins_by_name() {
    let (tmp, data) = campaign();
    let templates = tmp.path().join("templates");
    std::fs::create_dir_all(&templates).unwrap();
    std::fs::write(templates.join("index.md"), "custom {{ campaign }}\n").unwrap();
    let site = tmp.path().join("site");
    pqbench::render::render_dataset_dirs(
        &data[..1],
        &site,
        Some(&templates),
        &pqbench::stages::registry(),
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(site.join("index.md")).unwrap(),
        "custom reference\n"
    );
    assert!(std::fs::read_to_string(site.join("x86_1/sign-23.md"))
        .unwrap()
        .contains("## 4. Performance"));
}
