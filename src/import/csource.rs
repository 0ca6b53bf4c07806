//! A light C scanner: which functions a file defines, declares and calls,
//! its macros and preprocessor directives, and its comments. It does not
//! preprocess, so every answer is a heuristic over the text; that is all an
//! importer drafting a TOML, or a checker looking for API symbols, needs.

use std::collections::BTreeSet;
use std::path::Path;

pub(crate) use super::macros::expansions;

/// One scanned C source or header.
#[derive(Debug, Clone, Default)]
pub(crate) struct CFile {
    /// Path relative to the scanned folder, `/`-separated.
    pub rel: String,
    /// The text with comments blanked (same length and line breaks), so
    /// offsets and line numbers still match the file.
    pub code: String,
    /// Comment text, one entry per comment line: (1-based line, text).
    pub comments: Vec<(usize, String)>,
    pub defs: Vec<Def>,
    pub decls: Vec<Decl>,
    /// Functions called from inside function bodies.
    pub calls: BTreeSet<String>,
    pub macros: Vec<Macro>,
    pub directives: Vec<Directive>,
}

/// A function definition at file scope: `name(...) {`, or
/// `via(name)(...) {` when a namespacing macro wraps the name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Def {
    pub name: String,
    pub via: Option<String>,
    pub line: usize,
}

/// A prototype at file scope with its parameter text (tokens joined by
/// single spaces), used to tell `size_t` from `unsigned long long` lengths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Decl {
    pub name: String,
    pub via: Option<String>,
    pub params: String,
}

pub(crate) use super::macros::Macro;

/// `#<kind> <rest>` with continuation lines joined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Directive {
    pub line: usize,
    pub kind: String,
    pub rest: String,
}

const KEYWORDS: &[&str] = &[
    "if",
    "while",
    "for",
    "switch",
    "return",
    "sizeof",
    "do",
    "else",
    "case",
    "defined",
    "_Alignof",
    "alignof",
    "__attribute__",
    "typeof",
    "__typeof__",
    "_Static_assert",
    "static_assert",
    "asm",
    "__asm__",
    "_Generic",
];

impl CFile {
    pub(crate) fn read(path: &Path, rel: &str) -> std::io::Result<CFile> {
        let bytes = std::fs::read(path)?;
        Ok(CFile::parse(rel, &String::from_utf8_lossy(&bytes)))
    }

    pub(crate) fn parse(rel: &str, text: &str) -> CFile {
        let (code, comments) = strip_comments(text);
        let mut f = CFile {
            rel: rel.to_string(),
            comments,
            ..CFile::default()
        };
        let body = f.scan_directives(&code);
        f.code = code;
        f.scan_tokens(&body);
        f
    }

    pub(crate) fn is_header(&self) -> bool {
        self.rel.ends_with(".h")
    }

    /// The file name without directories.
    pub(crate) fn name(&self) -> &str {
        self.rel.rsplit('/').next().unwrap_or(&self.rel)
    }

    pub(crate) fn defines_fn(&self, name: &str) -> bool {
        self.defs.iter().any(|d| d.name == name)
    }

    /// Records directives and macros; returns the code with directive
    /// lines blanked, for the tokenizer.
    fn scan_directives(&mut self, code: &str) -> String {
        let mut body = String::with_capacity(code.len());
        let lines: Vec<&str> = code.split_inclusive('\n').collect();
        let mut i = 0;
        while i < lines.len() {
            let start = i;
            if !lines[i].trim_start().starts_with('#') {
                body.push_str(lines[i]);
                i += 1;
                continue;
            }
            let mut joined = String::new();
            while i < lines.len() {
                let l = lines[i].trim_end_matches(['\n', '\r']);
                blank_into(&mut body, lines[i]);
                i += 1;
                match l.strip_suffix('\\') {
                    Some(head) => joined.push_str(head),
                    None => {
                        joined.push_str(l);
                        break;
                    }
                }
                joined.push(' ');
            }
            let d = joined.trim_start().trim_start_matches('#').trim_start();
            let kind: String = d
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let rest = d[kind.len()..].trim().to_string();
            if kind == "define" {
                if let Some(m) = parse_macro(&rest) {
                    self.macros.push(m);
                }
            }
            self.directives.push(Directive {
                line: start + 1,
                kind,
                rest,
            });
        }
        body
    }

    fn scan_tokens(&mut self, body: &str) {
        let toks = tokenize(body);
        let mut depth = 0usize;
        for i in 0..toks.len() {
            match toks[i].text.as_str() {
                "{" => depth += 1,
                "}" => depth = depth.saturating_sub(1),
                _ => {}
            }
            let t = &toks[i];
            if !t.ident || KEYWORDS.contains(&t.text.as_str()) {
                continue;
            }
            if toks.get(i + 1).map(|n| n.text.as_str()) != Some("(") {
                continue;
            }
            if depth > 0 {
                self.calls.insert(t.text.clone());
                continue;
            }
            // After a parameter list, a name with arguments is one of its
            // annotations (`NONNULL(1, 2)`), not a function.
            if i > 0 && toks[i - 1].text == ")" {
                continue;
            }
            let Some(close) = matching(&toks, i + 1) else {
                continue;
            };
            let after = toks
                .get(past_annotations(&toks, close + 1))
                .map(|n| n.text.as_str());
            let single_inner = close == i + 3 && toks[i + 2].ident;
            match after {
                Some("{") => self.defs.push(Def {
                    name: t.text.clone(),
                    via: None,
                    line: t.line,
                }),
                Some("(") if single_inner => {
                    let Some(close2) = matching(&toks, close + 1) else {
                        continue;
                    };
                    let inner = toks[i + 2].text.clone();
                    let via = Some(t.text.clone());
                    match toks.get(close2 + 1).map(|n| n.text.as_str()) {
                        Some("{") => self.defs.push(Def {
                            name: inner,
                            via,
                            line: t.line,
                        }),
                        Some(";") => self.decls.push(Decl {
                            name: inner,
                            via,
                            params: join(&toks[close + 2..close2]),
                        }),
                        _ => {}
                    }
                }
                Some(";") | Some(",") => self.decls.push(Decl {
                    name: t.text.clone(),
                    via: None,
                    params: join(&toks[i + 2..close]),
                }),
                _ => {}
            }
        }
    }
}

/// Writes spaces for every byte of `line` except its line break.
fn blank_into(out: &mut String, line: &str) {
    for c in line.chars() {
        out.push(if c == '\n' { '\n' } else { ' ' });
    }
}

fn parse_macro(rest: &str) -> Option<Macro> {
    let name: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    if name.is_empty() {
        return None;
    }
    let after = &rest[name.len()..];
    if let Some(inner) = after.strip_prefix('(') {
        let close = inner.find(')')?;
        let params = inner[..close]
            .split(',')
            .map(|p| p.trim().to_string())
            .collect();
        return Some(Macro {
            name,
            params: Some(params),
            body: inner[close + 1..].trim().to_string(),
        });
    }
    Some(Macro {
        name,
        params: None,
        body: after.trim().to_string(),
    })
}

/// Blanks comments (keeping line breaks) and collects their lines. String
/// and character literals are skipped so `"/*"` does not open a comment.
fn strip_comments(text: &str) -> (String, Vec<(usize, String)>) {
    let chars: Vec<char> = text.chars().collect();
    let mut code = String::with_capacity(text.len());
    let mut comments = Vec::new();
    let mut line = 1;
    let mut cur = String::new();
    let mut i = 0;
    let flush = |cur: &mut String, line: usize, out: &mut Vec<(usize, String)>| {
        let t = cur
            .trim()
            .trim_start_matches(['*', '/', '!'])
            .trim()
            .to_string();
        if !t.is_empty() {
            out.push((line, t));
        }
        cur.clear();
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                cur.push(chars[i]);
                code.push(' ');
                i += 1;
            }
            flush(&mut cur, line, &mut comments);
        } else if c == '/' && next == Some('*') {
            code.push_str("  ");
            i += 2;
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                if chars[i] == '\n' {
                    flush(&mut cur, line, &mut comments);
                    line += 1;
                    code.push('\n');
                } else {
                    cur.push(chars[i]);
                    code.push(' ');
                }
                i += 1;
            }
            flush(&mut cur, line, &mut comments);
            code.push_str("  ");
            i += 2;
        } else if c == '"' || c == '\'' {
            code.push(c);
            i += 1;
            while i < chars.len() && chars[i] != c && chars[i] != '\n' {
                if chars[i] == '\\' && i + 1 < chars.len() {
                    code.push(chars[i]);
                    i += 1;
                }
                code.push(chars[i]);
                i += 1;
            }
            if i < chars.len() && chars[i] == c {
                code.push(c);
                i += 1;
            }
        } else {
            if c == '\n' {
                line += 1;
            }
            code.push(c);
            i += 1;
        }
    }
    (code, comments)
}

#[derive(Debug)]
struct Tok {
    text: String,
    ident: bool,
    line: usize,
}

fn tokenize(s: &str) -> Vec<Tok> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            let ident = !c.is_ascii_digit();
            out.push(Tok { text, ident, line });
        } else if c == '"' || c == '\'' {
            i += 1;
            while i < chars.len() && chars[i] != c && chars[i] != '\n' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(Tok {
                text: "\"\"".into(),
                ident: false,
                line,
            });
        } else {
            out.push(Tok {
                text: c.to_string(),
                ident: false,
                line,
            });
            i += 1;
        }
    }
    out
}

/// Index of the `)` closing the `(` at `open`.
/// The first token at or after `at` that is not an annotation after a
/// parameter list: an attribute (`__attribute__((nonnull))`) or a macro
/// (`NONNULL(1, 2)`, `PQC_NODISCARD`), which may stand between a
/// prototype's `)` and its `;` or `{`.
fn past_annotations(toks: &[Tok], mut at: usize) -> usize {
    while let Some(t) = toks.get(at) {
        let attribute = matches!(
            t.text.as_str(),
            "__attribute__" | "__declspec" | "__asm__" | "asm"
        );
        if !t.ident || (KEYWORDS.contains(&t.text.as_str()) && !attribute) {
            break;
        }
        match toks.get(at + 1).map(|n| n.text.as_str()) {
            Some("(") => match matching(toks, at + 1) {
                Some(close) => at = close + 1,
                None => break,
            },
            _ => at += 1,
        }
    }
    at
}

fn matching(toks: &[Tok], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (j, t) in toks.iter().enumerate().skip(open) {
        match t.text.as_str() {
            "(" => depth += 1,
            ")" => {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            // A brace inside a parameter list means we misread the code.
            "{" | "}" | ";" => return None,
            _ => {}
        }
    }
    None
}

fn join(toks: &[Tok]) -> String {
    toks.iter()
        .map(|t| t.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The names of `#include "…"` lines, in order.
pub(crate) fn quoted_includes(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim_start().strip_prefix('#')?.trim_start();
            let rest = l.strip_prefix("include")?.trim_start().strip_prefix('"')?;
            rest.split_once('"').map(|(n, _)| n.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prototypes_with_annotations_before_and_after_their_parameters_are_declarations() {
        let f = CFile::parse(
            "api.h",
            "#define OUT\n#define NONNULL(...) __attribute__((nonnull(__VA_ARGS__)))\n\
             int crypto_kem_keypair(OUT unsigned char *pk, OUT unsigned char *sk) NONNULL(1, 2);\n\
             int crypto_kem_enc(unsigned char *ct, unsigned char *ss, const unsigned char *pk) __attribute__((warn_unused_result));\n\
             PQC_API int crypto_kem_dec(_Out_writes_(32) unsigned char *ss, const unsigned char *ct, const unsigned char *sk) PQC_NODISCARD;\n\
             int helper(int x) NONNULL(1) { return x; }\n",
        );
        let names: Vec<&str> = f.decls.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(
            names,
            ["crypto_kem_keypair", "crypto_kem_enc", "crypto_kem_dec"]
        );
        assert!(f.defines_fn("helper"));
    }

    #[test]
    fn quoted_includes_are_read_in_order_and_system_ones_skipped() {
        let t = "#include <stdio.h>\n#include \"rng.h\"\n  #  include \"../src/api_x.h\" // c\n";
        assert_eq!(quoted_includes(t), vec!["rng.h", "../src/api_x.h"]);
    }

    const SRC: &str = r#"
/* header comment
 *   SET-1  -DLEVEL=1
 */
#include "api.h"
#define NS(name) PFX1_##name
#define LONG_MACRO(a) \
    do { a; } while (0)
// "not a comment" in a line comment
static const char *s = "/* not a comment */";
int NS(crypto_sign_keypair)(unsigned char *pk, unsigned char *sk) {
    if (pk) { helper_randombytes(pk, 32); }
    return other(sk);
}
int plain(size_t *len);
int plain(size_t *len) { return 0; }
"#;

    #[test]
    fn finds_definitions_declarations_calls_and_comments() {
        let f = CFile::parse("a.c", SRC);
        let names: Vec<_> = f
            .defs
            .iter()
            .map(|d| (d.name.as_str(), d.via.as_deref()))
            .collect();
        assert_eq!(
            names,
            vec![("crypto_sign_keypair", Some("NS")), ("plain", None)]
        );
        assert_eq!(f.decls[0].name, "plain");
        assert!(f.decls[0].params.contains("size_t"));
        assert!(f.calls.contains("helper_randombytes") && f.calls.contains("other"));
        assert!(!f.calls.contains("if"));
        assert!(f
            .comments
            .iter()
            .any(|(l, t)| *l == 3 && t == "SET-1  -DLEVEL=1"));
        assert_eq!(f.macros.len(), 2);
        assert_eq!(f.directives[0].kind, "include");
        assert_eq!(f.code.len(), SRC.len());
    }
}
