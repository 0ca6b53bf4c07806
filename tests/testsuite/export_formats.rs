//! The exporters of `compare` and `reproduce` on fixed reports: snapshots
//! pin every format, CSV fields with separators and line breaks survive a
//! round trip through a CSV reader, HTML escapes what TOMLs and runs wrote,
//! and JSON reads back into the same report.

use std::collections::BTreeMap;

use pqbench::compare::{
    rule_text, AlgorithmSummary, CompareReport, OpComparison, RunInfo, Threshold, Verdict,
};
use pqbench::export::{
    csv::Csv, html::Html, json::Json, markdown::Markdown, text, text::Text, Exporter,
};
use pqbench::reproduce::report::{InstanceCheck, ReproductionReport};
use pqbench::reproduce::{Reproduction, RunStart};

fn run(name: &str, fingerprint: &str) -> RunInfo {
    RunInfo {
        name: name.into(),
        campaign: Some("demo".into()),
        system: Some("x86_1".into()),
        start_utc: Some("2024-05-01T10:00:00Z".into()),
        host_fingerprint: Some(fingerprint.into()),
        host_fixed: Some(true),
    }
}

fn op(label: &str, name: &str, verdict: Verdict, ratio: Option<f64>) -> OpComparison {
    let compared = ratio.is_some();
    OpComparison {
        instance: format!("sign-23/{label}"),
        algorithm: "sign-23".into(),
        label: label.into(),
        op: name.into(),
        verdict,
        reason: (!compared).then(|| "only in run A".to_string()),
        basis: compared.then(|| "per-call samples".to_string()),
        median_a: Some(120_000.0),
        median_b: ratio.map(|r| 120_000.0 * r),
        ratio,
        ci: ratio.map(|r| (r * 0.97, r * 1.03)),
        p_value: ratio.map(|_| 3.2e-9),
        mann_whitney_u: ratio.map(|_| 12.0),
        calls_a: Some(1000),
        calls_b: compared.then_some(1000),
        cv_a: Some(0.01),
        cv_b: compared.then_some(0.012),
        dispersion_a: ratio.map(|_| 0.004),
        dispersion_b: ratio.map(|_| 0.005),
        counter_a: Some("tsc".into()),
        counter_b: compared.then(|| "tsc".to_string()),
    }
}

fn counts(pairs: &[(&str, usize)]) -> BTreeMap<String, usize> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// Three operations: one slower, one within noise, one only in run A.
fn compare_report() -> CompareReport {
    let t = 0.1;
    CompareReport {
        a: run("20240501T100000Z-1", "f00dfeedcafe0123"),
        b: run("20240502T100000Z-1", "f00dfeedcafe0123"),
        threshold: Threshold {
            value: t,
            source: "given".into(),
            median_cv: None,
            history_pairs: 0,
            explanation: "0.1 (given)".into(),
        },
        alpha: 0.01,
        rule: rule_text(t),
        operations: vec![
            op("SHUTTLE-128", "sign", Verdict::Slower, Some(2.0)),
            op("SHUTTLE-128", "verify", Verdict::WithinNoise, Some(1.01)),
            op("SHUTTLE-192", "keygen", Verdict::Incomparable, None),
        ],
        algorithms: vec![AlgorithmSummary {
            algorithm: "sign-23".into(),
            compared: 2,
            geomean_ratio: Some((2.0f64 * 1.01).sqrt()),
            ci: Some((1.37, 1.46)),
            verdict: Verdict::Slower,
            counts: counts(&[("incomparable", 1), ("slower", 1), ("within noise", 1)]),
        }],
        counts: counts(&[("incomparable", 1), ("slower", 1), ("within noise", 1)]),
        instructions: Vec::new(),
    }
}

fn start(differences: &[&str]) -> RunStart {
    RunStart {
        run_id: "20240501T100000Z-1".into(),
        campaign: "demo".into(),
        system: "x86_1".into(),
        start_utc: "2024-05-01T10:00:00Z".into(),
        input_differences: differences.iter().map(|d| d.to_string()).collect(),
    }
}

fn reproduction_report() -> ReproductionReport {
    let timing = compare_report();
    ReproductionReport {
        original: "20240501T100000Z-1".into(),
        reproduction: "20240503T100000Z-1".into(),
        campaign: "demo".into(),
        system: "x86_1".into(),
        input_differences: vec!["flags changed: demo: -O2 → -O3".into()],
        instances: vec![
            InstanceCheck {
                instance: "sign-23/SHUTTLE-128".into(),
                library: "bit-identical".into(),
                library_original: Some("0123456789abcdef0123".into()),
                library_reproduced: Some("0123456789abcdef0123".into()),
                kat: "identical".into(),
                kat_status_original: Some("PASS".into()),
                kat_status_reproduced: Some("PASS".into()),
            },
            InstanceCheck {
                instance: "sign-23/SHUTTLE-192".into(),
                library: "differs".into(),
                library_original: Some("aaaaaaaaaaaaaaaa".into()),
                library_reproduced: Some("bbbbbbbbbbbbbbbb".into()),
                kat: "changed".into(),
                kat_status_original: Some("PASS".into()),
                kat_status_reproduced: Some("MISMATCH".into()),
            },
        ],
        fixed_figures_identical: 7,
        fixed_figures_differing: vec!["sign-23/SHUTTLE-128 sign stack bytes: 512 → 600".into()],
        stage_errors: vec!["sign-23/SHUTTLE-192 time: crashed\n(signal 11)".into()],
        failures: vec![
            "KAT changed: sign-23/SHUTTLE-192 (PASS → MISMATCH)".into(),
            "slower: sign-23/SHUTTLE-128 sign (ratio 2.000)".into(),
        ],
        exit_code: 1,
        timing,
        children: Vec::new(),
    }
}

fn ran() -> Reproduction {
    Reproduction {
        run: start(&["flags changed: demo: -O2 → -O3"]),
        report: Some(reproduction_report()),
        report_file: Some("output/demo/x86_1/runs/20240503T100000Z-1/reproduction.md".into()),
        exit_code: 1,
    }
}

fn stopped() -> Reproduction {
    Reproduction {
        run: start(&[
            "sources changed: measure.c",
            "compiler changed: gcc 12 → gcc 13",
        ]),
        report: None,
        report_file: None,
        exit_code: 2,
    }
}

fn export<R>(e: &dyn Exporter<R>, r: &R) -> String {
    String::from_utf8(e.export(r).unwrap()).unwrap()
}

#[test]
fn every_format_of_a_comparison() {
    let r = compare_report();
    insta::assert_snapshot!("compare.md", export(&Markdown, &r));
    insta::assert_snapshot!("compare.html", export(&Html, &r));
    insta::assert_snapshot!("compare.csv", export(&Csv, &r));
    insta::assert_snapshot!("compare.json", export(&Json, &r));
}

#[test]
fn every_format_of_a_reproduction() {
    let rep = reproduction_report();
    insta::assert_snapshot!("reproduction.md", export(&Markdown, &rep));
    insta::assert_snapshot!("reproduction.html", export(&Html, &rep));
    let r = ran();
    insta::assert_snapshot!("reproduce.txt", export(&Text, &r));
    // On stdout, Markdown is the very report written beside the run.
    assert_eq!(export(&Markdown, &r), export(&Markdown, &rep));
    let s = stopped();
    insta::assert_snapshot!("reproduce-stopped.txt", export(&Text, &s));
    insta::assert_snapshot!("reproduce-stopped.md", export(&Markdown, &s));
    // The binary prints the start before the campaign runs, the outcome
    // after: together they are the whole text.
    for r in [&r, &s] {
        assert_eq!(
            export(&Text, r),
            text::start(&r.run) + &text::outcome(r),
            "{r:?}"
        );
    }
}

#[test]
fn csv_fields_with_separators_and_line_breaks_round_trip() {
    let mut r = compare_report();
    let awkward = "a;b,c \"quoted\"\nsecond line";
    r.operations[2].reason = Some(awkward.into());
    r.operations[0].label = "L,1".into();
    let bytes = Csv.export(&r).unwrap();
    let mut reader = csv::Reader::from_reader(bytes.as_slice());
    let header: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_string)
        .collect();
    assert_eq!(header[0], "kind");
    assert_eq!(header.len(), 15);
    let rows: Vec<BTreeMap<String, String>> = reader.deserialize().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 4, "3 operations and 1 geomean");
    assert_eq!(rows[0]["label"], "L,1");
    assert_eq!(rows[0]["verdict"], "slower");
    assert_eq!(rows[0]["ratio"], "2");
    assert_eq!(rows[0]["p_value"], "3.2e-9");
    assert_eq!(rows[2]["reason"], awkward);
    assert_eq!(rows[2]["verdict"], "incomparable");
    assert_eq!(rows[3]["kind"], "geomean");
    assert_eq!(rows[3]["algorithm"], "sign-23");
    assert!(rows.iter().all(|row| row["threshold"] == "0.1"));
}

#[test]
fn csv_of_an_empty_comparison_keeps_its_header() {
    let mut r = compare_report();
    r.operations.clear();
    r.algorithms.clear();
    let csv = export(&Csv, &r);
    assert_eq!(csv.lines().count(), 1, "{csv}");
    assert!(csv.starts_with("kind,instance,algorithm,"), "{csv}");
}

#[test]
fn html_escapes_labels_names_and_inputs() {
    let script = "<script>alert(1)</script>";
    let mut r = compare_report();
    r.operations[0].instance = format!("sign-23/{script}");
    r.b.name = "run \"B\" & <i>co</i>".into();
    r.algorithms[0].algorithm = script.into();
    let html = export(&Html, &r);
    assert!(!html.contains("<script") && !html.contains("<i>"), "{html}");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;"));
    assert!(html.contains("run &quot;B&quot; &amp; &lt;i&gt;co&lt;&#x2f;i&gt;"));

    let mut rep = reproduction_report();
    rep.instances[0].instance = script.into();
    rep.input_differences = vec![format!("sources changed: {script}")];
    rep.stage_errors = vec![script.into()];
    rep.timing = r;
    let html = export(&Html, &rep);
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(!html.contains("<script"), "{html}");
    assert_eq!(html.matches("&lt;script&gt;").count(), 4, "{html}");
}

#[test]
fn json_reads_back_into_the_same_report() {
    let r = compare_report();
    let back: CompareReport = serde_json::from_slice(&Json.export(&r).unwrap()).unwrap();
    assert_eq!(back, r);
    let rep = reproduction_report();
    let back: ReproductionReport = serde_json::from_slice(&Json.export(&rep).unwrap()).unwrap();
    assert_eq!(back, rep);
    for r in [ran(), stopped()] {
        let json = Json.export(&r).unwrap();
        assert_eq!(json.last(), Some(&b'\n'));
        let back: Reproduction = serde_json::from_slice(&json).unwrap();
        assert_eq!(back, r);
    }
    let v: serde_json::Value = serde_json::from_slice(&Json.export(&stopped()).unwrap()).unwrap();
    assert_eq!(
        (v["report"].is_null(), v["exit_code"].as_i64()),
        (true, Some(2))
    );
}
