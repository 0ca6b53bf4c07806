//! Sizes stage: per instance the API figures (length functions or
//! `CRYPTO_` macros), the largest lengths the library actually returned in
//! the KAT and timing runs, and the external catalog's figures; the size
//! audit lists every instance where they disagree.

use anyhow::{Context, Result};

use super::kat::KatStage;
use super::time::TimeStage;
use crate::context::Cx;
use crate::engine::{Job, Manifest, Policy, Stage};
use crate::engine::{Publication, Results};
use crate::kinds::Sizes;
use crate::plan::Instance;
use crate::records::analysis::{SizesJson, SizesRow};
use crate::sizes::{combine, read_catalog, CatalogEntry, SizesOutput};

pub(crate) struct SizesStage;

impl Stage for SizesStage {
    type Output = SizesOutput;
    const NAME: &'static str = "sizes";
    const REQUIRES: &'static [&'static str] = &["build", "kat"];
    /// Lengths the timing runs saw count as observed.
    const READS: &'static [&'static str] = &["time"];
    const POLICY: Policy = Policy::Parallel;

    fn manifest(&self, job: &Job) -> Result<Option<Manifest>> {
        let Some(kat) = job.prior.get::<KatStage>() else {
            return Ok(None);
        };
        let mut m = Manifest::new();
        m.set("kat", kat)
            .set(
                "time-lengths",
                job.prior
                    .get::<TimeStage>()
                    .map(|t| t.ops.iter().map(|o| &o.lengths).collect::<Vec<_>>()),
            )
            .set("catalog", catalog_entry(job.cx, job.inst)?)
            .set(
                "kex-catalog",
                super::sizes_kex::kex_catalog_entry(job.cx, job.inst)?,
            )
            .set("pqbench", crate::STAGE_LOGIC_VERSION);
        Ok(Some(m))
    }

    fn run(&self, job: &Job) -> Result<SizesOutput> {
        let (cx, inst) = (job.cx, job.inst);
        let kat = job.prior.get::<KatStage>().context("no KAT result")?;
        let catalog = catalog_entry(cx, inst)?;
        let time = job.prior.get::<TimeStage>();
        let observed_in_time = |key: &str| {
            time.and_then(|t| {
                t.ops
                    .iter()
                    .filter_map(|o| o.lengths.get(key).copied())
                    .max()
            })
        };
        let rows = match inst.kind.def().sizes() {
            Sizes::Fixed(rows) => rows,
            Sizes::PerRole | Sizes::Digest => {
                let kex_catalog = super::sizes_kex::kex_catalog_entry(cx, inst)?;
                return Ok(super::sizes_kex::sizes(inst, kat, time, kex_catalog));
            }
        };
        let mut out = combine(
            rows.iter().map(|f| {
                let name = f.name;
                // Lengths that crossed between processes in the KAT's round
                // trip, beside those the KAT and timing runs returned.
                let crossed = kat.crossed(f.time_key);
                let observed = [kat.figure(f.kat_key), observed_in_time(f.time_key), crossed]
                    .into_iter()
                    .flatten()
                    .max();
                let from_catalog = catalog.as_ref().and_then(|c| match name {
                    "public key" => c.public_key,
                    "ciphertext" => c.ciphertext,
                    "signature" => c.signature,
                    _ => None,
                });
                (
                    name.to_string(),
                    kat.figure(f.api_key),
                    observed,
                    from_catalog,
                )
            }),
            catalog.as_ref().map(|c| c.basis.clone()),
        );
        // Variable-length outputs: the shortest length seen too (the KAT
        // generator's, and any shorter one a timing run returned).
        for (name, key, time_key) in [
            ("signature", "min_sig_len", "sig"),
            ("ciphertext", "min_ct_len", "ct"),
        ] {
            if let (Some(f), Some(min)) = (out.figures.get_mut(name), kat.figure(key)) {
                // Each timing run reports the longest length it saw (0:
                // none), itself an observed length.
                let in_time = time.and_then(|t| {
                    t.ops
                        .iter()
                        .filter_map(|o| o.lengths.get(time_key).copied())
                        .filter(|&l| l > 0)
                        .min()
                });
                f.observed_min = Some(in_time.map_or(min, |t| t.min(min)));
            }
        }
        Ok(out)
    }

    fn open_publication(&self, p: &mut Publication) {
        let plan = p.cx.plan;
        p.sizes = Some(SizesJson {
            catalog: plan.sizes_catalog.as_ref().map(|c| plan.display_path(c)),
            kex_catalog: plan.kex_catalog.as_ref().map(|c| plan.display_path(c)),
            instances: Vec::new(),
        });
    }

    fn publish(
        &self,
        p: &mut Publication,
        inst: &Instance,
        out: &SizesOutput,
        _: &Results,
    ) -> Result<()> {
        let row = SizesRow {
            algorithm: inst.algorithm.clone(),
            label: inst.label.clone(),
            kind: inst.kind,
            figures: out.figures.clone(),
            basis: out.basis.clone(),
            disagreements: out.disagreements.clone(),
        };
        p.sizes
            .as_mut()
            .context("sizes.json was not opened")?
            .instances
            .push(row);
        Ok(())
    }
}

fn catalog_entry(cx: &Cx, inst: &Instance) -> Result<Option<CatalogEntry>> {
    let Some(path) = &cx.plan.sizes_catalog else {
        return Ok(None);
    };
    let catalog = read_catalog(path)?;
    Ok(catalog
        .get(&(inst.algorithm.clone(), inst.label.clone()))
        .cloned())
}
