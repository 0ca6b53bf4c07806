//! Instances never built on a system (another architecture's code) are
//! named once, under the summary's table, not given a row of dashes, and
//! list no KAT log among their evidence; a system the registry gives no
//! title is named once in the page titles.

use pqbench::plan::Kind;
use pqbench::render::synth;
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

/// Renders a dataset of one signature with a built and a skipped
/// instance; returns the site folder (in `tmp`).
fn site(tmp: &std::path::Path, titled: bool) -> std::path::PathBuf {
    let mut s = crate::common::synth_local();
    let a = synth::algorithm("sign-1", "Toy", Kind::Sign, &["T-1", "T-1.aarch64"]);
    s.add_instance(&a, "T-1", pqbench::kat::Status::Pass, 1000);
    for (op, c) in [("keygen", 1e5), ("sign", 2e5), ("verify", 5e4)] {
        s.add_operation(&a, "T-1", op, trials(c), 0, None);
    }
    s.add_instance(&a, "T-1.aarch64", pqbench::kat::Status::Skipped, 0);
    s.campaign.algorithms.push(a);
    if !titled {
        s.campaign.system_title = None;
    }
    s.write(&tmp.join("local")).unwrap();
    crate::common::render_one(tmp, "local")
}

#[test]
fn an_instance_not_built_here_is_a_note_under_the_summary_not_a_row() {
    let tmp = tempfile::tempdir().unwrap();
    let site = site(tmp.path(), true);

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

#[test]
fn an_untitled_system_is_named_once_and_a_skipped_instance_lists_no_kat_log() {
    let tmp = tempfile::tempdir().unwrap();
    let site = site(tmp.path(), false);
    let page = std::fs::read_to_string(site.join("local/sign-1.md")).unwrap();
    assert!(
        page.contains("# sign-1 Toy — performance on x86-64 (system local)\n"),
        "{page}"
    );
    let evidence: Vec<&str> = page.lines().filter(|l| l.contains("KAT log")).collect();
    assert_eq!(evidence.len(), 1, "{evidence:?}");
    assert!(evidence[0].contains("`T-1`"), "{evidence:?}");
}
