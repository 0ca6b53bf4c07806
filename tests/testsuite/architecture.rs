//! The crate's module graph against the layer table in `src/lib.rs`: no
//! cycle between top-level modules (through any path), no use of a higher
//! layer, the published schema a leaf over the utilities, every dataset
//! file and folder named only by the layout module, and `render` named by
//! others only for pages.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::common;

/// Top-level module → (layer, name), from the table in `src/lib.rs`.
fn layers() -> BTreeMap<String, (u32, String)> {
    let lib = std::fs::read_to_string(common::repo().join("src/lib.rs")).unwrap();
    let mut out = BTreeMap::new();
    for line in lib.lines().filter_map(|l| l.strip_prefix("//! | ")) {
        let cells: Vec<&str> = line.split(" | ").collect();
        let Ok(layer) = cells[0].trim().parse::<u32>() else {
            continue;
        };
        for m in cells[2].split(',') {
            out.insert(
                m.trim().trim_matches('`').to_string(),
                (layer, cells[1].into()),
            );
        }
    }
    out
}

/// The library's top-level module a source file belongs to (`None`:
/// `lib.rs`, and the binary: `main.rs` and its `cli/`).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.components().next()?.as_os_str().to_str()?.to_string();
    let name = first.strip_suffix(".rs").unwrap_or(&first).to_string();
    (!["lib", "main", "cli"].contains(&name.as_str())).then_some(name)
}

/// Module → the other top-level modules its code names (`crate::x` paths
/// and `use crate::{x, y::…}` groups; comments skipped).
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = common::repo().join("src");
    let modules: BTreeSet<String> = layers().into_keys().collect();
    let path = regex::Regex::new(r"crate::(\w+)").unwrap();
    let group = regex::Regex::new(r"crate::\{([^}]*)").unwrap();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in common::files_with_ext(&src, "rs") {
        let Some(m) = module_of(&src, &file) else {
            continue;
        };
        let text = std::fs::read_to_string(&file).unwrap();
        let code: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut names: Vec<String> = path
            .captures_iter(&code)
            .map(|c| c[1].to_string())
            .collect();
        for c in group.captures_iter(&code) {
            names.extend(
                c[1].split(',')
                    .map(|p| p.trim().split("::").next().unwrap_or_default().to_string()),
            );
        }
        let entry = g.entry(m.clone()).or_default();
        for n in names {
            if n != m && modules.contains(&n) {
                entry.insert(n);
            }
        }
    }
    g
}

fn reach(g: &BTreeMap<String, BTreeSet<String>>, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from.to_string()];
    while let Some(m) = todo.pop() {
        for n in g.get(&m).into_iter().flatten() {
            if seen.insert(n.clone()) {
                todo.push(n.clone());
            }
        }
    }
    seen
}

#[test]
fn every_top_level_module_is_in_the_layer_table() {
    let src = common::repo().join("src");
    let table = layers();
    for e in std::fs::read_dir(&src).unwrap().flatten() {
        let Some(m) = module_of(&src, &e.path()) else {
            continue;
        };
        if e.path().is_dir() || e.path().extension().is_some_and(|x| x == "rs") {
            if m == "support" && e.path().is_dir() {
                continue; // the C sources of `support.rs`
            }
            assert!(
                table.contains_key(&m),
                "src/{m} is in no layer of src/lib.rs"
            );
        }
    }
}

#[test]
fn no_module_uses_a_higher_layer_and_none_is_in_a_cycle() {
    let table = layers();
    let g = graph();
    let mut problems = Vec::new();
    for (m, uses) in &g {
        let (lm, _) = &table[m];
        for u in uses {
            let (lu, name) = &table[u];
            if lu > lm {
                problems.push(format!(
                    "{m} (layer {lm}) uses {u} of the higher layer {lu} {name}"
                ));
            }
        }
        if reach(&g, m).contains(m) {
            problems.push(format!("{m} reaches itself"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_published_schema_depends_on_the_utilities_only() {
    let table = layers();
    let beyond: Vec<String> = reach(&graph(), "records")
        .into_iter()
        .filter(|m| table[m].0 != 1)
        .collect();
    assert!(beyond.is_empty(), "records reaches {beyond:?}");
}

#[test]
fn the_kinds_depend_on_the_schema_and_utilities_only() {
    // What a kind is must not depend on configuration, plans or builds:
    // every layer from the model up asks the kinds, never the reverse.
    let allowed = ["records", "error", "format"];
    let uses = graph().remove("kinds").unwrap_or_default();
    let beyond: Vec<&String> = uses
        .iter()
        .filter(|m| !allowed.contains(&m.as_str()))
        .collect();
    assert!(beyond.is_empty(), "kinds uses {beyond:?}");
}

#[test]
fn dataset_files_are_named_by_the_layout_module_only() {
    let src = common::repo().join("src");
    let layout = src.join("records/layout.rs");
    let names = [
        "\"campaign.json\"",
        "\"build.json\"",
        "\"sizes.json\"",
        "\"survey.json\"",
        "\"lock.json\"",
    ];
    for file in common::files_with_ext(&src, "rs") {
        if file == layout {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            for name in names {
                assert!(
                    !line.contains(name),
                    "{}:{}: {name} outside records/layout.rs",
                    file.display(),
                    n + 1
                );
            }
        }
    }
}

/// The code of `file` before its `#[cfg(test)]` module, comment lines
/// dropped: what the library itself says.
fn library_code(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    code.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn dataset_folders_are_spelt_by_the_layout_module_only() {
    let src = common::repo().join("src");
    let layout = src.join("records/layout.rs");
    let folders = [
        "records",
        "profile",
        "count",
        "ct",
        "scan",
        "leak",
        "differential",
        "matrix",
        "lib",
        "runs",
        "site",
    ];
    let spelt = regex::Regex::new(&format!("\"({})/", folders.join("|"))).unwrap();
    for file in common::files_with_ext(&src, "rs") {
        if file == layout {
            continue;
        }
        let code = library_code(&file);
        if let Some(m) = spelt.find(&code) {
            panic!(
                "{}: {} spells a dataset folder outside records/layout.rs",
                file.display(),
                m.as_str()
            );
        }
    }
}

/// What other modules may take from `render`: the page-making entry
/// points. A dataset is read through `records::dataset`, paths through
/// `fsutil::paths`; whoever needs anything else from `render` is reading
/// something that belongs below it.
const RENDER_PAGE_ENTRIES: [&str; 10] = [
    "render_campaign",
    "render_dataset_dirs",
    "render_files",
    "site_files",
    "load_datasets",
    "is_generated",
    "RenderReport",
    "environment",
    "bench",
    "synth",
];

#[test]
fn render_is_named_only_for_pages() {
    let src = common::repo().join("src");
    let full = regex::Regex::new(r"\bcrate::render::(\w+)").unwrap();
    // `use crate::render;` makes a bare `render::x` the module's too.
    let bare = regex::Regex::new(r"(?:^|[^:\w])render::(\w+)").unwrap();
    for file in common::files_with_ext(&src, "rs") {
        if file.starts_with(src.join("render")) {
            continue;
        }
        let code = library_code(&file);
        let mut uses: Vec<_> = full.captures_iter(&code).collect();
        if code.contains("use crate::render;") {
            uses.extend(bare.captures_iter(&code));
        }
        for c in uses {
            assert!(
                RENDER_PAGE_ENTRIES.contains(&&c[1]),
                "{}: render::{} is not a page entry; what is not a page belongs below render",
                file.display(),
                &c[1]
            );
        }
    }
}

/// The functions of a C file in the support code's style (a definition's
/// body opens with `{` alone on a line and closes with `}` alone): each
/// one's first line (the signature's, at column 0), name and length in
/// lines, signature to closing brace.
fn c_functions(text: &str) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i] != "{" {
            i += 1;
            continue;
        }
        // The signature: back to the line that starts at column 0.
        let mut start = i.saturating_sub(1);
        while start > 0 && lines[start].starts_with([' ', '\t']) {
            start -= 1;
        }
        let end = (i..lines.len())
            .find(|&k| lines[k] == "}")
            .unwrap_or(lines.len() - 1);
        let name = lines[start]
            .split('(')
            .next()
            .and_then(|s| s.split([' ', '*']).rfind(|w| !w.is_empty()))
            .unwrap_or_default()
            .to_string();
        out.push((start + 1, name, end - start + 1));
        i = end + 1;
    }
    out
}

#[test]
fn the_support_code_is_in_c_files_and_functions_of_one_concept() {
    const MAX_FILE_LINES: usize = 700;
    const MAX_FUNCTION_LINES: usize = 80;
    let dir = common::repo().join("src/support/c");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "c" || e == "h"))
        .collect();
    files.sort();
    assert!(files.len() > 20, "{files:?}");
    let mut over = Vec::new();
    let mut seen_functions = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let n = text.lines().count();
        if n > MAX_FILE_LINES {
            over.push(format!("{name}: {n} lines"));
        }
        for (line, function, len) in c_functions(&text) {
            seen_functions += 1;
            if len > MAX_FUNCTION_LINES {
                over.push(format!("{name}:{line}: {function} is {len} lines"));
            }
        }
    }
    // The reader finds the functions at all (a change of style would
    // otherwise pass everything).
    assert!(seen_functions > 300, "{seen_functions} functions found");
    assert!(
        over.is_empty(),
        "over {MAX_FILE_LINES} lines per file or {MAX_FUNCTION_LINES} per function:\n{}",
        over.join("\n")
    );
}

#[test]
fn the_c_function_reader_measures_signature_to_brace() {
    let text = "/* x */\nstatic int f(int a,\n             int b)\n{\n    return a + b;\n}\n\
                static const int t[] = {\n    1,\n};\nvoid g(void)\n{\n}\n";
    assert_eq!(
        c_functions(text),
        vec![(2, "f".to_string(), 5), (10, "g".to_string(), 3)]
    );
}

/// Second-level module → the second-level modules of the same top-level
/// module its code names (`crate::top::x`, `super::x` from `top/*.rs` or
/// `top/*/mod.rs`, `super::super::x` deeper; groups `{x, y::…}` too; test
/// modules and comments skipped).
fn second_level_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = common::repo().join("src");
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in common::files_with_ext(&src, "rs") {
        let rel: Vec<String> = file
            .strip_prefix(&src)
            .unwrap()
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if rel.len() < 2 || rel[1] == "mod.rs" {
            continue;
        }
        let top = &rel[0];
        let me = rel[1].trim_end_matches(".rs").to_string();
        let sibling = |name: &str| {
            src.join(top).join(format!("{name}.rs")).is_file() || src.join(top).join(name).is_dir()
        };
        let to_top = match (rel.len(), rel.last().map(String::as_str)) {
            (2, _) | (3, Some("mod.rs")) => "super::".to_string(),
            _ => "super::super::".to_string(),
        };
        let code = library_code(&file);
        let mut names = Vec::new();
        for prefix in [format!("crate::{top}::"), to_top] {
            let p = regex::escape(&prefix);
            let single = regex::Regex::new(&format!(r"(?:^|[^:\w]){p}(\w+)")).unwrap();
            let group = regex::Regex::new(&format!(r"(?:^|[^:\w]){p}\{{([^}}]*)")).unwrap();
            names.extend(single.captures_iter(&code).map(|c| c[1].to_string()));
            for c in group.captures_iter(&code) {
                names.extend(
                    c[1].split(',')
                        .map(|p| p.trim().split("::").next().unwrap_or_default().to_string()),
                );
            }
        }
        let entry = g.entry(format!("{top}::{me}")).or_default();
        for n in names {
            if n != me && sibling(&n) {
                entry.insert(format!("{top}::{n}"));
            }
        }
    }
    g
}

#[test]
fn second_level_modules_form_no_cycle() {
    let g = second_level_graph();
    assert!(g.len() > 100, "{} second-level modules found", g.len());
    let mut cycles: BTreeSet<Vec<String>> = BTreeSet::new();
    for m in g.keys() {
        let from_m = reach(&g, m);
        let mut scc: Vec<String> = from_m
            .iter()
            .filter(|n| *n != m && reach(&g, n).contains(m))
            .cloned()
            .collect();
        if !scc.is_empty() {
            scc.push(m.clone());
            scc.sort();
            cycles.insert(scc);
        }
    }
    assert!(
        cycles.is_empty(),
        "second-level modules that reach one another: {cycles:?}"
    );
}

/// The stages that present themselves (`engine::PageSection`) are the only
/// readers of their records on the pages: `render` walks the presenters
/// and names none of those records.
#[test]
fn render_reads_no_record_of_a_stage_that_presents_itself() {
    let src = common::repo().join("src/render");
    let named = regex::Regex::new(
        r"\b(CountRecord|CtRecord|DifferentialRecord|LeakRecord|records::(count|ct|differential|leak)\b)",
    )
    .unwrap();
    for file in common::files_with_ext(&src, "rs") {
        if let Some(m) = named.find(&library_code(&file)) {
            panic!(
                "{}: names {}: its stage puts it on the pages (stages/<stage>_page.rs)",
                file.display(),
                m.as_str()
            );
        }
    }
}
