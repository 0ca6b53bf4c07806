//! Running the embedded timing driver (`pqb-driver`) in an isolated, pinned
//! process and reading its `tag key=value ...` lines from its results
//! channel (never from stdout, which the library shares).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};

use crate::context::Cx;
use crate::sandbox::frame::{self, FrameError};
use crate::sandbox::{self, Limits, Outcome};

/// At most this many lines of a results channel are kept in a record.
const MAX_LINES: usize = 4096;

pub use crate::records::process::Line;

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

pub use crate::records::process::ProcessRecord;

pub use crate::records::process::ProcessFacts;

impl ProcessFacts {
    pub(crate) fn is_empty(&self) -> bool {
        *self == ProcessFacts::default()
    }
}

impl ProcessRecord {
    /// The record of a tool process from what the sandbox saw of it and
    /// the lines its results channel carried.
    pub(crate) fn from_output(
        command: Vec<String>,
        cpu: Option<usize>,
        out: &sandbox::Output,
        lines: Vec<Line>,
        results_error: Option<String>,
    ) -> ProcessRecord {
        ProcessRecord {
            command,
            cpu,
            outcome: out.outcome,
            wall_seconds: out.wall.as_secs_f64(),
            lines,
            stderr_tail: short_tail(&out.stderr),
            sandbox: ProcessFacts {
                rusage: out.rusage,
                stdout_bytes: out.stdout_bytes,
                stdout_tail: short_tail(&out.stdout),
                results_error,
                cpu_witness: out.cpu_witness.clone(),
            },
        }
    }

    pub fn line(&self, tag: &str) -> Option<&Line> {
        self.lines.iter().find(|l| l.tag == tag)
    }

    pub(crate) fn ok(&self) -> bool {
        self.outcome == Outcome::Exited(0)
            && self.sandbox.results_error.is_none()
            && self.line("done").is_some()
    }

    /// Why the process failed, in words, or None when it succeeded.
    pub(crate) fn failure(&self) -> Option<(super::OpStatus, String)> {
        use super::OpStatus;
        if self.ok() {
            return None;
        }
        let status = match self.outcome {
            Outcome::TimedOut => OpStatus::Timeout,
            Outcome::Signaled(_) => OpStatus::Crash,
            Outcome::Exited(_) => OpStatus::Error,
        };
        if let Some(e) = &self.sandbox.results_error {
            return Some((OpStatus::Error, format!("results rejected: {e}")));
        }
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

/// Runs the driver with `args` (its logical command after `--lib`, see
/// `settings_block`) pinned to `cpu`; the samples line is returned
/// separately so records stay readable.
pub fn run(
    cx: &Cx,
    lib: &Path,
    args: &[String],
    cpu: Option<usize>,
    timeout: Duration,
) -> Result<(ProcessRecord, Vec<u64>)> {
    let r = run_fed(cx, lib, args, None, cpu, timeout)?;
    Ok((r.proc, r.samples))
}

/// What one driver process gave. Its per-call samples and output hashes
/// (one number per timed call each) are kept out of its record.
pub(crate) struct Ran {
    pub proc: ProcessRecord,
    pub samples: Vec<u64>,
    pub outputs: Vec<u64>,
}

/// The driver's command line, the same for every process of an instance
/// whatever it measures: only what loading the library needs. (`local`:
/// the job's copy of the library.)
pub(crate) fn fixed_argv(local: String) -> Vec<String> {
    vec![
        "--results-fd".to_string(),
        sandbox::RESULTS_FD.to_string(),
        "--inputs-fd".to_string(),
        sandbox::INPUT_FD.to_string(),
        "--lib".to_string(),
        local,
    ]
}

/// The driver's settings, on its input descriptor, which it reads only
/// once the library is loaded: `args`, the logical command the records
/// keep (`--op sign --mode trial --warmup 2 --iters 100 --samples`), as
/// `key=value` lines, and `inputs`, the seed's `key=value` words
/// (`measure::inputs`), each on a line of its own; `driver_settings.c`
/// parses it strictly. A shared pool's bytes (`payload`) follow the `end`
/// line, announced by `pool_bytes`.
pub(crate) fn settings_block(
    args: &[String],
    inputs: Option<&str>,
    payload: Option<&[u8]>,
) -> Result<Vec<u8>> {
    let mut block = String::from("pqb-driver-settings 1\n");
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (key, value) = match a.as_str() {
            "--samples" => ("samples", "1"),
            "--profile" => ("profile", "1"),
            "--no-checks" => ("checks", "0"),
            "--op" | "--mode" | "--warmup" | "--iters" => {
                let v = it
                    .next()
                    .with_context(|| format!("driver option {a} without a value"))?;
                (&a[2..], v.as_str())
            }
            _ => anyhow::bail!("driver option {a} has no setting"),
        };
        block += &format!("{key}={value}\n");
    }
    for word in inputs.unwrap_or_default().split_whitespace() {
        anyhow::ensure!(word.contains('='), "input setting {word} is not key=value");
        block += &format!("{word}\n");
    }
    if let Some(p) = payload {
        block += &format!("pool_bytes={}\n", p.len());
    }
    block += "end\n";
    let mut bytes = block.into_bytes();
    bytes.extend_from_slice(payload.unwrap_or_default());
    anyhow::ensure!(
        bytes.len() <= sandbox::INPUT_CAP,
        "the driver's settings take {} bytes, beyond its input descriptor's {}",
        bytes.len(),
        sandbox::INPUT_CAP
    );
    Ok(bytes)
}

/// `run`, with `settings` (a line of `key=value` words: the seed and its
/// pool) added to the settings block.
pub(crate) fn run_fed(
    cx: &Cx,
    lib: &Path,
    args: &[String],
    settings: Option<&str>,
    cpu: Option<usize>,
    timeout: Duration,
) -> Result<Ran> {
    run_with_files(
        cx,
        lib,
        args,
        Fed {
            settings,
            ..Fed::default()
        },
        cpu,
        timeout,
        &[],
    )
}

/// What a driver process is fed on its input descriptor beyond its
/// logical command: the seed's words, and a shared pool's bytes.
#[derive(Clone, Copy, Default)]
pub(crate) struct Fed<'a> {
    pub settings: Option<&'a str>,
    pub payload: Option<&'a [u8]>,
    /// The operation's shared key pair (public, secret), given as the
    /// files `keys.pk` and `keys.sk` (`measure::keys`; the settings say
    /// `keys=1`).
    pub keys: Option<(&'a [u8], &'a [u8])>,
}

/// `run_fed`, with `files` (name, bytes) placed in the job directory
/// before the process starts: inputs too large for the settings block,
/// such as the keys a round-trip step is given (`trip.pk`, ...).
pub(crate) fn run_with_files(
    cx: &Cx,
    lib: &Path,
    args: &[String],
    fed: Fed,
    cpu: Option<usize>,
    timeout: Duration,
    files: &[(&str, &[u8])],
) -> Result<Ran> {
    let scratch = cx.cache.scratch()?;
    // The job's own copy of the library: its uid may not reach the cache.
    let local = stage_library(lib, scratch.path())?;
    let keys = fed.keys.map(|(pk, sk)| [("keys.pk", pk), ("keys.sk", sk)]);
    for (name, bytes) in files.iter().chain(keys.iter().flatten()) {
        crate::fsutil::write_atomic(&scratch.path().join(name), bytes)?;
    }
    // The record keeps the logical command, as a reader cites the settings;
    // the process itself got `fixed_argv` and the settings on descriptor 5.
    let mut command = vec!["--lib".to_string(), "<library>".to_string()];
    command.extend(args.iter().cloned());
    if fed.settings.is_some() {
        command.extend(["--inputs-fd".to_string(), sandbox::INPUT_FD.to_string()]);
    }
    let mut spec = cx.submission_spec(&cx.support()?.driver, fixed_argv(local), scratch.path())?;
    spec.timeout = timeout;
    spec.limits = Limits::from_plan(&cx.plan.limits);
    spec.cpu = cpu;
    // A trial's set-up, as the kernel counted it (`mode_trial`'s line).
    spec.cpu_mark = Some("timed");
    // A memory process's peak is held against its `ru_maxrss`, whose
    // launcher's share must then be known (`memory::below_kernel`).
    spec.rss_floor = args.windows(2).any(|w| w == ["--mode", "memory"]);
    // The driver waits on MARK_FD after its `timed` line until pqbench
    // has read its CPU time.
    let mark = format!("mark_fd={}", sandbox::MARK_FD);
    let mut words = fed
        .settings
        .map_or_else(|| mark.clone(), |s| format!("{s} {mark}"));
    if fed.keys.is_some() {
        words += " keys=1";
    }
    spec.inputs.push(sandbox::Input {
        fd: sandbox::INPUT_FD,
        bytes: settings_block(args, Some(&words), fed.payload)?,
    });
    let out = sandbox::run(&spec)?;
    let (text, results_error) = read_results(&out);
    let mut lines = parse_lines(&text);
    let mut take = |tag: &str| {
        lines
            .iter()
            .position(|l| l.tag == tag)
            .map(|i| lines.remove(i).values)
            .unwrap_or_default()
    };
    let samples = take("samples");
    let outputs = take("outputs");
    lines.truncate(MAX_LINES);
    let proc = ProcessRecord::from_output(command, cpu, &out, lines, results_error);
    Ok(Ran {
        proc,
        samples,
        outputs,
    })
}

/// The last 8 lines of a stream's tail, at most 2 KiB of them: a record
/// holds what a reader needs to see why a process failed, no more.
pub(crate) fn short_tail(bytes: &[u8]) -> String {
    const MAX: usize = 2048;
    let tail = &bytes[bytes.len().saturating_sub(MAX)..];
    crate::toolchain::tail(&String::from_utf8_lossy(tail), 8)
}

/// Copies the library into the job directory (readable by the job's uid)
/// and returns the relative path the tools load it by.
pub(crate) fn stage_library(lib: &Path, job_dir: &Path) -> Result<String> {
    use std::os::unix::fs::PermissionsExt;
    let local = job_dir.join("lib.so");
    std::fs::copy(lib, &local)
        .with_context(|| format!("copying {} into the job directory", lib.display()))?;
    std::fs::set_permissions(&local, std::fs::Permissions::from_mode(0o644))?;
    Ok("./lib.so".to_string())
}

/// The text of the results channel and, when it cannot be trusted, why.
pub(crate) fn read_results(out: &sandbox::Output) -> (String, Option<String>) {
    if let Some(ch) = &out.overflow {
        let error = format!(
            "the {ch} channel went beyond {} MiB",
            sandbox::RESULTS_CAP >> 20
        );
        return (String::new(), Some(error));
    }
    let raw = out.channels.first().map(Vec::as_slice).unwrap_or_default();
    match frame::verify(raw) {
        Ok(body) => (String::from_utf8_lossy(body).into_owned(), None),
        // A crash or timeout explains itself; a clean exit must have ended
        // its results.
        Err(FrameError::Unterminated) => (
            String::from_utf8_lossy(raw).into_owned(),
            (out.outcome == Outcome::Exited(0)).then(|| FrameError::Unterminated.to_string()),
        ),
        Err(e) => (
            String::from_utf8_lossy(raw).into_owned(),
            Some(e.to_string()),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_logical_command_becomes_the_settings_block() {
        let args: Vec<String> = [
            "--op", "sign", "--mode", "trial", "--warmup", "2", "--iters",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain(["100".to_string(), "--samples".to_string()])
        .collect();
        let block =
            settings_block(&args, Some("seed=ab pool_max=3 pool_seconds=0.5"), None).unwrap();
        assert_eq!(
            String::from_utf8(block).unwrap(),
            "pqb-driver-settings 1\nop=sign\nmode=trial\nwarmup=2\niters=100\nsamples=1\n\
             seed=ab\npool_max=3\npool_seconds=0.5\nend\n"
        );
        // The command line never carries them.
        let argv = fixed_argv("./lib.so".into()).join(" ");
        assert_eq!(argv, "--results-fd 3 --inputs-fd 5 --lib ./lib.so");
        assert!(settings_block(&["--bogus".to_string()], None, None).is_err());
        assert!(settings_block(&["--op".to_string()], None, None).is_err());
    }

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
