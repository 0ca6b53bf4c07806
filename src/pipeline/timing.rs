//! Wall, user and system seconds of a step that runs child processes (the
//! benchmarks time pqbench as a user runs it: the binary, in children).

use std::time::Instant;

use anyhow::Result;

/// Wall, user and system seconds of one timed step (user and system of
/// the child processes it waited for).
#[derive(Debug, Clone, Copy, Default)]
pub struct Timing {
    pub wall: f64,
    pub user: f64,
    pub system: f64,
}

/// The children's user and system seconds so far.
fn children_cpu() -> (f64, f64) {
    // SAFETY: getrusage fills the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; RUSAGE_CHILDREN is always valid.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (s(ru.ru_utime), s(ru.ru_stime))
}

pub(crate) fn timed(f: impl FnOnce() -> Result<()>) -> Result<Timing> {
    let (u0, s0) = children_cpu();
    let t = Instant::now();
    f()?;
    let wall = t.elapsed().as_secs_f64();
    let (u1, s1) = children_cpu();
    Ok(Timing {
        wall,
        user: u1 - u0,
        system: s1 - s0,
    })
}
