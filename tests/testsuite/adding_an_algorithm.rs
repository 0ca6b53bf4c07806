//! The guide's "Adding an algorithm" walk-through, run as written: the
//! shell blocks under its `## Walk-through` heading, extracted from
//! `docs/src/adding-an-algorithm.md` and pasted into `bash` at the root of
//! a copy of the demo project with `pqbench` on the `PATH`. It must take
//! the new algorithm from nothing to KAT PASS and timed records.

use crate::common;
use common::{quick_campaign, TestProject};

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

/// A parameter set's `include-dirs` add to its implementation's: a set
/// that needs one more directory names only that one, and still finds the
/// implementation's headers.
#[test]
fn a_sets_include_dirs_add_to_the_implementations() {
    let p = TestProject::bare();
    p.copy("algorithms/sign-92", "algorithms/dirs");
    p.write("algorithms/dirs/inc/imp_only.h", "#define IMP_ONLY 1\n");
    p.write("algorithms/dirs/extra/set_only.h", "#define SET_ONLY 1\n");
    p.write(
        "algorithms/dirs/dirs_check.c",
        "#include \"imp_only.h\"\n#include \"set_only.h\"\n\
         #if IMP_ONLY + SET_ONLY != 2\n#error both directories are searched\n#endif\n\
         int pqb_dirs_check(void) { return IMP_ONLY + SET_ONLY; }\n",
    );
    let toml = std::fs::read_to_string(common::repo().join("algorithms/sign-92.toml"))
        .unwrap()
        .replace("id = \"sign-92\"", "id = \"dirs-98\"")
        .replace(
            "root = \"sign-92\"",
            "root = \"dirs\"\ninclude-dirs = [\"inc\"]",
        )
        .replace(
            "namespace = \"PQB_LARCH1_\"",
            "namespace = \"PQB_LARCH1_\"\ninclude-dirs = [\"extra\", \"inc\"]",
        )
        .replace(
            "namespace = \"PQB_LARCH3_\"",
            "namespace = \"PQB_LARCH3_\"\ninclude-dirs = [\"extra\"]",
        );
    p.write("algorithms/dirs-98.toml", &toml);
    p.write(
        "campaigns/t.toml",
        &quick_campaign(&["dirs-98"], "stages = [\"build\"]"),
    );
    let run = p.pqbench(&["run", "t"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let build = p.json("output/t/local/build.json");
    let built: Vec<_> = build["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            let built = i["attempts"][0]["built"].as_bool();
            (i["label"].as_str().unwrap().to_string(), built)
        })
        .collect();
    // LARCH-3 names only `extra` and finds `inc` from its implementation;
    // LARCH-1 names both, which is the same.
    assert_eq!(built.len(), 2, "{built:?}");
    assert!(built.iter().all(|(_, b)| *b == Some(true)), "{built:?}");
}
