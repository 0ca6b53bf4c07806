//! `bench-engine` as a user runs it in the demo project: it makes a
//! project of N copies of the demo's sign-92, runs every timed step and
//! prints every figure. No figure is judged here: it is a benchmark.

use crate::common::TestProject;

#[test]
fn bench_engine_makes_its_project_runs_every_step_and_prints_every_figure() {
    let p = TestProject::demo();
    let keep = p.path().join("bench");
    let run = p
        .pqbench(&[
            "bench-engine",
            "--instances",
            "3",
            "--repeats",
            "1",
            "--keep",
            keep.to_str().unwrap(),
        ])
        .expect(0);
    for figure in [
        "bare gcc (same flags)",
        "cold build ",
        "cold build + KAT",
        "warm re-run (median of 1)",
        "status (median of 1)",
    ] {
        assert!(run.stdout.contains(figure), "{figure}: {}", run.stdout);
    }
    assert!(run.stdout.contains("× bare gcc"), "{}", run.stdout);
    // Three instances, each its own build (a distinct define), and every
    // one passed its KAT against a copy of the demo's reference.
    let alg = std::fs::read_to_string(keep.join("algorithms/sign-92.toml")).unwrap();
    for (label, copy) in [
        ("LARCH-1-0000", 0),
        ("LARCH-3-0001", 1),
        ("LARCH-1-0002", 2),
    ] {
        assert!(alg.contains(&format!("label = \"{label}\"")), "{alg}");
        assert!(alg.contains(&format!("PQB_BENCH_COPY = {copy}")), "{alg}");
    }
    let kats = std::fs::read_dir(keep.join("output/build-kat/local/kat/sign-92"))
        .unwrap()
        .count();
    assert!(kats >= 3, "{kats} KAT logs");
    // Asked again over an existing directory: refused, nothing touched.
    let again = p
        .pqbench(&["bench-engine", "--keep", keep.to_str().unwrap()])
        .expect(2);
    assert!(again.stderr.contains("exists"), "{}", again.stderr);
}
