//! Shared helpers of the integration tests: throwaway project directories
//! and running the `pqbench` binary in them.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root (where Cargo.toml is).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A project in a temporary directory: its own algorithms/, kat/,
/// campaigns/ and output/ (with its own cache), removed on drop.
pub struct TestProject {
    pub dir: tempfile::TempDir,
}

impl TestProject {
    /// An empty project with only the shared components (ICCS stand-in).
    pub fn bare() -> TestProject {
        let p = TestProject {
            dir: tempfile::Builder::new().prefix("pqbench-test-").tempdir().unwrap(),
        };
        for d in ["algorithms", "campaigns", "kat"] {
            std::fs::create_dir_all(p.path().join(d)).unwrap();
        }
        p.copy("algorithms/components", "algorithms/components");
        p
    }

    /// A copy of the repository's demo project.
    pub fn demo() -> TestProject {
        let p = TestProject::bare();
        p.copy("algorithms", "algorithms");
        p.copy("kat", "kat");
        p.copy("campaigns", "campaigns");
        p
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Copies `from` (relative to the repository) to `to` (relative to the
    /// project), recursively.
    pub fn copy(&self, from: &str, to: &str) {
        copy_tree(&repo().join(from), &self.path().join(to));
    }

    pub fn write(&self, rel: &str, text: &str) {
        let p = self.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path().join(rel))
            .unwrap_or_else(|e| panic!("reading {rel}: {e}"))
    }

    pub fn json(&self, rel: &str) -> serde_json::Value {
        serde_json::from_str(&self.read(rel)).unwrap_or_else(|e| panic!("parsing {rel}: {e}"))
    }

    /// Runs `pqbench -C <project> <args>`.
    pub fn pqbench(&self, args: &[&str]) -> Run {
        let out = Command::new(env!("CARGO_BIN_EXE_pqbench"))
            .arg("-C")
            .arg(self.path())
            .args(args)
            .env_remove("CC")
            .output()
            .expect("running pqbench");
        Run::from(out)
    }
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

impl Run {
    /// Panics with both streams unless the exit code is `code`.
    pub fn expect(self, code: i32) -> Run {
        assert_eq!(
            self.code, code,
            "exit code {} (wanted {code})\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        );
        self
    }
}

pub fn copy_tree(from: &Path, to: &Path) {
    if from.is_file() {
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(from, to).unwrap();
        return;
    }
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        copy_tree(&e.path(), &to.join(e.file_name()));
    }
}

/// Every file under `dir` with extension `ext`.
pub fn files_with_ext(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else { return out };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_with_ext(&p, ext));
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
    out
}

/// A campaign file with small timing settings, for tests.
pub fn quick_campaign(algorithms: &[&str], extra: &str) -> String {
    let list: Vec<String> = algorithms.iter().map(|a| format!("\"{a}\"")).collect();
    format!(
        "algorithms = [{}]\n{extra}\n[kat]\ntimeout-seconds = 20\n\n[timing]\ntrials = 5\nwarmup = 1\ntrial-seconds = 0.005\nbudget-seconds = 1.0\ntimeout-seconds = 20\n\n[host]\nrequire-fixed = false\n",
        list.join(", ")
    )
}
