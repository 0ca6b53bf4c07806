//! The pipeline stages, one module each behind the `engine::Stage` trait,
//! and the registry that lists them in run order. Adding a stage means
//! writing its module and adding one line to `registry()`: `run`, `plan`,
//! `status` and the lock file all walk that list.

pub mod build;
pub mod client_requests;
pub mod count;
pub mod ct;
pub mod kat;
pub mod kat_hash;
pub mod memory;
pub mod profile;
pub mod profile_link;
pub mod render;
pub mod scan;
pub mod sizes;
pub mod sizes_kex;
pub mod survey;
pub mod time;
pub mod time_records;
pub mod time_steps;

use crate::engine::Registry;

/// Every stage, in an order where each comes after what it depends on.
pub fn registry() -> Registry {
    Registry::new()
        .stage(build::BuildStage)
        .stage(scan::ScanStage)
        .stage(kat::KatStage)
        .stage(profile_link::ProfileLinkStage)
        .stage(time::TimeStage)
        .stage(memory::MemoryStage)
        .stage(sizes::SizesStage)
        .stage(profile::ProfileStage)
        .stage(survey::SurveyStage)
        .stage(count::CountStage)
        .stage(ct::CtStage)
        .campaign_stage(render::RenderStage)
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
}
