//! The engine with its registry, tested without a C compiler: the real
//! build stage answered by a mock runner, plus a dummy stage registered
//! once, must appear in `plan`/`status` and in the lock, go stale when what
//! it depends on changes, and be recomputed for exactly the affected
//! instances. Also checks the module layering the engine relies on.

use crate::common;
use common::TestProject;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::Result;
use pqbench::engine::testing::MockRunner;
use pqbench::engine::{
    Dimension, Freshness, Job, Manifest, Policy, Publication, Records, Results, Stage,
};
use pqbench::engine::{EvidenceFile, MethodText, PageSection, Part, Section, Slot};
use pqbench::pipeline::{self, Recording, RunOptions};
use pqbench::plan::Project;
use pqbench::records::campaign::CampaignRecord;
use pqbench::records::dataset::Dataset;
use pqbench::records::folder::{Contents, FolderOf, FolderRecord, OpKey, RecordFolder};
use pqbench::records::lock;
use pqbench::stages::build::BuildStage;
use pqbench::toolchain::Compiler;
use serde_json::json;

static DUMMY_RUNS: AtomicUsize = AtomicUsize::new(0);

/// Reads the build result and counts its attempts, times its setting.
struct Dummy;

/// The dummy's `[stage.dummy]` table.
#[derive(serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
struct DummySettings {
    factor: usize,
}

impl Default for DummySettings {
    fn default() -> Self {
        DummySettings { factor: 1 }
    }
}

impl Stage for Dummy {
    type Output = usize;
    const NAME: &'static str = "dummy";
    const REQUIRES: &'static [&'static str] = &["build"];
    const POLICY: Policy = Policy::Measuring;

    fn manifest(&self, job: &Job) -> Result<Option<Manifest>> {
        let Some(b) = job.prior.get::<BuildStage>() else {
            return Ok(None);
        };
        let settings: DummySettings = pqbench::engine::settings(job.cx.plan, Self::NAME)?;
        let mut m = Manifest::new();
        m.set("build", b)
            .set("instance", job.inst.key())
            .set("settings", &settings);
        Ok(Some(m))
    }

    fn run(&self, job: &Job) -> Result<usize> {
        let settings: DummySettings = pqbench::engine::settings(job.cx.plan, Self::NAME)?;
        // Counted for the test that runs it with its default only.
        if settings.factor == 1 {
            DUMMY_RUNS.fetch_add(1, Ordering::SeqCst);
        }
        let attempts = job
            .prior
            .get::<BuildStage>()
            .map_or(0, |b| b.attempts.len());
        Ok(attempts * settings.factor)
    }

    fn check_settings(&self, table: &serde_json::Value) -> Result<(), String> {
        serde_json::from_value::<DummySettings>(table.clone())
            .map(drop)
            .map_err(|e| e.to_string())
    }

    fn page_section(&self) -> Option<&dyn PageSection> {
        Some(&DummyRecords)
    }

    fn records(&self) -> Option<&dyn Records> {
        Some(&DummyRecords)
    }

    /// Its own record, and a note in the instance's build record.
    fn publish(
        &self,
        p: &mut Publication,
        inst: &pqbench::plan::Instance,
        out: &usize,
        _: &Results,
    ) -> Result<()> {
        p.build()?.kat_detail = Some(format!("dummy counted {out}"));
        p.write(
            &format!("dummy/{}/{}__attempts.json", inst.algorithm, inst.label),
            &json!({ "algorithm": inst.algorithm, "label": inst.label, "attempts": out }),
        )
    }
}

/// The dummy's record: its count is kept as written, so that `check`,
/// not the dataset's loader, judges it.
#[derive(serde::Deserialize)]
struct DummyRecord {
    algorithm: String,
    label: String,
    attempts: serde_json::Value,
}

/// Datasets load and file the dummy's records with no edit of the crate.
impl FolderRecord for DummyRecord {
    const DIR: &'static str = "dummy";

    fn key(&self) -> OpKey {
        (self.algorithm.clone(), self.label.clone(), String::new())
    }
}

/// The dummy's record folder: one file per instance, whose count `check`
/// recomputes (it must be a number).
struct DummyRecords;

impl RecordFolder for DummyRecords {
    fn dir(&self) -> &'static str {
        DummyRecord::DIR
    }
    fn load(&self, dataset_dir: &Path) -> Result<Contents> {
        FolderOf::<DummyRecord>::new().load(dataset_dir)
    }
}

impl Records for DummyRecords {
    fn noun(&self) -> &'static str {
        "dummy records"
    }
    fn files(&self, inst: &pqbench::plan::Instance) -> Vec<String> {
        vec![format!(
            "dummy/{}/{}__attempts.json",
            inst.algorithm, inst.label
        )]
    }
    fn check(&self, file: &Path, shown: &str, _: &CampaignRecord) -> Result<Vec<String>> {
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(file)?)?;
        Ok((!v["attempts"].is_u64())
            .then(|| format!("{shown}: attempts is not a count"))
            .into_iter()
            .collect())
    }
}

/// A table on each algorithm page, read back from the dummy's records.
impl PageSection for DummyRecords {
    fn section(&self, ds: &Dataset, algorithm: &str, labels: &[String]) -> Result<Option<Section>> {
        let mut rows = Vec::new();
        for label in labels {
            if let Some(r) = ds.folder::<DummyRecord>().get(algorithm, label, "") {
                rows.push(vec![label.clone(), r.attempts.to_string()]);
            }
        }
        Ok((!rows.is_empty()).then(|| Section {
            title: "Dummy <counts>".into(),
            note: "Build attempts times the factor.".into(),
            columns: vec!["instance".into(), "attempts".into()],
            rows,
        }))
    }

    /// A part in its own template at the end of section 4.
    fn part(
        &self,
        ds: &Dataset,
        algorithm: &str,
        labels: &[String],
        _: &[&str],
    ) -> Result<Option<Part>> {
        let total: u64 = labels
            .iter()
            .filter_map(|l| ds.folder::<DummyRecord>().get(algorithm, l, ""))
            .filter_map(|r| r.attempts.as_u64())
            .sum();
        Part::new(Slot::Performance, "dummy-part", &json!({ "total": total })).map(Some)
    }

    fn summary_column(&self) -> Option<&'static str> {
        Some("dummy attempts")
    }

    fn summary_cell(
        &self,
        ds: &Dataset,
        algorithm: &str,
        label: &str,
        _: &[&str],
    ) -> Option<String> {
        let r = ds.folder::<DummyRecord>().get(algorithm, label, "")?;
        Some(format!("{} attempts", r.attempts))
    }

    /// Its file, listed beside the signing operation.
    fn evidence(&self, _: &Dataset, algorithm: &str, label: &str, op: &str) -> Vec<EvidenceFile> {
        (op == "sign")
            .then(|| EvidenceFile {
                item: "dummy attempts".into(),
                path: format!("dummy/{algorithm}/{label}__attempts.json"),
            })
            .into_iter()
            .collect()
    }

    fn method(&self, _: &Dataset) -> Option<MethodText> {
        Some(MethodText {
            title: "Dummy method",
            bullets: vec!["Attempts are counted, then multiplied.".into()],
        })
    }

    fn limitations(&self, _: &Dataset) -> Vec<String> {
        vec!["A dummy counts nothing real.".into()]
    }

    fn templates(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "dummy-part.md",
                "\nDummy attempts in all: {{ p.view.total }}.\n",
            ),
            (
                "dummy-part.html",
                "<p>Dummy attempts in all: {{ p.view.total }}.</p>\n",
            ),
        ]
    }
}

fn project() -> TestProject {
    let p = TestProject::bare();
    for (id, dir) in [("sign-1", "one"), ("sign-2", "two")] {
        p.write(&format!("algorithms/{dir}/sign.c"), "int x;\n");
        p.write(
            &format!("algorithms/{id}.toml"),
            &format!(
                "id = \"{id}\"\nname = \"N\"\nkind = \"sign\"\napi = \"ngcc\"\n\n[ngcc]\nheaders = []\n\n\
                 [[implementation]]\nname = \"reference\"\nroot = \"{dir}\"\n\n\
                 [[parameter-set]]\nlabel = \"A-1\"\ndefines = {{ LEVEL = 1 }}\n\n\
                 [[parameter-set]]\nlabel = \"A-2\"\ndefines = {{ LEVEL = 2 }}\n"
            ),
        );
    }
    p.write(
        "campaigns/t.toml",
        "algorithms = [\"sign-1\", \"sign-2\"]\nstages = [\"dummy\", \"render\"]\n\n[host]\nrequire-fixed = false\n",
    );
    p
}

/// A failed build attempt: a result with no artifacts to keep in the cache.
fn canned_build(stage: &str, _: &pqbench::plan::Instance) -> Option<serde_json::Value> {
    (stage == "build").then(|| {
        json!({"attempts": [{"profile": "guide", "ok": false, "library_sha256": null,
                             "load_bytes": null, "log": "mock", "objects": []}]})
    })
}

fn stale_rows(
    p: &TestProject,
    registry: &pqbench::engine::Registry,
) -> Vec<(String, String, String)> {
    // The dummy stage is not in the standard registry: check against ours.
    let plan = pqbench::plan::resolve(&Project::new(p.path()).unwrap(), "t").unwrap();
    pipeline::check_stage_names(&plan, registry).unwrap();
    let report =
        pipeline::status::states_with(&plan, registry, Compiler::placeholder(), None, None)
            .unwrap();
    report
        .rows
        .into_iter()
        .filter_map(|r| match r.freshness {
            Freshness::Stale(why) => Some((r.instance, r.stage.to_string(), why.join("; "))),
            Freshness::Waits(on) => Some((
                r.instance,
                r.stage.to_string(),
                format!("waits on {}", on.join(", ")),
            )),
            _ => None,
        })
        .collect()
}

fn run(p: &TestProject, registry: &pqbench::engine::Registry, runner: &MockRunner) -> String {
    let plan = pqbench::plan::resolve(&Project::new(p.path()).unwrap(), "t").unwrap();
    let rec = Recording::default();
    let opts = RunOptions {
        quiet: true,
        ..Default::default()
    };
    pipeline::run_registry(
        &plan,
        &opts,
        &rec,
        registry,
        runner,
        Compiler::placeholder(),
    )
    .unwrap();
    rec.written.get().unwrap().display().to_string()
}

#[test]
fn a_stage_registered_once_is_planned_run_locked_and_goes_stale_with_its_inputs() {
    let p = project();
    let registry = pqbench::stages::registry().stage(Dummy);
    // The standard registry rejects the unknown stage with a position.
    let err = pipeline::resolve(&Project::new(p.path()).unwrap(), "t").unwrap_err();
    assert!(err.to_string().contains("unknown stage `dummy`"), "{err}");
    assert!(err.to_string().contains("t.toml:2:"), "{err}");

    let before = stale_rows(&p, &registry);
    let dummies: Vec<_> = before.iter().filter(|r| r.1 == "dummy").collect();
    assert_eq!(dummies.len(), 4, "{before:?}");
    assert!(
        dummies.iter().all(|r| r.2 == "waits on build"),
        "{dummies:?}"
    );
    assert!(before.iter().any(|r| r.1 == "build" && r.2 == "never run"));

    let runner = MockRunner::new(canned_build);
    DUMMY_RUNS.store(0, Ordering::SeqCst);
    let run_dir = run(&p, &registry, &runner);
    assert_eq!(DUMMY_RUNS.load(Ordering::SeqCst), 4);
    let jobs = runner.calls();
    assert_eq!(
        jobs.iter().filter(|j| j.0 == "build").count(),
        4,
        "{jobs:?}"
    );
    // Only what the campaign selects and what that requires ran.
    assert!(jobs
        .iter()
        .all(|j| ["build", "dummy", "render"].contains(&j.0.as_str())));

    // The stage published its own records and its part of build.json,
    // with no code outside it naming it; its tree is the registry's.
    let out = p.path().join("output/t/local");
    for (id, label) in [("sign-1", "A-1"), ("sign-2", "A-2")] {
        let rec = p.json(&format!("output/t/local/dummy/{id}/{label}__attempts.json"));
        assert_eq!(rec["attempts"], 1, "{rec}");
    }
    let build = p.json("output/t/local/build.json");
    assert!(build["instances"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["kat_detail"] == "dummy counted 1"));
    assert!(out.join("dummy").is_dir());
    assert!(registry.record_trees().contains(&"dummy"));
    assert!(!pqbench::stages::registry()
        .record_trees()
        .contains(&"dummy"));

    let lock = lock::load(Path::new(&run_dir)).unwrap();
    for i in &lock.instances {
        let names: Vec<&str> = i.stages.keys().map(String::as_str).collect();
        assert_eq!(names, ["build", "dummy"], "{}", i.instance);
    }
    assert!(stale_rows(&p, &registry).is_empty());

    // A changed source makes that algorithm's build and dummy stale, and
    // the next run recomputes exactly those.
    p.write("algorithms/two/sign.c", "int y;\n");
    let after = stale_rows(&p, &registry);
    let mut shown: Vec<String> = after
        .iter()
        .filter(|r| r.0 != "campaign")
        .map(|r| format!("{} {} {}", r.0, r.1, r.2))
        .collect();
    shown.sort();
    assert_eq!(
        shown,
        [
            "sign-2/A-1 build sources changed: sign.c",
            "sign-2/A-1 dummy waits on build",
            "sign-2/A-2 build sources changed: sign.c",
            "sign-2/A-2 dummy waits on build",
        ]
    );
    runner.clear();
    DUMMY_RUNS.store(0, Ordering::SeqCst);
    run(&p, &registry, &runner);
    let rerun: Vec<String> = runner
        .calls()
        .into_iter()
        .filter(|j| j.0 != "render")
        .map(|j| format!("{} {}", j.0, j.1))
        .collect();
    assert_eq!(rerun.len(), 2, "{rerun:?}");
    assert!(rerun
        .iter()
        .all(|j| j == "build sign-2/A-1" || j == "build sign-2/A-2"));
    // The mock returns the same build result, so the dummy's input is
    // unchanged and its stored result is reused.
    assert_eq!(DUMMY_RUNS.load(Ordering::SeqCst), 0);
}

#[test]
fn a_panicking_stage_fails_its_item_and_the_run_goes_on() {
    struct Panics;
    impl Stage for Panics {
        type Output = u8;
        const NAME: &'static str = "dummy";
        const REQUIRES: &'static [&'static str] = &["build"];
        const POLICY: Policy = Policy::Parallel;
        fn manifest(&self, job: &Job) -> Result<Option<Manifest>> {
            let mut m = Manifest::new();
            m.set("instance", job.inst.key());
            Ok(Some(m))
        }
        fn run(&self, job: &Job) -> Result<u8> {
            if job.inst.algorithm == "sign-1" {
                panic!("boom in {}", job.inst.key());
            }
            Ok(1)
        }
    }
    let p = project();
    let registry = pqbench::stages::registry().stage(Panics);
    let plan = pqbench::plan::resolve(&Project::new(p.path()).unwrap(), "t").unwrap();
    let opts = RunOptions {
        quiet: true,
        ..Default::default()
    };
    let runner = MockRunner::new(canned_build);
    let summary = pipeline::run_registry(
        &plan,
        &opts,
        &Recording::default(),
        &registry,
        &runner,
        Compiler::placeholder(),
    )
    .unwrap();
    assert_eq!(summary.errors.len(), 2, "{:?}", summary.errors);
    assert!(summary.errors.iter().all(|e| e.stage == "dummy"
        && e.instance.starts_with("sign-1/")
        && e.message.contains("boom")));
    assert_eq!(summary.exit_code(), 1);
}

/// The engine names no stage (the layer rule covers it too, see
/// `architecture`), and run, status and the lock all take their stages
/// from one registry.
#[test]
fn the_engine_knows_no_stage_and_records_know_neither() {
    for f in common::files_with_ext(&common::repo().join("src/engine"), "rs") {
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(!text.contains("crate::stages"), "{}", f.display());
        assert!(!text.contains("crate::pipeline"), "{}", f.display());
    }
    // The run layer's pipeline takes every stage from the registry it is
    // given (the standard one by default) and names none itself.
    for f in common::files_with_ext(&common::repo().join("src/pipeline"), "rs") {
        let text = std::fs::read_to_string(&f).unwrap();
        let named = text
            .replace("crate::stages::registry()", "")
            .replace("stages::registry()", "");
        assert!(
            !named.contains("stages::") && !named.contains("Stage>"),
            "{} names a stage",
            f.display()
        );
    }
}

/// A stage registered once, with its own settings table, record folder and
/// page section, is carried by every command that handles evidence: its
/// settings are validated (naming the key) and key its results, `check`
/// recomputes its records and regenerates its section, `publish` and
/// `merge` carry its folder, and the pages show its table. Nothing outside
/// the stage's code and its registry line names it.
#[test]
fn a_stage_with_settings_records_and_a_page_section_is_carried_everywhere() {
    let p = project();
    register_m1(&p);
    let registry = pqbench::stages::registry().stage(Dummy);
    let campaign = "system = \"m1\"\nalgorithms = [\"sign-1\", \"sign-2\"]\nstages = [\"dummy\", \"render\"]\n[host]\nrequire-fixed = false\n";

    // A misspelt key of its table is an error naming the table, key and line.
    p.write(
        "campaigns/t.toml",
        &format!("{campaign}\n[stage.dummy]\nfator = 3\n"),
    );
    let plan = pqbench::plan::resolve(&Project::new(p.path()).unwrap(), "t").unwrap();
    let err = pipeline::check_stage_names(&plan, &registry)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("[stage.dummy]") && err.contains("fator"),
        "{err}"
    );
    // The key's own line, not the table's (7).
    assert!(err.contains("t.toml:8:1"), "{err}");
    // A table for a stage that takes no settings, or for no stage, too.
    p.write(
        "campaigns/t.toml",
        &format!("{campaign}\n[stage.build]\nx = 1\n[stage.nope]\n"),
    );
    let plan = pqbench::plan::resolve(&Project::new(p.path()).unwrap(), "t").unwrap();
    let err = pipeline::check_stage_names(&plan, &registry)
        .unwrap_err()
        .to_string();
    assert!(err.contains("takes no settings (found `x`)"), "{err}");
    assert!(err.contains("no stage `nope`"), "{err}");

    p.write(
        "campaigns/t.toml",
        &format!("{campaign}\n[stage.dummy]\nfactor = 3\n"),
    );
    let runner = MockRunner::new(canned_build);
    let run_dir = run(&p, &registry, &runner);
    let rec = p.json("output/t/m1/dummy/sign-1/A-1__attempts.json");
    assert_eq!(rec["attempts"], 3, "{rec}");
    // The lock keeps its records; a changed setting makes it stale.
    let lock = lock::load(Path::new(&run_dir)).unwrap();
    assert!(lock.files.contains_key("dummy/sign-2/A-2__attempts.json"));
    p.write(
        "campaigns/t.toml",
        &format!("{campaign}\n[stage.dummy]\nfactor = 4\n"),
    );
    let stale = stale_rows(&p, &registry);
    assert_eq!(
        stale.iter().filter(|r| r.1 == "dummy").count(),
        4,
        "{stale:?}"
    );
    p.write(
        "campaigns/t.toml",
        &format!("{campaign}\n[stage.dummy]\nfactor = 3\n"),
    );

    // Its section is on the pages, escaped like every value.
    let html = p.read("output/t/site/m1/sign-1.html");
    assert!(
        html.contains("<h2 id=\"stage-section-1\">Dummy &lt;counts&gt;</h2>"),
        "{html}"
    );
    assert!(html.contains("<tr><td>A-2</td><td>3</td></tr>"), "{html}");
    let md = p.read("output/t/site/m1/sign-1.md");
    assert!(
        md.contains("## Dummy &lt;counts&gt;\n") && md.contains("| A-1 | 3 |\n"),
        "{md}"
    );
    // So are its own part, summary column, evidence, method section and
    // limitation, with no edit to the pages' code or templates.
    assert!(html.contains("<p>Dummy attempts in all: 6.</p>"), "{html}");
    assert!(md.contains("\nDummy attempts in all: 6.\n"), "{md}");
    assert!(
        md.contains("| `A-2` | dummy attempts | [`dummy/sign-1/A-2__attempts.json`](../../m1/dummy/sign-1/A-2__attempts.json) |"),
        "{md}"
    );
    let summary = p.read("output/t/site/m1/summary.md");
    assert!(summary.contains("| dummy attempts | notes |"), "{summary}");
    assert!(summary.contains("| 3 attempts | "), "{summary}");
    let method = p.read("output/t/site/m1/method.md");
    assert!(
        method.contains("## Dummy method\n")
            && method.contains("Attempts are counted, then multiplied."),
        "{method}"
    );
    assert!(method.contains("A dummy counts nothing real."), "{method}");

    // check recomputes its records and regenerates its section.
    let out = p.path().join("output/t");
    let report = pqbench::check::check_dataset_with(&out, &registry).unwrap();
    assert!(report.passed(), "{report}");
    assert_eq!(report.files_of("dummy"), 4);
    assert!(report.to_string().contains("4 dummy records"), "{report}");
    // Without the stage, its section is a page rendering does not produce.
    let without = pqbench::check::check_dataset(&out).unwrap();
    assert!(
        without.problems.iter().any(|l| l.contains("sign-1.html")),
        "{without}"
    );

    // publish carries its folder, and the published copy checks.
    let dest = p.path().join("published");
    pqbench::publish::publish_from(&registry, &out, None, &dest, Default::default(), None).unwrap();
    assert!(dest
        .join("data/m1/dummy/sign-2/A-1__attempts.json")
        .is_file());
    let report = pqbench::check::check_dataset_with(&dest, &registry).unwrap();
    assert!(report.passed(), "{report}");
    let forged = dest.join("data/m1/dummy/sign-2/A-1__attempts.json");
    let problems = check_with_a_forged_count(&registry, &dest, &forged);
    assert!(
        problems
            .iter()
            .any(|l| l.contains("A-1__attempts.json: attempts is not a count")),
        "{problems:?}"
    );

    // merge carries it back: a dataset merged into the campaign keeps its
    // folder, checks with the stage's check, and the pages show it.
    let moved = move_dataset_away(&p, &out);
    let plan = pqbench::plan::resolve(&Project::new(p.path()).unwrap(), "t").unwrap();
    let merged = pqbench::merge::merge(&registry, &plan, &moved).unwrap();
    assert!(merged.to_string().contains("4 dummy records"), "{merged}");
    assert!(out.join("m1/dummy/sign-1/A-2__attempts.json").is_file());
    assert!(p
        .read("output/t/site/m1/sign-2.html")
        .contains("Dummy &lt;counts&gt;"));
}

/// Registers system `m1` (this host's architecture), so that a dataset of
/// it can be merged back.
fn register_m1(p: &TestProject) {
    let arch = std::env::consts::ARCH;
    p.write(
        "campaigns/systems.toml",
        &format!("[[system]]\nid = \"m1\"\narch = \"{arch}\"\n"),
    );
}

/// Moves system `m1`'s dataset out of the campaign folder `out` (and its
/// pages), as if made elsewhere, for `merge`; returns where it is now.
fn move_dataset_away(p: &TestProject, out: &Path) -> std::path::PathBuf {
    let moved = p.path().join("moved");
    std::fs::rename(out.join("m1"), &moved).unwrap();
    std::fs::remove_dir_all(out.join("site")).unwrap();
    // The mock's placeholder compiler names no target; a real one names
    // this host's, which merge compares with the registration.
    let record = moved.join("campaign.json");
    let mut c: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
    c["compiler"]["target"] = format!("{}-linux-gnu", std::env::consts::ARCH).into();
    std::fs::write(&record, serde_json::to_vec_pretty(&c).unwrap()).unwrap();
    moved
}

/// Writes a dummy record whose count is not a count over `file` and
/// returns what `check` of `dir` then finds.
fn check_with_a_forged_count(
    registry: &pqbench::engine::Registry,
    dir: &Path,
    file: &Path,
) -> Vec<String> {
    let forged = json!({"algorithm": "sign-2", "label": "A-1", "attempts": "x"});
    std::fs::write(file, forged.to_string()).unwrap();
    pqbench::check::check_dataset_with(dir, registry)
        .unwrap()
        .problems
}

/// A further dimension, known to nothing but this test: each campaign
/// also runs twice more, as datasets `repeat/r1` and `repeat/r2`, with the
/// dummy stage only.
struct Repeat;

impl Dimension for Repeat {
    fn name(&self) -> &'static str {
        "repeat"
    }

    fn children(&self, plan: &pqbench::plan::Plan) -> Vec<(String, pqbench::plan::Plan)> {
        ["r1", "r2"]
            .iter()
            .map(|name| {
                let mut p = plan.clone();
                p.stages = vec!["dummy".into()];
                p.stage_locations = vec![None];
                (name.to_string(), p)
            })
            .collect()
    }
}

fn no_report_files(_: &Path, _: &pqbench::reproduce::report::ReproductionReport) -> Result<()> {
    Ok(())
}

/// A dimension registered once is carried by every command that handles
/// datasets and runs: `run` makes its datasets and their runs, `status`
/// names them, `check` checks their records, `publish` and `merge` carry
/// them, `compare --combination` compares two of them, and `reproduce`
/// re-runs and compares each. Nothing outside this test and `records/`
/// names it.
#[test]
fn a_further_dimension_registered_once_is_carried_by_every_command() {
    let p = project();
    register_m1(&p);
    p.write(
        "campaigns/t.toml",
        "system = \"m1\"\nalgorithms = [\"sign-1\", \"sign-2\"]\nstages = [\"dummy\", \"render\"]\n[host]\nrequire-fixed = false\n",
    );
    let registry = pqbench::stages::registry().stage(Dummy).dimension(Repeat);
    let runner = MockRunner::new(canned_build);
    let run_dir = run(&p, &registry, &runner);

    // run: each further dataset has its records, its own campaign record
    // and its own run, which the campaign's record and lock name.
    let campaign = p.json("output/t/m1/campaign.json");
    assert_eq!(
        campaign["children"],
        json!([{"dimension": "repeat", "name": "r1"}, {"dimension": "repeat", "name": "r2"}])
    );
    let lock = lock::load(Path::new(&run_dir)).unwrap();
    assert_eq!(lock.children.len(), 2, "{:?}", lock.children);
    for (c, name) in lock.children.iter().zip(["r1", "r2"]) {
        assert_eq!((c.dimension.as_str(), c.name.as_str()), ("repeat", name));
        let dir = format!("output/t/m1/repeat/{name}");
        assert_eq!(
            p.json(&format!("{dir}/campaign.json"))["child"]["name"],
            name
        );
        assert!(p
            .path()
            .join(format!("{dir}/runs/{}/lock.json", c.run_id))
            .is_file());
        let rec = p.json(&format!("{dir}/dummy/sign-2/A-1__attempts.json"));
        assert_eq!(rec["attempts"], 1, "{rec}");
    }
    // status: every row of both is fresh, named by its dataset.
    let plan = pqbench::plan::resolve(&Project::new(p.path()).unwrap(), "t").unwrap();
    let status =
        pipeline::status::states_with(&plan, &registry, Compiler::placeholder(), None, None)
            .unwrap();
    let named = |c: &str| {
        status
            .rows
            .iter()
            .filter(|r| r.instance.starts_with(c))
            .count()
    };
    assert_eq!(
        (named("repeat r1: "), named("repeat r2: ")),
        (8, 8),
        "{:?}",
        status.rows
    );
    assert!(stale_rows(&p, &registry).is_empty());

    // check: their records are checked with the stage's own check.
    let out = p.path().join("output/t");
    let report = pqbench::check::check_dataset_with(&out, &registry).unwrap();
    assert!(report.passed(), "{report}");
    assert_eq!(report.files_of("dummy"), 12);
    let r2 = out.join("m1/repeat/r2/dummy/sign-2/A-1__attempts.json");
    let kept = std::fs::read(&r2).unwrap();
    let problems = check_with_a_forged_count(&registry, &out, &r2);
    let named = "repeat/r2/dummy/sign-2/A-1__attempts.json: attempts is not a count";
    assert!(problems.iter().any(|l| l.contains(named)), "{problems:?}");
    std::fs::write(&r2, kept).unwrap();

    // publish carries them, and the published copy checks.
    let dest = p.path().join("published");
    pqbench::publish::publish_from(&registry, &out, None, &dest, Default::default(), None).unwrap();
    for name in ["r1", "r2"] {
        let copied = dest.join(format!(
            "data/m1/repeat/{name}/dummy/sign-1/A-2__attempts.json"
        ));
        assert!(copied.is_file(), "{}", copied.display());
    }
    let report = pqbench::check::check_dataset_with(&dest, &registry).unwrap();
    assert!(report.passed(), "{report}");
    assert_eq!(report.files_of("dummy"), 12);

    // compare: two of them, by name; an unknown name lists the known ones.
    pqbench::compare::compare_combinations(p.path(), &lock.run_id, "r1", "r2", None).unwrap();
    let err = pqbench::compare::compare_combinations(p.path(), &lock.run_id, "r3", "r2", None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("has no dataset `r3`; it has r1, r2"), "{err}");

    // reproduce: nothing changed, and each is re-run and compared.
    let engine = pqbench::reproduce::Reproducer {
        registry: &registry,
        runner: &runner,
        compiler: Some(Compiler::placeholder()),
    };
    let project = Project::new(p.path()).unwrap();
    let prepared = pqbench::reproduce::prepare(&project, &lock.run_id, &engine).unwrap();
    assert!(
        prepared.differences.is_empty(),
        "{:?}",
        prepared.differences
    );
    let opts = pqbench::reproduce::ReproduceOptions {
        quiet: true,
        ..Default::default()
    };
    let done = pqbench::reproduce::reproduce(&prepared, &opts, no_report_files, &engine).unwrap();
    let rep = done.report.unwrap();
    let originals: Vec<&str> = rep.children.iter().map(|c| c.original.as_str()).collect();
    let recorded: Vec<&str> = lock.children.iter().map(|c| c.run_id.as_str()).collect();
    assert_eq!(originals, recorded, "{:?}", rep.failures);
    assert!(
        !rep.failures.iter().any(|f| f.contains("made no run")),
        "{:?}",
        rep.failures
    );
    // A dataset the campaign no longer makes is named as a change.
    let without = pqbench::stages::registry().stage(Dummy);
    let engine = pqbench::reproduce::Reproducer {
        registry: &without,
        ..engine
    };
    let prepared = pqbench::reproduce::prepare(&project, &lock.run_id, &engine).unwrap();
    assert_eq!(
        prepared.differences,
        ["repeat r1 removed", "repeat r2 removed"]
    );

    // merge carries them back from a dataset made elsewhere.
    let moved = move_dataset_away(&p, &out);
    pqbench::merge::merge(&registry, &plan, &moved).unwrap();
    assert!(out
        .join("m1/repeat/r2/dummy/sign-1/A-1__attempts.json")
        .is_file());
}
