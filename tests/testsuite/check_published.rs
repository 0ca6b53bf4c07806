//! `pqbench check` on what `publish` writes: it passes on an untouched
//! copy and names the file (and field or line) of every edit.

use std::path::{Path, PathBuf};

use pqbench::check::check_dataset;
use pqbench::publish::publish_from;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reference-dataset")
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

/// The fixture as a campaign output directory, and a publish destination.
fn published(system: Option<&str>) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let campaign = tmp.path().join("output/reference");
    for s in ["x86_1", "arm_1"] {
        copy(&fixture().join(s), &campaign.join(s));
    }
    let dest = tmp.path().join("published");
    publish_from(
        &pqbench::stages::registry(),
        &campaign,
        system,
        &dest,
        Default::default(),
        None,
    )
    .unwrap();
    (tmp, campaign, dest)
}

fn edit_json(path: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(path, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
}

#[test]
fn check_passes_on_a_published_dataset() {
    let (_tmp, _campaign, dest) = published(Some("x86_1"));
    assert!(dest
        .join("data/x86_1/kat/sign-23/SHUTTLE-128.log")
        .is_file());
    assert!(!dest.join("data/arm_1").exists());
    assert!(dest.join("site/x86_1/sign-23.html").is_file());
    let report = check_dataset(&dest).unwrap();
    assert!(report.passed(), "{report}");
    assert_eq!(
        (
            report.files_of("records"),
            report.files_of("profile"),
            report.kat_logs
        ),
        (15, 9, 5)
    );
    assert!(report.pages > 10);
    assert_eq!(
        pqbench::render::check_links(&dest.join("site")),
        Vec::<String>::new()
    );

    // Publishing the second system re-renders both, linking each other.
    let (_tmp2, campaign, dest) = published(Some("x86_1"));
    publish_from(
        &pqbench::stages::registry(),
        &campaign,
        Some("arm_1"),
        &dest,
        Default::default(),
        None,
    )
    .unwrap();
    let md = std::fs::read_to_string(dest.join("site/x86_1/sign-23.md")).unwrap();
    assert!(
        md.lines()
            .next()
            .unwrap()
            .ends_with("[arm_1](../arm_1/sign-23.md)"),
        "{md}"
    );
    assert!(check_dataset(&dest).unwrap().passed());
}

#[test]
fn an_edited_raw_trial_is_named() {
    let (_tmp, _campaign, dest) = published(None);
    let rec = dest.join("data/x86_1/records/sign-23/SHUTTLE-128__keygen.json");
    edit_json(&rec, |v| {
        let c = v["trials"][0]["cycles"].as_f64().unwrap();
        v["trials"][0]["cycles"] = serde_json::json!(c + 1000.0);
    });
    let report = check_dataset(&dest).unwrap();
    assert!(!report.passed());
    let first = &report.problems[0];
    assert!(
        first.starts_with(
            "data/x86_1/records/sign-23/SHUTTLE-128__keygen.json: statistics.mean_cycles: recorded"
        ),
        "{report}"
    );
    assert_eq!(report.problems.len(), 1, "{report}");
}

#[test]
fn edited_shares_logs_and_pages_are_named() {
    let (_tmp, _campaign, dest) = published(None);
    edit_json(
        &dest.join("data/arm_1/profile/sign-23/SHUTTLE-256__sign.json"),
        |v| {
            v["drng_share"] = serde_json::json!(0.5);
            // The pages show each class's share from the raw shapes.
            let ticks = v["shapes"][0]["ticks"].as_u64().unwrap();
            v["shapes"][0]["ticks"] = serde_json::json!(ticks / 2);
        },
    );
    let log = dest.join("data/x86_1/kat/sign-23/SHUTTLE-512.log");
    let text = std::fs::read_to_string(&log)
        .unwrap()
        .replace("PASS", "MISMATCH");
    std::fs::write(&log, text).unwrap();
    let page = dest.join("site/x86_1/summary.md");
    let text = std::fs::read_to_string(&page)
        .unwrap()
        .replace("8.65 M", "8.64 M");
    std::fs::write(&page, text).unwrap();
    std::fs::write(dest.join("site/x86_1/extra.html"), "<p>stray</p>").unwrap();

    let p = check_dataset(&dest).unwrap().problems;
    let has = |s: &str| p.iter().any(|x| x.contains(s));
    assert!(
        has("data/arm_1/profile/sign-23/SHUTTLE-256__sign.json: drng_share: recorded 0.5"),
        "{p:#?}"
    );
    assert!(
        has("data/x86_1/kat/sign-23/SHUTTLE-512.log: sha256"),
        "{p:#?}"
    );
    assert!(has("data/x86_1/kat/sign-23/SHUTTLE-512.log: last line `RESULT sign-23 SHUTTLE-512 MISMATCH`"), "{p:#?}");
    assert!(has("site/x86_1/summary.md: line 11 differs: published `| [sign-23](sign-23.md) | Shuttle | `SHUTTLE-128` | 8.64 M"), "{p:#?}");
    assert!(has("site/x86_1/extra.html: not produced"), "{p:#?}");
    // The edited shape also changes the page that shows its share.
    assert!(has("site/arm_1/sign-23.md: line "), "{p:#?}");
}

#[test]
fn absolute_paths_refuse_publication() {
    let tmp = tempfile::tempdir().unwrap();
    let campaign = tmp.path().join("output/reference");
    copy(&fixture().join("x86_1"), &campaign.join("x86_1"));
    edit_json(
        &campaign.join("x86_1/records/kem-7/FERRY-2__enc.json"),
        |v| {
            v["processes"][0]["command"][1] = serde_json::json!("/home/me/lib.so");
        },
    );
    let dest = tmp.path().join("published");
    let err = publish_from(
        &pqbench::stages::registry(),
        &campaign,
        None,
        &dest,
        Default::default(),
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("FERRY-2__enc.json") && err.contains("processes[0].command[1]"),
        "{err}"
    );
    assert!(!dest.exists(), "nothing is copied");
}

#[test]
fn check_works_on_a_campaign_output_directory() {
    let (_tmp, campaign, _dest) = published(None);
    let data = [campaign.join("x86_1"), campaign.join("arm_1")];
    pqbench::render::render_dataset_dirs(
        &data,
        &campaign.join("site"),
        None,
        &pqbench::stages::registry(),
    )
    .unwrap();
    let report = check_dataset(&campaign).unwrap();
    assert!(report.passed(), "{report}");
    assert_eq!(report.systems, ["arm_1", "x86_1"]);
}

/// A record whose claimed cycles are far below the CPU time the kernel's
/// task-clock witnessed for its trial processes is named by `check`, with
/// both figures, even though its statistics recompute: claims that were
/// scaled down (as a library rewriting the driver's figures would) cannot
/// hide behind consistent arithmetic.
#[test]
fn a_claim_below_the_kernels_witness_is_named() {
    let (_tmp, _campaign, dest) = published(None);
    let rec = dest.join("data/x86_1/records/sign-23/SHUTTLE-128__keygen.json");
    edit_json(&rec, |v| {
        let hz = v["counter_hz"].as_f64().unwrap();
        let t = &v["trials"][0];
        let claimed = t["cycles"].as_f64().unwrap() / t["calls"].as_f64().unwrap() / hz;
        // The processes really spent ten times the claimed time per call,
        // with set-ups of slightly different cost.
        let processes: Vec<serde_json::Value> = [400u64, 500, 609, 700, 800]
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let cpu = 0.02 + 0.001 * i as f64 + n as f64 * claimed * 10.0;
                serde_json::json!({
                    "command": ["--lib", "<library>", "--op", "keygen", "--mode", "trial",
                                "--warmup", "2", "--iters", n.to_string()],
                    "cpu": 1,
                    "outcome": {"kind": "exited", "value": 0},
                    "wall_seconds": cpu * 1.1,
                    "lines": [{"tag": "done", "fields": {}, "values": []}],
                    "stderr_tail": "",
                    "sandbox": {
                        "rusage": null, "stdout_bytes": 0, "stdout_tail": "",
                        "results_error": null,
                        "cpu_witness": {"task_clock_ns": (cpu * 1e9) as u64}
                    }
                })
            })
            .collect();
        let records: Vec<pqbench::records::process::ProcessRecord> = processes
            .iter()
            .map(|p| serde_json::from_value(p.clone()).unwrap())
            .collect();
        let planned = v["plan"]["iterations"].as_u64();
        // These processes print no trial line, so no kept trial has a
        // ceiling to bring: the fit alone judges.
        let fit = pqbench::measure::witness::fit(&records, planned, &[]).unwrap();
        v["processes"] = serde_json::json!(processes);
        v["witness"] = serde_json::to_value(fit).unwrap();
    });
    let report = check_dataset(&dest).unwrap();
    assert!(!report.passed());
    let named: Vec<&String> = report
        .problems
        .iter()
        .filter(|p| p.contains("SHUTTLE-128__keygen.json: status ok, but trial 1 claims"))
        .collect();
    assert_eq!(named.len(), 1, "{report}");
    assert!(
        named[0].contains("the kernel's task-clock witnessed"),
        "{report}"
    );
    // The fit itself is what the processes give: no other record problem.
    assert!(
        !report.problems.iter().any(|p| p.contains("witness:")),
        "{report}"
    );
}
