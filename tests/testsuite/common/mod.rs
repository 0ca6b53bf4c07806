//! Shared helpers of the integration tests: throwaway project directories
//! and running the `pqbench` binary in them.
#![allow(dead_code)]

pub mod daemons;
pub mod skip;
pub mod temp_project;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

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
        let p = TestProject::bare_cold();
        p.share_support_tools();
        p
    }

    /// `bare()` whose cache has no support tools yet.
    fn bare_cold() -> TestProject {
        let p = TestProject {
            dir: tempfile::Builder::new()
                .prefix("pqbench-test-")
                .tempdir()
                .unwrap(),
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

    /// Copies pqbench's own tools for the local gcc (`pqb-kat`,
    /// `pqb-driver`, `pqb-drbg`, built once for the whole suite) into the
    /// project's cache, where a run would otherwise compile them again
    /// (about 2.5 CPU-seconds a project). They are keyed by pqbench's
    /// support sources and the compiler, as a run keys them: a run with
    /// another compiler, or after the support code changed, builds its own.
    fn share_support_tools(&self) {
        static TOOLS: OnceLock<Option<PathBuf>> = OnceLock::new();
        let tools = TOOLS.get_or_init(|| {
            let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("shared-support-cache");
            let cc = pqbench::toolchain::Compiler::detect("gcc").ok()?;
            let support =
                pqbench::support::Support::prepare(&pqbench::cache::Cache::new(&cache), &cc)
                    .ok()?;
            support.dir.parent().map(Path::to_path_buf)
        });
        if let Some(dir) = tools {
            let name = dir.file_name().unwrap();
            copy_tree(dir, &self.path().join("output/.cache/support").join(name));
        }
    }

    /// Removes the shared support tools, and `output/` when it held
    /// nothing else: for a test whose subject includes that build, or that
    /// checks nothing was written.
    pub fn without_support_tools(&self) {
        let output = self.path().join("output");
        std::fs::remove_dir_all(output.join(".cache/support")).unwrap();
        let _ = std::fs::remove_dir(output.join(".cache"));
        let _ = std::fs::remove_dir(&output);
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
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
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

/// Every file under `dir`, at any depth (links are not followed).
pub fn all_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => out.extend(all_files(&p)),
            Ok(t) if t.is_file() => out.push(p),
            _ => {}
        }
    }
    out
}

/// The lock of the one run recorded under `<system dir>/runs`, and its
/// path.
pub fn only_lock(system_dir: &Path) -> (PathBuf, serde_json::Value) {
    let file = std::fs::read_dir(system_dir.join("runs"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("lock.json"))
        .find(|l| l.is_file())
        .expect("a recorded run");
    let lock = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    (file, lock)
}

/// A campaign file with small timing settings, for tests.
pub fn quick_campaign(algorithms: &[&str], extra: &str) -> String {
    let list: Vec<String> = algorithms.iter().map(|a| format!("\"{a}\"")).collect();
    format!(
        "algorithms = [{}]\n{extra}\n[kat]\ntimeout-seconds = 20\n\n[timing]\ntrials = 5\nwarmup = 1\ntrial-seconds = 0.005\nbudget-seconds = 1.0\ntimeout-seconds = 20\n\n[host]\nrequire-fixed = false\n",
        list.join(", ")
    )
}

// ---------------------------------------------------------------------------
// Measurement and analysis tests (tests/measure_*.rs, tests/analysis_*.rs).

/// An NGCC signature fixture's algorithm TOML: sources under
/// `algorithms/<root>`, one parameter set per `(label, defines)` pair (the
/// defines as the inside of a TOML inline table, e.g. `"FIX_WORK = 10"`),
/// and a known issue that lets every instance be timed without a KAT.
pub fn sign_fixture_toml(
    id: &str,
    root: &str,
    headers: &[&str],
    sources: &[&str],
    uses: &[&str],
    sets: &[(&str, &str)],
) -> String {
    let quoted = |v: &[&str]| {
        let q: Vec<String> = v.iter().map(|s| format!("\"{s}\"")).collect();
        format!("[{}]", q.join(", "))
    };
    let mut t =
        format!("id = \"{id}\"\nname = \"Fixture {id}\"\nkind = \"sign\"\napi = \"ngcc\"\n");
    if !uses.is_empty() {
        t += &format!("uses = {}\n", quoted(uses));
    }
    t += &format!(
        "\n[ngcc]\nheaders = {}\n\n[[implementation]]\nname = \"reference\"\nroot = \"{root}\"\nsources = {}\n",
        quoted(headers),
        quoted(sources)
    );
    for (label, defines) in sets {
        t += &format!("\n[[parameter-set]]\nlabel = \"{label}\"\ndefines = {{ {defines} }}\n");
    }
    t + "\n[[known-issue]]\nlabels = \".*\"\naction = \"measure\"\ncause = \"fixture without reference KAT\"\n"
}

/// Copies the measurement fixture (tests/fixtures/measure) to
/// `algorithms/measure` and writes `algorithms/<id>.toml` over it.
pub fn measure_fixture(p: &TestProject, id: &str, sets: &[(&str, &str)]) {
    p.copy("tests/fixtures/measure", "algorithms/measure");
    let sources = ["measure.c", "fixdrng.c", "helpers.c", "helpers2.c"];
    let toml = sign_fixture_toml(id, "measure", &["api.h", "fixdrng.h"], &sources, &[], sets);
    p.write(&format!("algorithms/{id}.toml"), &toml);
}

/// A campaign with small timing settings (overridden by `timing`, pairs of
/// key and TOML value) and the tables in `tail` appended (e.g. `[limits]`).
///
/// It measures on the first allowed CPU, the demo campaign on the last
/// (pqbench's default): each measuring CPU has its machine-wide lock, held
/// for the rest of a run, so the suite's two kinds of measuring test wait
/// for each other only when they are of the same kind.
pub fn measure_campaign(
    algorithms: &[&str],
    stages: &[&str],
    timing: &[(&str, &str)],
    tail: &str,
) -> String {
    let list = |v: &[&str]| -> String {
        let q: Vec<String> = v.iter().map(|s| format!("\"{s}\"")).collect();
        q.join(", ")
    };
    let mut settings: Vec<(String, String)> = [
        ("trials", "5"),
        ("warmup", "1"),
        ("trial-seconds", "0.005"),
        ("budget-seconds", "1.0"),
        // Few enough samples that the debug build's statistics stay quick.
        ("max-iterations", "100"),
        ("timeout-seconds", "20"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    for (k, v) in timing {
        match settings.iter_mut().find(|(key, _)| key == k) {
            Some(e) => e.1 = v.to_string(),
            None => settings.push((k.to_string(), v.to_string())),
        }
    }
    let cpus = pqbench::host::allowed_cpus();
    if cpus.len() > 1 && !settings.iter().any(|(k, _)| k == "cpus") {
        settings.push(("cpus".into(), format!("[{}]", cpus[0])));
    }
    let timing: Vec<String> = settings.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    format!(
        "algorithms = [{}]\nflag-profiles = [\"guide\"]\nstages = [{}]\n\n[kat]\ntimeout-seconds = 20\n\n[timing]\n{}\n\n[host]\nrequire-fixed = false\n\n{tail}",
        list(algorithms),
        list(stages),
        timing.join("\n")
    )
}

/// `records/<id>/<label>__<op>.json` of campaign `campaign` on `local`.
pub fn op_record(
    p: &TestProject,
    campaign: &str,
    id: &str,
    label: &str,
    op: &str,
) -> pqbench::records::operation::OperationRecord {
    let rel = format!("output/{campaign}/local/records/{id}/{label}__{op}.json");
    serde_json::from_str(&p.read(&rel)).unwrap_or_else(|e| panic!("parsing {rel}: {e}"))
}

/// Median of a record's per-call cycle samples over all its trials.
/// The `q` quantile of the per-call samples of a record. A low quantile is
/// the cost of an undisturbed call: load (another test measuring on the
/// other core, a parallel build) only adds to a call's cycles, and it hits
/// some calls of a record and not others.
pub fn low_quantile_call_cycles(r: &pqbench::records::operation::OperationRecord, q: f64) -> f64 {
    let mut v: Vec<u64> = r
        .trials
        .iter()
        .flat_map(|t| t.samples.iter().copied())
        .collect();
    assert!(
        !v.is_empty(),
        "{}/{} {}: no samples",
        r.algorithm,
        r.label,
        r.op
    );
    v.sort_unstable();
    v[((v.len() - 1) as f64 * q) as usize] as f64
}

pub fn median_call_cycles(r: &pqbench::records::operation::OperationRecord) -> f64 {
    let v: Vec<f64> = r
        .trials
        .iter()
        .flat_map(|t| &t.samples)
        .map(|&s| s as f64)
        .collect();
    assert!(
        !v.is_empty(),
        "{}/{} {}: no samples",
        r.algorithm,
        r.label,
        r.op
    );
    pqbench::stats::median(&v)
}

/// The stored statistics are exactly what the stored raw trials give.
pub fn assert_statistics_recompute(r: &pqbench::records::operation::OperationRecord) {
    assert_eq!(
        pqbench::stats::summarize(&r.trials),
        r.statistics,
        "{}/{} {}: statistics differ from the raw trials",
        r.algorithm,
        r.label,
        r.op
    );
}

/// The trial processes of a record whose trials were kept, in trial order
/// (a trial repeated because it lost the CPU leaves a process without a
/// kept trial). Matched on the exact figures of the process's `trial` line.
pub fn kept_trial_processes(
    r: &pqbench::records::operation::OperationRecord,
) -> Vec<&pqbench::measure::driver::ProcessRecord> {
    r.trials
        .iter()
        .map(|t| {
            r.processes
                .iter()
                .find(|p| {
                    p.line("trial").is_some_and(|l| {
                        l.u64("calls") == Some(t.calls)
                            && l.f64("seconds") == Some(t.seconds)
                            && l.f64("cycles") == Some(t.cycles)
                    })
                })
                .unwrap_or_else(|| {
                    panic!(
                        "{}/{} {}: no process for a trial",
                        r.algorithm, r.label, r.op
                    )
                })
        })
        .collect()
}

/// How far a kept trial's cycles may exceed the sum of its calls' samples:
/// the loop's own work per call, plus time the process spent off the CPU
/// between calls (the TSC keeps counting while it waits). Between the
/// counter reads of two calls the driver hashes the call's outputs and,
/// before keygen, enc and sign, re-seeds the library's randomness
/// (pqbench's AES-256 CTR_DRBG: a key schedule and three blocks in
/// software): about 600 cycles on a loaded 2-core VM, so 2,000 are
/// allowed per call. A trial that ran at least 95 % of its wall time
/// allows 5 % of its cycles besides; one kept although it lost the CPU
/// (its attempts ran out on a loaded host) may have waited any time
/// between its calls.
pub fn gap_allowed(
    r: &pqbench::records::operation::OperationRecord,
    t: &pqbench::stats::Trial,
) -> f64 {
    let proc = kept_trial_processes(r)
        .into_iter()
        .zip(&r.trials)
        .find(|(_, kept)| std::ptr::eq(*kept, t))
        .map(|(p, _)| p)
        .expect("a kept trial of this record");
    if pqbench::measure::timing::lost_cpu(proc) {
        f64::INFINITY
    } else {
        2000.0 * t.calls as f64 + 0.05 * t.cycles
    }
}

/// Whether a trial's call count is one the time stage spreads around the
/// planned count (from half to one and a half times it).
pub fn within_spread(calls: u64, planned: u64) -> bool {
    calls >= 1 && 2 * calls + 1 >= planned && 2 * calls <= 3 * planned + 1
}

/// Whether a kept trial's call count is one the time stage spreads around
/// the planned count, times the scale of the set the CPU witness kept.
pub fn kept_within_spread(
    r: &pqbench::records::operation::OperationRecord,
    calls: u64,
    planned: u64,
) -> bool {
    let scale = r.witness_sets.as_ref().map_or(1, |w| w.scale);
    calls % scale == 0 && within_spread(calls / scale, planned)
}

/// Sets of trials an operation ran (more than one when the CPU witness's
/// first verdict was open).
pub fn trial_sets(r: &pqbench::records::operation::OperationRecord) -> usize {
    r.witness_sets.as_ref().map_or(1, |w| w.sets as usize)
}

/// An empty synthetic dataset of campaign `t` on system `local` (titled
/// `x86-64`), for page tests that add their own instances.
/// Renders the one-system dataset `<dir>/<system>` with every stage's
/// folders and sections into `<dir>/site`, which it returns.
pub fn render_one(dir: &std::path::Path, system: &str) -> std::path::PathBuf {
    let site = dir.join("site");
    pqbench::render::render_dataset_dirs(
        &[dir.join(system)],
        &site,
        None,
        &pqbench::stages::registry(),
    )
    .unwrap();
    site
}

pub fn synth_local() -> pqbench::render::synth::Synth {
    use pqbench::render::synth;
    let env = synth::environment("Test CPU", 2000.0, 8000, "2026-01-01T00:00:00");
    synth::Synth::new(
        "t",
        "local",
        "x86-64",
        "2026-01-01T00:00:00",
        "2026-01-01T01:00:00",
        env,
        1,
    )
}
