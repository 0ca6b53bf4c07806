//! The opt-in CMake backend builds a working library from a submission's
//! own CMake project; without the opt-in, no CMake is ever needed.

use crate::common;
use common::{quick_campaign, TestProject};

#[test]
fn cmake_backend_builds_a_library_that_passes_its_kat() {
    let p = TestProject::demo();
    p.copy("algorithms/sign-90", "algorithms/sign-90c");
    p.copy(
        "tests/fixtures/cmake/CMakeLists.txt",
        "algorithms/sign-90c/CMakeLists.txt",
    );
    p.copy(
        "tests/fixtures/cmake/sign-90c.toml",
        "algorithms/sign-90c.toml",
    );
    p.write(
        "campaigns/c.toml",
        &quick_campaign(&["sign-90c"], "stages = [\"build\", \"kat\", \"survey\"]"),
    );
    let run = p.pqbench(&["run", "c"]);
    let build = p.json("output/c/local/build.json");
    let rec = &build["instances"][0];
    if !common::skip::tools_or_skip(&["cmake"], "apt-get install cmake") {
        // Without cmake the opt-in fails with a clear message, not a crash.
        assert_eq!(run.code, 1);
        assert_eq!(rec["kat_status"], "BUILDFAIL");
        let detail = rec["kat_detail"].as_str().unwrap_or_default().to_string()
            + rec["attempts"][0]["detail"].as_str().unwrap_or_default();
        assert!(detail.contains("cmake is not installed"), "{rec}");
        return;
    }
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(rec["kat_status"], "PASS", "{rec}");
    // The same code built by pqbench directly gives the same KAT.
    let log = p.read("output/c/local/kat/sign-90c/WINTER-128.log");
    assert!(log.contains("RESULT sign-90c WINTER-128 PASS"), "{log}");
    // Its objects really came out of the CMake target's static library.
    let survey = p.json("output/c/local/survey.json");
    let objects = survey["algorithms"][0]["instances"][0]["objects"].to_string();
    assert!(objects.contains("wintertide:wots.c.o"), "{objects}");
}
