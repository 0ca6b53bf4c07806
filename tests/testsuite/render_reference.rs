//! The reference dataset (`tests/fixtures/reference-dataset/`): records
//! whose raw trials reproduce the figures of the reference page
//! (`reference.txt`, a plain-text copy of the published sign-23 page on
//! x86_1), plus a second system and a KEM exercising failures.
//!
//! `cargo test --test render_reference -- --ignored regenerate` rewrites the
//! committed fixture; `fixture_is_current` proves it is this generator's
//! output, so every figure in it has a documented origin.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pqbench::plan::Kind;
use pqbench::records::analysis::{SizesJson, SurveyAlgorithm, SurveyJson};
use pqbench::records::campaign::KnownIssueInfo;
use pqbench::render::synth::{self, Synth};
use pqbench::stats::Trial;

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reference-dataset")
}

/// `4.13 ms` → the interval of seconds that prints so.
fn interval(text: &str) -> (f64, f64) {
    let (num, unit) = text.split_once(' ').unwrap();
    let scale = match unit {
        "s" => 1.0,
        "ms" => 1e-3,
        "µs" => 1e-6,
        "ns" => 1e-9,
        _ => panic!("unit {unit}"),
    };
    let v: f64 = num.parse().unwrap();
    let exp = v.log10().floor() as i32;
    let half = 0.5 * 10f64.powi(exp - 2);
    ((v - half) * scale, (v + half) * scale)
}

/// A mean time inside `mean`'s interval whose reciprocal prints as `ops`,
/// the one nearest the printed value.
fn mean_seconds(mean: &str, ops: &str) -> f64 {
    let (lo, hi) = interval(mean);
    let centre = (lo + hi) / 2.0;
    (0..=2000)
        .map(|i| lo + (hi - lo) * f64::from(i) / 2000.0)
        .filter(|t| {
            pqbench::format::duration(*t) == mean && pqbench::format::ops_per_sec(1.0 / t) == ops
        })
        .min_by(|a, b| (a - centre).abs().total_cmp(&(b - centre).abs()))
        .unwrap_or_else(|| panic!("no mean time prints as {mean} with {ops} ops/s"))
}

/// Five trials of `calls` whose mean is `t`, whose median trial is `m`,
/// with a small spread, and cycles proportional to time around `cycles`.
fn reference_trials(calls: u64, cycles: f64, t: f64, m: f64) -> Vec<Trial> {
    let d = m * 2e-4;
    let x = (5.0 * t - 3.0 * m) / 2.0;
    let e = (x - m).abs() + d;
    let secs = [m - d, m, m + d, x - e, x + e];
    let cyc: Vec<f64> = secs.iter().map(|s| cycles * s / t).collect();
    synth::trials(calls, &cyc, &secs)
}

struct Row {
    label: &'static str,
    op: &'static str,
    cycles: f64,
    mean: &'static str,
    ops: &'static str,
    median: &'static str,
    iters: u64,
    memory: [u64; 3],
    drng_share: f64,
    drng_calls: u64,
}

#[rustfmt::skip]
const SHUTTLE: [Row; 9] = [
    Row { label: "SHUTTLE-128", op: "keygen", cycles: 8.65e6, mean: "4.13 ms", ops: "242", median: "4.13 ms", iters: 609, memory: [82449, 1704, 1868], drng_share: 0.81, drng_calls: 289 },
    Row { label: "SHUTTLE-128", op: "sign", cycles: 4.51e6, mean: "2.15 ms", ops: "465", median: "2.15 ms", iters: 469, memory: [82449, 1760, 1936], drng_share: 0.68, drng_calls: 90 },
    Row { label: "SHUTTLE-128", op: "verify", cycles: 1.11e6, mean: "532 µs", ops: "1.88e+03", median: "532 µs", iters: 1839, memory: [82449, 1856, 1940], drng_share: 0.57, drng_calls: 20 },
    Row { label: "SHUTTLE-256", op: "keygen", cycles: 9.11e6, mean: "4.35 ms", ops: "230", median: "4.35 ms", iters: 153, memory: [85213, 1644, 1836], drng_share: 0.80, drng_calls: 293 },
    Row { label: "SHUTTLE-256", op: "sign", cycles: 7.15e6, mean: "3.42 ms", ops: "293", median: "3.42 ms", iters: 293, memory: [85213, 1788, 1980], drng_share: 0.68, drng_calls: 135 },
    Row { label: "SHUTTLE-256", op: "verify", cycles: 1.51e6, mean: "723 µs", ops: "1.38e+03", median: "723 µs", iters: 1348, memory: [85213, 1900, 2024], drng_share: 0.55, drng_calls: 20 },
    Row { label: "SHUTTLE-512", op: "keygen", cycles: 20.92e6, mean: "10 ms", ops: "100", median: "9.99 ms", iters: 237, memory: [86253, 1732, 1956], drng_share: 0.83, drng_calls: 648 },
    Row { label: "SHUTTLE-512", op: "sign", cycles: 14.60e6, mean: "6.99 ms", ops: "143", median: "6.99 ms", iters: 143, memory: [86253, 1856, 2168], drng_share: 0.64, drng_calls: 230 },
    Row { label: "SHUTTLE-512", op: "verify", cycles: 2.83e6, mean: "1.35 ms", ops: "741", median: "1.35 ms", iters: 727, memory: [86253, 2068, 2156], drng_share: 0.56, drng_calls: 20 },
];

/// (label, public key, secret key, signature API, signature observed).
const SHUTTLE_SIZES: [(&str, u64, u64, u64, u64); 3] = [
    ("SHUTTLE-128", 1264, 2288, 1200, 1190),
    ("SHUTTLE-256", 1952, 3680, 2417, 2417),
    ("SHUTTLE-512", 3648, 7104, 5001, 5001),
];
/// The external catalog's signature sizes (encoded basis).
const SHUTTLE_CATALOG_SIG: [u64; 3] = [1183, 2417, 5001];

fn shuttle(s: &mut Synth, scale: f64) {
    let mut a = synth::algorithm(
        "sign-23",
        "Shuttle",
        Kind::Sign,
        &["SHUTTLE-128", "SHUTTLE-256", "SHUTTLE-512"],
    );
    a.links = BTreeMap::from([
        (
            "Security evaluation".to_string(),
            "sign-23 report <https://example.org/ngcc/sign-23/report>".to_string(),
        ),
        (
            "Submission".to_string(),
            "NICCS page <https://example.org/ngcc/sign-23>".to_string(),
        ),
    ]);
    for (i, label) in a.labels.clone().iter().enumerate() {
        s.add_instance(
            &a,
            label,
            pqbench::kat::Status::Pass,
            SHUTTLE[3 * i].memory[0],
        );
    }
    for (i, r) in SHUTTLE.iter().enumerate() {
        let (t, m) = if scale == 1.0 {
            (
                mean_seconds(r.mean, r.ops),
                (interval(r.median).0 + interval(r.median).1) / 2.0,
            )
        } else {
            let t = mean_seconds(r.mean, r.ops) * scale;
            (t, t)
        };
        let trials = reference_trials(r.iters, r.cycles * scale, t, m);
        let [load, base, peak] = r.memory;
        let mem = synth::memory(r.op, 2, [load, base, peak, 3000 + 512 * i as u64, 0]);
        s.add_operation(&a, r.label, r.op, trials, 0, Some(mem));
        let total = (r.cycles * scale) as u64 * r.iters;
        let drng = synth::shape(
            "get_random_number",
            r.drng_calls * r.iters,
            (total as f64 * r.drng_share) as u64,
        );
        s.profiles.push(synth::profile(
            &a.id,
            r.label,
            r.op,
            r.iters,
            total,
            vec![drng],
        ));
    }
    let sizes = s.sizes.get_or_insert(SizesJson {
        kex_catalog: None,
        catalog: None,
        instances: Vec::new(),
    });
    sizes.catalog = Some("performance/external_sizes.csv".into());
    for ((label, pk, sk, sig_api, sig_obs), cat) in SHUTTLE_SIZES.iter().zip(SHUTTLE_CATALOG_SIG) {
        let figs = [
            ("public key", *pk, *pk, Some(*pk)),
            ("secret key", *sk, *sk, None),
            ("signature", *sig_api, *sig_obs, Some(cat)),
        ];
        sizes.instances.push(synth::sizes_row(
            &a.id,
            label,
            Kind::Sign,
            &figs,
            Some("encoded"),
        ));
    }
    s.survey
        .get_or_insert(SurveyJson {
            algorithms: Vec::new(),
        })
        .algorithms
        .push(SurveyAlgorithm {
            algorithm: a.id.clone(),
            verdict: "ICCS-only".into(),
            reason: "reaches get_random_number from sig_keygen (drbg.c); no own table reachable"
                .into(),
            note: Some("uses the ICCS SM3 DRBG (init/get_random_number) as its XOF".into()),
            instances: Vec::new(),
        });
    s.campaign.algorithms.push(a);
}

/// A KEM with a crashing operation (per-call samples elsewhere) and an
/// instance timed despite a KAT mismatch under a `measure` known issue.
fn ferry(s: &mut Synth) {
    let mut a = synth::algorithm("kem-7", "Ferry", Kind::Kem, &["FERRY-1", "FERRY-2"]);
    a.description = "Synthetic KEM of the reference dataset.".into();
    a.known_issues.push(KnownIssueInfo {
        labels: "FERRY-2".into(),
        action: "measure".into(),
        cause: "Decapsulation of the last KAT record differs; timed anyway, output not validated."
            .into(),
    });
    s.add_instance(&a, "FERRY-1", pqbench::kat::Status::Pass, 30111);
    let b = s.add_instance(&a, "FERRY-2", pqbench::kat::Status::Mismatch, 30555);
    b.kat_detail = Some("first difference in record 9, field ss".into());
    for (label, k) in [("FERRY-1", 1.0), ("FERRY-2", 1.7)] {
        for (j, op) in ["keygen", "enc", "dec"].into_iter().enumerate() {
            let c = 120_000.0 * k * (j + 1) as f64;
            let mut trials =
                synth::trials(40, &[c, c * 1.01, c * 0.99, c, c * 1.02], &[c / 2.1e9; 5]);
            if label == "FERRY-1" && op == "enc" {
                for (t, tr) in trials.iter_mut().enumerate() {
                    tr.samples = (0..40u64)
                        .map(|i| (c as u64) + 97 * ((i * 31 + t as u64) % 17))
                        .collect();
                    tr.cycles = tr.samples.iter().sum::<u64>() as f64;
                }
            }
            let mem = synth::memory(op, 2, [30_000, 1500, 1600 + j as u64, 2048, 64]);
            s.add_operation(&a, label, op, trials, 0, Some(mem));
            if label == "FERRY-1" && op == "dec" {
                let r = s.records.last_mut().unwrap();
                r.status = pqbench::measure::OpStatus::Crash;
                r.detail = Some("killed by signal 11 (SIGSEGV) in dec".into());
                r.trials.clear();
                r.statistics = None;
            }
        }
    }
    let sizes = s.sizes.as_mut().unwrap();
    for label in ["FERRY-1", "FERRY-2"] {
        let figs = [
            ("public key", 800, 800, None),
            ("secret key", 1632, 1632, None),
            ("ciphertext", 768, 768, None),
            ("shared secret", 32, 32, None),
        ];
        sizes
            .instances
            .push(synth::sizes_row(&a.id, label, Kind::Kem, &figs, None));
    }
    s.campaign.algorithms.push(a);
}

fn generate(dir: &Path) {
    let env = synth::environment(
        "12th Gen Intel(R) Core(TM) i7-12700",
        2100.0,
        31788,
        "2026-09-25T10:02:21",
    );
    let mut x86 = Synth::new(
        "reference",
        "x86_1",
        "x86-64",
        "2026-09-25T10:02:21",
        "2026-09-28T10:51:21",
        env,
        2,
    );
    x86.campaign.build_tool = "cmake version 3.31.6".into();
    x86.campaign.description = "Reference dataset reproducing the published sign-23 page.".into();
    shuttle(&mut x86, 1.0);
    ferry(&mut x86);
    x86.write(&dir.join("x86_1")).unwrap();

    let mut env = synth::environment("Cortex-A76", 2400.0, 7820, "2026-10-01T08:00:00");
    env.kernel = "6.12.107+deb13-arm64".into();
    let mut arm = Synth::new(
        "reference",
        "arm_1",
        "AArch64",
        "2026-10-01T08:00:00",
        "2026-10-02T09:30:00",
        env,
        3,
    );
    arm.campaign.compiler.target = "aarch64-linux-gnu".into();
    arm.campaign.counter = Some("cntvct".into());
    arm.campaign.counter_hz = Some(54e6);
    shuttle(&mut arm, 1.5);
    arm.write(&dir.join("arm_1")).unwrap();
    std::fs::copy(
        fixture_dir().join("reference.txt"),
        dir.join("reference.txt"),
    )
    .unwrap();
}

#[test]
#[ignore = "rewrites the committed fixture"]
fn regenerate() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path());
    for sys in ["x86_1", "arm_1"] {
        let _ = std::fs::remove_dir_all(fixture_dir().join(sys));
        copy(&tmp.path().join(sys), &fixture_dir().join(sys));
    }
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

fn files(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            out.extend(files(&p).into_iter().map(|f| format!("{name}/{f}")));
        } else {
            out.push(name);
        }
    }
    out.sort();
    out
}

#[test]
fn fixture_is_current() {
    let tmp = tempfile::tempdir().unwrap();
    generate(tmp.path());
    let (want, have) = (files(tmp.path()), files(&fixture_dir()));
    assert_eq!(
        have, want,
        "run `cargo test --test render_reference -- --ignored regenerate`"
    );
    for f in want {
        let (a, b) = (
            std::fs::read(tmp.path().join(&f)).unwrap(),
            std::fs::read(fixture_dir().join(&f)).unwrap(),
        );
        assert!(
            a == b,
            "{f} differs from its generator; regenerate the fixture"
        );
    }
}
