//! `pqbench bench-render`: rendering a synthetic dataset, timed (a
//! benchmark: prints how long it took, asserts nothing).

use crate::cli::global::Global;
use crate::cli::output;
use pqbench::error::{exit, Error};

#[derive(clap::Args)]
pub struct Args {
    /// How many synthetic instances the rendered dataset holds.
    #[arg(long, default_value_t = 500)]
    instances: usize,
}

pub fn run(_: &Global, a: &Args) -> Result<i32, Error> {
    let (took, r) = pqbench::render::bench::run(a.instances, &pqbench::stages::registry())?;
    output::text(&format!(
        "rendered {} files for {} instances in {:.3} s\n",
        r.files,
        a.instances,
        took.as_secs_f64()
    ))?;
    Ok(exit::OK)
}
