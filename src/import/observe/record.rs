//! The stand-in toolchain: while a submission's own build is observed,
//! `cc`, `gcc`, `as`, `ld`, `ar` and their kin on its PATH (and in `CC`,
//! `CXX`, `AS`, `LD`, `AR`) are pqbench's binary under those names. Each
//! call appends one line to the build's log, its tool, working directory
//! and arguments, then becomes the real program with the same arguments,
//! so the build runs as its authors wrote it.
//!
//! The log is the build's own account (the build could write to it too):
//! it is what the draft is made from, and the draft is then proven against
//! the generator the same build made, never trusted for that.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The variable naming the log; set only in an observed build's jail.
pub(super) const LOG_VAR: &str = "PQB_BUILD_LOG";
/// The variable naming the folder of stand-ins (skipped when the real
/// program is looked up on PATH).
pub(super) const TOOLS_VAR: &str = "PQB_BUILD_TOOLS";

/// The names pqbench stands in for.
pub(super) const TOOLS: &[&str] = &[
    "cc", "gcc", "clang", "c++", "g++", "clang++", "as", "ld", "ar",
];

/// One call of a tool during the build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Call {
    pub tool: String,
    pub cwd: PathBuf,
    pub args: Vec<String>,
}

/// When pqbench runs as a stand-in (a tool name as `argv[0]` and the log
/// variable set): records the call and becomes the real program, or
/// returns the exit code of a failure. `None` otherwise.
pub fn record_entry() -> Option<i32> {
    let log = std::env::var_os(LOG_VAR)?;
    let argv0 = std::env::args_os().next()?;
    let tool = Path::new(&argv0).file_name()?.to_str()?.to_string();
    if !TOOLS.contains(&tool.as_str()) {
        return None;
    }
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let call = Call {
        tool: tool.clone(),
        cwd: std::env::current_dir().unwrap_or_default(),
        args,
    };
    if let Err(e) = append(Path::new(&log), &call) {
        eprintln!("pqbench (standing in for {tool}): cannot record the call: {e}");
        return Some(1);
    }
    let Some(real) = real_program(&tool) else {
        eprintln!("pqbench (standing in for {tool}): no {tool} on PATH");
        return Some(127);
    };
    let err = std::process::Command::new(&real)
        .arg0(&real)
        .args(std::env::args_os().skip(1))
        .exec();
    eprintln!(
        "pqbench (standing in for {tool}): {}: {err}",
        real.display()
    );
    Some(126)
}

/// One line, one write: parallel jobs (`make -j`) append whole lines.
fn append(log: &Path, call: &Call) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(call)?;
    line.push(b'\n');
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(log)?;
    f.write_all(&line)
}

/// The program `tool` names on PATH, past the stand-ins' folder.
fn real_program(tool: &str) -> Option<PathBuf> {
    let tools = std::env::var_os(TOOLS_VAR).map(PathBuf::from);
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|d| Some(d) != tools.as_ref())
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

/// The calls of a log; a line that does not parse (the build wrote it) is
/// counted, not trusted.
pub(super) fn read_log(log: &Path) -> (Vec<Call>, usize) {
    // The build could have replaced the log by a link: never followed.
    let bytes = crate::fsutil::foreign::read_regular(log, 256 << 20).unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    let mut calls = Vec::new();
    let mut bad = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<Call>(line) {
            Ok(c) => calls.push(c),
            Err(_) => bad += 1,
        }
    }
    (calls, bad)
}
