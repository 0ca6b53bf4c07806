//! Progress lines on stderr for long work: which stage runs, `[k/N]` as
//! jobs finish, the time left as this run's own pace predicts it, and a
//! line per measured operation. Plain lines rather than redrawn bars, so
//! logs of unattended campaigns stay readable.

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
    /// The plan's seconds for the stage's jobs still to compute (reused
    /// ones leave it), and for the computed ones so far.
    estimate: f64,
    estimate_done: f64,
    /// Jobs reused rather than computed.
    reused: usize,
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
            estimate_done: 0.0,
            reused: 0,
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
                // The plan's figure is an estimate (the time stage's from
                // the KAT run's call costs), not a bound: the lines after
                // each job give the pace actually seen.
                format!(
                    "{stage}: {} instances, about {} of measuring by the plan's estimate",
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

    /// A job computed its result; `planned` is the plan's seconds for it
    /// (0 when unknown). Reused results are not listed.
    pub(crate) fn job_done(
        &self,
        stage: &str,
        item: &str,
        (k, n): (usize, usize),
        planned: f64,
        took: Duration,
    ) {
        let mut s = self.stage.lock().expect("progress lock");
        s.computed += 1;
        s.estimate_done += planned;
        let elapsed = s.began.map_or(0.0, |b| b.elapsed().as_secs_f64());
        let left = s.seconds_left(elapsed, n.saturating_sub(k));
        drop(s);
        self.line(&done_line(stage, item, (k, n), took.as_secs_f64(), left));
    }

    /// A job failed (its error is shown apart): the time it took still
    /// counts in the pace.
    pub(crate) fn job_failed(&self, planned: f64) {
        let mut s = self.stage.lock().expect("progress lock");
        s.computed += 1;
        s.estimate_done += planned;
    }

    /// A job's result was reused: it leaves the work the pace is spread
    /// over.
    pub(crate) fn job_reused(&self, planned: f64) {
        let mut s = self.stage.lock().expect("progress lock");
        s.reused += 1;
        s.estimate = (s.estimate - planned).max(0.0);
    }

    pub(crate) fn end_stage(&self, name: &str) {
        let s = self.stage.lock().expect("progress lock");
        if s.name == name && s.computed > 0 {
            let took = s.began.map(|b| b.elapsed().as_secs_f64()).unwrap_or(0.0);
            let computed = s.computed;
            let reused = match s.reused {
                0 => String::new(),
                r => format!(", {r} reused"),
            };
            // Beside what it took, so a reader sees how far the header's
            // figure was off.
            let estimated = match (s.measuring, s.estimate_done) {
                (true, e) if e > 0.0 => format!(" (estimated {e:.1} s)"),
                _ => String::new(),
            };
            drop(s);
            self.line(&format!(
                "{name}: {computed} computed in {took:.1} s{estimated}{reused}"
            ));
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

impl StageProgress {
    /// Seconds left with `unfinished` jobs to go, after `elapsed` seconds.
    fn seconds_left(&self, elapsed: f64, unfinished: usize) -> Option<f64> {
        eta(Pace {
            elapsed,
            computed: self.computed,
            unfinished,
            planned_done: self.estimate_done,
            planned_left: self.estimate - self.estimate_done,
        })
    }
}

/// What a stage has done so far, in jobs and in the plan's seconds.
#[derive(Debug, Clone, Copy)]
struct Pace {
    /// Seconds since the stage began.
    elapsed: f64,
    /// Jobs computed so far, and jobs not finished yet (reused or not).
    computed: usize,
    unfinished: usize,
    /// The plan's seconds of the computed jobs, and of the rest.
    planned_done: f64,
    planned_left: f64,
}

/// The time left from this run's own pace: the plan's seconds say how
/// large the remaining jobs are beside the finished ones, the seconds
/// those took say how fast this machine goes through them now. Without a
/// plan's figure every job counts the same. Unknown (None) before the
/// first computed job and after the last.
fn eta(p: Pace) -> Option<f64> {
    if p.computed == 0 || p.unfinished == 0 || p.elapsed <= 0.0 {
        return None;
    }
    let left = if p.planned_done > 0.0 && p.planned_left >= 0.0 {
        p.elapsed * p.planned_left / p.planned_done
    } else {
        p.elapsed * p.unfinished as f64 / p.computed as f64
    };
    left.is_finite().then_some(left)
}

/// `[3/10] time     a/b (2.1 s, about 15 s left)`; the time left only when
/// known and at least a second.
fn done_line(
    stage: &str,
    item: &str,
    (k, n): (usize, usize),
    took: f64,
    left: Option<f64>,
) -> String {
    let left = match left {
        Some(l) if l >= 1.0 => format!(", about {} left", duration_words(l)),
        _ => String::new(),
    };
    format!("[{k}/{n}] {stage:<8} {item} ({took:.1} s{left})")
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

#[cfg(test)]
mod tests {
    use super::*;

    fn pace(elapsed: f64, computed: usize, unfinished: usize, done: f64, left: f64) -> Pace {
        Pace {
            elapsed,
            computed,
            unfinished,
            planned_done: done,
            planned_left: left,
        }
    }

    #[test]
    fn no_time_left_is_shown_before_the_first_computed_job_or_after_the_last() {
        assert_eq!(eta(pace(30.0, 0, 5, 0.0, 50.0)), None);
        assert_eq!(eta(pace(30.0, 5, 0, 50.0, 0.0)), None);
        assert_eq!(
            done_line("time", "a/b", (5, 5), 2.0, None),
            "[5/5] time     a/b (2.0 s)"
        );
    }

    #[test]
    fn after_k_of_n_equal_jobs_the_rest_take_what_the_first_took_each() {
        // 2 of 5 in 10 s with the plan's 4 s each: 3 more at 5 s each.
        let left = eta(pace(10.0, 2, 3, 8.0, 12.0)).unwrap();
        assert!((left - 15.0).abs() < 1e-9, "{left}");
    }

    #[test]
    fn the_plans_seconds_weigh_the_jobs_and_the_run_sets_the_pace() {
        // The plan said 1 s for the finished job and 3 s for the rest; it
        // took 10 s, so this run goes ten times slower than the plan.
        let left = eta(pace(10.0, 1, 2, 1.0, 3.0)).unwrap();
        assert!((left - 30.0).abs() < 1e-9, "{left}");
        // A plan that overestimates by four is corrected the same way.
        let left = eta(pace(1.0, 1, 2, 4.0, 12.0)).unwrap();
        assert!((left - 3.0).abs() < 1e-9, "{left}");
    }

    #[test]
    fn without_the_plans_seconds_every_job_counts_the_same() {
        let left = eta(pace(12.0, 3, 6, 0.0, 0.0)).unwrap();
        assert!((left - 24.0).abs() < 1e-9, "{left}");
    }

    #[test]
    fn reused_jobs_leave_the_work_the_pace_is_spread_over() {
        let p = Progress::new(true);
        p.begin_stage("time", 4, 40.0, true);
        // Two of the four are reused at once; their 20 s is not ahead.
        p.job_reused(10.0);
        p.job_reused(10.0);
        let mut s = p.stage.lock().unwrap();
        s.computed = 1;
        s.estimate_done = 10.0;
        // One computed job of 10 planned seconds took 30 s: the last one,
        // also 10 planned seconds, is 30 s away.
        let left = s.seconds_left(30.0, 1).unwrap();
        assert!((left - 30.0).abs() < 1e-9, "{left}");
        assert_eq!(s.reused, 2);
    }

    #[test]
    fn a_time_left_under_a_second_is_not_printed() {
        assert_eq!(
            done_line("kat", "x/y", (1, 2), 0.4, Some(0.5)),
            "[1/2] kat      x/y (0.4 s)"
        );
        assert_eq!(
            done_line("ct", "x/y", (1, 3), 100.0, Some(200.0)),
            "[1/3] ct       x/y (100.0 s, about 3 min left)"
        );
    }
}
