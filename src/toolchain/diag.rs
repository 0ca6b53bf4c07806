//! Compiler diagnostics as people read them: the first `error:` line with
//! its `file:line:column` and the lines that explain it (the source line,
//! the caret, the `In file included from` chain above it), not the notes
//! a long log ends with.

/// Lines kept whole when a log is short enough.
const WHOLE: usize = 40;
/// Lines of the log's end kept after the first error's context.
const TAIL: usize = 15;

/// A log short enough to keep whole, else the context of its first error
/// followed by its last lines.
pub(crate) fn excerpt(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    if lines.len() <= WHOLE {
        return lines.join("\n");
    }
    let Some(at) = first_error(&lines) else {
        return lines[lines.len() - WHOLE..].join("\n");
    };
    let (from, to) = context(&lines, at);
    let tail_from = (lines.len() - TAIL).max(to);
    let mut out: Vec<&str> = lines[from..to].to_vec();
    if tail_from > to {
        out.push("…");
    }
    out.extend(&lines[tail_from..]);
    out.join("\n")
}

/// What pqbench lets a compiler read, said where a read failed.
const CONFINED: &str =
    "pqbench lets the compiler read only the instance's source and include folders, its own support files and cache, \
the compiler's installation and the system's toolchain directories (/usr, /lib, …); \
a file outside them (an #include, .incbin or -I of an absolute path) is refused";

/// Whether the compiler or assembler failed to read a file: refused by
/// the confinement (`Permission denied`), or reported missing by the
/// assembler (`.incbin` of a file it may not see).
fn failed_read(log: &str) -> bool {
    log.contains("Permission denied") || log.contains("Error: file not found")
}

/// A note for a log in which the compiler failed to read a file: its reads
/// are confined, and the cause may be a path outside them.
pub(crate) fn denied_read(log: &str) -> String {
    if failed_read(log) {
        format!("\nnote: {CONFINED}")
    } else {
        String::new()
    }
}

/// One line for records and pages: the first error line and the source
/// line and caret gcc prints under it, e.g.
/// `x/poly.c:12:5: error: 'q' undeclared | 12 |     q = 1; | ^`.
pub(crate) fn detail(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    let Some(at) = first_error(&lines) else {
        return lines
            .iter()
            .find(|l| l.contains("error"))
            .or_else(|| lines.iter().find(|l| !l.trim().is_empty()))
            .map(|l| l.trim().to_string())
            .unwrap_or_default();
    };
    let mut parts = vec![lines[at].trim().to_string()];
    parts.extend(
        lines[at + 1..]
            .iter()
            .take_while(|l| is_snippet(l))
            .take(2)
            .map(|l| l.trim().to_string()),
    );
    if failed_read(log) {
        parts.push(format!("note: {CONFINED}"));
    }
    parts.join(" | ")
}

/// The first line that is a compiler or linker error.
fn first_error(lines: &[&str]) -> Option<usize> {
    lines
        .iter()
        .position(|l| {
            // gcc's `error:`, and the assembler's `Error:` (`.incbin`).
            (l.contains("error:") || l.contains(": Error: "))
                && !l.trim_start().starts_with("In file included")
        })
        .or_else(|| lines.iter().position(|l| l.contains("undefined reference")))
}

/// The error's line range: the include chain above it, the snippet below.
fn context(lines: &[&str], at: usize) -> (usize, usize) {
    let mut from = at;
    while from > 0 && from + 4 > at {
        let l = lines[from - 1].trim_start();
        if l.starts_with("In file included")
            || l.starts_with("from ")
            || l.ends_with("In function")
            || l.contains(": In function")
        {
            from -= 1;
        } else {
            break;
        }
    }
    let mut to = at + 1;
    while to < lines.len() && to < at + 6 && (is_snippet(lines[to]) || lines[to].contains("note:"))
    {
        to += 1;
    }
    (from, to)
}

/// gcc's source excerpt lines: `   12 |     q = 1;` and `      |     ^`.
fn is_snippet(l: &str) -> bool {
    let t = l.trim_start();
    t.starts_with('|')
        || t.split_once(" | ")
            .is_some_and(|(n, _)| n.trim().parse::<u64>().is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_read_is_the_detail_with_the_reason() {
        let log = "/tmp/ccx.s: Assembler messages:\n/tmp/ccx.s:9: Error: file not found: /home/e/secret\n";
        let d = detail(log);
        assert!(
            d.starts_with("/tmp/ccx.s:9: Error: file not found: /home/e/secret | note: pqbench lets the compiler read only the instance"),
            "{d}"
        );
        assert!(denied_read(log).contains("is refused"));
        assert_eq!(denied_read("a.c:1:1: error: x"), "");
        assert!(!detail("a.c:1:1: error: x").contains("note:"));
    }

    #[test]
    fn the_first_error_survives_a_long_tail_of_notes() {
        let mut log = String::from(
            "In file included from a/kem.c:3:\na/inc/poly.macros:2:2: error: #error broken\n    2 | #error broken\n      |  ^~~~~\n",
        );
        for i in 0..60 {
            log.push_str(&format!("a/kem.c:{i}:1: note: in expansion of macro 'X'\n"));
        }
        let e = excerpt(&log);
        assert!(
            e.starts_with(
                "In file included from a/kem.c:3:\na/inc/poly.macros:2:2: error: #error broken"
            ),
            "{e}"
        );
        assert!(
            e.contains("…") && e.ends_with("note: in expansion of macro 'X'"),
            "{e}"
        );
        assert_eq!(
            detail(&log),
            "a/inc/poly.macros:2:2: error: #error broken | 2 | #error broken | |  ^~~~~"
        );
        assert_eq!(excerpt("short\nlog"), "short\nlog");
        assert_eq!(
            detail("ld: x.o: undefined reference to `f'"),
            "ld: x.o: undefined reference to `f'"
        );
    }
}
