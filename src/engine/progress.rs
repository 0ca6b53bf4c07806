//! Progress lines on stderr for long work: which stage and instance runs,
//! and how many are done. Plain lines rather than redrawn bars, so logs of
//! unattended campaigns stay readable.

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

#[derive(Debug)]
pub struct Progress {
    quiet: bool,
    started: Instant,
    done: AtomicUsize,
}

impl Progress {
    pub fn new(quiet: bool) -> Progress {
        Progress {
            quiet,
            started: Instant::now(),
            done: AtomicUsize::new(0),
        }
    }

    fn line(&self, text: &str) {
        if !self.quiet {
            let t = self.started.elapsed().as_secs_f64();
            let _ = writeln!(std::io::stderr().lock(), "[{t:7.1}s] {text}");
        }
    }

    pub fn start(&self, stage: &str, item: &str) {
        self.line(&format!("{stage:<8} {item} …"));
    }

    pub fn finish(&self, stage: &str, item: &str) {
        let n = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        self.line(&format!(
            "{stage:<8} {item} done ({n} stage results computed)"
        ));
    }

    pub fn note(&self, text: &str) {
        self.line(text);
    }

    /// Errors are shown even when quiet.
    pub fn error(&self, text: &str) {
        let _ = writeln!(std::io::stderr().lock(), "error: {text}");
    }
}
