//! An operation the CPU witness could not judge (`unwitnessed`) keeps its
//! figures on its algorithm page, flagged with the witness's detail, is
//! named in the summary's notes and leaves the summary chart.

use pqbench::measure::OpStatus;
use pqbench::plan::Kind;
use pqbench::render::synth;
use pqbench::stats::Trial;

fn trials(c: u64) -> Vec<Trial> {
    (0..5)
        .map(|t| {
            let samples: Vec<u64> = (0..20u64).map(|i| c + 11 * ((i + t) % 7)).collect();
            let cycles = samples.iter().sum::<u64>() as f64;
            Trial {
                calls: 20,
                seconds: cycles / 2e9,
                cycles,
                samples,
            }
        })
        .collect()
}

const WHY: &str = "⚠ unwitnessed after 3 sets of trials: trial 2 claims 1.0e-4 s per call";

fn dataset(dir: &std::path::Path) {
    let mut s = crate::common::synth_local();
    let a = synth::algorithm("sign-1", "Unjudged", Kind::Sign, &["U-1"]);
    s.add_instance(&a, "U-1", pqbench::kat::Status::Pass, 1000);
    for (op, c) in [("keygen", 100_000), ("sign", 200_000), ("verify", 50_000)] {
        s.add_operation(&a, "U-1", op, trials(c), 0, None);
    }
    let sign = s.records.iter_mut().find(|r| r.op == "sign").unwrap();
    sign.status = OpStatus::Unwitnessed;
    sign.detail = Some(WHY.into());
    s.campaign.algorithms.push(a);
    s.write(&dir.join("local")).unwrap();
}

#[test]
fn unwitnessed_figures_stay_flagged_and_leave_the_chart() {
    let tmp = tempfile::tempdir().unwrap();
    dataset(tmp.path());
    let site = crate::common::render_one(tmp.path(), "local");
    let read = |p: &str| std::fs::read_to_string(site.join(p)).unwrap();

    let page = read("local/sign-1.md");
    let row = |op: &str| {
        page.lines()
            .find(|l| l.starts_with("| `U-1` |") && l.contains(&format!("| {op} |")))
            .unwrap_or_else(|| panic!("no {op} row in\n{page}"))
            .to_string()
    };
    // Figures (a mean in cycles, not the status) and the witness's words.
    let sign = row("sign");
    assert!(sign.contains(WHY), "{sign}");
    assert!(!sign.contains("| unwitnessed |"), "{sign}");
    assert!(sign.contains("200"), "{sign}");
    assert!(!row("verify").contains("unwitnessed"), "{}", row("verify"));

    let summary = read("local/summary.md");
    let line = summary.lines().find(|l| l.contains("`U-1`")).unwrap();
    assert!(line.contains("⚠ unwitnessed: sign"), "{line}");
    let chart = read("local/summary-sign.svg");
    assert!(chart.contains("<title>U-1 verify:"), "{chart}");
    assert!(!chart.contains("<title>U-1 sign:"), "{chart}");
}
