//! The compiler flags of an implementation's own build, read statically
//! from its Makefile (`CFLAGS`) or CMake file (`CMAKE_C_FLAGS`,
//! `add_compile_options`, `target_compile_options`) into the draft's
//! `submitter-cflags`, for the campaign's `submitter` flag profile. Only
//! code-generation flags are kept: warnings, include paths and defines are
//! what the TOML states itself. A flag pqbench refuses is named in a TODO
//! line instead; so is a value no static reading can settle.

use std::collections::BTreeMap;
use std::path::Path;

use crate::fsutil::foreign;

/// The flags drafted, where they came from, and what needs a look.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct SubmitterFlags {
    pub cflags: Vec<String>,
    /// A comment: the file and line, and what was left out.
    pub note: String,
    pub todos: Vec<String>,
}

/// A build file larger than this is not a hand-written Makefile.
const MAX_BYTES: u64 = 1 << 20;

/// The flags of the build file in `dir`, if it has one that sets any;
/// `shown` is the folder as the note names it (empty: the
/// implementation's root).
pub(super) fn read(dir: &Path, shown: &str) -> Option<SubmitterFlags> {
    let named = |file: &str| {
        if shown.is_empty() {
            file.to_string()
        } else {
            format!("{shown}/{file}")
        }
    };
    for name in ["GNUmakefile", "Makefile", "makefile"] {
        if let Some(text) = text_of(&dir.join(name)) {
            if let Some(found) = from_makefile(&named(name), &text) {
                return Some(found);
            }
        }
    }
    let text = text_of(&dir.join("CMakeLists.txt"))?;
    from_cmake(&named("CMakeLists.txt"), &text)
}

/// A regular file's text, read without following a link.
fn text_of(path: &Path) -> Option<String> {
    let bytes = foreign::read_regular(path, MAX_BYTES).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// `CFLAGS` as make would expand it, from the file's assignments.
pub(super) fn from_makefile(file: &str, text: &str) -> Option<SubmitterFlags> {
    let mut vars: BTreeMap<String, String> = BTreeMap::new();
    let mut lines = Vec::new();
    let mut todos = Vec::new();
    let mut depth = 0usize;
    for (line_no, line) in logical_lines(text) {
        let line = strip_comment(&line);
        let word = line.split_whitespace().next().unwrap_or("");
        match word {
            "ifeq" | "ifneq" | "ifdef" | "ifndef" => depth += 1,
            "endif" => depth = depth.saturating_sub(1),
            _ => {}
        }
        let Some((name, op, value)) = assignment(&line) else {
            continue;
        };
        if name == "CFLAGS" {
            lines.push(line_no);
            if depth > 0 {
                todos.push(format!(
                    "submitter-cflags: {file} line {line_no} sets CFLAGS under a condition; check the flags drafted"
                ));
            }
        }
        let old = vars.get(&name).cloned();
        let new = match (op, old) {
            ("+=", Some(old)) => format!("{old} {value}"),
            ("?=", Some(old)) => old,
            _ => value.to_string(),
        };
        vars.insert(name, new);
    }
    let raw = vars.get("CFLAGS")?;
    let (expanded, unreadable) = expand(raw, &vars, 0);
    for u in unreadable {
        todos.push(format!(
            "submitter-cflags: {file}'s CFLAGS uses `{u}`, which a static reading cannot expand"
        ));
    }
    let at = lines
        .iter()
        .map(|l| l.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let words: Vec<String> = expanded.split_whitespace().map(String::from).collect();
    Some(classify(
        &format!("{file} line {at} (CFLAGS)"),
        &words,
        todos,
    ))
}

/// The flags of `CMAKE_C_FLAGS`, `add_compile_options` and
/// `target_compile_options`.
pub(super) fn from_cmake(file: &str, text: &str) -> Option<SubmitterFlags> {
    let mut words = Vec::new();
    let mut lines = Vec::new();
    let mut todos = Vec::new();
    let commands = cmake_commands(text);
    // Options of several targets (one file for a scheme's every
    // implementation, as liboqs writes it) belong to none in particular.
    let targets: std::collections::BTreeSet<String> = commands
        .iter()
        .filter(|(_, a)| {
            a.first()
                .is_some_and(|c| c.eq_ignore_ascii_case("target_compile_options"))
        })
        .filter_map(|(_, a)| a.get(1).cloned())
        .collect();
    if targets.len() > 1 {
        let names: Vec<&str> = targets.iter().map(String::as_str).collect();
        todos.push(format!(
            "submitter-cflags: {file} sets compile options for several targets ({}): add those of the target this implementation builds",
            names.join(", ")
        ));
    }
    for (line_no, args) in commands {
        let (command, rest) = args.split_first()?;
        let flags: Vec<&String> = match command.to_ascii_lowercase().as_str() {
            "set" if rest.first().is_some_and(|v| v == "CMAKE_C_FLAGS") => {
                rest[1..].iter().collect()
            }
            "add_compile_options" => rest.iter().collect(),
            // The target, then flags after any scope keyword.
            "target_compile_options" if targets.len() == 1 => rest.iter().skip(1).collect(),
            _ => continue,
        };
        lines.push(line_no.to_string());
        for value in flags {
            for w in value.split_whitespace() {
                if matches!(w, "PRIVATE" | "PUBLIC" | "INTERFACE" | "BEFORE") {
                    continue;
                }
                if w.contains("${") || w.contains("$<") {
                    if !w.starts_with("${CMAKE_C_FLAGS") {
                        todos.push(format!(
                            "submitter-cflags: {file} line {line_no} uses `{w}`, which a static reading cannot expand"
                        ));
                    }
                    continue;
                }
                words.push(w.to_string());
            }
        }
    }
    if lines.is_empty() && todos.is_empty() {
        return None;
    }
    Some(classify(
        &format!("{file} line {}", lines.join(", ")),
        &words,
        todos,
    ))
}

/// Keeps the code-generation flags of `words`; a refused one becomes a
/// TODO line, the rest are named in the note as left out.
fn classify(source: &str, words: &[String], mut todos: Vec<String>) -> SubmitterFlags {
    let mut kept = Vec::new();
    let mut left_out = Vec::new();
    let mut skip_next = false;
    for w in words {
        if std::mem::take(&mut skip_next) {
            left_out.push(w.clone());
            continue;
        }
        if let Some(why) = crate::plan::flags::refused(w) {
            todos.push(format!(
                "submitter-cflags: {source} holds `{w}`, which pqbench refuses (it {why}); it is left out"
            ));
            // `-o file`, `-MF file`: the file is not a flag.
            skip_next = matches!(
                w.as_str(),
                "-o" | "-MF" | "-MT" | "-MQ" | "-wrapper" | "-specs"
            );
        } else if codegen(w) {
            if !kept.contains(w) {
                kept.push(w.clone());
            }
        } else {
            skip_next = matches!(w.as_str(), "-I" | "-D" | "-include" | "-isystem");
            left_out.push(w.clone());
        }
    }
    let mut note = format!("submitter-cflags: the code-generation flags of {source}");
    if !left_out.is_empty() {
        note.push_str(&format!(
            "; left out (warnings, include paths, defines and the like, which this TOML states in its own keys): {}",
            left_out.join(" ")
        ));
    }
    SubmitterFlags {
        cflags: kept,
        note,
        todos,
    }
}

/// Flags that change the code the compiler makes: optimisation, target,
/// language standard and code-generation options.
fn codegen(w: &str) -> bool {
    let prefixed = ["-O", "-f", "-m", "-std=", "--std="]
        .iter()
        .any(|p| w.starts_with(p));
    prefixed || w == "-ansi"
}

/// Lines with `\`-newline continuations joined, each with the number of
/// its first physical line.
pub(crate) fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let (n, mut acc) = current.take().unwrap_or((i + 1, String::new()));
        if let Some(stripped) = line.strip_suffix('\\') {
            acc.push_str(stripped);
            acc.push(' ');
            current = Some((n, acc));
        } else {
            acc.push_str(line);
            out.push((n, acc));
        }
    }
    out.extend(current);
    out
}

/// The line up to an unescaped `#`.
pub(crate) fn strip_comment(line: &str) -> String {
    let mut out = String::new();
    let mut escaped = false;
    for c in line.chars() {
        if c == '#' && !escaped {
            break;
        }
        escaped = c == '\\' && !escaped;
        out.push(c);
    }
    out
}

/// `NAME op value` of a variable assignment (with `override` or `export`
/// before it); recipe lines and rules are not assignments.
pub(crate) fn assignment(line: &str) -> Option<(String, &'static str, String)> {
    if line.starts_with('\t') {
        return None;
    }
    let mut s = line.trim_start();
    for prefix in ["override ", "export "] {
        s = s.strip_prefix(prefix).unwrap_or(s).trim_start();
    }
    let end = s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
    let (name, rest) = s.split_at(end);
    let rest = rest.trim_start();
    let op = ["::=", ":=", "+=", "?=", "!=", "="]
        .into_iter()
        .find(|op| rest.starts_with(op))?;
    if name.is_empty() || op == "!=" {
        return None;
    }
    Some((name.to_string(), op, rest[op.len()..].trim().to_string()))
}

/// `value` with `$(NAME)` and `${NAME}` replaced from `vars` (an unset
/// one is empty, as in make), and the references no static reading can
/// expand (`$(shell …)` and other functions).
fn expand(value: &str, vars: &BTreeMap<String, String>, depth: usize) -> (String, Vec<String>) {
    let mut out = String::new();
    let mut unreadable = Vec::new();
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let close = match after.chars().next() {
            Some('(') => ')',
            Some('{') => '}',
            _ => {
                // `$@`, `$$` and the like: not a flag.
                rest = after.get(1..).unwrap_or("");
                continue;
            }
        };
        let Some(end) = after.find(close) else {
            unreadable.push(after.to_string());
            rest = "";
            break;
        };
        let name = &after[1..end];
        rest = &after[end + 1..];
        if name.contains(|c: char| c.is_whitespace() || c == ':' || c == '$') || depth > 8 {
            unreadable.push(format!("$({name})"));
        } else if let Some(v) = vars.get(name) {
            let (inner, more) = expand(v, vars, depth + 1);
            out.push_str(&inner);
            unreadable.extend(more);
        }
    }
    out.push_str(rest);
    (out, unreadable)
}

/// Each CMake command with its arguments (quoted ones unquoted), and the
/// line it starts on.
pub(crate) fn cmake_commands(text: &str) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    let clean: String = text
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut rest = clean.as_str();
    let mut line = 1;
    while let Some(open) = rest.find('(') {
        let head = &rest[..open];
        let name = head
            .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .next()
            .unwrap_or("");
        let Some(close) = rest[open..].find(')') else {
            break;
        };
        let start_line = line + head.matches('\n').count();
        let args = &rest[open + 1..open + close];
        out.push((
            start_line,
            std::iter::once(name.to_string())
                .chain(cmake_args(args))
                .collect(),
        ));
        line = start_line + args.matches('\n').count();
        rest = &rest[open + close + 1..];
    }
    out
}

/// CMake arguments: quoted strings whole, others split on whitespace.
fn cmake_args(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = args.trim_start();
    while !rest.is_empty() {
        if let Some(q) = rest.strip_prefix('"') {
            let end = q.find('"').unwrap_or(q.len());
            out.push(q[..end].to_string());
            rest = q.get(end + 1..).unwrap_or("").trim_start();
        } else {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            out.push(rest[..end].to_string());
            rest = rest[end..].trim_start();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pqclean_style_cflags_keep_the_code_generation_flags() {
        let mk = "LIB=libx.a\n\nCFLAGS=-mavx2 -mbmi2 -O3 -Wall -Wextra -Werror \\\n  -std=c99 -I../../../common $(EXTRAFLAGS)\n\nall: $(LIB)\n\t$(CC) $(CFLAGS) -c -o $@ $<\n";
        let f = from_makefile("Makefile", mk).unwrap();
        assert_eq!(f.cflags, ["-mavx2", "-mbmi2", "-O3", "-std=c99"]);
        assert!(f.note.contains("Makefile line 3 (CFLAGS)"), "{}", f.note);
        assert!(f.note.contains("-Werror -I../../../common"), "{}", f.note);
        assert!(f.todos.is_empty(), "{:?}", f.todos);
    }

    #[test]
    fn variables_appends_and_refused_flags() {
        let mk = "OPT ?= -O3 -fomit-frame-pointer\nCFLAGS := $(OPT) -march=native\nCFLAGS += -save-temps -DNDEBUG # comment\n";
        let f = from_makefile("Makefile", mk).unwrap();
        assert_eq!(f.cflags, ["-O3", "-fomit-frame-pointer", "-march=native"]);
        assert_eq!(f.todos.len(), 1, "{:?}", f.todos);
        assert!(f.todos[0].contains("`-save-temps`"), "{:?}", f.todos);
        assert!(f.note.contains("line 2, 3"), "{}", f.note);
    }

    #[test]
    fn flags_that_run_a_submissions_code_in_the_compiler_are_never_drafted() {
        let mk = "CC = clang\nCFLAGS = -O2 -fpass-plugin=./p.so\nCFLAGS += --gcc-toolchain=./tc -fno-integrated-as -Xclang -load\n";
        let f = from_makefile("Makefile", mk).unwrap();
        assert_eq!(f.cflags, ["-O2"]);
        for flag in [
            "-fpass-plugin=./p.so",
            "--gcc-toolchain=./tc",
            "-fno-integrated-as",
            "-Xclang",
        ] {
            assert!(
                f.todos.iter().any(|t| t.contains(&format!("`{flag}`"))),
                "{flag} not a TODO: {:?}",
                f.todos
            );
        }
    }

    #[test]
    fn what_a_static_reading_cannot_settle_is_a_todo() {
        let mk =
            "ifeq ($(CC),clang)\nCFLAGS = -O2\nendif\nCFLAGS += $(shell pkg-config --cflags x)\n";
        let f = from_makefile("Makefile", mk).unwrap();
        assert_eq!(f.cflags, ["-O2"]);
        assert_eq!(f.todos.len(), 2, "{:?}", f.todos);
        assert!(from_makefile("Makefile", "all:\n\tcc -O3 x.c\n").is_none());
    }

    #[test]
    fn cmake_compile_options() {
        let cm = "project(x C)\nset(CMAKE_C_FLAGS \"${CMAKE_C_FLAGS} -O3 -Wall\")\nadd_library(x a.c)\ntarget_compile_options(x PRIVATE\n  -mavx2 -fwrapv -o /tmp/y)\n";
        let f = from_cmake("CMakeLists.txt", cm).unwrap();
        assert_eq!(f.cflags, ["-O3", "-mavx2", "-fwrapv"]);
        assert!(f.note.contains("CMakeLists.txt line 2, 4"), "{}", f.note);
        assert_eq!(f.todos.len(), 1, "{:?}", f.todos);
    }

    #[test]
    fn options_of_several_targets_belong_to_none() {
        let cm = "target_compile_options(x_ref PUBLIC -DK=2)\ntarget_compile_options(x_avx2 PRIVATE -mavx2)\n";
        let f = from_cmake("CMakeLists.txt", cm).unwrap();
        assert!(f.cflags.is_empty(), "{:?}", f.cflags);
        assert!(
            f.todos[0].contains("several targets (x_avx2, x_ref)"),
            "{:?}",
            f.todos
        );
    }
}
