//! Which command builds a tree's KAT generator: the one its build files
//! name (a make target `PQCgenKAT_*`, a CMake project that builds one, a
//! meson project), or the user's `--build`, whose brace lists
//! (`make SET={a,b,c} PQCgenKAT_sign`) expand to one build per value.

use std::path::Path;

use anyhow::{bail, Result};

/// The builds a tree's own build files name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Discovered {
    /// One command per value of the set selector, or the one command.
    pub commands: Vec<String>,
    /// The command without the selector, when one was found: the build to
    /// fall back on when its values turn out to choose no set.
    pub plain: Option<String>,
}

/// The commands that build `tree`'s KAT generators, when its own build
/// files say how; `None` when they do not (the user gives `--build`).
pub(crate) fn discover(tree: &Path) -> Option<Discovered> {
    let read = |name: &str| std::fs::read_to_string(tree.join(name)).ok();
    let makefile = ["GNUmakefile", "makefile", "Makefile"]
        .iter()
        .find_map(|n| read(n));
    if let Some(text) = makefile {
        let targets = kat_targets(&text);
        let make = if !targets.is_empty() {
            format!("make {}", targets.join(" "))
        } else if mentions_generator(&text) || mentions_checker(&text) {
            // A tree with KAT checkers and no generator (FrodoKEM): its
            // default target builds them.
            "make".to_string()
        } else {
            String::new()
        };
        if !make.is_empty() {
            let with = |name: &str, v: &str| make.replacen("make", &format!("make {name}={v}"), 1);
            return Some(selected(
                &make,
                super::selector::selector(tree, &text),
                with,
            ));
        }
    }
    if let Some(text) = read("CMakeLists.txt").filter(|_| cmake_mentions_generator(tree, 0)) {
        let cmake = |define: &str| {
            format!("cmake -S . -B .pqb-build{define} -DCMAKE_BUILD_TYPE=Release && cmake --build .pqb-build")
        };
        let with = |name: &str, v: &str| cmake(&format!(" -D{name}={v}"));
        return Some(selected(
            &cmake(""),
            super::selector::cmake_selector(&text),
            with,
        ));
    }
    if read("meson.build").is_some_and(|t| mentions_generator(&t)) {
        let meson = format!(
            "meson setup --cross-file \"${}\" .pqb-build && ninja -C .pqb-build",
            super::build::MESON_CROSS_VAR
        );
        return Some(selected(&meson, None, |_, _| String::new()));
    }
    None
}

/// `plain`, or one command per value of the selector (made by `with`).
fn selected(
    plain: &str,
    selector: Option<(String, Vec<String>)>,
    with: impl Fn(&str, &str) -> String,
) -> Discovered {
    match selector {
        Some((name, values)) => Discovered {
            commands: values.iter().map(|v| with(&name, v)).collect(),
            plain: Some(plain.to_string()),
        },
        None => Discovered {
            commands: vec![plain.to_string()],
            plain: None,
        },
    }
}

/// Whether a `CMakeLists.txt` here or below (four levels: `apps/`,
/// `src/<scheme>/`) builds the NIST generator.
fn cmake_mentions_generator(dir: &Path, depth: usize) -> bool {
    let here =
        std::fs::read_to_string(dir.join("CMakeLists.txt")).is_ok_and(|t| mentions_generator(&t));
    if here || depth >= 4 {
        return here;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return false;
    };
    rd.flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .any(|e| cmake_mentions_generator(&e.path(), depth + 1))
}

fn mentions_generator(text: &str) -> bool {
    let t = text.to_ascii_lowercase();
    t.contains("pqcgenkat") || t.contains("nistkat")
}

fn mentions_checker(text: &str) -> bool {
    text.to_ascii_lowercase().contains("pqctestkat")
}

/// Explicit targets of a Makefile that build the NIST generator: those
/// named for it (`PQCgenKAT_sign:`, `kat_gen:`), else those whose
/// prerequisites or recipe name it; never pattern rules.
fn kat_targets(text: &str) -> Vec<String> {
    let mut named: Vec<String> = Vec::new();
    let mut building: Vec<String> = Vec::new();
    let mut current: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.starts_with('\t') {
            if mentions_generator(line) {
                building.extend(current.iter().cloned());
            }
            continue;
        }
        current.clear();
        if line.starts_with([' ', '#']) {
            continue;
        }
        let Some((head, rest)) = line.split_once(':') else {
            continue;
        };
        if rest.starts_with('=') || head.contains('=') {
            continue;
        }
        for t in head.split_whitespace() {
            if t.contains(['%', '$', '/', '.']) {
                continue;
            }
            current.push(t.to_string());
            let lower = t.to_ascii_lowercase();
            if lower.starts_with("pqcgenkat") || lower == "kat_gen" || lower == "katgen" {
                named.push(t.to_string());
            } else if mentions_generator(rest) {
                building.push(t.to_string());
            }
        }
    }
    let mut out = if named.is_empty() { building } else { named };
    out.retain(|t| !matches!(t.as_str(), "all" | "clean" | "install"));
    out.dedup();
    out
}

/// One command per value of its brace lists (`a{1,2}b{x,y}` → four), in
/// order; a command without one is itself.
pub(crate) fn expand(command: &str) -> Result<Vec<String>> {
    let Some(open) = command.find('{') else {
        if command.contains('}') {
            bail!("`{command}`: a `}}` without its `{{`");
        }
        return Ok(vec![command.to_string()]);
    };
    let Some(len) = command[open..].find('}') else {
        bail!("`{command}`: a `{{` without its `}}`");
    };
    let inner = &command[open + 1..open + len];
    if inner.contains('{') {
        bail!("`{command}`: nested brace lists are not supported");
    }
    let rest = &command[open + len + 1..];
    let mut out = Vec::new();
    for value in inner.split(',') {
        for tail in expand(rest)? {
            out.push(format!("{}{value}{tail}", &command[..open]));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brace_lists_make_one_command_per_value() {
        assert_eq!(
            expand("make SET={a,b} K={1,2} gen").unwrap(),
            [
                "make SET=a K=1 gen",
                "make SET=a K=2 gen",
                "make SET=b K=1 gen",
                "make SET=b K=2 gen"
            ]
        );
        assert_eq!(expand("make").unwrap(), ["make"]);
        assert!(expand("make {a,b").is_err());
        assert!(expand("make a}").is_err());
    }

    #[test]
    fn explicit_generator_targets_are_found_and_pattern_rules_are_not() {
        let mk = "CC ?= cc\nall: PQCgenKAT_sign\nPQCgenKAT_sign: a.c\n\t$(CC) -o $@ a.c\nnistkat/PQCgenKAT_sign_mode%: x\n";
        assert_eq!(kat_targets(mk), ["PQCgenKAT_sign"]);
        assert!(kat_targets("X := PQCgenKAT_kem\n").is_empty());
        let mk = "all: sign\nsign: $(OBJ)\n\t$(CC) -o sign x.c\nkats: $(OBJ)\n\t$(CC) -o $@ PQCgenKAT_sign.c\n";
        assert_eq!(kat_targets(mk), ["kats"]);
    }
}
