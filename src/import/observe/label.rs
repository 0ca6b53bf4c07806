//! A parameter set's label is what its own build makes of
//! `CRYPTO_ALGNAME`: the preprocessor run with the defines and include
//! directories of the call that compiled the generator, so a name built by
//! stringizing, token pasting or another macro is evaluated, never read as
//! macro text.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};

use super::graph::Unit;
use crate::sandbox::{self, Outcome, Spec};

/// The marker line the probe's output is searched for.
const MARK: &str = "__pqb_algname__";

/// The evaluated `CRYPTO_ALGNAME` seen by `unit` (a source that includes
/// the API header), or `None` where the build defines none. The probe is
/// written in a folder pqbench makes in `scratch` once the build has ended
/// (nothing of the build can have placed a link there), its includes
/// resolved from the source's folder first as the source's are, and
/// preprocessed as a toolchain job that may write only in `scratch`.
pub(super) fn algname(scratch: &Path, unit: &Unit) -> Result<Option<String>> {
    let bytes = crate::fsutil::foreign::read_regular(&unit.source, 16 << 20).unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    let includes: String = text
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("#include") && l.contains('"'))
        .map(|l| format!("{l}\n"))
        .collect();
    let dir = tempfile::Builder::new()
        .prefix("pqb-algname-")
        .tempdir_in(scratch)
        .context("creating the label probe's folder")?;
    let probe = dir.path().join("probe.c");
    std::fs::write(&probe, format!("{includes}\n{MARK} CRYPTO_ALGNAME\n"))
        .with_context(|| format!("writing {}", probe.display()))?;
    let cc = crate::toolchain::which("cc").context("no C compiler (cc) on PATH")?;
    let mut args = vec!["-E".to_string(), "-P".into()];
    if let Some(own) = unit.source.parent() {
        args.push(format!("-iquote{}", own.display()));
    }
    for (name, value) in &unit.call.defines {
        args.push(match value {
            Some(v) => format!("-D{name}={v}"),
            None => format!("-D{name}"),
        });
    }
    for inc in &unit.call.includes {
        args.push(format!("-I{}", inc.display()));
    }
    for f in &unit.call.forced_includes {
        args.extend(["-include".to_string(), f.display().to_string()]);
    }
    args.push(probe.display().to_string());
    let mut spec = Spec::toolchain(&cc, args, vec![scratch.to_path_buf()]);
    spec.cwd = Some(unit.cwd.clone());
    spec.timeout = Duration::from_secs(60);
    let out = sandbox::run(&spec)?;
    if out.outcome != Outcome::Exited(0) {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .lines()
        .find_map(|l| l.trim().strip_prefix(MARK))
        .and_then(string_literals))
}

/// The value of adjacent C string literals (`"a" "b"` → `ab`); `None`
/// when the text is not only string literals.
pub(super) fn string_literals(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = text.trim().chars().peekable();
    let mut any = false;
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            '"' => {
                any = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => out.push(chars.next()?),
                        c => out.push(c),
                    }
                }
            }
            _ => return None,
        }
    }
    (any && !out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjacent_literals_join_and_anything_else_is_no_label() {
        assert_eq!(
            string_literals(r#""Toy-" "128" "f""#).as_deref(),
            Some("Toy-128f")
        );
        assert_eq!(string_literals(r#""a\"b""#).as_deref(), Some("a\"b"));
        assert_eq!(string_literals("CRYPTO_ALGNAME"), None);
        assert_eq!(string_literals(r#""x" y"#), None);
        assert_eq!(string_literals(""), None);
    }
}
