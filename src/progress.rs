//! Progress lines on stderr for long work: which stage runs, `[k/N]` as
//! jobs finish, an estimate of the measuring time left, and a line per
//! measured operation. Plain lines rather than redrawn bars, so logs of
//! unattended campaigns stay readable.

use std::io::Write;
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Debug)]
pub struct Progress {
    quiet: bool,
    started: Instant,
    stage: Mutex<StageProgress>,
}

#[derive(Debug, Default)]
struct StageProgress {
    name: String,
    jobs: usize,
    measuring: bool,
    /// Whether the stage's header line was printed (at its first job).
    announced: bool,
    computed: usize,
    /// Planned seconds of the stage's jobs and when it began.
    estimate: f64,
    began: Option<Instant>,
}

impl Progress {
    pub fn new(quiet: bool) -> Progress {
        Progress {
            quiet,
            started: Instant::now(),
            stage: Mutex::new(StageProgress::default()),
        }
    }

    fn line(&self, text: &str) {
        if !self.quiet {
            let t = self.started.elapsed().as_secs_f64();
            let _ = writeln!(std::io::stderr().lock(), "[{t:7.1}s] {text}");
        }
    }

    /// A stage over `jobs` instances begins; `estimate` is the planned
    /// seconds of its work (0 when unknown). Nothing is printed until a job
    /// actually runs: a stage whose results are all reused stays silent.
    pub(crate) fn begin_stage(&self, name: &str, jobs: usize, estimate: f64, measuring: bool) {
        let mut s = self.stage.lock().expect("progress lock");
        *s = StageProgress {
            name: name.to_string(),
            jobs,
            measuring,
            announced: false,
            computed: 0,
            estimate,
            began: Some(Instant::now()),
        };
    }

    /// A job is computed (not reused): the stage header the first time, and
    /// for measuring stages, which take long, a line per job.
    pub(crate) fn job_start(&self, stage: &str, item: &str) {
        let mut s = self.stage.lock().expect("progress lock");
        let header = (!s.announced && s.name == stage).then(|| {
            s.announced = true;
            if s.measuring && s.estimate >= 1.0 {
                format!(
                    "{stage}: {} instances, at most {} of measuring planned",
                    s.jobs,
                    duration_words(s.estimate)
                )
            } else {
                format!("{stage}: {} instances", s.jobs)
            }
        });
        let measuring = s.measuring;
        drop(s);
        if let Some(h) = header {
            self.line(&h);
        }
        if measuring {
            self.line(&format!("{stage:<8} {item} …"));
        }
    }

    /// A job computed its result (reused results are not listed).
    pub(crate) fn job_done(&self, stage: &str, item: &str, k: usize, n: usize, took: Duration) {
        let mut s = self.stage.lock().expect("progress lock");
        s.computed += 1;
        let left = s.began.map(|b| s.estimate - b.elapsed().as_secs_f64());
        drop(s);
        let left = match left {
            Some(l) if l >= 1.0 && k < n => format!(", about {} left", duration_words(l)),
            _ => String::new(),
        };
        self.line(&format!(
            "[{k}/{n}] {stage:<8} {item} ({:.1} s{left})",
            took.as_secs_f64()
        ));
    }

    pub(crate) fn end_stage(&self, name: &str) {
        let s = self.stage.lock().expect("progress lock");
        if s.name == name && s.computed > 0 {
            let took = s.began.map(|b| b.elapsed().as_secs_f64()).unwrap_or(0.0);
            let computed = s.computed;
            drop(s);
            self.line(&format!("{name}: {computed} computed in {took:.1} s"));
        }
    }

    /// One measured operation of the current job.
    pub(crate) fn operation(&self, stage: &str, item: &str, op: &str, text: &str) {
        self.line(&format!("{stage:<8} {item} {op}: {text}"));
    }

    pub(crate) fn note(&self, text: &str) {
        self.line(text);
    }

    /// Errors are shown even when quiet.
    pub(crate) fn error(&self, text: &str) {
        let _ = writeln!(std::io::stderr().lock(), "error: {text}");
    }
}

/// `45 s`, `12 min`, `3.5 h`.
pub(crate) fn duration_words(seconds: f64) -> String {
    if seconds < 90.0 {
        format!("{:.0} s", seconds.max(0.0))
    } else if seconds < 5400.0 {
        format!("{:.0} min", seconds / 60.0)
    } else {
        format!("{:.1} h", seconds / 3600.0)
    }
}
