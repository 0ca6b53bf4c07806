//! The variable that chooses a tree's parameter set, and the values it
//! takes, read from the build files and the tree. In a Makefile: a default
//! that names one of several sibling folders or files (`SET ?= toy2`
//! beside `params/toy2/` and `params/toy3/`), else a chain of conditionals
//! comparing the variable with each value (`ifeq ($(LEVEL),3)` … `else
//! ifeq ($(LEVEL),5)`) whose branches reach the compiler (a `-D`, an `-I`,
//! a source file, or a variable the build uses for one). In a CMake
//! project: a cache variable's documented values (`set_property(CACHE
//! LEVEL PROPERTY STRINGS 1 3 5)`), else the values `if`/`elseif` compare
//! it with.

use std::collections::BTreeMap;
use std::path::Path;

use crate::import::makeflags::{assignment, cmake_commands, logical_lines, strip_comment};

/// The selecting variable of `makefile` and its values, in the order the
/// tree gives them.
pub(super) fn selector(tree: &Path, makefile: &str) -> Option<(String, Vec<String>)> {
    by_siblings(tree, makefile).or_else(|| by_conditionals(makefile))
}

fn plain(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
}

/// A default (`SET ?= toy2`) naming one of several sibling folders or
/// files in the tree.
fn by_siblings(tree: &Path, makefile: &str) -> Option<(String, Vec<String>)> {
    for line in makefile.lines() {
        let Some((name, value)) = line.split_once("?=") else {
            continue;
        };
        let (name, value) = (name.trim(), value.trim());
        if !plain(name) || !plain(value) || value.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        if let Some(values) = siblings(tree, value, 0) {
            return Some((name.to_string(), values));
        }
    }
    None
}

/// Variables the build sets for itself or that switch its manner or its
/// implementation (SDitH's `VARIANT = ref|avx2`, FrodoKEM's `OPT_LEVEL`),
/// never its parameter set.
const NOT_SELECTORS: &[&str] = &[
    "CC",
    "CXX",
    "AS",
    "LD",
    "AR",
    "CFLAGS",
    "CPPFLAGS",
    "CXXFLAGS",
    "LDFLAGS",
    "LDLIBS",
    "OS",
    "ARCH",
    "UNAME",
    "UNAME_S",
    "UNAME_M",
    "DEBUG",
    "V",
    "VERBOSE",
    "OPT",
    "PREFIX",
    "DESTDIR",
    "VARIANT",
    "PLATFORM",
    "IMPL",
    "IMPLEMENTATION",
    "BACKEND",
    "CPU",
    "SIMD",
    "ARCHITECTURE",
    "TARGET",
    "OPT_LEVEL",
];

/// A variable that conditionals compare with literal values, two or more
/// with its default (if it has one), each branch reaching the compiler.
fn by_conditionals(makefile: &str) -> Option<(String, Vec<String>)> {
    let lines: Vec<String> = logical_lines(makefile)
        .into_iter()
        .map(|(_, l)| strip_comment(&l))
        .collect();
    let defaults = top_level_defaults(&lines);
    let reaching = compiler_variables(&lines);
    let mut found: Vec<(String, Vec<String>)> = Vec::new();
    for (name, value, body) in branches(&lines) {
        let reaches = body.iter().any(|l| {
            to_compiler(l) || assignment(l).is_some_and(|(n, _, _)| reaching.contains(&n))
        });
        if !reaches || NOT_SELECTORS.contains(&name.as_str()) {
            continue;
        }
        match found.iter_mut().find(|(n, _)| *n == name) {
            Some((_, values)) if !values.contains(&value) => values.push(value),
            Some(_) => {}
            None => found.push((name, vec![value])),
        }
    }
    found.into_iter().find_map(|(name, mut values)| {
        let default = defaults.get(&name).filter(|d| plain(d));
        if let Some(d) = default.filter(|d| !values.contains(d)) {
            // The default's own branch is the chain's `else`.
            values.insert(0, d.clone());
        }
        (values.len() >= 2).then_some((name, values))
    })
}

/// Each variable's first assignment outside any conditional: its value
/// when the command line gives none (one inside a branch is the branch's).
fn top_level_defaults(lines: &[String]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut depth = 0usize;
    for l in lines {
        match l.split_whitespace().next().unwrap_or("") {
            "ifeq" | "ifneq" | "ifdef" | "ifndef" => depth += 1,
            "endif" => depth = depth.saturating_sub(1),
            _ if depth == 0 => {
                if let Some((name, _, value)) = assignment(l) {
                    out.entry(name).or_insert_with(|| value.trim().to_string());
                }
            }
            _ => {}
        }
    }
    out
}

/// Whether a line gives the compiler a define, an include folder or a
/// source file.
fn to_compiler(line: &str) -> bool {
    line.contains("-D") || line.contains("-I") || line.split_whitespace().any(|w| w.ends_with(".c"))
}

/// Variables whose value reaches the compiler: those a line that does
/// (`-DMKTOY_SET=$(SET)`, `-Iparams/$(SET)`, `src/$(MIX).c`) expands.
fn compiler_variables(lines: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for l in lines.iter().filter(|l| to_compiler(l)) {
        let mut rest = l.as_str();
        while let Some(at) = rest.find("$(") {
            rest = &rest[at + 2..];
            let end = rest.find([')', ':']).unwrap_or(rest.len());
            // `$(MIX_$(SET))` names MIX_ and SET: both count.
            let name = rest[..end].split("$(").next().unwrap_or("");
            if plain(name) {
                out.push(name.trim_end_matches('_').to_string());
                out.push(name.to_string());
            }
        }
    }
    out
}

/// Each branch of an `ifeq`/`else ifeq` that compares a variable with a
/// literal: the variable, the value and the branch's lines (nested
/// conditionals included).
fn branches(lines: &[String]) -> Vec<(String, String, Vec<String>)> {
    let mut out: Vec<(String, String, Vec<String>)> = Vec::new();
    let mut open: Option<usize> = None;
    let mut depth = 0usize;
    for l in lines {
        let t = l.trim();
        let word = t.split_whitespace().next().unwrap_or("");
        let is_else = word == "else";
        let cond = if is_else { t[4..].trim() } else { t };
        if depth > 0 && matches!(word, "ifeq" | "ifneq" | "ifdef" | "ifndef") {
            depth += 1;
        } else if word == "endif" && depth > 1 {
            depth -= 1;
        } else if word == "endif" || (is_else && depth == 1) {
            open = None;
            if word == "endif" {
                depth = 0;
            }
            if let Some((name, value)) = cond.strip_prefix("ifeq").and_then(compared) {
                out.push((name, value, Vec::new()));
                open = Some(out.len() - 1);
            }
            continue;
        } else if depth == 0 && word == "ifeq" {
            depth = 1;
            if let Some((name, value)) = cond.strip_prefix("ifeq").and_then(compared) {
                out.push((name, value, Vec::new()));
                open = Some(out.len() - 1);
            }
            continue;
        } else if depth == 0 && matches!(word, "ifneq" | "ifdef" | "ifndef") {
            depth = 1;
            continue;
        }
        if let Some(i) = open {
            out[i].2.push(l.clone());
        }
    }
    out
}

/// `($(NAME),value)`, `"$(NAME)" "value"` or the two swapped: the
/// variable and the literal.
fn compared(cond: &str) -> Option<(String, String)> {
    let c = cond.trim();
    let (a, b) = if let Some(inner) = c.strip_prefix('(').and_then(|c| c.strip_suffix(')')) {
        inner.split_once(',')?
    } else {
        let mut quoted = c
            .split(['"', '\''])
            .map(str::trim)
            .filter(|s| !s.is_empty());
        (quoted.next()?, quoted.next()?)
    };
    let var = |s: &str| {
        s.trim()
            .strip_prefix("$(")
            .or_else(|| s.trim().strip_prefix("${"))
            .and_then(|v| v.strip_suffix(')').or_else(|| v.strip_suffix('}')))
            .filter(|v| plain(v))
            .map(String::from)
    };
    let lit = |s: &str| plain(s.trim()).then(|| s.trim().to_string());
    match (var(a), var(b)) {
        (Some(n), None) => Some((n, lit(b)?)),
        (None, Some(n)) => Some((n, lit(a)?)),
        _ => None,
    }
}

/// The cache variable of a `CMakeLists.txt` that chooses the set, and its
/// values: those its `STRINGS` property documents, else those `if` and
/// `elseif` compare it with, its default first.
pub(super) fn cmake_selector(text: &str) -> Option<(String, Vec<String>)> {
    let cmds: Vec<Vec<String>> = cmake_commands(text).into_iter().map(|(_, c)| c).collect();
    let is = |c: &[String], name: &str| c[0].eq_ignore_ascii_case(name);
    for c in &cmds {
        if is(c, "set_property") && c.len() >= 7 && c[1] == "CACHE" && c[3] == "PROPERTY" {
            let values: Vec<String> = c[5..].to_vec();
            if c[4] == "STRINGS" && values.len() >= 2 && values.iter().all(|v| plain(v)) {
                return Some((c[2].clone(), values));
            }
        }
    }
    // `set(LEVEL 3 CACHE STRING "…")`: a value the user sets.
    let cache = cmds
        .iter()
        .filter(|c| is(c, "set") && c.len() >= 4 && c[3] == "CACHE" && !c[1].starts_with("CMAKE_"));
    cache.into_iter().find_map(|c| {
        let (name, default) = (&c[1], &c[2]);
        let mut values: Vec<String> = plain(default)
            .then(|| default.clone())
            .into_iter()
            .collect();
        for v in cmds
            .iter()
            .filter(|c| is(c, "if") || is(c, "elseif"))
            .flat_map(|c| compared_in_cmake(&c[1..], name))
        {
            if !values.contains(&v) {
                values.push(v);
            }
        }
        (values.len() >= 2).then(|| (name.clone(), values))
    })
}

/// The literals an `if` condition compares `name` with (`LEVEL EQUAL 3`,
/// `${LEVEL} STREQUAL "x"`, either way round).
fn compared_in_cmake(args: &[String], name: &str) -> Vec<String> {
    let named = |a: &str| a == name || a == format!("${{{name}}}");
    args.windows(3)
        .filter(|w| matches!(w[1].as_str(), "EQUAL" | "STREQUAL"))
        .filter_map(|w| match (named(&w[0]), named(&w[2])) {
            (true, false) => Some(w[2].clone()),
            (false, true) => Some(w[0].clone()),
            _ => None,
        })
        .filter(|v| plain(v))
        .collect()
}

/// Below `dir` (three levels at most): the names of the folders beside a
/// folder named `value`, or the middle parts of the files beside one
/// named `<prefix>value<suffix>`, when there are two or more.
fn siblings(dir: &Path, value: &str, depth: usize) -> Option<Vec<String>> {
    let mut entries: Vec<std::fs::DirEntry> = std::fs::read_dir(dir).ok()?.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    let names: Vec<(String, bool)> = entries
        .iter()
        .map(|e| {
            let dir = e.file_type().is_ok_and(|t| t.is_dir());
            (e.file_name().to_string_lossy().into_owned(), dir)
        })
        .collect();
    if names.iter().any(|(n, d)| *d && n == value) {
        let values: Vec<String> = names
            .iter()
            .filter(|(n, d)| *d && !n.starts_with('.'))
            .map(|(n, _)| n.clone())
            .collect();
        return (values.len() >= 2).then_some(values);
    }
    for (n, d) in &names {
        if *d {
            continue;
        }
        let Some(at) = n.find(value) else {
            continue;
        };
        let (prefix, suffix) = (&n[..at], &n[at + value.len()..]);
        if prefix.is_empty() || !suffix.starts_with('.') {
            continue;
        }
        let values: Vec<String> = names
            .iter()
            .filter(|(m, d)| !*d && m.starts_with(prefix) && m.ends_with(suffix))
            .map(|(m, _)| m[prefix.len()..m.len() - suffix.len()].to_string())
            .filter(|v| !v.is_empty())
            .collect();
        if values.len() >= 2 {
            return Some(values);
        }
    }
    if depth >= 3 {
        return None;
    }
    entries
        .iter()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .find_map(|e| siblings(&e.path(), value, depth + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_make_variable_naming_one_of_several_folders_or_files_is_the_selector() {
        let t = tempfile::tempdir().unwrap();
        for d in ["params/a", "params/b", "params/c"] {
            std::fs::create_dir_all(t.path().join(d)).unwrap();
        }
        let (name, values) = selector(t.path(), "CC ?= cc\nSET ?= b\n").unwrap();
        assert_eq!(
            (name.as_str(), values),
            ("SET", vec!["a".into(), "b".into(), "c".into()])
        );
        for f in ["cfg_x1.h", "cfg_x2.h", "other.h"] {
            std::fs::write(t.path().join(f), "").unwrap();
        }
        let (_, values) = selector(t.path(), "P ?= x2\n").unwrap();
        assert_eq!(values, ["x1", "x2"]);
        assert!(selector(t.path(), "LEVEL ?= 3\n").is_none());
    }

    #[test]
    fn a_chain_of_conditionals_that_reaches_the_compiler_gives_the_values() {
        let t = tempfile::tempdir().unwrap();
        let mk = "LEVEL ?= 1\n\
                  ifeq ($(LEVEL),1)\nNAME = small\n\
                  else ifeq ($(LEVEL),3)\nNAME = medium\n\
                  else ifeq \"$(LEVEL)\" \"5\"\nNAME = large\n\
                  else\n$(error LEVEL is 1, 3 or 5)\nendif\n\
                  CFLAGS += -DPARAMS=$(NAME)\n";
        let (name, values) = selector(t.path(), mk).unwrap();
        assert_eq!(
            (name.as_str(), values),
            ("LEVEL", vec!["1".into(), "3".into(), "5".into()])
        );
        // The default's branch is the chain's else; nested conditionals
        // are the branch's own; a define in the branch reaches the compiler.
        let mk = "PARAM ?= 2\nifeq (4,$(PARAM))\n  ifdef FAST\n  X = 1\n  endif\n  CPPFLAGS += -DP4\nendif\n";
        assert_eq!(selector(t.path(), mk).unwrap().1, ["2", "4"]);
        // FrodoKEM's shape: the selector has no default, the variable its
        // branches set reaches the compiler through `-D $(…)`.
        let mk = "USE_A=_AES_\nifeq \"$(GEN_A)\" \"AES128\"\n    USE_A=_AES_\n\
                  else ifeq \"$(GEN_A)\" \"SHAKE128\"\n    USE_A=_SHAKE_\nendif\n\
                  CFLAGS += -D $(USE_A)\n";
        assert_eq!(
            selector(t.path(), mk).unwrap(),
            ("GEN_A".into(), vec!["AES128".into(), "SHAKE128".into()])
        );
        // A default is the first assignment outside the conditionals, not
        // one a branch makes.
        let mk = "W = a\nifeq ($(Q),x)\nW = b\nendif\nifeq ($(W),a)\nCFLAGS += -DWA\nendif\n";
        assert!(selector(t.path(), mk).is_none());
        // Without a default, the values the chain compares with.
        let mk = "ifeq ($(PARAM),3)\nSRC = p3.c\nelse ifeq ($(PARAM),5)\nSRC = p5.c\nendif\n";
        assert_eq!(selector(t.path(), mk).unwrap().1, ["3", "5"]);
    }

    #[test]
    fn a_cmake_cache_variable_gives_its_documented_or_compared_values() {
        let documented = "set(LEVEL 3 CACHE STRING \"1, 3 or 5\")\n\
                          set_property(CACHE LEVEL PROPERTY STRINGS 1 3 5)\n";
        let (name, values) = cmake_selector(documented).unwrap();
        assert_eq!(
            (name.as_str(), values),
            ("LEVEL", vec!["1".into(), "3".into(), "5".into()])
        );
        let compared = "set(MODE fast CACHE STRING \"fast or small\")\n\
                        if(MODE STREQUAL \"fast\")\n  add_compile_definitions(FAST)\n\
                        elseif(${MODE} STREQUAL small)\n  add_compile_definitions(SMALL)\nendif()\n";
        assert_eq!(cmake_selector(compared).unwrap().1, ["fast", "small"]);
        // A switch (`option`), CMake's own variables, and a cache variable
        // compared with nothing choose no set.
        let none = "option(USE_AVX2 \"AVX2\" ON)\nif(USE_AVX2)\nendif()\n\
                    set(CMAKE_BUILD_TYPE Release CACHE STRING \"\")\n\
                    if(CMAKE_BUILD_TYPE STREQUAL Debug)\nendif()\n\
                    set(OUT lib CACHE PATH \"\")\n";
        assert!(cmake_selector(none).is_none());
    }

    #[test]
    fn switches_of_the_build_itself_are_no_selector() {
        let t = tempfile::tempdir().unwrap();
        // The compiler, a debug switch, and branches that reach no
        // compile: none is a parameter set.
        let cc = "CC ?= cc\nifeq ($(CC),clang)\nCFLAGS += -DCLANG\nendif\n";
        let debug = "DEBUG ?= 0\nifeq ($(DEBUG),1)\nCFLAGS += -g -DDEBUG\nendif\n";
        let quiet = "MODE ?= a\nifeq ($(MODE),b)\nQUIET = @\nendif\n";
        let one_value = "ifeq ($(LEVEL),3)\nCFLAGS += -DL3\nendif\n";
        for mk in [cc, debug, quiet, one_value] {
            assert!(selector(t.path(), mk).is_none(), "{mk}");
        }
    }
}
