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
use pqbench::engine::{Freshness, Job, Manifest, Policy, Publication, Results, Stage};
use pqbench::pipeline::{self, Recording, RunOptions};
use pqbench::plan::Project;
use pqbench::records::lock;
use pqbench::stages::build::BuildStage;
use pqbench::toolchain::Compiler;
use serde_json::json;

static DUMMY_RUNS: AtomicUsize = AtomicUsize::new(0);

/// Reads the build result and counts its attempts.
struct Dummy;

impl Stage for Dummy {
    type Output = usize;
    const NAME: &'static str = "dummy";
    const REQUIRES: &'static [&'static str] = &["build"];
    const POLICY: Policy = Policy::Measuring;

    fn manifest(&self, job: &Job) -> Result<Option<Manifest>> {
        let Some(b) = job.prior.get::<BuildStage>() else {
            return Ok(None);
        };
        let mut m = Manifest::new();
        m.set("build", b).set("instance", job.inst.key());
        Ok(Some(m))
    }

    fn run(&self, job: &Job) -> Result<usize> {
        DUMMY_RUNS.fetch_add(1, Ordering::SeqCst);
        Ok(job
            .prior
            .get::<BuildStage>()
            .map_or(0, |b| b.attempts.len()))
    }

    const RECORD_TREE: Option<&'static str> = Some("dummy");

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
            &json!({ "attempts": out }),
        )
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
        pipeline::status::states_with(&plan, registry, Compiler::placeholder(), None).unwrap();
    report
        .rows
        .into_iter()
        .filter_map(|r| match r.freshness {
            Freshness::Stale(why) => Some((r.instance, r.stage.to_string(), why.join("; "))),
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
    assert!(dummies.iter().all(|r| r.2 == "build stale"), "{dummies:?}");
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
            "sign-2/A-1 dummy build stale",
            "sign-2/A-2 build sources changed: sign.c",
            "sign-2/A-2 dummy build stale",
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
    // run, status and the lock all take their stages from one registry.
    for f in [
        "pipeline/mod.rs",
        "pipeline/status.rs",
        "pipeline/rundir.rs",
    ] {
        let text = std::fs::read_to_string(common::repo().join("src").join(f)).unwrap();
        for stage in ["MemoryStage", "SizesStage", "SurveyStage", "ProfileStage"] {
            assert!(!text.contains(stage), "{f} names {stage} itself");
        }
    }
}
