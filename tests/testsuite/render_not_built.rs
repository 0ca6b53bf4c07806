//! Instances never built on a system (another architecture's code) are
//! named once, under the summary's table, not given a row of dashes.

use pqbench::plan::Kind;
use pqbench::render::synth::{self, Synth};
use pqbench::stats::Trial;

fn trials(c: f64) -> Vec<Trial> {
    (0..5)
        .map(|_| Trial {
            calls: 20,
            seconds: 20.0 * c / 2e9,
            cycles: 20.0 * c,
            samples: Vec::new(),
        })
        .collect()
}

#[test]
fn an_instance_not_built_here_is_a_note_under_the_summary_not_a_row() {
    let tmp = tempfile::tempdir().unwrap();
    let env = synth::environment("Test CPU", 2000.0, 8000, "2026-01-01T00:00:00");
    let mut s = Synth::new(
        "t",
        "local",
        "x86-64",
        "2026-01-01T00:00:00",
        "2026-01-01T01:00:00",
        env,
        1,
    );
    let a = synth::algorithm("sign-1", "Toy", Kind::Sign, &["T-1", "T-1.aarch64"]);
    s.add_instance(&a, "T-1", pqbench::kat::Status::Pass, 1000);
    for (op, c) in [("keygen", 1e5), ("sign", 2e5), ("verify", 5e4)] {
        s.add_operation(&a, "T-1", op, trials(c), 0, None);
    }
    s.add_instance(&a, "T-1.aarch64", pqbench::kat::Status::Skipped, 0);
    s.campaign.algorithms.push(a);
    s.write(&tmp.path().join("local")).unwrap();
    let site = tmp.path().join("site");
    pqbench::render::render_dataset_dirs(&[tmp.path().join("local")], &site, None, &[]).unwrap();

    let summary = std::fs::read_to_string(site.join("local/summary.md")).unwrap();
    assert!(summary.contains("| `T-1` |"), "{summary}");
    assert!(!summary.contains("| `T-1.aarch64` |"), "{summary}");
    assert!(
        summary.contains("Not built on system local (written for another architecture, or needing a CPU feature it lacks; each algorithm's page says which): `sign-1/T-1.aarch64`."),
        "{summary}"
    );
    let html = std::fs::read_to_string(site.join("local/summary.html")).unwrap();
    assert!(html.contains("<code>sign-1/T-1.aarch64</code>"), "{html}");
}
