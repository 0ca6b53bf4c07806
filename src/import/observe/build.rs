//! Running a submission's own build, and the generator it made, as the
//! untrusted jobs they are. The build runs in a scratch copy of the tree
//! as a toolchain job (a job uid, no socket, no network, reads confined to
//! the copy and the toolchain, writes only in the scratch folder, nothing
//! of pqbench's environment, killed with everything it started when it
//! ends), with pqbench's stand-ins (`record.rs`) as its compilers. The
//! generator runs as a submission job in a folder of its own.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::record::{self, Call, LOG_VAR, TOOLS, TOOLS_VAR};
use crate::sandbox::{self, Outcome, Spec};

/// The cross file a meson build is configured with (`$PQB_MESON_CROSS_FILE`).
const MESON_CROSS: &str = "meson-cross.ini";
pub(super) const MESON_CROSS_VAR: &str = "PQB_MESON_CROSS_FILE";

/// How long a submission's own build may take.
const BUILD_SECONDS: u64 = 1800;
/// How long its KAT generator may take (the slowest NIST generators run
/// for minutes).
const GENERATOR_SECONDS: u64 = 3600;

/// One build as it ran: its command, the copy it ran in and its calls.
pub(super) struct Observed {
    pub command: String,
    pub scratch: tempfile::TempDir,
    /// The copy of the tree, in `scratch`.
    pub root: PathBuf,
    pub calls: Vec<Call>,
    /// Lines of the log that were not calls (the build wrote to it).
    pub unparsed: usize,
}

/// The stand-ins' folder: pqbench's binary under each tool's name, in a
/// folder of pqbench's own that the build can read but not change.
pub(super) struct Tools {
    dir: tempfile::TempDir,
    exe: PathBuf,
}

impl Tools {
    pub(super) fn new() -> Result<Tools> {
        let exe = std::env::current_exe()
            .and_then(|e| e.canonicalize())
            .context("finding pqbench's own binary (the stand-in compiler)")?;
        let dir = tempfile::Builder::new()
            .prefix("pqbench-tools-")
            .tempdir()
            .context("creating the stand-ins' folder")?;
        for t in TOOLS {
            std::os::unix::fs::symlink(&exe, dir.path().join(t))
                .with_context(|| format!("linking the stand-in for {t}"))?;
        }
        // meson runs a program it compiled to check the compiler, which a
        // toolchain job may not: a cross file for this same machine that
        // says programs need a wrapper makes it skip the check.
        let arch = std::env::consts::ARCH;
        let cross = format!(
            "[binaries]\nc = '{cc}'\ncpp = '{cxx}'\nar = '{ar}'\n\n[host_machine]\nsystem = 'linux'\ncpu_family = '{arch}'\ncpu = '{arch}'\nendian = 'little'\n\n[properties]\nneeds_exe_wrapper = true\n",
            cc = dir.path().join("cc").display(),
            cxx = dir.path().join("c++").display(),
            ar = dir.path().join("ar").display(),
        );
        std::fs::write(dir.path().join(MESON_CROSS), cross)?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))?;
        Ok(Tools { dir, exe })
    }

    fn path(&self, tool: &str) -> String {
        self.dir.path().join(tool).display().to_string()
    }

    /// The build's environment: the stand-ins first on PATH (a Makefile's
    /// own `CC = gcc` or `AR = ar rcs` finds them there, with its own
    /// flags kept) and in `CC` and `CXX`, which make's defaults, CMake and
    /// meson read.
    fn env(&self, log: &Path) -> Vec<(String, String)> {
        vec![
            ("CC".into(), self.path("cc")),
            ("CXX".into(), self.path("c++")),
            (
                "PATH".into(),
                format!("{}:/usr/local/bin:/usr/bin:/bin", self.dir.path().display()),
            ),
            (LOG_VAR.into(), log.display().to_string()),
            (TOOLS_VAR.into(), self.dir.path().display().to_string()),
            (
                MESON_CROSS_VAR.into(),
                self.dir.path().join(MESON_CROSS).display().to_string(),
            ),
        ]
    }
}

/// Copies `tree` into a fresh scratch folder and runs `command` there with
/// `sh -c`, recording every compiler call.
pub(super) fn observe(tree: &Path, command: &str, tools: &Tools) -> Result<Observed> {
    let scratch = crate::toolchain::scratch()?;
    let root = scratch.path().join("tree");
    let files = crate::fsutil::foreign::regular_files(tree, crate::fsutil::foreign::TREE, &|n| {
        n == ".git"
    })?;
    for (rel, from) in &files {
        crate::fsutil::copy_atomic(from, &root.join(rel))?;
    }
    let log = scratch.path().join("calls.jsonl");
    let mut spec = Spec::toolchain(
        "/bin/sh",
        vec!["-c".into(), command.to_string()],
        vec![scratch.path().to_path_buf()],
    )
    .executing([tools.dir.path().to_path_buf(), tools.exe.clone()]);
    spec.cwd = Some(root.clone());
    spec.env = tools.env(&log);
    spec.timeout = Duration::from_secs(BUILD_SECONDS);
    let out = sandbox::run(&spec)?;
    if out.outcome != Outcome::Exited(0) {
        let text = String::from_utf8_lossy(&[out.stdout, out.stderr].concat()).into_owned();
        bail!(
            "the build `{command}` failed ({}):\n{}",
            out.outcome,
            crate::toolchain::tail(&text, 30)
        );
    }
    let (calls, unparsed) = record::read_log(&log);
    Ok(Observed {
        command: command.to_string(),
        scratch,
        root,
        calls,
        unparsed,
    })
}

/// What a generator wrote: each file's name and bytes.
pub(super) type Written = Vec<(String, Vec<u8>)>;

/// Runs a program the build made (its `bytes`, written to `dir/name`) in
/// `dir` as a submission job, bounded like a KAT run; its exit and its
/// output.
pub(crate) fn run_program(dir: &Path, name: &str, bytes: &[u8]) -> Result<(Outcome, String)> {
    let program = dir.join(name);
    std::fs::write(&program, bytes).with_context(|| format!("writing {}", program.display()))?;
    std::fs::set_permissions(
        &program,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )?;
    let mut spec = Spec::submission(&program, Vec::new(), dir);
    spec.timeout = Duration::from_secs(GENERATOR_SECONDS);
    spec.limits = sandbox::Limits {
        address_space: 16 << 30,
        cpu_seconds: GENERATOR_SECONDS,
        file_size: 1 << 30,
        processes: sandbox::JOB_PROCESSES,
    };
    let out = sandbox::run(&spec)?;
    let text = String::from_utf8_lossy(&[out.stdout, out.stderr].concat()).into_owned();
    Ok((out.outcome, text))
}

/// Runs a generator the build made, in a folder of its own, and returns
/// the KAT files (`.rsp`) it wrote there.
pub(super) fn run_generator(generator: &Path) -> Result<Written> {
    let job = tempfile::Builder::new()
        .prefix("pqbench-generator-")
        .tempdir()
        .context("creating the generator's folder")?;
    let bytes = crate::fsutil::foreign::read_regular(generator, 1 << 30)?;
    let (outcome, text) = run_program(job.path(), "generator", &bytes)
        .with_context(|| format!("running {}", generator.display()))?;
    if outcome != Outcome::Exited(0) {
        bail!(
            "the generator {} failed ({}):\n{}",
            generator.display(),
            outcome,
            crate::toolchain::tail(&text, 10)
        );
    }
    let mut written = Vec::new();
    for e in std::fs::read_dir(job.path())?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let meta = std::fs::symlink_metadata(e.path())?;
        if meta.is_file() && name.ends_with(".rsp") {
            let bytes = crate::fsutil::foreign::read_regular(&e.path(), 1 << 30)?;
            written.push((name, bytes));
        }
    }
    written.sort();
    if written.is_empty() {
        bail!("the generator {} wrote no .rsp file", generator.display());
    }
    Ok(written)
}
