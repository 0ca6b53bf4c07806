//! The pipeline stages, one module each behind the `engine::Stage` trait.
//! Inputs and outputs are serde types, so a stage's result can be cached,
//! recorded and tested without compiling C.

pub mod build;
pub mod cmake;
pub mod kat;
pub mod memory;
pub mod profile;
pub mod sizes;
pub mod survey;
pub mod time;

use serde::{Deserialize, Serialize};

/// What the stages so far produced for one instance.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct InstanceResults {
    pub build: Option<build::BuildOutput>,
    pub kat: Option<kat::KatOutput>,
    pub time: Option<time::TimeOutput>,
    pub memory: Option<memory::MemoryOutput>,
    pub sizes: Option<sizes::SizesOutput>,
    pub profile: Option<profile::ProfileOutput>,
    pub survey: Option<survey::SurveyOutput>,
}
