//! Survey stage: per instance, which ICCS helpers the exported API reaches
//! and which well-known constant tables its objects contain (reachable or
//! not); per algorithm, the verdict drawn from all its instances.

use anyhow::{Context, Result};

use super::build::BuildStage;
use crate::engine::{Job, Manifest, Policy, Stage};
use crate::engine::{Publication, Results};
use crate::objscan::{self, SurveyOutput};
use crate::plan::Instance;
use crate::records::analysis::{SurveyAlgorithm, SurveyInstance, SurveyJson};
use crate::records::evidence::ObjectEvidence;
use crate::toolchain::library::api_symbols;

pub(crate) struct SurveyStage;

/// Helpers looked for: the ICCS helpers and the DRNG seeding, whatever the
/// campaign profiles. The verdict rests on reachability and constant scans
/// alone: wrapping a submission's own SHA-2 to see its share must not make
/// it an "ICCS helper".
fn helpers() -> Vec<String> {
    objscan::DEFAULT_HELPERS.map(String::from).to_vec()
}

impl Stage for SurveyStage {
    type Output = SurveyOutput;
    const NAME: &'static str = "survey";
    const REQUIRES: &'static [&'static str] = &["build"];
    const POLICY: Policy = Policy::Parallel;

    fn manifest(&self, job: &Job) -> Result<Option<Manifest>> {
        let Some(a) = job.prior.get::<BuildStage>().and_then(|b| b.built()) else {
            return Ok(None);
        };
        // The survey covers public-key algorithms: a hash candidate is
        // itself the symmetric primitive.
        if !job.inst.kind.def().public_key() {
            return Ok(None);
        }
        let mut m = Manifest::new();
        m.set("objects", &a.objects)
            .set("helpers", helpers())
            .set("pqbench", crate::STAGE_LOGIC_VERSION);
        Ok(Some(m))
    }

    fn run(&self, job: &Job) -> Result<SurveyOutput> {
        let (cx, inst) = (job.cx, job.inst);
        let a = job
            .prior
            .get::<BuildStage>()
            .and_then(|b| b.built())
            .context("nothing built")?;
        let (own, paths) = a.own_objects(&cx.cache);
        let mut evidence = objscan::scan(&paths, &api_symbols(inst), &helpers())?;
        // Name objects by their source file rather than by cache key.
        let rename = |s: &mut String| {
            if let Some(o) = own.iter().find(|o| s.contains(&o.key)) {
                *s = o.source.rsplit('/').next().unwrap_or(&o.source).to_string();
            }
        };
        for h in &mut evidence.reachable_helpers {
            rename(&mut h.via_object);
        }
        for t in evidence
            .tables
            .iter_mut()
            .chain(evidence.unreachable_tables.iter_mut())
        {
            rename(&mut t.object);
        }
        Ok(SurveyOutput {
            objects: own.iter().map(|o| o.source.clone()).collect(),
            evidence,
        })
    }

    fn open_publication(&self, p: &mut Publication) {
        p.survey = Some(SurveyJson {
            algorithms: Vec::new(),
        });
    }

    fn publish(
        &self,
        p: &mut Publication,
        inst: &Instance,
        out: &SurveyOutput,
        _: &Results,
    ) -> Result<()> {
        let note =
            p.cx.plan
                .algorithm(&inst.algorithm)
                .and_then(|a| a.survey_note.clone());
        let survey = p.survey.as_mut().context("survey.json was not opened")?;
        let at = match survey
            .algorithms
            .binary_search_by(|a| a.algorithm.as_str().cmp(&inst.algorithm))
        {
            Ok(i) => i,
            Err(i) => {
                survey.algorithms.insert(
                    i,
                    SurveyAlgorithm {
                        algorithm: inst.algorithm.clone(),
                        verdict: String::new(),
                        reason: String::new(),
                        note,
                        instances: Vec::new(),
                    },
                );
                i
            }
        };
        survey.algorithms[at].instances.push(SurveyInstance {
            label: inst.label.clone(),
            objects: out.objects.clone(),
            evidence: out.evidence.clone(),
        });
        Ok(())
    }

    /// Each algorithm's verdict, from the evidence of all its instances.
    fn close_publication(&self, p: &mut Publication) -> Result<()> {
        for a in p.survey.iter_mut().flat_map(|s| s.algorithms.iter_mut()) {
            let ev: Vec<ObjectEvidence> = a.instances.iter().map(|i| i.evidence.clone()).collect();
            (a.verdict, a.reason) = objscan::verdict(&ev);
        }
        Ok(())
    }
}
