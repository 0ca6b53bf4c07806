//! pqbench's integration tests, one binary: each module covers one
//! capability through the real `pqbench` binary or the library API. See
//! `tests/README.md` for the layout, the shared helpers and which tests need
//! which external tools.
//!
//! A scenario test reads top to bottom as one story (set up, run, check
//! each claim), so the line limit on functions applies to `src/` only.
#![allow(clippy::too_many_lines)]

mod common;
mod ctr_drbg_oracle;
mod reference;

mod adding_an_algorithm;
mod analysis_fixtures;
mod analysis_profile;
mod analysis_profile_classes;
mod analysis_survey_reach;
mod architecture;
mod build_cmake;
mod build_flags;
mod check_published;
mod compare_doubling;
mod config_errors;
mod config_kex_hash;
mod config_signature_api;
mod differential;
mod docs_reference;
mod drbg_fast;
mod engine_bench;
mod engine_incremental;
mod engine_registry;
mod exact_ct_count;
mod executors;
mod export_formats;
mod iccs_oracle;
mod import_demo;
mod import_kex_hash;
mod import_nist;
mod import_observed;
mod import_real_trees;
mod import_tree;
mod import_upstream;
mod import_yaml;
mod integrity;
mod kat_cross;
mod kat_drbg;
mod kat_faults;
mod kat_faults_kex_hash;
mod kat_sign_context;
mod malformed_corpus;
mod matrix;
mod measure_deferral;
mod measure_demo;
mod measure_faults;
mod measure_fixtures;
mod measure_inputs;
mod measure_lost_trials;
mod measure_sharing;
mod render_disturbed;
mod render_escape;
mod render_not_built;
mod render_pages;
mod render_reference;
mod render_reference_001;
mod render_survey;
mod render_unwitnessed;
mod reproduce_changes;
mod reproduce_demo;
mod sandbox_hostile;
mod sandbox_toolchain;
mod scan_static;
mod systems;
mod validate_cli;
