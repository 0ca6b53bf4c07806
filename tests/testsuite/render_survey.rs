//! The survey's verdicts as the pages word them: NIST-API code has no ICCS
//! helpers to call, so primitives of its own are not a `bypass` of the
//! rules NGCC submissions are held to; an NGCC submission's `bypass`
//! stays one.

use pqbench::config::algorithm::ApiFamily;
use pqbench::plan::Kind;
use pqbench::records::analysis::{SurveyAlgorithm, SurveyJson};
use pqbench::render::synth;

fn surveyed(id: &str, verdict: &str) -> SurveyAlgorithm {
    SurveyAlgorithm {
        algorithm: id.into(),
        verdict: verdict.into(),
        reason: "own Keccak table reachable from crypto_sign".into(),
        note: None,
        instances: Vec::new(),
    }
}

#[test]
fn nist_code_with_its_own_primitives_is_not_called_a_bypass() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = crate::common::synth_local();
    let mut nist = synth::algorithm("ml-dsa-44", "ML-DSA", Kind::Sign, &["ML-DSA-44"]);
    nist.api = ApiFamily::Nist;
    let ngcc = synth::algorithm("sign-1", "Own", Kind::Sign, &["O-1"]);
    for a in [&nist, &ngcc] {
        s.add_instance(a, &a.labels[0], pqbench::kat::Status::Pass, 1000);
    }
    s.survey = Some(SurveyJson {
        algorithms: vec![
            surveyed("ml-dsa-44", "bypass"),
            surveyed("sign-1", "bypass"),
        ],
    });
    s.campaign.algorithms.extend([nist, ngcc]);
    s.write(&tmp.path().join("local")).unwrap();
    let site = crate::common::render_one(tmp.path(), "local");
    let survey = std::fs::read_to_string(site.join("survey.md")).unwrap();
    let row = |id: &str| {
        survey
            .lines()
            .find(|l| l.contains(&format!("[{id}]")))
            .unwrap_or_else(|| panic!("no {id} row in\n{survey}"))
            .to_string()
    };
    assert!(row("ml-dsa-44").contains("| own primitives (NIST API: no ICCS helpers to use) |"));
    assert!(row("sign-1").contains("| bypass |"), "{}", row("sign-1"));
    let page = std::fs::read_to_string(site.join("local/ml-dsa-44.md")).unwrap();
    assert!(page.contains("own primitives (NIST API"), "{page}");
    assert!(!page.contains("[bypass]"), "{page}");
}
