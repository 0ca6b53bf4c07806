//! `bench-tree --measure`: the tree's campaign with every default stage
//! and modest timing, and what an evaluator checks of such a run: each
//! stage's wall time beside the plan's estimate, the time stage against
//! the sum of its operations' budgets, and the operations' outcomes.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};

use crate::records::layout;

/// The timing of a measured tree run: three trials of 50 ms after one
/// warm-up, at least 10 calls an operation, at most 2,000 a trial, and a
/// budget of 2 s an operation.
pub const TIMING: &str = "[timing]\ntrials = 3\nwarmup = 1\ntrial-seconds = 0.05\n\
                          min-calls = 10\nmax-iterations = 2000\nbudget-seconds = 2\n";
/// `budget-seconds` of `TIMING`.
pub const BUDGET_SECONDS: f64 = 2.0;

/// One stage of the run, from its progress lines.
#[derive(Debug, Clone, PartialEq)]
pub struct StageTime {
    pub stage: String,
    pub seconds: f64,
    /// The plan's estimate, for a measuring stage that had one.
    pub estimated: Option<f64>,
}

/// What a measured run showed.
#[derive(Debug, Clone, Default)]
pub struct Measured {
    pub stages: Vec<StageTime>,
    /// The time stage's header: its first estimate, in words.
    pub first_estimate: Option<String>,
    /// The time stage's first time-left figure given a minute or more into
    /// the stage (from its own pace).
    pub minute_eta: Option<MinuteEta>,
    /// Operation records by status (`ok`, `implausible`, ...).
    pub operations: BTreeMap<String, usize>,
}

/// The time left a stage's progress line gave, as a whole-stage figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MinuteEta {
    /// Seconds into the stage when the line was printed.
    pub at: f64,
    /// `at` plus the time left the line gave.
    pub total: f64,
}

impl Measured {
    /// The operations' budgets summed: what the time stage may spend.
    pub fn budgets(&self) -> f64 {
        self.operations.values().sum::<usize>() as f64 * BUDGET_SECONDS
    }

    pub fn stage(&self, name: &str) -> Option<&StageTime> {
        self.stages.iter().find(|s| s.stage == name)
    }
}

/// Reads the run's progress (its standard error) and its operation
/// records under `dataset` (`output/<campaign>/<system>`).
pub fn read(stderr: &str, dataset: &Path) -> Result<Measured> {
    Ok(Measured {
        stages: stderr.lines().filter_map(stage_line).collect(),
        first_estimate: stderr.lines().find_map(time_header),
        minute_eta: minute_eta(stderr),
        operations: statuses(&dataset.join(layout::RECORDS))?,
    })
}

/// `[  12.3s] time: 8 computed in 564.5 s (estimated 498.0 s), 2 reused`.
fn stage_line(line: &str) -> Option<StageTime> {
    let rest = line.split_once("] ")?.1;
    let (stage, rest) = rest.split_once(": ")?;
    let (_, rest) = rest.split_once(" computed in ")?;
    let (seconds, rest) = rest.split_once(" s")?;
    let estimated = rest
        .strip_prefix(" (estimated ")
        .and_then(|r| r.split_once(" s)"))
        .and_then(|(e, _)| e.parse().ok());
    Some(StageTime {
        stage: stage.to_string(),
        seconds: seconds.parse().ok()?,
        estimated,
    })
}

/// `… time: 10 instances, about 19 s of measuring …` → `19 s`.
fn time_header(line: &str) -> Option<String> {
    let rest = line.split_once("] time: ")?.1;
    let about = rest.split_once(", about ")?.1;
    Some(about.split_once(" of measuring")?.0.to_string())
}

/// The seconds a progress line was printed at: `[  12.3s] …` → 12.3.
fn elapsed(line: &str) -> Option<f64> {
    let inner = line.strip_prefix('[')?.split_once("s]")?.0;
    inner.trim().parse().ok()
}

/// `45 s`, `12 min`, `3.5 h` (`progress::duration_words`) in seconds.
fn seconds_of_words(words: &str) -> Option<f64> {
    let (n, unit) = words.trim().split_once(' ')?;
    let n: f64 = n.parse().ok()?;
    match unit {
        "s" => Some(n),
        "min" => Some(n * 60.0),
        "h" => Some(n * 3600.0),
        _ => None,
    }
}

/// The first time-stage line `[  t s] [k/n] time     a/b (x s, about L
/// left)` printed 60 s or more after the stage's header, as the total
/// it foresaw.
fn minute_eta(stderr: &str) -> Option<MinuteEta> {
    let mut lines = stderr.lines();
    let start = lines
        .by_ref()
        .find(|l| time_header(l).is_some())
        .and_then(elapsed)?;
    lines.find_map(|l| {
        let at = elapsed(l)? - start;
        let rest = l.split_once("] [")?.1.split_once("] ")?.1;
        if !rest.starts_with("time ") || at < 60.0 {
            return None;
        }
        let left = rest.split_once(", about ")?.1.split_once(" left)")?.0;
        Some(MinuteEta {
            at,
            total: at + seconds_of_words(left)?,
        })
    })
}

/// Each operation record's `status`, counted.
fn statuses(records: &Path) -> Result<BTreeMap<String, usize>> {
    let mut out = BTreeMap::new();
    let Ok(algorithms) = std::fs::read_dir(records) else {
        return Ok(out);
    };
    for dir in algorithms.flatten() {
        for file in std::fs::read_dir(dir.path())?.flatten() {
            let path = file.path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            let v: serde_json::Value = serde_json::from_str(&text)
                .with_context(|| format!("parsing {}", path.display()))?;
            let status = v.get("status").and_then(|s| s.as_str()).unwrap_or("?");
            *out.entry(status.to_string()).or_default() += 1;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_lines_give_the_time_and_the_estimate() {
        assert_eq!(
            stage_line("[  565.4s] time: 8 computed in 564.5 s (estimated 498.0 s), 2 reused"),
            Some(StageTime {
                stage: "time".into(),
                seconds: 564.5,
                estimated: Some(498.0)
            })
        );
        assert_eq!(
            stage_line("[    0.1s] scan: 8 computed in 0.0 s, 2 reused"),
            Some(StageTime {
                stage: "scan".into(),
                seconds: 0.0,
                estimated: None
            })
        );
        assert_eq!(stage_line("[  1.0s] [1/10] time  a/b (33.7 s)"), None);
        assert_eq!(
            time_header(
                "[ 1.0s] time: 10 instances, about 19 s of measuring by the plan's estimate"
            ),
            Some("19 s".into())
        );
    }

    #[test]
    fn the_first_time_left_a_minute_into_the_time_stage_is_the_minute_eta() {
        let stderr = "\
[    5.0s] kat: 2 computed in 3.0 s
[   10.0s] time: 40 instances, about 13 min of measuring by the plan's estimate
[   40.0s] [1/40] time     a/b (30.0 s, about 19 min left)
[   65.5s] [2/40] time     a/c (25.5 s)
[   72.0s] [3/40] memory   a/c (2.0 s, about 3 min left)
[   80.0s] [3/40] time     a/d (14.5 s, about 21 min left)
[  200.0s] [4/40] time     a/e (120.0 s, about 25 min left)
";
        assert_eq!(
            minute_eta(stderr),
            Some(MinuteEta {
                at: 70.0,
                total: 70.0 + 21.0 * 60.0
            })
        );
        assert_eq!(seconds_of_words("3.5 h"), Some(12_600.0));
        assert_eq!(seconds_of_words("45 s"), Some(45.0));
        assert_eq!(minute_eta("[ 1.0s] build: 2 computed in 0.1 s\n"), None);
    }
}
