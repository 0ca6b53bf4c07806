//! A trial that lost the CPU is repeated (up to 3 attempts, none once the
//! machine was found busy) and counted, and only the kept trials make the
//! figures. The CPU is taken away on purpose: a busy thread pinned to the
//! measuring CPU halves every trial's share.

use crate::common;
use common::*;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use pqbench::records::operation::OperationRecord;

/// Spins on `cpu` until dropped.
struct Hog {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Hog {
    fn on(cpu: usize) -> Hog {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            // SAFETY: a zeroed cpu_set_t is a valid empty set; pid 0 is
            // the calling thread.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(cpu, &mut set);
                let rc = libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
                assert_eq!(rc, 0, "pinning the busy thread to CPU {cpu}");
            }
            let mut x = 1u64;
            while !flag.load(Ordering::Relaxed) {
                for _ in 0..10_000 {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
            }
        });
        Hog {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Sign of a fixture whose every successful sign follows exactly one
/// failing call, timed on a CPU shared with a busy thread. Measured once
/// for the tests of this file: the busy thread spins a whole CPU, and only
/// while the time stage runs (the build and the KAT come first, without
/// it).
fn contended_sign() -> &'static OperationRecord {
    static RECORD: std::sync::OnceLock<OperationRecord> = std::sync::OnceLock::new();
    RECORD.get_or_init(|| {
        let cpu = pqbench::host::allowed_cpus().last().copied().unwrap_or(0);
        let p = TestProject::bare();
        measure_fixture(
            &p,
            "fix-95",
            &[("SHARED", "FIX_SIGN_FAILS = 1, FIX_WORK = 20")],
        );
        // Trials of about 50 ms, several scheduler slices long.
        let campaign = |stages: &[&str]| {
            measure_campaign(
                &["fix-95"],
                stages,
                &[("trial-seconds", "0.05"), ("max-iterations", "1000")],
                "",
            )
        };
        // Both runs exit 1: the fixture has no reference KAT (NOKAT).
        p.write("campaigns/t.toml", &campaign(&["build", "kat"]));
        p.pqbench(&["run", "t"]).expect(1);
        p.write("campaigns/t.toml", &campaign(&["build", "kat", "time"]));
        let hog = Hog::on(cpu);
        p.pqbench(&["run", "t", "--cpu", &cpu.to_string()])
            .expect(1);
        drop(hog);
        op_record(&p, "t", "fix-95", "SHARED", "sign")
    })
}

fn cpu_share(p: &pqbench::measure::driver::ProcessRecord) -> f64 {
    let t = p.line("trial").expect("trial line");
    t.f64("cpu_seconds").unwrap() / t.f64("seconds").unwrap()
}

#[test]
fn trials_that_lost_the_cpu_are_repeated_and_counted() {
    let r = contended_sign();
    assert_eq!(r.status, "ok", "{:?}", r.detail);
    assert!(
        r.repeated_trials > 0,
        "no trial lost the CPU to the busy thread"
    );
    assert!(r.repeated_trials <= 2 * 5, "at most 3 attempts a trial");
    // One calibration, every attempt, one replay per kept trial (its
    // signatures are remade in a process of their own) and one more for
    // the trial remade in full.
    let trial_procs: Vec<_> = r
        .processes
        .iter()
        .filter(|p| p.line("trial").is_some())
        .collect();
    let sets = trial_sets(r);
    assert_eq!(trial_procs.len(), 5 * sets + r.repeated_trials as usize);
    assert_eq!(r.full_replays.len(), 1);
    assert_eq!(r.processes.len(), 1 + trial_procs.len() + (5 + 1) * sets);
    assert_eq!(r.trials.len(), 5);
    // A trial is run again because it ran below 95 % of its time; an
    // attempt ends its trial when it had the CPU, was the third, or lost
    // the CPU right after a trial that ended without it (the machine is
    // busy: repeating would only spend time). The kept trials are the last
    // set's (the CPU witness may ask for more than one set); every other
    // attempt was repeated or an earlier set's.
    let mut ends = Vec::new();
    let mut attempt = 0;
    // (Had a busy machine's lost trials been run again, fewer attempts
    // would end a trial here than the record keeps.)
    let mut busy = false;
    for p in &trial_procs {
        attempt += 1;
        let held = cpu_share(p) >= 0.95;
        if held || attempt == 3 || busy {
            ends.push(*p);
            busy = !held;
            attempt = 0;
        }
    }
    assert_eq!(attempt, 0, "the last attempt was dropped");
    assert_eq!(ends.len(), 5 * sets);
    assert_eq!(
        trial_procs.len() - ends.len(),
        r.repeated_trials as usize,
        "repeated attempts"
    );
    let kept = kept_trial_processes(r);
    let last_set = &ends[ends.len() - 5..];
    assert!(
        kept.iter().zip(last_set).all(|(k, e)| std::ptr::eq(*k, *e)),
        "the kept trials are the last set's trial-ending attempts"
    );
    // The figures come from the kept trials only.
    assert_statistics_recompute(r);
    let n = r.statistics.as_ref().unwrap().n;
    assert_eq!(
        n,
        kept.iter()
            .map(|p| p.line("trial").unwrap().u64("calls").unwrap())
            .sum::<u64>()
    );
}

#[test]
fn retries_are_counted_for_the_kept_trials_only() {
    let r = contended_sign();
    assert!(
        r.repeated_trials > 0,
        "no trial lost the CPU to the busy thread"
    );
    let n = r.statistics.as_ref().unwrap().n;
    // Exactly one retry per timed call.
    assert_eq!(r.sign_failures_retried, n, "retries counted for {n} calls");
}
