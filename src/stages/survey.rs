//! Survey stage: per instance, which ICCS helpers the exported API reaches
//! and which well-known constant tables its objects contain (reachable or
//! not); per algorithm, the verdict drawn from all its instances.

use std::collections::BTreeSet;

use anyhow::{Context, Result};

use super::build::BuildStage;
use crate::engine::{Job, Manifest, Policy, Stage};
use crate::engine::{Publication, Results};
use crate::objscan::{self, SurveyOutput};
use crate::plan::Instance;
use crate::records::analysis::{SurveyAlgorithm, SurveyInstance, SurveyJson};
use crate::records::evidence::ObjectEvidence;
use crate::toolchain::library::{api_symbols, BuildAttempt};

pub(crate) struct SurveyStage;

/// Helpers looked for: the ICCS helpers and the DRNG seeding, whatever the
/// campaign profiles. The verdict rests on reachability and constant scans
/// alone: wrapping a submission's own SHA-2 to see its share must not make
/// it an "ICCS helper".
fn helpers() -> Vec<String> {
    objscan::DEFAULT_HELPERS.map(String::from).to_vec()
}

/// The functions the API enters the submission through. Usually the API's
/// own names (`crypto_sign`, namespaced); a header that renames them with
/// macros (`#define crypto_sign_signature DILITHIUM_NAMESPACE(signature)`)
/// leaves no such symbol, and then the submission's functions that
/// pqbench's adapter calls stand in for the missing names: the adapter was
/// compiled against the same header, so its references are the renamed
/// entry points.
fn entry_points(inst: &Instance, a: &BuildAttempt, cache: &crate::cache::Cache) -> Vec<String> {
    let names = api_symbols(inst);
    let (_, own) = a.own_objects(cache);
    let defined: BTreeSet<String> = own
        .iter()
        .flat_map(|p| crate::elf::defined_symbols(p).unwrap_or_default())
        .collect();
    if names.iter().all(|n| defined.contains(n)) {
        return names;
    }
    let called: BTreeSet<String> = a
        .objects
        .iter()
        .filter(|o| !o.submission && o.source.contains("adapter_"))
        .flat_map(|o| crate::elf::undefined_symbols(&cache.object_path(&o.key)).unwrap_or_default())
        .filter(|s| defined.contains(s))
        .collect();
    if called.is_empty() {
        return names;
    }
    let found = names.into_iter().filter(|n| defined.contains(n));
    found
        .chain(called)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
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
        // Only a renamed API changes the key, so earlier results of
        // instances with the API's own names stay valid.
        let entry = entry_points(job.inst, a, &job.cx.cache);
        if entry != api_symbols(job.inst) {
            m.set("entry-points", &entry);
        }
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
        let api = entry_points(inst, a, &cx.cache);
        let mut evidence = objscan::scan(&paths, &api, &helpers())?;
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
