//! Running the timing driver under Valgrind (the `count` and `ct` stages):
//! Valgrind is the sandboxed program, the job's copy of the driver its
//! client, and the tool's output files (callgrind dumps, memcheck's XML)
//! are written into the job directory and read back before it goes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};

use super::driver::{
    fixed_argv, parse_lines, read_results, settings_block, stage_library, ProcessRecord,
};
use crate::context::Cx;
use crate::sandbox::{self, Limits};

/// The Valgrind installation used.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Valgrind {
    /// The program the sandbox executes: Valgrind's launcher binary (the
    /// sandbox executes by descriptor, which a `#!` wrapper script such as
    /// Debian's `/usr/bin/valgrind` does not survive), or `/bin/sh`.
    pub path: PathBuf,
    /// Arguments before Valgrind's own (the script, when run by `/bin/sh`).
    pub prefix: Vec<String>,
    /// `valgrind --version`, e.g. `valgrind-3.19.0`.
    pub version: String,
}

/// Finds `valgrind` on the PATH, or says why it cannot be used.
pub(crate) fn find() -> Result<Valgrind, String> {
    let path = crate::toolchain::which("valgrind")
        .ok_or_else(|| "Valgrind is not installed (e.g. apt-get install valgrind)".to_string())?;
    let out = std::process::Command::new(&path)
        .arg("--version")
        .output()
        .map_err(|e| format!("running {}: {e}", path.display()))?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || version.is_empty() {
        return Err(format!("{} --version failed", path.display()));
    }
    let bin = path.with_file_name("valgrind.bin");
    let script = std::fs::read(&path)
        .map(|b| b.starts_with(b"#!"))
        .unwrap_or(false);
    Ok(if !script {
        Valgrind {
            path,
            prefix: Vec::new(),
            version,
        }
    } else if bin.is_file() {
        // Debian's wrapper only adds /usr/lib/debug to LD_LIBRARY_PATH.
        Valgrind {
            path: bin,
            prefix: Vec::new(),
            version,
        }
    } else {
        Valgrind {
            prefix: vec![path.display().to_string()],
            path: PathBuf::from("/bin/sh"),
            version,
        }
    })
}

/// Why Valgrind cannot check this system's code, if it cannot: programs
/// of an emulated system run under a user-mode emulator, and Valgrind
/// cannot run a client that the emulator runs (nor run the emulator's
/// guest code as its own).
pub(crate) fn unsupported_reason(cx: &Cx) -> Option<String> {
    if let crate::plan::Runner::Emulator { command } = &cx.plan.system_spec.runner {
        return Some(format!(
            "system {} runs its programs under the emulator `{}`: Valgrind cannot run there",
            cx.plan.system,
            command.join(" ")
        ));
    }
    None
}

/// One driver process run under a Valgrind tool, and the output files the
/// tool left (name, bytes) that `keep` selected.
pub(crate) struct ToolRun {
    pub process: ProcessRecord,
    pub files: Vec<(String, Vec<u8>)>,
    /// Absolute path of the job's copy of the library (as the tool names it
    /// in stacks).
    pub library_path: PathBuf,
}

/// What to run under the tool: its arguments, the driver's, where and how
/// long.
pub(crate) struct Invocation<'a> {
    pub tool: &'a [String],
    pub driver: &'a [String],
    pub cpu: Option<usize>,
    pub timeout: Duration,
}

/// Runs `valgrind <tool args> ./pqb-driver --results-fd 3 --inputs-fd 5
/// --lib ./lib.so` in a fresh job directory, `driver` (its logical
/// command) as its settings block on descriptor 5. The record keeps
/// `valgrind <tool args> <driver> --lib <library> <driver args>`.
pub(crate) fn run(
    cx: &Cx,
    vg: &Valgrind,
    lib: &Path,
    how: &Invocation,
    keep: impl Fn(&str) -> bool,
) -> Result<ToolRun> {
    let (tool_args, driver_args, cpu, timeout) = (how.tool, how.driver, how.cpu, how.timeout);
    let scratch = cx.cache.scratch()?;
    let dir = scratch.path();
    let local = stage_library(lib, dir)?;
    let driver = dir.join("pqb-driver");
    std::fs::copy(&cx.support()?.driver, &driver)
        .context("copying the driver into the job directory")?;
    let mut args: Vec<String> = vg.prefix.clone();
    args.push("--vgdb=no".into());
    args.extend(tool_args.iter().cloned());
    // The driver's own command line is the one every driver process of the
    // instance gets; its settings arrive on the input descriptor.
    args.push("./pqb-driver".to_string());
    args.extend(fixed_argv(local));
    let mut spec = sandbox::Spec::submission(&vg.path, args, dir);
    spec.timeout = timeout;
    spec.cpu = cpu;
    spec.limits = Limits::from_plan(&cx.plan.limits);
    spec.inputs.push(sandbox::Input {
        fd: sandbox::INPUT_FD,
        bytes: settings_block(driver_args, None, None)?,
    });
    let out = sandbox::run(&spec)?;
    let (text, results_error) = read_results(&out);
    let mut lines = parse_lines(&text);
    lines.truncate(4096);
    let mut command: Vec<String> = vec!["valgrind".into(), "--vgdb=no".into()];
    command.extend(tool_args.iter().cloned());
    command.extend(["<driver>".into(), "--lib".into(), "<library>".into()]);
    command.extend(driver_args.iter().cloned());
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir)?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if keep(&name) && e.path().is_file() {
            files.push((name, std::fs::read(e.path())?));
        }
    }
    files.sort();
    let mut process = ProcessRecord::from_output(command, cpu, &out, lines, results_error);
    // Under Valgrind the CPU time is the translator's: no figure is
    // checked against it.
    process.sandbox.cpu_witness = Default::default();
    Ok(ToolRun {
        process,
        files,
        library_path: std::fs::canonicalize(dir.join("lib.so"))
            .unwrap_or_else(|_| dir.join("lib.so")),
    })
}

/// The instructions of each counted call from callgrind's dumps
/// (`<out>.1`, `<out>.2`, …: one per call, in order; each says `totals:`).
pub(crate) fn callgrind_calls(files: &[(String, Vec<u8>)], out: &str) -> Result<Vec<u64>> {
    let prefix = format!("{out}.");
    let mut dumps: Vec<(u64, u64)> = Vec::new();
    for (name, bytes) in files {
        let Some(n) = name
            .strip_prefix(&prefix)
            .and_then(|n| n.parse::<u64>().ok())
        else {
            continue;
        };
        let text = String::from_utf8_lossy(bytes);
        let total = text
            .lines()
            .find_map(|l| {
                l.strip_prefix("totals:")
                    .or_else(|| l.strip_prefix("summary:"))
            })
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .with_context(|| format!("callgrind dump {name} has no totals line"))?;
        dumps.push((n, total));
    }
    dumps.sort();
    Ok(dumps.into_iter().map(|(_, t)| t).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dumps_are_read_in_call_order() {
        let dump = |t: u64| {
            format!("version: 1\nevents: Ir\nsummary: {t}\n\nfn=x\n1 {t}\ntotals: {t}\n")
                .into_bytes()
        };
        let files = vec![
            ("cg.out".to_string(), dump(0)),
            ("cg.out.10".to_string(), dump(30)),
            ("cg.out.2".to_string(), dump(20)),
            ("cg.out.1".to_string(), dump(10)),
        ];
        let v = callgrind_calls(&files, "cg.out").unwrap();
        assert_eq!(v, [10, 20, 30]);
    }
}
