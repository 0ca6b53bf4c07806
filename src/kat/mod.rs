//! Known-answer tests: reference manifests, comparison of a generated KAT
//! file with the references, and the per-instance verdict.

pub mod compare;
pub mod manifest;
mod outcome;
pub mod provenance;

pub(crate) use outcome::{Crossing, KatAttempt, KatFile, KatOutput};

pub use crate::records::kat::KatStatus as Status;
