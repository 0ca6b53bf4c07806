//! Where shards run, behind one small interface: a remote work directory
//! reached over SSH (`ssh`, `tar` and the remote shell, nothing stored by
//! pqbench), or a directory this machine shares with the cluster's nodes
//! (Slurm). Files travel content-addressed: the work directory keeps a
//! `blobs/<sha256>` store, and only blobs it lacks are sent.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

use crate::cache::Cache;
use crate::plan::system::SshExecutor;

/// A command's outcome on the other side.
pub(crate) struct Ran {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

pub(crate) trait Remote: Sync {
    /// Words a person recognises: `root@host:/path`, `/shared/dir`.
    fn describe(&self) -> String;
    /// Blobs already in the work directory's store.
    fn blobs(&self) -> Result<BTreeSet<String>>;
    /// Sends cache blobs the store lacks.
    fn send_blobs(&self, cache: &Cache, shas: &[String]) -> Result<()>;
    /// Writes a file under the work directory.
    fn put(&self, rel: &str, bytes: &[u8]) -> Result<()>;
    /// Runs `argv` (the first word may be relative to the work directory).
    fn run(&self, argv: &[String]) -> Result<Ran>;
    /// Copies a directory under the work directory to `local`, leaving out
    /// the names in `exclude` at its top.
    fn fetch_dir(&self, rel: &str, local: &Path, exclude: &[&str]) -> Result<()>;
    /// The work directory as the other side's processes see it.
    fn work_dir(&self) -> String;
}

/// Quotes a word for a POSIX shell.
pub(crate) fn sh_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@".contains(c))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The work directory on a machine reached with `ssh`.
pub(crate) struct Ssh {
    pub cfg: SshExecutor,
}

impl Ssh {
    fn target(&self) -> String {
        match &self.cfg.user {
            Some(u) => format!("{u}@{}", self.cfg.host),
            None => self.cfg.host.clone(),
        }
    }

    /// `ssh` with the configured port, key and options; batch mode, so a
    /// missing key fails at once instead of prompting.
    pub(crate) fn ssh(&self) -> Command {
        let mut c = Command::new("ssh");
        c.args(["-o", "BatchMode=yes", "-o", "ConnectTimeout=20"]);
        c.args([
            "-o",
            "ServerAliveInterval=10",
            "-o",
            "ServerAliveCountMax=3",
        ]);
        if let Some(p) = self.cfg.port {
            c.args(["-p", &p.to_string()]);
        }
        if let Some(i) = &self.cfg.identity {
            c.args(["-i", i]);
        }
        for o in &self.cfg.options {
            c.args(["-o", o]);
        }
        // The end of ssh's options: the target is never taken for one.
        c.arg("--").arg(self.target());
        c
    }

    fn shell(&self, script: &str, stdin: Option<Stdio>) -> Result<Ran> {
        let mut c = self.ssh();
        c.arg(script);
        c.stdin(stdin.unwrap_or_else(Stdio::null));
        let out = c
            .output()
            .with_context(|| format!("running ssh to {}", self.describe()))?;
        Ok(Ran {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }

    fn checked(&self, script: &str) -> Result<String> {
        let r = self.shell(script, None)?;
        if r.code != Some(0) {
            bail!(
                "on {}: `{script}` failed ({}): {}",
                self.describe(),
                r.code
                    .map_or("connection lost".into(), |c| format!("exit {c}")),
                r.stderr.trim()
            );
        }
        Ok(r.stdout)
    }
}

impl Remote for Ssh {
    fn describe(&self) -> String {
        format!("{}:{}", self.target(), self.cfg.work_dir)
    }

    fn work_dir(&self) -> String {
        self.cfg.work_dir.clone()
    }

    fn blobs(&self) -> Result<BTreeSet<String>> {
        let w = sh_quote(&self.cfg.work_dir);
        let out = self.checked(&format!("mkdir -p {w}/blobs && ls {w}/blobs"))?;
        Ok(out.lines().map(|l| l.trim().to_string()).collect())
    }

    fn send_blobs(&self, cache: &Cache, shas: &[String]) -> Result<()> {
        if shas.is_empty() {
            return Ok(());
        }
        // One tar stream: the names are the digests, checked on arrival.
        let mut tar = Command::new("tar");
        tar.arg("-C")
            .arg(cache.dir().join("blobs"))
            .arg("-cf")
            .arg("-");
        for s in shas {
            tar.arg(format!("{}/{s}", &s[..2]));
        }
        let mut tar = tar
            .stdout(Stdio::piped())
            .spawn()
            .context("running tar over the blobs to send")?;
        let pipe = tar.stdout.take().context("tar's output")?;
        let w = sh_quote(&self.cfg.work_dir);
        let script = format!(
            "mkdir -p {w}/blobs/.in && tar -C {w}/blobs/.in -xf - && for f in {w}/blobs/.in/*/*; do mv -f \"$f\" {w}/blobs/; done && rm -rf {w}/blobs/.in"
        );
        let r = self.shell(&script, Some(Stdio::from(pipe)))?;
        let _ = tar.wait();
        if r.code != Some(0) {
            bail!(
                "sending {} files to {} failed: {}",
                shas.len(),
                self.describe(),
                r.stderr.trim()
            );
        }
        Ok(())
    }

    fn put(&self, rel: &str, bytes: &[u8]) -> Result<()> {
        let path = format!("{}/{rel}", self.cfg.work_dir);
        let dir = path.rsplit_once('/').map(|(d, _)| d).unwrap_or(".");
        let script = format!(
            "mkdir -p {} && cat > {}.tmp && mv -f {}.tmp {}",
            sh_quote(dir),
            sh_quote(&path),
            sh_quote(&path),
            sh_quote(&path)
        );
        let mut c = self.ssh();
        c.arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = c.spawn().context("running ssh")?;
        child
            .stdin
            .take()
            .context("ssh's input")?
            .write_all(bytes)
            .context("sending a file over ssh")?;
        let out = child.wait_with_output()?;
        if !out.status.success() {
            bail!(
                "writing {path} on {} failed: {}",
                self.target(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(())
    }

    fn run(&self, argv: &[String]) -> Result<Ran> {
        let line: Vec<String> = argv.iter().map(|a| sh_quote(a)).collect();
        let w = sh_quote(&self.cfg.work_dir);
        let script = format!("mkdir -p {w} && cd {w} && {}", line.join(" "));
        self.shell(&script, None)
    }

    fn fetch_dir(&self, rel: &str, local: &Path, exclude: &[&str]) -> Result<()> {
        std::fs::create_dir_all(local)?;
        let ex: String = exclude
            .iter()
            .map(|e| format!(" --exclude=./{}", sh_quote(e)))
            .collect();
        let mut c = self.ssh();
        c.arg(format!(
            "tar -C {}/{}{ex} -cf - .",
            sh_quote(&self.cfg.work_dir),
            sh_quote(rel)
        ));
        c.stdout(Stdio::piped())
            .stdin(Stdio::null())
            .stderr(Stdio::piped());
        let mut ssh = c.spawn().context("running ssh")?;
        let pipe = ssh.stdout.take().context("ssh's output")?;
        let untar = Command::new("tar")
            .arg("-C")
            .arg(local)
            .args(["-xf", "-"])
            .stdin(Stdio::from(pipe))
            .output()
            .context("running tar")?;
        let out = ssh.wait_with_output()?;
        if !out.status.success() || !untar.status.success() {
            bail!(
                "fetching {rel} from {} failed: {}{}",
                self.target(),
                String::from_utf8_lossy(&out.stderr).trim(),
                String::from_utf8_lossy(&untar.stderr).trim()
            );
        }
        Ok(())
    }
}

/// A directory this machine shares with the nodes that run the shards.
pub(crate) struct SharedDir {
    pub dir: PathBuf,
}

impl Remote for SharedDir {
    fn describe(&self) -> String {
        self.dir.display().to_string()
    }

    fn work_dir(&self) -> String {
        self.dir.display().to_string()
    }

    fn blobs(&self) -> Result<BTreeSet<String>> {
        let b = self.dir.join("blobs");
        std::fs::create_dir_all(&b).with_context(|| format!("creating {}", b.display()))?;
        Ok(std::fs::read_dir(&b)?
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect())
    }

    fn send_blobs(&self, cache: &Cache, shas: &[String]) -> Result<()> {
        for s in shas {
            let to = self.dir.join("blobs").join(s);
            let from = cache.blob_path(s);
            if std::fs::hard_link(&from, &to).is_err() {
                crate::fsutil::copy_atomic(&from, &to)?;
            }
        }
        Ok(())
    }

    fn put(&self, rel: &str, bytes: &[u8]) -> Result<()> {
        crate::fsutil::write_atomic(&self.dir.join(rel), bytes)
    }

    fn run(&self, argv: &[String]) -> Result<Ran> {
        let (program, args) = argv.split_first().context("empty command")?;
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("creating {}", self.dir.display()))?;
        // A program named relative to the directory is found there.
        let program = if program.contains('/') && !program.starts_with('/') {
            self.dir.join(program).display().to_string()
        } else {
            program.clone()
        };
        let out = Command::new(&program)
            .args(args)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("running {program}"))?;
        Ok(Ran {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }

    fn fetch_dir(&self, rel: &str, local: &Path, exclude: &[&str]) -> Result<()> {
        fn walk(from: &Path, to: &Path, exclude: &[&str], top: bool) -> Result<()> {
            std::fs::create_dir_all(to)?;
            for e in std::fs::read_dir(from)?.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if top && exclude.contains(&name.as_str()) {
                    continue;
                }
                let p = e.path();
                if p.is_dir() {
                    walk(&p, &to.join(&name), exclude, false)?;
                } else {
                    crate::fsutil::copy_atomic(&p, &to.join(&name))?;
                }
            }
            Ok(())
        }
        walk(&self.dir.join(rel), local, exclude, true)
    }
}
