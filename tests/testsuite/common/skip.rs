//! Tests that need a tool this machine may lack either run or say, on the
//! terminal, that they were skipped and why. Under `CI=true` a missing tool
//! is a failure: a green CI run has checked everything.

use std::io::Write;
use std::path::Path;

/// The running test's name (libtest names each test's thread after it).
fn test_name() -> String {
    std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string()
}

pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// Printed past libtest's capture, so a passing run shows it too.
fn announce(reason: &str) {
    let _ = writeln!(std::io::stderr(), "skipped: {}: {reason}", test_name());
}

/// Whether every tool (a program on `PATH` or an absolute path) is here.
/// When one is missing the test is reported skipped, naming it and the
/// packages that provide it; under `CI=true` the test fails instead.
pub fn tools_or_skip(tools: &[&str], install: &str) -> bool {
    let missing: Vec<&str> = tools
        .iter()
        .copied()
        .filter(|t| pqbench::toolchain::which(t).is_none() && !Path::new(t).is_file())
        .collect();
    if missing.is_empty() {
        return true;
    }
    let reason = format!("no {} here ({install})", missing.join(", "));
    assert!(
        !under_ci(),
        "{}: {reason}; CI=true requires every tool-dependent test to run",
        test_name()
    );
    announce(&reason);
    false
}

/// A test that does not apply to this host at all (another architecture,
/// a CPU feature it lacks): reported skipped, also under CI.
pub fn not_applicable(reason: &str) {
    announce(reason);
}
