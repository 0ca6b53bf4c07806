//! `pqbench bench-render`: a synthetic dataset of N instances, rendered
//! and timed (loading and rendering, not the synthesis).

use anyhow::Result;

use crate::plan::Kind;
use crate::records::analysis::{SizesJson, SurveyAlgorithm, SurveyJson};

use super::synth::{algorithm, environment, memory, profile, shape, sizes_row, trials, Synth};

/// A dataset of `instances` instances (four per algorithm, signatures and
/// KEMs alternating) with every record the pages use.
pub fn bench_dataset(instances: usize) -> Synth {
    let env = environment("Synthetic CPU", 2100.0, 32768, "2026-01-01T00:00:00");
    let mut s = Synth::new(
        "bench",
        "synthetic",
        "synthetic host",
        "2026-01-01T00:00:00",
        "2026-01-01T01:00:00",
        env,
        2,
    );
    let mut sizes = SizesJson {
        kex_catalog: None,
        catalog: None,
        instances: Vec::new(),
    };
    let mut survey = SurveyJson {
        algorithms: Vec::new(),
    };
    for g in 0..instances.div_ceil(4) {
        let kind = if g % 2 == 0 { Kind::Sign } else { Kind::Kem };
        let labels: Vec<String> = (0..4.min(instances - g * 4))
            .map(|i| format!("ALG{g}-{}", 128 * (i + 1)))
            .collect();
        let refs: Vec<&str> = labels.iter().map(String::as_str).collect();
        let id = format!("{}-{g}", kind.as_str());
        let a = algorithm(&id, &format!("Synthetic {g}"), kind, &refs);
        for (i, label) in labels.iter().enumerate() {
            s.add_instance(&a, label, crate::kat::Status::Pass, 40_000 + i as u64);
            for (k, op) in kind.operations().iter().enumerate() {
                let base = 1e5 * (1 + g % 7) as f64 * (1 + i + k) as f64;
                let cyc: Vec<f64> = (0..5).map(|t| base * (1.0 + 0.001 * t as f64)).collect();
                let sec: Vec<f64> = cyc.iter().map(|c| c / 2.1e9).collect();
                let mem = memory(op, 2, [40_000, 1700, 1800 + k as u64, 4096, 128]);
                s.add_operation(&a, label, op, trials(100, &cyc, &sec), 0, Some(mem));
                let shapes = vec![
                    shape("get_random_number", 100, 1000),
                    shape("pseudoXOF", 300, 50_000),
                ];
                s.profiles
                    .push(profile(&id, label, op, 100, (base * 100.0) as u64, shapes));
            }
            // The synthetic figures of the two kinds this dataset has.
            let figs: &[(&str, u64, u64, Option<u64>)] = if kind == Kind::Sign {
                &[
                    ("public key", 1000, 1000, None),
                    ("secret key", 2000, 2000, None),
                    ("signature", 700, 690, None),
                ]
            } else {
                &[
                    ("public key", 800, 800, None),
                    ("secret key", 1600, 1600, None),
                    ("ciphertext", 768, 768, None),
                    ("shared secret", 32, 32, None),
                ]
            };
            sizes
                .instances
                .push(sizes_row(&id, label, kind, figs, None));
        }
        survey.algorithms.push(SurveyAlgorithm {
            algorithm: id.clone(),
            verdict: "ICCS-only".into(),
            reason: "reaches pseudoXOF from the API".into(),
            note: None,
            instances: Vec::new(),
        });
        s.campaign.algorithms.push(a);
    }
    s.sizes = Some(sizes);
    s.survey = Some(survey);
    s
}

/// Synthesises `instances` instances in a temporary directory and times
/// loading plus rendering (not the synthesis) with the record folders and
/// sections of `stages`.
pub fn run(
    instances: usize,
    stages: &crate::engine::Registry,
) -> Result<(std::time::Duration, crate::render::RenderReport)> {
    let tmp = tempfile::tempdir()?;
    let data = tmp.path().join("synthetic");
    bench_dataset(instances).write(&data)?;
    let site = tmp.path().join("site");
    let start = std::time::Instant::now();
    let report = crate::render::render_dataset_dirs(&[data], &site, None, stages)?;
    Ok((start.elapsed(), report))
}
