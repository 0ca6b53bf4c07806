//! What pqbench's own randomness costs a timed call on this host.
//!
//! A NIST-API instance draws its randomness from pqbench's AES-256
//! CTR_DRBG (the adapter's `randombytes`), so every timed call that draws
//! pays for it. The DRBG picks the fastest AES the CPU runs (AES-NI, ARMv8
//! AES, else a table AES); `pqb-drbg --bench` times 32- and 64-byte draws
//! with the driver's counter, and this module runs it once per campaign so
//! the cost can be recorded beside the results and stated on the method
//! page.

use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::measure::driver::{parse_lines, Line};
use crate::sandbox::{self, Spec};
use crate::support::Support;

pub use crate::records::measure::DrbgCost;

pub use crate::records::measure::DrawCost;

impl DrbgCost {
    /// The figures of draws of `bytes` bytes, if measured.
    pub fn draw(&self, bytes: u64) -> Option<&DrawCost> {
        self.draws.iter().find(|d| d.bytes == bytes)
    }
}

/// Runs `pqb-drbg --bench` pinned to `cpu` (the measuring CPU) with the
/// implementation the instance libraries will choose.
pub fn measure(support: &Support, cpu: Option<usize>) -> Result<DrbgCost> {
    measure_with(support, cpu, None)
}

/// As [`measure`], with the AES implementation forced (`PQB_DRBG_IMPL`);
/// an implementation the CPU cannot run is an error.
pub fn measure_with(
    support: &Support,
    cpu: Option<usize>,
    implementation: Option<&str>,
) -> Result<DrbgCost> {
    // pqbench's own tool, no submission code: it runs like the compiler,
    // writing nothing.
    let mut spec = Spec::toolchain(support.drbg_tool(), vec!["--bench".to_string()], Vec::new());
    spec.env = implementation
        .map(|i| vec![("PQB_DRBG_IMPL".to_string(), i.to_string())])
        .unwrap_or_default();
    // About 0.2 s with a table AES; the slack is for a loaded host.
    spec.timeout = Duration::from_secs(60);
    spec.cpu = cpu;
    let out = sandbox::run(&spec).context("running pqb-drbg --bench")?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if out.outcome != sandbox::Outcome::Exited(0) {
        bail!(
            "pqb-drbg --bench: {}: {}{}",
            out.outcome,
            stdout.trim(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    parse(&stdout)
}

/// Reads the `meta`, `draw` and `done` lines of `pqb-drbg --bench`.
pub fn parse(stdout: &str) -> Result<DrbgCost> {
    let lines = parse_lines(stdout);
    if !lines.iter().any(|l| l.tag == "done") {
        bail!("pqb-drbg --bench did not finish: {}", stdout.trim());
    }
    let meta = lines
        .iter()
        .find(|l| l.tag == "meta")
        .context("pqb-drbg --bench printed no meta line")?;
    let field = |l: &Line, k: &str| -> Result<String> {
        l.get(k)
            .map(str::to_string)
            .with_context(|| format!("pqb-drbg --bench: `{}` line without {k}", l.tag))
    };
    let num = |l: &Line, k: &str| -> Result<f64> {
        l.f64(k)
            .with_context(|| format!("pqb-drbg --bench: `{}` line without a number {k}", l.tag))
    };
    let count = |l: &Line, k: &str| -> Result<u64> {
        l.u64(k)
            .with_context(|| format!("pqb-drbg --bench: `{}` line without a count {k}", l.tag))
    };
    let draws = lines
        .iter()
        .filter(|l| l.tag == "draw")
        .map(|l| {
            Ok(DrawCost {
                bytes: count(l, "bytes")?,
                median_cycles: num(l, "median_cycles")?,
                min_cycles: num(l, "min_cycles")?,
                median_seconds: num(l, "median_seconds")?,
                batches: count(l, "batches")?,
                batch: count(l, "batch")?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    if draws.is_empty() {
        bail!("pqb-drbg --bench measured no draw");
    }
    Ok(DrbgCost {
        implementation: field(meta, "impl")?,
        usable: field(meta, "usable")?
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
        counter: field(meta, "counter")?,
        counter_hz: num(meta, "counter_hz")?,
        draws,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_output_parses() {
        let text = "meta impl=aesni usable=aesni,table counter=tsc counter_hz=2.596e+09\n\
                    draw bytes=32 batches=201 batch=64 median_cycles=128.0 min_cycles=123.9 median_seconds=5.0e-08\n\
                    draw bytes=64 batches=201 batch=64 median_cycles=132.4 min_cycles=128.8 median_seconds=5.1e-08\n\
                    done\n";
        let c = parse(text).unwrap();
        assert_eq!(c.implementation, "aesni");
        assert_eq!(c.usable, ["aesni", "table"]);
        assert_eq!(c.counter, "tsc");
        assert_eq!(c.draw(64).unwrap().median_cycles, 132.4);
        assert_eq!(c.draw(32).unwrap().batch, 64);
        assert!(c.draw(48).is_none());
    }

    #[test]
    fn unfinished_output_is_an_error() {
        assert!(parse("meta impl=table usable=table counter=clock counter_hz=1e9\n").is_err());
        assert!(parse("done\n").is_err());
    }
}
