//! Reading memcheck's `--xml=yes` output: each `<error>` with its kind,
//! description, occurrence count (from `<errorcounts>`) and the frames of
//! its first stack. Valgrind writes a fixed, flat schema (protocol 4), so
//! a small element reader is enough; a file cut short by a crash yields
//! the errors completed before the cut.

use std::collections::BTreeMap;

/// One frame as memcheck printed it.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Frame {
    pub ip: Option<String>,
    pub obj: Option<String>,
    pub function: Option<String>,
    pub dir: Option<String>,
    pub file: Option<String>,
    pub line: Option<u32>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Error {
    pub unique: String,
    pub kind: String,
    pub what: String,
    pub count: u64,
    pub frames: Vec<Frame>,
}

/// The errors of a memcheck XML file, in the order reported.
pub(crate) fn parse(xml: &str) -> Vec<Error> {
    let counts: BTreeMap<String, u64> = elements(xml, "pair")
        .filter_map(|p| {
            let n = text(p, "count")?.parse().ok()?;
            Some((text(p, "unique")?, n))
        })
        .collect();
    elements(xml, "error")
        .map(|e| {
            let unique = text(e, "unique").unwrap_or_default();
            let what = text(e, "what")
                .or_else(|| elements(e, "xwhat").next().and_then(|x| text(x, "text")))
                .unwrap_or_default();
            let frames = elements(e, "stack")
                .next()
                .map(|s| {
                    elements(s, "frame")
                        .map(|f| Frame {
                            ip: text(f, "ip"),
                            obj: text(f, "obj"),
                            function: text(f, "fn"),
                            dir: text(f, "dir"),
                            file: text(f, "file"),
                            line: text(f, "line").and_then(|l| l.parse().ok()),
                        })
                        .collect()
                })
                .unwrap_or_default();
            Error {
                count: counts.get(&unique).copied().unwrap_or(1),
                kind: text(e, "kind").unwrap_or_default(),
                unique,
                what,
                frames,
            }
        })
        .collect()
}

/// The contents of every complete `<tag>…</tag>` in `s`, outermost first
/// (valgrind never nests an element in one of its own name).
fn elements<'a>(s: &'a str, tag: &str) -> impl Iterator<Item = &'a str> + 'a {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let mut rest = s;
    std::iter::from_fn(move || {
        let start = rest.find(&open)? + open.len();
        let len = rest[start..].find(&close)?;
        let body = &rest[start..start + len];
        rest = &rest[start + len + close.len()..];
        Some(body)
    })
}

/// The unescaped text of the first `<tag>` directly in `s`.
fn text(s: &str, tag: &str) -> Option<String> {
    elements(s, tag).next().map(|t| unescape(t.trim()))
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    const XML: &str = r#"<?xml version="1.0"?>
<valgrindoutput>
<error>
  <unique>0x0</unique>
  <tid>1</tid>
  <kind>UninitValue</kind>
  <what>Use of uninitialised value of size 8</what>
  <stack>
    <frame>
      <ip>0x10960A</ip>
      <obj>/j/lib.so</obj>
      <fn>leak&lt;int&gt;</fn>
      <dir>/p/algorithms/x</dir>
      <file>t.c</file>
      <line>12</line>
    </frame>
    <frame>
      <ip>0x10939E</ip>
      <obj>/j/pqb-driver</obj>
      <fn>main</fn>
    </frame>
  </stack>
</error>
<error>
  <unique>0x1</unique>
  <kind>UninitCondition</kind>
  <what>Conditional jump or move depends on uninitialised value(s)</what>
  <stack>
    <frame><ip>0x1</ip><obj>/j/lib.so</obj><fn>f</fn></frame>
  </stack>
</error>
<errorcounts>
  <pair><count>4</count><unique>0x0</unique></pair>
  <pair><count>1</count><unique>0x1</unique></pair>
</errorcounts>
<error><unique>0x2</unique><kind>Cut"#;

    #[test]
    fn errors_frames_and_counts() {
        let e = parse(XML);
        assert_eq!(e.len(), 2, "the cut-off third error is not read");
        assert_eq!(e[0].kind, "UninitValue");
        assert_eq!(e[0].count, 4);
        assert_eq!(e[0].frames.len(), 2);
        let f = &e[0].frames[0];
        assert_eq!(f.function.as_deref(), Some("leak<int>"));
        assert_eq!(
            (f.dir.as_deref(), f.file.as_deref(), f.line),
            (Some("/p/algorithms/x"), Some("t.c"), Some(12))
        );
        assert_eq!(e[0].frames[1].file, None);
        assert_eq!(e[1].count, 1);
        assert_eq!(e[1].frames[0].function.as_deref(), Some("f"));
    }
}
