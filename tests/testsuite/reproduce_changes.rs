//! `pqbench reproduce` names every changed input (source, header, define,
//! flag, compiler) and runs nothing unless `--allow-changed`.

use crate::common::temp_project as project;

use project::{text, TempProject};

const O2: &str = r#""-std=c99", "-O2", "-fPIC", "-D_GNU_SOURCE""#;
const O3: &str = r#""-std=c99", "-O3", "-fPIC", "-D_GNU_SOURCE""#;
const STAGES: &str = r#""build", "kat""#;

/// Reproduces `id` expecting a refusal that names `what`; nothing may run.
fn refused(p: &TempProject, id: &str, env: &[(&str, &str)], what: &str) {
    let before = p.runs("fx").len();
    let out = p.pqbench_env(&["reproduce", id], env);
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(2), "{shown}");
    assert!(shown.contains(what), "`{what}` not named:\n{shown}");
    assert!(shown.contains("nothing was run"), "{shown}");
    assert_eq!(
        p.runs("fx").len(),
        before,
        "a refused reproduction ran:\n{shown}"
    );
}

#[test]
fn changed_inputs_are_named_before_anything_runs() {
    let p = TempProject::fixture(1, STAGES, O2);
    p.pqbench(&["run", "fx"]);
    let id = p.runs("fx").pop().expect("the run left a run directory");

    let ok = p.pqbench(&["reproduce", &id]);
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok));
    assert!(text(&ok).contains("inputs: identical to the lock"));

    let source = p.read("algorithms/fixmeas/measure.c");
    p.write(
        "algorithms/fixmeas/measure.c",
        &format!("{source}/* edited */\n"),
    );
    refused(&p, &id, &[], "sources changed: measure.c");
    // The same refusal as one JSON document: the run, no report, exit 2.
    let out = p.pqbench(&["reproduce", &id, "--format", "json"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let r: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    assert_eq!(r["run"]["run_id"].as_str(), Some(id.as_str()));
    assert_eq!(
        r["run"]["input_differences"][0],
        "sources changed: measure.c"
    );
    assert!(r["report"].is_null() && r["exit_code"] == 2, "{r}");
    // With --allow-changed it runs; a comment changes no instruction.
    let out = p.pqbench(&["reproduce", &id, "--allow-changed"]);
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(
        shown.contains("library bit-identical, KAT identical"),
        "{shown}"
    );
    let latest = p.run_dir("fx", p.runs("fx").last().unwrap());
    let md = std::fs::read_to_string(latest.join("reproduction.md")).unwrap();
    assert!(md.contains("sources changed: measure.c"), "{md}");
    // `--format md` prints that same report.
    let out = p.pqbench(&["reproduce", &id, "--allow-changed", "--format", "md"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let latest = p.run_dir("fx", p.runs("fx").last().unwrap());
    let md = std::fs::read_to_string(latest.join("reproduction.md")).unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), md);
    p.write("algorithms/fixmeas/measure.c", &source);

    let header = p.read("algorithms/fixmeas/api.h");
    p.write("algorithms/fixmeas/api.h", &format!("{header}\n"));
    refused(&p, &id, &[], "headers changed: api.h");
    p.write("algorithms/fixmeas/api.h", &header);

    let campaign = p.read("campaigns/fx.toml");
    p.write("campaigns/fx.toml", &campaign.replace(O2, O3));
    refused(&p, &id, &[], "flags changed: fx: -O2 → -O3");
    p.write("campaigns/fx.toml", &campaign);

    p.set_repeat(2);
    refused(
        &p,
        &id,
        &[],
        "defines changed: fixmeas/FIX-A: -DFIX_REPEAT=1 -DFIX_WORK=10 → -DFIX_REPEAT=2 -DFIX_WORK=10",
    );
    p.set_repeat(1);

    let wrapper = p.root().join("cc-wrapper.sh");
    std::fs::write(&wrapper, "#!/bin/sh\nexec gcc \"$@\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let cc = wrapper.to_str().unwrap();
    refused(&p, &id, &[("CC", cc)], "compiler changed:");
    refused(&p, &id, &[("CC", cc)], "cc-wrapper.sh");

    let back = p.pqbench(&["reproduce", &id]);
    assert!(
        text(&back).contains("inputs: identical to the lock"),
        "{}",
        text(&back)
    );
}

#[test]
fn unknown_runs_and_datasets_without_lock_are_refused() {
    let p = TempProject::fixture(1, STAGES, O2);
    let out = p.pqbench(&["reproduce", "20990101"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(text(&out).contains("no run `20990101`"), "{}", text(&out));
    p.pqbench(&["run", "fx"]);
    let out = p.pqbench(&["reproduce", "output/fx/local"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(text(&out).contains("has no lock.json"), "{}", text(&out));
}
