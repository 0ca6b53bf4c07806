//! `pqbench render`: the campaign's pages from its recorded datasets.

use super::project;
use crate::cli::global::Global;
use crate::cli::output;
use pqbench::error::{exit, Error};
use pqbench::pipeline;

#[derive(clap::Args)]
pub struct Args {
    /// The campaign whose recorded datasets are rendered.
    campaign: String,
}

pub fn run(cli: &Global, a: &Args) -> Result<i32, Error> {
    let plan = pipeline::resolve(&project(cli)?, &a.campaign)?;
    let _lock = pipeline::locks::ProjectLock::acquire(&plan, "render")?;
    let r = pqbench::render::render_campaign(&plan, &pqbench::stages::registry())?;
    output::text(&format!(
        "{} pages ({} changed) in {}\n",
        r.files,
        r.written,
        plan.display_path(&r.site)
    ))?;
    Ok(exit::OK)
}
