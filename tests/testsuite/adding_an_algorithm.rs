//! The guide's "Adding an algorithm" walk-through, run as written: the
//! shell blocks under its `## Walk-through` heading, extracted from
//! `docs/src/adding-an-algorithm.md` and pasted into `bash` at the root of
//! a copy of the demo project with `pqbench` on the `PATH`. It must take
//! the new algorithm from nothing to KAT PASS and timed records.

use crate::common;
use common::TestProject;

use std::process::Command;

/// The ```sh blocks of the walk-through section, in order.
fn walk_through_blocks() -> Vec<String> {
    let guide =
        std::fs::read_to_string(common::repo().join("docs/src/adding-an-algorithm.md")).unwrap();
    let section = guide
        .split("\n## Walk-through\n")
        .nth(1)
        .expect("the guide has a walk-through section");
    let section = section.split("\n## ").next().unwrap();
    section
        .split("```sh\n")
        .skip(1)
        .map(|b| b.split("\n```").next().unwrap().to_string())
        .collect()
}

#[test]
fn the_walk_through_works_as_written() {
    let blocks = walk_through_blocks();
    assert!(blocks.len() >= 4, "{blocks:?}");
    let p = TestProject::demo();
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_pqbench"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let script = format!("set -e\n{}\n", blocks.join("\n"));
    let out = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(p.path())
        .env("PATH", path)
        .env_remove("CC")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success(),
        "{script}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    // The first run said NOKAT, the last one passed and timed both sets.
    assert!(stdout.contains("KAT: 2 NOKAT of 2 instances"), "{stdout}");
    let last_run = stdout.rsplit("KAT: ").next().unwrap();
    assert!(last_run.starts_with("2 PASS of 2 instances"), "{stdout}");
    for label in ["LARCH-1", "LARCH-3"] {
        for op in ["keygen", "sign", "verify"] {
            let rec = p.json(&format!(
                "output/larch/local/records/larch-copy/{label}__{op}.json"
            ));
            assert_eq!(rec["status"], "ok", "{label} {op}: {rec}");
        }
    }
    assert!(p
        .path()
        .join("output/larch/site/local/larch-copy.html")
        .is_file());
}
