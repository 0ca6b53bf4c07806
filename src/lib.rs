//! pqbench: builds public-key cryptography submissions with uniform flags,
//! proves they reproduce their known-answer tests, measures them and renders
//! report pages. The CLI in `main.rs` is a thin layer over this library.

pub mod bless;
pub mod cache;
pub mod check;
pub mod compare;
pub mod config;
pub mod context;
pub mod elf;
pub mod engine;
pub mod error;
pub mod executor;
pub mod export;
pub mod format;
pub mod fsutil;
pub mod host;
pub mod import;
pub mod kat;
pub mod measure;
pub mod merge;
pub mod objscan;
pub mod pipeline;
pub mod plan;
pub mod progress;
pub mod publish;
pub mod records;
pub mod render;
pub mod reproduce;
pub mod sandbox;
pub mod sizes;
pub mod stages;
pub mod stats;
pub mod support;
pub mod toolchain;
pub mod validate;

/// Bumped whenever a stage's way of producing results changes, so results
/// cached by an older pqbench are not reused.
pub const STAGE_LOGIC_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "+6");
