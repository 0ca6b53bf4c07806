//! Running the embedded timing driver (`pqb-driver`) in an isolated, pinned
//! process and reading its `tag key=value ...` lines.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::context::Cx;
use crate::sandbox::{self, Limits, Outcome, Spec};

/// One line of driver output: its tag and fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Line {
    pub tag: String,
    pub fields: BTreeMap<String, String>,
    /// Space-separated values after the tag (the `samples` line).
    pub values: Vec<u64>,
}

impl Line {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields.get(key).map(String::as_str)
    }
    pub fn f64(&self, key: &str) -> Option<f64> {
        self.get(key)?.parse().ok()
    }
    pub fn u64(&self, key: &str) -> Option<u64> {
        self.get(key)?.parse().ok()
    }
}

pub fn parse_lines(stdout: &str) -> Vec<Line> {
    stdout
        .lines()
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            let tag = parts.next()?.to_string();
            let mut fields = BTreeMap::new();
            let mut values = Vec::new();
            for p in parts {
                match p.split_once('=') {
                    Some((k, v)) => {
                        fields.insert(k.to_string(), v.to_string());
                    }
                    None => values.extend(p.parse::<u64>().ok()),
                }
            }
            Some(Line {
                tag,
                fields,
                values,
            })
        })
        .collect()
}

/// One driver process as recorded: enough to rerun it and to see why it
/// failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessRecord {
    /// Arguments after the driver (the library path relative to the run).
    pub command: Vec<String>,
    pub cpu: Option<usize>,
    pub outcome: Outcome,
    pub wall_seconds: f64,
    /// Every output line except the per-call samples (kept in the trial).
    pub lines: Vec<Line>,
    pub stderr_tail: String,
}

impl ProcessRecord {
    pub fn line(&self, tag: &str) -> Option<&Line> {
        self.lines.iter().find(|l| l.tag == tag)
    }

    pub fn ok(&self) -> bool {
        self.outcome == Outcome::Exited(0) && self.line("done").is_some()
    }

    /// Why the process failed, in words, or None when it succeeded.
    pub fn failure(&self) -> Option<(super::OpStatus, String)> {
        use super::OpStatus;
        if self.ok() {
            return None;
        }
        let status = match self.outcome {
            Outcome::TimedOut => OpStatus::Timeout,
            Outcome::Signaled(_) => OpStatus::Crash,
            Outcome::Exited(_) => OpStatus::Error,
        };
        let mut detail = self.outcome.to_string();
        if let Some(e) = self.line("error") {
            detail = format!(
                "{} in {}: {}",
                detail,
                e.get("stage").unwrap_or("?"),
                e.get("msg").unwrap_or("?")
            );
        }
        Some((status, detail))
    }
}

/// Runs the driver with `args` (after `--lib`) pinned to `cpu`; the
/// samples line is returned separately so records stay readable.
pub fn run(
    cx: &Cx,
    lib: &Path,
    args: &[String],
    cpu: Option<usize>,
    timeout: Duration,
) -> Result<(ProcessRecord, Vec<u64>)> {
    let mut full = vec!["--lib".to_string(), lib.display().to_string()];
    full.extend(args.iter().cloned());
    let scratch = cx.cache.scratch()?;
    let spec = Spec {
        program: cx.support()?.driver.clone(),
        args: full,
        cwd: Some(scratch.path().to_path_buf()),
        env: Vec::new(),
        timeout,
        limits: Limits::from_plan(&cx.plan.limits),
        cpu,
    };
    let out = sandbox::run(&spec)?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = parse_lines(&text);
    let samples = lines
        .iter()
        .position(|l| l.tag == "samples")
        .map(|i| lines.remove(i).values)
        .unwrap_or_default();
    let mut command = vec!["--lib".to_string(), "<library>".to_string()];
    command.extend(args.iter().cloned());
    Ok((
        ProcessRecord {
            command,
            cpu,
            outcome: out.outcome,
            wall_seconds: out.wall.as_secs_f64(),
            lines,
            stderr_tail: crate::toolchain::tail(&String::from_utf8_lossy(&out.stderr), 8),
        },
        samples,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_parse_tags_fields_and_values() {
        let l = parse_lines("meta counter=tsc counter_hz=2.5e+09\nsamples 10 20 30\ndone\n");
        assert_eq!(l.len(), 3);
        assert_eq!(l[0].get("counter"), Some("tsc"));
        assert_eq!(l[0].f64("counter_hz"), Some(2.5e9));
        assert_eq!(l[1].values, vec![10, 20, 30]);
        assert_eq!(l[2].tag, "done");
    }
}
