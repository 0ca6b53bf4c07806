//! The pipeline stages, one module each behind the `engine::Stage` trait,
//! and the registry that lists them in run order. Adding a stage means
//! writing its module and adding one line to `registry()`: `run`, `plan`,
//! `status` and the lock file all walk that list.

pub mod bench_checks;
pub mod build;
pub(crate) mod client_requests;
pub mod count;
mod count_page;
pub mod ct;
mod ct_page;
pub(crate) mod differential;
pub(crate) mod kat;
pub(crate) mod kat_hash;
pub(crate) mod kat_log;
pub(crate) mod kat_trip;
pub mod leak;
pub(crate) mod matrix;
pub mod memory;
mod memory_page;
pub mod profile;
pub(crate) mod profile_link;
mod profile_page;
pub(crate) mod render;
pub mod scan;
pub(crate) mod sizes;
pub(crate) mod sizes_kex;
pub(crate) mod survey;
pub(crate) mod time;
pub(crate) mod time_op;
pub(crate) mod time_records;
pub(crate) mod time_steps;
pub(crate) mod time_trial;
pub(crate) mod time_witness;

use crate::engine::Registry;

/// Every stage, in an order where each comes after what it depends on.
pub fn registry() -> Registry {
    Registry::new()
        .stage(build::BuildStage)
        .stage(scan::ScanStage)
        .stage(kat::KatStage)
        .stage(differential::DifferentialStage)
        .stage(profile_link::ProfileLinkStage)
        .stage(time::TimeStage)
        .stage(memory::MemoryStage)
        .stage(sizes::SizesStage)
        .stage(profile::ProfileStage)
        .stage(survey::SurveyStage)
        .stage(count::CountStage)
        .stage(ct::CtStage)
        .stage(leak::LeakStage)
        .campaign_stage(render::RenderStage)
        .dimension(matrix::MatrixDimension)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_synthetic_datasets_list_the_default_stages() {
        let names: Vec<&str> = super::registry()
            .selected(&[crate::plan::ALL_STAGES.to_string()])
            .iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(names, crate::render::synth::DEFAULT_STAGES);
    }

    /// Every template a stage brings compiles in the pages' environment,
    /// and none takes the name of another's.
    #[test]
    fn every_stage_template_compiles_under_a_name_of_its_own() {
        let registry = super::registry();
        let presenters = registry.page_sections();
        let env = crate::render::environment(None, &presenters);
        let mut names: Vec<&str> = Vec::new();
        for (name, _) in presenters.iter().flat_map(|p| p.templates()) {
            env.get_template(name)
                .unwrap_or_else(|e| panic!("{name}: {e:#}"));
            assert!(!names.contains(name), "{name} twice");
            assert!(
                !crate::render::BUILTIN_TEMPLATES
                    .iter()
                    .any(|(n, _)| n == name),
                "{name} is a page's own template"
            );
            names.push(name);
        }
        assert_eq!(names.len(), 8, "{names:?}");
    }
}
