//! A runner for tests: canned results instead of the stages' real work, so
//! engine, planning and staleness tests need no C compiler (as hyperfine
//! tests its scheduler with a mock executor).

use std::sync::Mutex;

use anyhow::Result;
use serde_json::Value;

use super::schedule::Runner;
use super::{Job, StageInfo};
use crate::plan::Instance;

type Produce = dyn Fn(&str, &Instance) -> Option<Value> + Sync;

/// Answers a job with `produce(stage, instance)`, or does the real work
/// when that returns None; remembers every job it was asked for.
pub struct MockRunner {
    produce: Box<Produce>,
    calls: Mutex<Vec<(String, String)>>,
}

impl MockRunner {
    pub fn new(produce: impl Fn(&str, &Instance) -> Option<Value> + Sync + 'static) -> Self {
        MockRunner {
            produce: Box::new(produce),
            calls: Mutex::new(Vec::new()),
        }
    }

    /// (stage, instance key) of every job run so far, in completion order.
    pub fn calls(&self) -> Vec<(String, String)> {
        self.calls.lock().expect("mock runner lock").clone()
    }

    pub fn clear(&self) {
        self.calls.lock().expect("mock runner lock").clear();
    }
}

impl Runner for MockRunner {
    fn run(&self, stage: StageInfo, job: &Job, work: &dyn Fn() -> Result<Value>) -> Result<Value> {
        self.calls
            .lock()
            .expect("mock runner lock")
            .push((stage.name.to_string(), job.inst.key()));
        match (self.produce)(stage.name, job.inst) {
            Some(v) => Ok(v),
            None => work(),
        }
    }

    fn run_campaign(&self, stage: StageInfo, work: &dyn Fn() -> Result<Value>) -> Result<Value> {
        self.calls
            .lock()
            .expect("mock runner lock")
            .push((stage.name.to_string(), "campaign".into()));
        work()
    }
}
