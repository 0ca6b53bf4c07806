//! `pqbench host`: whether the host is fixed for measuring, and the
//! isolation layers submission code gets here.

use serde::Serialize;

use crate::cli::global::{Format, Global};
use crate::cli::output;
use pqbench::error::{exit, Error};

#[derive(clap::Args)]
pub struct Args {
    /// The CPU to check (default: the last CPU pqbench may run on).
    #[arg(long)]
    cpu: Option<usize>,
    /// Format of the report on stdout.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

#[derive(Serialize)]
struct HostReport {
    cpu: usize,
    ready: bool,
    check: pqbench::host::HostCheck,
    /// The isolation layers submission code runs under on this machine.
    isolation: pqbench::sandbox::LayerReport,
}

pub fn run(_: &Global, a: &Args) -> Result<i32, Error> {
    let cpu = a
        .cpu
        .unwrap_or_else(|| pqbench::host::allowed_cpus().last().copied().unwrap_or(0));
    let check = pqbench::host::check(cpu);
    let report = HostReport {
        cpu,
        ready: check.problems.is_empty(),
        check,
        isolation: pqbench::sandbox::layers(),
    };
    output::report(a.format, &report, text)?;
    Ok(if report.ready {
        exit::OK
    } else {
        exit::ITEM_FAILURES
    })
}

fn text(r: &HostReport) -> String {
    let mut s: String = r
        .isolation
        .layers
        .iter()
        .map(|l| {
            let state = if l.active { "active" } else { "missing" };
            format!("isolation: {} {state}: {}\n", l.name, l.detail)
        })
        .collect();
    if r.ready {
        s.push_str(&format!("host ready (CPU {})\n", r.cpu));
    } else {
        for p in &r.check.problems {
            s.push_str(&format!("CPU {}: {p}\n", r.cpu));
        }
    }
    s
}
