//! Small surgery on TOML text where the parsed value keeps no position:
//! finding a key's span, and commenting out an unknown key so parsing can
//! continue to the next problem.

use crate::error::ConfigError;

/// The span of `key` inside `[table]`, found in the text (the schema keeps
/// no span for some keys).
pub fn key_span(text: &str, table: &str, key: &str) -> Option<std::ops::Range<usize>> {
    let mut offset = 0;
    let mut inside = false;
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        if t.starts_with('[') {
            inside = t.trim_end() == format!("[{table}]");
        } else if inside && t.starts_with(key) && t[key.len()..].trim_start().starts_with('=') {
            let at = offset + (line.len() - t.len());
            return Some(at..at + key.len());
        }
        offset += line.len();
    }
    None
}

/// The text with the unknown key of `e` commented out, when the key and
/// its value stand alone on their line (else parsing cannot go on safely).
pub fn comment_out(text: &str, e: &ConfigError) -> Option<String> {
    if !e.message.starts_with("unknown key") {
        return None;
    }
    let loc = e.location.as_ref()?;
    let start: usize = text
        .split_inclusive('\n')
        .take(loc.line - 1)
        .map(str::len)
        .sum();
    let line = text[start..].lines().next()?;
    let key_at = line.char_indices().nth(loc.column - 1)?.0;
    if !line[..key_at].trim().is_empty() || !line.contains('=') {
        return None;
    }
    toml::from_str::<toml::Table>(line.trim()).ok()?;
    let mut out = text.to_string();
    out.replace_range(start + key_at..start + key_at + 1, "#");
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::algorithm::RawAlgorithm;
    use std::path::Path;

    #[test]
    fn unknown_keys_on_their_own_line_are_commented_out() {
        let text = "id = \"x\"\nsourcs = [\"a\"]\nname = \"X\"\n";
        let e = crate::config::parse::<RawAlgorithm>(Path::new("a.toml"), text).unwrap_err();
        let next = comment_out(text, &e).unwrap();
        assert_eq!(next, "id = \"x\"\n#ourcs = [\"a\"]\nname = \"X\"\n");
        let inline = "id = \"x\"\nsourcs = [\n  \"a\"]\n";
        let e = crate::config::parse::<RawAlgorithm>(Path::new("a.toml"), inline).unwrap_err();
        assert_eq!(
            comment_out(inline, &e),
            None,
            "a multi-line value is not cut"
        );
        assert_eq!(
            key_span("[nist]\nheader = \"a\"\n", "nist", "header"),
            Some(7..13)
        );
    }
}
