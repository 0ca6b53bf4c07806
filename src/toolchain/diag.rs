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
    "pqbench lets the compiler read only the instance's source and include folders, its own support files, \
the compiler's installation and the system's toolchain directories (/usr, /lib, …); \
a file outside them (an #include, .incbin or -I of an absolute path) is refused";

/// How a line naming a breached limit begins (`detail` leads with it).
const BREACH: &str = "the toolchain job exceeded its ";

/// The limit a toolchain job hit, said as a line of the build detail
/// ("the toolchain job exceeded its 4096 MiB memory limit"), from how it
/// ended or from what the compiler driver said of its program's death.
/// Only a line that begins with a tool's own words counts: a submission's
/// `#error out of memory` is printed after `file:line: error:` and is not
/// taken for a breach.
pub(crate) fn limit_breach(
    outcome: crate::sandbox::Outcome,
    log: &str,
    l: &crate::records::toolchain::ToolchainLimits,
) -> Option<String> {
    use crate::sandbox::Outcome;
    let said = |words: &[&str]| {
        log.lines()
            .any(|line| words.iter().any(|w| line.trim_start().starts_with(w)))
    };
    let driver = |what: &str| {
        log.lines().any(|line| {
            let line = line.trim_start();
            // `gcc: fatal error: … signal terminated program cc1`
            line.split_once(": ")
                .is_some_and(|(tool, rest)| !tool.contains(['/', '.', ' ']) && rest.contains(what))
        })
    };
    let memory = said(&[
        "cc1: out of memory",
        "cc1plus: out of memory",
        "virtual memory exhausted",
        "LLVM ERROR: out of memory",
        "LLVM ERROR: Cannot allocate memory",
        "terminate called after throwing an instance of 'std::bad_alloc'",
    ]) || driver("Cannot allocate memory");
    let what = if outcome == Outcome::Signaled(libc::SIGXCPU) || driver("CPU time limit exceeded") {
        format!(
            "{} CPU-second limit (toolchain.limits.cpu-seconds)",
            l.cpu_seconds
        )
    } else if outcome == Outcome::Signaled(libc::SIGXFSZ)
        || driver("File size limit exceeded")
        || said(&["as: ", "ld: ", "/usr/bin/ld: "]) && log.contains("File too large")
    {
        format!(
            "{} MiB file-size limit (toolchain.limits.file-mib)",
            l.file_mib
        )
    } else if memory {
        format!(
            "{} MiB memory limit (toolchain.limits.memory-mib)",
            l.memory_mib
        )
    } else {
        return None;
    };
    Some(format!("{BREACH}{what}"))
}

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
    if let Some(breach) = lines.iter().find(|l| l.starts_with(BREACH)) {
        return breach.to_string();
    }
    if let Some(link) = link_problems(&lines) {
        return link;
    }
    if let Some(ns) = namespace_paste(&lines) {
        return ns;
    }
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

/// The first line that is a compiler or linker error. The driver's closing
/// `collect2: error: ld returned 1 exit status` comes last: the linker's
/// own lines above it say what failed.
fn first_error(lines: &[&str]) -> Option<usize> {
    let is_error = |l: &&str| {
        // gcc's `error:`, and the assembler's `Error:` (`.incbin`).
        (l.contains("error:") || l.contains(": Error: "))
            && !l.trim_start().starts_with("In file included")
    };
    lines
        .iter()
        .position(|l| is_error(l) && !l.starts_with("collect2:"))
        .or_else(|| {
            lines
                .iter()
                .position(|l| LINK_PROBLEMS.iter().any(|p| l.contains(p)))
        })
        .or_else(|| lines.iter().position(is_error))
}

/// What GNU ld says before a symbol it could not resolve or found twice.
const LINK_PROBLEMS: [&str; 2] = ["undefined reference to ", "multiple definition of "];

/// Symbols named per problem before the rest are counted.
const LINK_SYMBOLS: usize = 6;

/// A failed link in one line: each problem with the symbols it names
/// (distinct, in order, the first few), e.g. ``undefined reference to
/// `ntt_avx', `invntt_avx' (and 3 more)``; None when the log has no such
/// line (the linker printed pages of them for one missing file).
fn link_problems(lines: &[&str]) -> Option<String> {
    let mut parts = Vec::new();
    for problem in LINK_PROBLEMS {
        let mut symbols: Vec<&str> = Vec::new();
        for l in lines {
            if let Some(sym) = l.split_once(problem).and_then(|(_, rest)| quoted(rest)) {
                if !symbols.contains(&sym) {
                    symbols.push(sym);
                }
            }
        }
        if symbols.is_empty() {
            continue;
        }
        let shown: Vec<String> = symbols
            .iter()
            .take(LINK_SYMBOLS)
            .map(|s| format!("`{s}'"))
            .collect();
        let more = symbols.len().saturating_sub(LINK_SYMBOLS);
        let more = if more > 0 {
            format!(" (and {more} more)")
        } else {
            String::new()
        };
        parts.push(format!("link: {}{}{more}", problem, shown.join(", ")));
    }
    (!parts.is_empty()).then(|| parts.join(" | "))
}

/// The NIST adapter's `NS(name)` pastes the configured namespace onto an
/// API name after expanding the name, so a header that defines the plain
/// `CRYPTO_BYTES` (or maps a plain function name to a namespaced one)
/// yields `<namespace><value>`: an undeclared `TOY_16`, or a paste that
/// is no token at all, in pqbench's own source. Said in the terms of the
/// algorithm file instead.
fn namespace_paste(lines: &[&str]) -> Option<String> {
    let at = first_error(lines)?;
    let end = lines[at + 1..]
        .iter()
        .position(|l| l.contains("error:"))
        .map_or(lines.len(), |n| at + 1 + n);
    let notes = &lines[at + 1..end.min(at + 40)];
    // The adapter's own paste macros: no submission's log names them.
    notes
        .iter()
        .find(|l| l.contains("note: in ") && l.contains("macro") && l.contains("PQB_NSX"))?;
    let name = notes.iter().find_map(|l| {
        let (_, code) = l.split_once(" | ")?;
        let rest = code.split_once("NS(")?.1;
        let name = rest.split_once(')')?.0.trim();
        (!code.contains("#define")).then(|| name.to_string())
    })?;
    let gcc = lines[at]
        .split_once("error: ")
        .map_or(lines[at], |(_, e)| e)
        .trim();
    Some(format!(
        "the NIST adapter pastes `namespace` onto `{name}`, and the result is not a name the \
         header defines (gcc: {gcc}): the header defines `{name}` without that prefix, or not at all. If api.h \
         maps the plain names to namespaced ones with macros, leave `namespace` unset; otherwise \
         set it to the prefix the header's own names carry"
    ))
}

/// The symbol in ld's quotes: `` `name' `` (binutils before 2.41) or
/// `'name'`.
fn quoted(rest: &str) -> Option<&str> {
    let inner = rest.strip_prefix('`').or_else(|| rest.strip_prefix('\''))?;
    inner
        .split_once('\'')
        .map(|(sym, _)| sym)
        .filter(|s| !s.is_empty())
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
            || l.contains(": in function `")
            || l.contains(": in function '")
        {
            from -= 1;
        } else {
            break;
        }
    }
    // A macro's expansion notes come three lines each, from the macro's
    // definition out to the line that used it: keep a chain of four.
    let mut to = at + 1;
    while to < lines.len() && to < at + 14 && (is_snippet(lines[to]) || lines[to].contains("note:"))
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
    fn a_namespace_pasted_onto_a_plain_macro_is_named_in_the_files_terms() {
        // gcc's lines for `namespace = "TOY_"` over a header with
        // `#define CRYPTO_BYTES TOY_N` (TOY_N is 16).
        let log = "compiling s/adapter_nist.c failed (exit 1):\n\
<command-line>: error: \u{2018}TOY_16\u{2019} undeclared (first use in this function)\n\
s/adapter_nist.c:62:23: note: in definition of macro \u{2018}PQB_NSX\u{2019}\n\
   62 | #define PQB_NSX(a, b) a##b\n\
s/adapter_nist.c:64:15: note: in expansion of macro \u{2018}PQB_NSY\u{2019}\n\
   64 | #define NS(x) PQB_NSY(PQB_NS, x)\n\
s/adapter_nist.c:289:31: note: in expansion of macro \u{2018}NS\u{2019}\n\
  289 |         e->pk_bytes = (size_t)NS(CRYPTO_PUBLICKEYBYTES);\n\
      |                               ^~\n";
        let d = detail(log);
        assert!(
            d.starts_with("the NIST adapter pastes `namespace` onto `CRYPTO_PUBLICKEYBYTES`"),
            "{d}"
        );
        assert!(d.contains("\u{2018}TOY_16\u{2019} undeclared"), "{d}");
        assert!(d.contains("leave `namespace` unset"), "{d}");
        // Any other error in a macro expansion keeps gcc's own words.
        let other = "a.c:3:5: error: 'q' undeclared\na.c:1:1: note: in expansion of macro 'X'\n    3 |  X(q);\n";
        assert!(detail(other).starts_with("a.c:3:5: error: 'q' undeclared"));
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
            "link: undefined reference to `f'"
        );
    }

    #[test]
    fn a_failed_link_names_its_symbols_not_collect2() {
        let mut log = String::new();
        for i in 0..40 {
            log.push_str(&format!(
                "/usr/bin/ld: kem.o: in function `enc':\nkem.c:(.text+0x{i:x}): undefined reference to `ntt_avx{}'\n",
                i % 8
            ));
        }
        log.push_str(
            "/usr/bin/ld: b.o: multiple definition of 'randombytes'; a.o: first defined here\n",
        );
        log.push_str("collect2: error: ld returned 1 exit status\n");
        assert_eq!(
            detail(&log),
            "link: undefined reference to `ntt_avx0', `ntt_avx1', `ntt_avx2', `ntt_avx3', `ntt_avx4', `ntt_avx5' (and 2 more) | link: multiple definition of `randombytes'"
        );
        // The excerpt starts at the linker's first complaint, not at the
        // driver's summary in its last line.
        assert!(
            excerpt(&log).starts_with(
                "/usr/bin/ld: kem.o: in function `enc':\nkem.c:(.text+0x0): undefined reference"
            ),
            "{}",
            excerpt(&log)
        );
        assert_eq!(quoted("`a' x"), Some("a"));
        assert_eq!(quoted("'b'"), Some("b"));
        assert_eq!(quoted("c"), None);
    }
}
