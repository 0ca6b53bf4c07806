//! pqbench: builds public-key cryptography submissions with uniform flags,
//! proves they reproduce their known-answer tests, measures them and renders
//! report pages. The CLI in `main.rs` is a thin layer over this library.
//!
//! # Layers
//!
//! A module uses modules of its own layer or of lower ones, never of a
//! higher one, and no two top-level modules use each other, directly or
//! through others. `tests/testsuite/architecture.rs` reads this table and
//! checks both over every `crate::` path in `src/`.
//!
//! | layer | name | modules | what it holds |
//! | --- | --- | --- | --- |
//! | 1 | util | `error`, `format`, `fsutil`, `stats`, `elf`, `progress` | errors and exit codes, number formats, atomic files, statistics, ELF reading, progress lines |
//! | 2 | schema | `records` | every published type and the dataset layout: depends on util only |
//! | 3 | model | `kinds`, `config`, `kat`, `host`, `sizes`, `objscan`, `cache`, `plan` | what each kind of submission is, raw configuration, KAT references, host checks, evidence readers, the content-addressed cache, the validated plan |
//! | 4 | harness | `sandbox`, `support`, `toolchain`, `context`, `engine`, `measure` | isolation, the embedded C support code, compilers, the stage engine and the measuring helpers |
//! | 5 | report | `render` | pages from datasets |
//! | 6 | stages | `stages` | the stages and their registry |
//! | 7 | run | `pipeline`, `executor`, `check`, `merge`, `publish`, `bless`, `compare`, `reproduce` | running campaigns here or elsewhere, and what is done with datasets and runs |
//! | 8 | export | `export` | the exporters of compare and reproduce reports |
//! | 9 | authoring | `import`, `validate` | drafting algorithm files from trees, validating them |

// The library's API is what `main.rs` and the tests name; the rest is
// `pub(crate)`, and a `pub` that nothing outside can reach is reported.
#![warn(unreachable_pub)]

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
pub mod kinds;
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
pub const STAGE_LOGIC_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "+14");
