//! Parameter sets of a single source folder selected by preprocessor
//! defines. Three sources of evidence, most reliable first:
//!
//! 1. hint lines in comments (or a README table): `LABEL  -DX=1 -DY=2`;
//! 2. NIST namespaced `<NS>CRYPTO_ALGNAME "LABEL"` macros, with the define
//!    found from the `#if X == n` branch that mentions `<NS>`;
//! 3. `#if X == n` chains, `#if X != a && X != b` + `#error`, and
//!    `#ifndef X` + `#error` guards: values without names, so the labels
//!    are guesses and marked TODO.

use std::collections::BTreeMap;

use super::csource::CFile;

/// A parameter set as the importer understood it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct SetGuess {
    pub label: String,
    pub defines: Vec<(String, toml::Value)>,
    pub namespace: Option<String>,
    /// Comment lines written above the set (where the guess came from).
    pub notes: Vec<String>,
    /// Commented TODO lines: what a human must fill in.
    pub todos: Vec<String>,
}

/// `(namespace, label)` pairs from `<NS>CRYPTO_ALGNAME "LABEL"`.
pub(super) fn algnames(files: &[CFile]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for f in files {
        for m in &f.macros {
            if let Some(ns) = m.name.strip_suffix("CRYPTO_ALGNAME") {
                let label = m.body.trim().trim_matches('"').to_string();
                if !label.is_empty() && !out.iter().any(|(n, _)| n == ns) {
                    out.push((ns.to_string(), label));
                }
            }
        }
    }
    out
}

/// The parameter sets of one folder. `readme` is the folder's README text
/// (hint tables there are used when the sources carry none).
pub(super) fn define_selected(
    files: &[CFile],
    readme: Option<&str>,
    names: &[(String, String)],
    fallback_label: &str,
) -> Vec<SetGuess> {
    let mut sets = hinted(files, readme);
    let namespaces: Vec<&String> = names.iter().map(|(ns, _)| ns).collect();
    if sets.is_empty() && names.len() > 1 {
        sets = names
            .iter()
            .map(|(ns, label)| SetGuess {
                label: label.clone(),
                notes: vec![format!("label from {ns}CRYPTO_ALGNAME")],
                ..SetGuess::default()
            })
            .collect();
    }
    if sets.is_empty() {
        sets = named_branches(files);
    }
    if sets.is_empty() {
        sets = from_conditions(files, fallback_label);
    }
    // Attach namespaces (only needed when the folder has several).
    if namespaces.len() > 1 {
        let branches: Vec<Branch> = files.iter().flat_map(branches).collect();
        for s in &mut sets {
            let Some((ns, _)) = names.iter().find(|(_, l)| same_name(l, &s.label)) else {
                s.todos.push(format!(
                    "namespace = \"...\"  # which of {} belongs to {}",
                    namespaces
                        .iter()
                        .map(|n| n.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    s.label
                ));
                continue;
            };
            s.namespace = Some(ns.clone());
            if s.defines.is_empty() {
                match branches.iter().find(|b| b.text.contains(ns.as_str())) {
                    Some(b) => {
                        s.defines.push((b.var.clone(), value(&b.value)));
                        s.notes.push(format!(
                            "define from `#if {} == {}` in {} (the branch naming {ns})",
                            b.var, b.value, b.file
                        ));
                    }
                    None => s.todos.push(format!(
                        "defines = {{ ... }}  # the -D flags that select {} ({ns})",
                        s.label
                    )),
                }
            }
        }
    }
    sets
}

/// Hint lines: a label followed by `-D` flags, in comments or a README.
fn hinted(files: &[CFile], readme: Option<&str>) -> Vec<SetGuess> {
    let used = |name: &str| {
        let re = regex::Regex::new(&format!(r"\b{name}\b")).expect("identifier regex");
        files.iter().any(|f| re.is_match(&f.code))
    };
    let mut lines: Vec<(String, String)> = Vec::new();
    for f in files {
        for (n, text) in &f.comments {
            lines.push((format!("{}:{n}", f.rel), text.clone()));
        }
    }
    let mut sets = collect_hints(&lines, &used);
    if sets.is_empty() {
        if let Some(text) = readme {
            let rows: Vec<(String, String)> = text
                .lines()
                .enumerate()
                .map(|(i, l)| (format!("README.md:{}", i + 1), l.replace(['|', '`'], " ")))
                .collect();
            sets = collect_hints(&rows, &used);
        }
    }
    sets
}

fn collect_hints(lines: &[(String, String)], used: &dyn Fn(&str) -> bool) -> Vec<SetGuess> {
    let line_re = regex::Regex::new(
        r"^\s*([A-Za-z][A-Za-z0-9_.+-]*)\s*:?\s+((?:-D[A-Za-z_]\w*(?:=\S+)?\s*)+)",
    )
    .expect("hint regex");
    let def_re = regex::Regex::new(r"-D([A-Za-z_]\w*)(?:=(\S+))?").expect("define regex");
    let mut sets: Vec<SetGuess> = Vec::new();
    for (at, text) in lines {
        let Some(c) = line_re.captures(text) else {
            continue;
        };
        let label = c[1].to_string();
        if ["gcc", "cc", "clang", "make", "cmake", "CFLAGS"].contains(&label.as_str()) {
            continue;
        }
        let defines: Vec<(String, toml::Value)> = def_re
            .captures_iter(&c[2])
            .map(|d| {
                let v = d.get(2).map_or("", |m| m.as_str());
                (d[1].to_string(), value(v.trim_end_matches([',', ';'])))
            })
            .collect();
        // A define the code never mentions is prose, not a hint.
        if !defines.iter().all(|(k, _)| used(k)) {
            continue;
        }
        if sets.iter().any(|s| s.label == label) {
            continue;
        }
        sets.push(SetGuess {
            label,
            defines,
            notes: vec![format!("from the hint at {at}")],
            ..SetGuess::default()
        });
    }
    sets
}

/// A define's TOML value: integers stay integers, a bare `-DX` is `true`.
pub(super) fn value(v: &str) -> toml::Value {
    if v.is_empty() {
        return toml::Value::Boolean(true);
    }
    match v.parse::<i64>() {
        Ok(n) => toml::Value::Integer(n),
        Err(_) => toml::Value::String(v.to_string()),
    }
}

/// Labels compare equal ignoring case and punctuation (`Dilithium2` and
/// `dilithium-2` name the same set).
pub(super) fn same_name(a: &str, b: &str) -> bool {
    let norm = |s: &str| {
        s.chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_lowercase())
            .collect::<String>()
    };
    norm(a) == norm(b)
}

/// One `#if X == n` (or `#elif`) branch and the code inside it.
#[derive(Debug, Clone)]
struct Branch {
    file: String,
    var: String,
    value: String,
    text: String,
}

fn eq_test(expr: &str) -> Option<(String, String)> {
    let re = regex::Regex::new(r"^\(?\s*([A-Za-z_]\w*)\s*==\s*(\d+)\s*\)?$").expect("eq regex");
    let c = re.captures(expr.trim())?;
    Some((c[1].to_string(), c[2].to_string()))
}

fn branches(f: &CFile) -> Vec<Branch> {
    let lines: Vec<&str> = f.code.lines().collect();
    let text = |from: usize, to: usize| -> String {
        lines
            .get(from..to.min(lines.len()).max(from))
            .unwrap_or(&[])
            .join("\n")
    };
    let mut out = Vec::new();
    // Per open #if group: the currently open `X == n` branch, if any.
    let mut stack: Vec<Option<(String, String, usize)>> = Vec::new();
    for d in &f.directives {
        let close = |open: Option<(String, String, usize)>, out: &mut Vec<Branch>| {
            if let Some((var, value, start)) = open {
                out.push(Branch {
                    file: f.rel.clone(),
                    var,
                    value,
                    text: text(start, d.line - 1),
                });
            }
        };
        match d.kind.as_str() {
            "if" | "ifdef" | "ifndef" => {
                let open = (d.kind == "if")
                    .then(|| eq_test(&d.rest))
                    .flatten()
                    .map(|(v, n)| (v, n, d.line));
                stack.push(open);
            }
            "elif" => {
                if let Some(top) = stack.last_mut() {
                    close(top.take(), &mut out);
                    *top = eq_test(&d.rest).map(|(v, n)| (v, n, d.line));
                }
            }
            "else" => {
                if let Some(top) = stack.last_mut() {
                    close(top.take(), &mut out);
                }
            }
            "endif" => {
                if let Some(top) = stack.pop() {
                    close(top, &mut out);
                }
            }
            _ => {}
        }
    }
    out
}

/// Sets from an `#if X == n` chain whose branches each define a plain
/// `CRYPTO_ALGNAME` (upstream reference code: Dilithium's `DILITHIUM_MODE`,
/// Kyber's `KYBER_K`): the value selects the set, the branch names it.
/// Where a branch names several (a nested option such as Kyber's 90s
/// variant), the last is the one that holds without further defines.
fn named_branches(files: &[CFile]) -> Vec<SetGuess> {
    let re =
        regex::Regex::new(r#"#\s*define\s+CRYPTO_ALGNAME\s+"([^"]+)""#).expect("algname regex");
    let mut sets: Vec<SetGuess> = Vec::new();
    let mut selector: Option<String> = None;
    for f in files {
        for b in branches(f) {
            let Some(label) = re.captures_iter(&b.text).last().map(|c| c[1].to_string()) else {
                continue;
            };
            if selector.get_or_insert_with(|| b.var.clone()) != &b.var
                || sets.iter().any(|s| s.defines[0].1 == value(&b.value))
            {
                continue;
            }
            sets.push(SetGuess {
                label: super::impls::sanitize(&label),
                defines: vec![(b.var.clone(), value(&b.value))],
                notes: vec![format!(
                    "selected by `#if {} == {}` in {}, whose CRYPTO_ALGNAME names it",
                    b.var, b.value, b.file
                )],
                ..SetGuess::default()
            });
        }
    }
    // One named branch is a single set, not a choice.
    if sets.len() < 2 {
        sets.clear();
    }
    sets
}

/// Sets from preprocessor conditions alone: the values are known, the
/// names are not.
fn from_conditions(files: &[CFile], fallback_label: &str) -> Vec<SetGuess> {
    let mut values: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut required: Vec<(String, String)> = Vec::new();
    let ne_re = regex::Regex::new(r"([A-Za-z_]\w*)\s*!=\s*(\d+)").expect("ne regex");
    for f in files {
        for b in branches(f) {
            let v = values.entry(b.var).or_default();
            if !v.contains(&b.value) {
                v.push(b.value);
            }
        }
        for (k, d) in f.directives.iter().enumerate() {
            let next_is_error = f.directives.get(k + 1).is_some_and(|n| n.kind == "error");
            if d.kind == "if" && next_is_error && d.rest.contains("!=") {
                for c in ne_re.captures_iter(&d.rest) {
                    let v = values.entry(c[1].to_string()).or_default();
                    if !v.contains(&c[2].to_string()) {
                        v.push(c[2].to_string());
                    }
                }
            }
            if d.kind == "ifndef" && next_is_error {
                required.push((d.rest.trim().to_string(), f.rel.clone()));
            }
        }
    }
    // The selector: a required define with values, else the define with
    // the most distinct values.
    let selector = required
        .iter()
        .find(|(x, _)| values.get(x).is_some_and(|v| v.len() > 1))
        .map(|(x, _)| x.clone())
        .or_else(|| {
            values
                .iter()
                .filter(|(_, v)| v.len() > 1)
                .max_by_key(|(_, v)| v.len())
                .map(|(k, _)| k.clone())
        });
    if let Some(x) = selector {
        let others: Vec<&String> = values
            .iter()
            .filter(|(k, v)| **k != x && v.len() > 1)
            .map(|(k, _)| k)
            .collect();
        return values[&x]
            .iter()
            .map(|n| {
                let mut s = SetGuess {
                    label: format!("{fallback_label}-{n}"),
                    defines: vec![(x.clone(), value(n))],
                    notes: vec![format!("selected by `#if {x} == {n}` in the sources")],
                    todos: vec![format!(
                        "label = \"...\"  # the submission's name for the set with {x}={n} (guessed: {fallback_label}-{n})"
                    )],
                    ..SetGuess::default()
                };
                if !others.is_empty() {
                    s.todos.push(format!(
                        "check whether {} also select(s) parameter sets",
                        others.iter().map(|o| o.as_str()).collect::<Vec<_>>().join(", ")
                    ));
                }
                s
            })
            .collect();
    }
    let mut s = SetGuess {
        label: fallback_label.to_string(),
        ..SetGuess::default()
    };
    match required.first() {
        Some((x, file)) => s.todos.push(format!(
            "defines = {{ {x} = ... }}  # {file} refuses to build without {x}; one [[parameter-set]] per value"
        )),
        None => s.todos.push(
            "no define-selected parameter sets found; if there are several, add one [[parameter-set]] per set with its `defines`".into(),
        ),
    }
    vec![s]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(rel: &str, text: &str) -> CFile {
        CFile::parse(rel, text)
    }

    #[test]
    fn hint_lines_give_labels_and_defines() {
        let f = file(
            "params.h",
            "/* sets:\n *   A-128  -DN=16 -DMODE=fast\n *   A-192  -DN=24 -DMODE=fast\n * gcc -DFOO=1\n */\n#if N == 16\n#endif\nint m = MODE;\n",
        );
        let sets = define_selected(&[f], None, &[], "X");
        assert_eq!(sets.len(), 2);
        assert_eq!(sets[0].label, "A-128");
        assert_eq!(
            sets[0].defines,
            vec![
                ("N".to_string(), toml::Value::Integer(16)),
                ("MODE".to_string(), toml::Value::String("fast".into()))
            ]
        );
    }

    #[test]
    fn namespaces_map_to_branch_defines() {
        let api = file(
            "api.h",
            "#define P1_CRYPTO_ALGNAME \"L-1\"\n#define P3_CRYPTO_ALGNAME \"L-3\"\n",
        );
        let params = file(
            "params.h",
            "#ifndef LVL\n#error \"set LVL\"\n#endif\n#if LVL == 1\n#define NS(x) P1_##x\n#elif LVL == 3\n#define NS(x) P3_##x\n#endif\n",
        );
        let files = [api, params];
        let names = algnames(&files);
        let sets = define_selected(&files, None, &names, "L");
        assert_eq!(sets.len(), 2);
        assert_eq!(sets[1].label, "L-3");
        assert_eq!(sets[1].namespace.as_deref(), Some("P3_"));
        assert_eq!(
            sets[1].defines,
            vec![("LVL".to_string(), toml::Value::Integer(3))]
        );
    }

    #[test]
    fn a_mode_chain_names_its_sets_by_their_crypto_algname() {
        let params = file(
            "params.h",
            "#ifndef MODE\n#define MODE 2\n#endif\n#if MODE == 2\n#define CRYPTO_ALGNAME \"Dil2\"\n\
             #elif MODE == 3\n#ifdef AES\n#define CRYPTO_ALGNAME \"Dil3-AES\"\n#else\n\
             #define CRYPTO_ALGNAME \"Dil3\"\n#endif\n#endif\n",
        );
        let files = [params];
        let names = algnames(&files);
        let sets = define_selected(&files, None, &names, "Dil2");
        let got: Vec<_> = sets
            .iter()
            .map(|s| (s.label.as_str(), s.defines.clone(), s.todos.len()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "Dil2",
                    vec![("MODE".to_string(), toml::Value::Integer(2))],
                    0
                ),
                (
                    "Dil3",
                    vec![("MODE".to_string(), toml::Value::Integer(3))],
                    0
                )
            ]
        );
    }

    #[test]
    fn bare_conditions_give_guessed_labels_with_todos() {
        let params = file(
            "params.h",
            "#ifndef K\n#define K 2\n#endif\n#if K != 2 && K != 3\n#error \"K\"\n#endif\n",
        );
        let sets = define_selected(&[params], None, &[], "PEB");
        let labels: Vec<_> = sets.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, vec!["PEB-2", "PEB-3"]);
        assert!(sets[0].todos[0].starts_with("label = "));
        let none = define_selected(
            &[file("x.c", "int f(void) { return 0; }\n")],
            None,
            &[],
            "Z",
        );
        assert_eq!(none.len(), 1);
        assert!(none[0].todos[0].contains("no define-selected"));
    }
}
