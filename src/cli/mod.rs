//! The command-line layer of the binary; the library never sees clap.

pub mod args;
pub mod commands;
pub mod global;
pub mod output;
