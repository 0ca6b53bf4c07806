//! The C compiler pqbench drives: its identity (which goes into every build
//! key and record) and the compile and link steps; `library` builds an
//! instance's shared library with it, `cmake` is the opt-in CMake backend.

pub(crate) mod assembler;
pub(crate) mod build_env;
pub(crate) mod cmake;
pub(crate) mod deps;
pub(crate) mod diag;
pub(crate) mod kinds;
pub(crate) mod library;
pub(crate) mod native;

pub(crate) use build_env::BuildEnv;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::records::campaign::SystemLibrary;
use crate::sandbox::{self, Outcome, Spec};

pub use crate::records::toolchain::{Compiler, ToolchainLimits};

impl Compiler {
    /// Resolves the compiler: `CC` from the environment wins over the
    /// campaign's setting.
    pub fn detect(configured: &str) -> Result<Compiler> {
        Self::detect_with(configured, true)
    }

    /// The plan's compiler: a system's cross compiler is never replaced by
    /// `CC` (which names a compiler for this host).
    pub(crate) fn for_plan(plan: &crate::plan::Plan) -> Result<Compiler> {
        // A matrix names its compilers: `CC` would relabel a column.
        let honour_cc = !plan.compiler_from_system && plan.matrix.is_none() && plan.child.is_none();
        let mut compiler = Self::detect_with(&plan.compiler, honour_cc)?;
        if let Some(command) = &plan.system_spec.assembler {
            compiler.assembler = Some(assembler::detect(command)?);
        }
        compiler.limits = plan.system_spec.toolchain_limits;
        compiler.environment = plan.system_spec.toolchain_environment.clone();
        // The submitter profile's flags are each implementation's own.
        let own = plan
            .instances
            .iter()
            .filter(|_| plan.flag_profiles.iter().any(|p| p.submitter))
            .filter_map(|i| i.submitter_cflags.as_ref())
            .flatten();
        if native::wanted(plan.flag_profiles.iter().flat_map(|p| &p.cflags).chain(own)) {
            compiler.native_flags = Some(native::resolve(&compiler.path).unwrap_or_default());
        }
        Ok(compiler)
    }

    fn detect_with(configured: &str, honour_cc: bool) -> Result<Compiler> {
        let command = std::env::var("CC")
            .ok()
            .filter(|s| honour_cc && !s.trim().is_empty())
            .unwrap_or_else(|| configured.to_string());
        let path = which(&command).with_context(|| {
            format!(
                "C compiler `{command}` not found on PATH (set CC or `compiler` in the campaign)"
            )
        })?;
        let version = version_line(&path)?;
        let target = capture(&path, &["-dumpmachine"])?.trim().to_string();
        let binary_sha256 = crate::fsutil::sha256_file(&path)?;
        Ok(Compiler {
            command,
            path,
            version,
            binary_sha256,
            target,
            assembler: None,
            native_flags: None,
            limits: None,
            environment: Vec::new(),
        })
    }

    /// A compiler identity for tests that compile nothing.
    pub fn placeholder() -> Compiler {
        Compiler {
            command: "cc".into(),
            path: PathBuf::from("/nonexistent/cc"),
            version: "placeholder 0".into(),
            binary_sha256: "0".repeat(64),
            target: "none".into(),
            assembler: None,
            native_flags: None,
            limits: None,
            environment: Vec::new(),
        }
    }

    /// Compiles one C file to an object, reading only beneath `reads` (and
    /// the system's and the compiler's own directories); returns the
    /// compiler's diagnostics on failure as the error message.
    pub(crate) fn compile(
        &self,
        reads: &[PathBuf],
        source: &Path,
        object: &Path,
        args: &[String],
    ) -> Result<String> {
        let mut full: Vec<String> = args.to_vec();
        full.extend([
            "-c".into(),
            source.display().to_string(),
            "-o".into(),
            object.display().to_string(),
        ]);
        if let Some(a) = self.assembler.as_ref().filter(|_| assembler::plain(source)) {
            let (program, mut own) = assembler::invocation(a)?;
            own.extend(full);
            let limits = self.job_limits();
            let (outcome, log) =
                run_tool(&program, reads, &own, object, &limits, &self.environment)
                    .with_context(|| format!("assembling {}", source.display()))?;
            return ended(outcome, log, "assembling", source, &limits);
        }
        self.run(reads, &full, "compiling", source, object)
    }

    /// The names of pqbench's variables its jobs get, as a build key's
    /// part (`toolchain.environment`; never their values): None when the
    /// system names none, so other keys stay as they were.
    pub(crate) fn environment_identity(&self) -> Option<String> {
        (!self.environment.is_empty()).then(|| format!("env:{}", self.environment.join("\u{1f}")))
    }

    /// What identifies the program that compiles `source`: the assembler's
    /// command and binary for plain assembly when the system names one,
    /// else nothing beyond the compiler (whose identity every key has).
    pub(crate) fn extra_identity(&self, source: &Path) -> Option<String> {
        let a = self
            .assembler
            .as_ref()
            .filter(|_| assembler::plain(source))?;
        Some(format!(
            "as:{}|{}|{}",
            a.command.join("\u{1f}"),
            a.binary_sha256,
            a.version
        ))
    }

    /// Links objects (and extra arguments) into `out`, reading as `compile`.
    pub(crate) fn link(
        &self,
        reads: &[PathBuf],
        inputs: &[PathBuf],
        out: &Path,
        args: &[String],
    ) -> Result<String> {
        let mut full: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
        full.extend(args.iter().cloned());
        full.extend(["-o".into(), out.display().to_string()]);
        self.run(reads, &full, "linking", out, out)
    }

    /// Runs the compiler confined as a toolchain: it may read only the
    /// system's toolchain directories, its own installation and `reads`,
    /// and write only in the directory of `output` (its temporary files
    /// too).
    fn run(
        &self,
        reads: &[PathBuf],
        args: &[String],
        what: &str,
        subject: &Path,
        output: &Path,
    ) -> Result<String> {
        let (outcome, log) = self
            .run_outcome(reads, args, output)
            .with_context(|| format!("{what} {}", subject.display()))?;
        ended(outcome, log, what, subject, &self.job_limits())
    }

    /// The limits of this compiler's jobs: its system's, else the defaults.
    pub(crate) fn job_limits(&self) -> ToolchainLimits {
        self.limits.unwrap_or_default()
    }

    /// Runs the compiler as `run` does and returns how it ended with its
    /// diagnostics, whatever the exit status.
    pub(crate) fn run_outcome(
        &self,
        reads: &[PathBuf],
        args: &[String],
        output: &Path,
    ) -> Result<(Outcome, String)> {
        run_tool(
            &self.path,
            reads,
            args,
            output,
            &self.job_limits(),
            &self.environment,
        )
    }

    /// The compiler's own directories (see `installation`).
    pub(crate) fn installation(&self) -> Vec<PathBuf> {
        installation(&self.path)
    }

    /// The shared library `-l<name>` links for this compiler (the file
    /// resolved through its links, which name its version:
    /// `libcrypto.so.3`), or an error naming the library.
    pub(crate) fn system_library(&self, name: &str) -> Result<SystemLibrary> {
        let asked = format!("lib{name}.so");
        let found = capture(&self.path, &[&format!("-print-file-name={asked}")])?;
        let found = PathBuf::from(found.trim());
        // Not found, the compiler prints the name back.
        if !found.is_absolute() {
            anyhow::bail!("no system library {asked} for {}", self.path.display());
        }
        let file = found.canonicalize().unwrap_or(found);
        let sha256 = crate::fsutil::sha256_file(&file)?;
        let file_name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let version = file_name
            .split_once(".so.")
            .map(|(_, v)| v.to_string())
            .filter(|v| !v.is_empty());
        Ok(SystemLibrary {
            name: name.to_string(),
            file: file.display().to_string(),
            version,
            sha256,
            algorithms: Vec::new(),
        })
    }
}

/// The log of a toolchain program that has ended: its diagnostics when it
/// succeeded, else an error with the first `error:` line and its context
/// (which a plain tail of a long log of notes and macro expansions cuts
/// off), led by the limit it hit when it hit one.
fn ended(
    outcome: Outcome,
    log: String,
    what: &str,
    subject: &Path,
    limits: &ToolchainLimits,
) -> Result<String> {
    let breach = diag::limit_breach(outcome, &log, limits)
        .map(|b| format!("{b}\n"))
        .unwrap_or_default();
    match outcome {
        Outcome::Exited(0) => Ok(log),
        Outcome::Exited(code) => bail!(
            "{what} {} failed (exit {code}):\n{breach}{}{}",
            subject.display(),
            diag::excerpt(&log),
            diag::denied_read(&log)
        ),
        other => bail!(
            "{what} {} failed: {other}:\n{breach}{}{}",
            subject.display(),
            diag::excerpt(&log),
            diag::denied_read(&log)
        ),
    }
}

/// A scratch folder for one toolchain job, outside the project and its
/// cache (the compiler never sees other instances' objects, libraries or
/// the cache's records), removed when dropped. The job's uid owns it
/// while the job runs.
pub(crate) fn scratch() -> Result<tempfile::TempDir> {
    crate::fsutil::scratch::folder("build-")
        .context("creating a scratch folder for a toolchain job")
}

/// Runs a toolchain program confined: it may read only the system's
/// toolchain directories, its own installation and `reads`, and write only
/// in the directory of `output` (its temporary files too); of pqbench's
/// environment it gets only the variables `passed` names.
fn run_tool(
    program: &Path,
    reads: &[PathBuf],
    args: &[String],
    output: &Path,
    limits: &ToolchainLimits,
    passed: &[String],
) -> Result<(Outcome, String)> {
    let out_dir = output
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let mut spec = Spec::toolchain(program, args.to_vec(), vec![out_dir.clone()])
        .reading(reads.iter().cloned())
        .executing(installation(program))
        .passing(passed);
    spec.timeout = Duration::from_secs(600);
    spec.limits = sandbox::Limits::toolchain(limits);
    // gcc looks for `-include` files in its working directory first: run
    // it where only its own output is, never where pqbench was started (a
    // stray api.h there would be force-included).
    spec.cwd = Some(out_dir.clone());
    let out = sandbox::run(&spec)?;
    // Its scratch folder (its temporary files are there) is no path a
    // record should carry: the files in it are named by their own names.
    let log = String::from_utf8_lossy(&out.stderr).replace(&format!("{}/", out_dir.display()), "");
    Ok((out.outcome, log))
}

/// Where a compiler keeps its own programs, libraries and headers, as it
/// reports them (`-print-search-dirs`, the `-v` include list), with the
/// directory of its resolved binary: a compiler installed outside `/usr`
/// (`/opt/gcc-14`, a cross toolchain in a home directory) works confined.
/// Asked once per compiler binary; `/` itself is never granted.
fn installation(compiler: &Path) -> Vec<PathBuf> {
    static KNOWN: OnceLock<Mutex<BTreeMap<PathBuf, Vec<PathBuf>>>> = OnceLock::new();
    let known = KNOWN.get_or_init(Mutex::default);
    if let Some(dirs) = known
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(compiler)
    {
        return dirs.clone();
    }
    let mut dirs = Vec::new();
    if let Some(bin) = compiler
        .canonicalize()
        .ok()
        .as_deref()
        .and_then(Path::parent)
    {
        dirs.push(bin.to_path_buf());
    }
    let search = capture(compiler, &["-print-search-dirs"]).unwrap_or_default();
    dirs.extend(search_dirs(&search));
    let verbose = Command::new(compiler)
        .args(["-E", "-v", "-x", "c", "/dev/null", "-o", "/dev/null"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
        .unwrap_or_default();
    dirs.extend(include_dirs(&verbose));
    dirs.retain(|d| d.is_absolute() && d.parent().is_some());
    dirs.sort();
    dirs.dedup();
    known
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(compiler.to_path_buf(), dirs.clone());
    dirs
}

/// The directories of `-print-search-dirs` (`install:`, `programs: =a:b`,
/// `libraries: =a:b`).
fn search_dirs(text: &str) -> Vec<PathBuf> {
    text.lines()
        .filter_map(|l| l.split_once(": "))
        .filter(|(k, _)| matches!(*k, "install" | "programs" | "libraries"))
        .flat_map(|(_, v)| v.trim_start_matches('=').split(':'))
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .collect()
}

/// The include directories between `#include <...> search starts here:`
/// and `End of search list.` of a `-v` preprocessor run.
fn include_dirs(text: &str) -> Vec<PathBuf> {
    text.lines()
        .skip_while(|l| !l.starts_with("#include "))
        .take_while(|l| !l.starts_with("End of search list"))
        .filter(|l| l.starts_with(' '))
        .map(|l| PathBuf::from(l.trim().trim_end_matches(" (framework directory)")))
        .collect()
}

/// The last `n` lines of a log.
pub(crate) fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The first line of a toolchain program's `--version`: its identity in
/// records.
fn version_line(path: &Path) -> Result<String> {
    Ok(capture(path, &["--version"])?
        .lines()
        .next()
        .unwrap_or_default()
        .trim()
        .to_string())
}

fn capture(path: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new(path)
        .args(args)
        .output()
        .with_context(|| format!("running {} {}", path.display(), args.join(" ")))?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Finds a command on PATH (or takes it as a path when it has a slash).
pub fn which(command: &str) -> Option<PathBuf> {
    if command.contains('/') {
        let p = PathBuf::from(command);
        return p.is_file().then(|| p.canonicalize().unwrap_or(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(command))
        .find(|p| p.is_file())
}
