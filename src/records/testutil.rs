//! Locks built by hand for unit tests of the comparison and the report.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::lock::Lock;
use super::operation::OperationRecord;
use crate::stats::{self, Trial};

/// An instance entry of a lock: `library`, KAT status/log/output, the time
/// stage's result digest and per-operation medians.
pub(crate) fn instance(
    name: &str,
    library: &str,
    kat: (&str, &str, &str),
    digest: &str,
    medians: Value,
) -> Value {
    let (alg, label) = name.split_once('/').expect("<id>/<label>");
    json!({
        "instance": name, "algorithm": alg, "label": label,
        "implementation": "reference", "inputs": {}, "profile": "guide",
        "cflags": [], "ldflags": [], "library_sha256": library,
        "kat_status": kat.0, "kat_log_sha256": kat.1, "kat_output_sha256": kat.2,
        "counter": "tsc", "median_cycles": medians,
        "stages": {"time": {"key": "k", "result_sha256": digest}}
    })
}

pub(crate) fn lock(run_id: &str, host: &str, instances: Vec<Value>) -> Lock {
    let v = json!({
        "lock_version": 1, "run_id": run_id, "reproduces": null,
        "pqbench_version": "0", "stage_logic_version": "0",
        "campaign": "c", "system": "local", "start_utc": "", "end_utc": "",
        "fresh_cache": false, "plan": {}, "config_files": {},
        "compiler": {"command": "cc", "path": "/cc", "version": "1",
                     "binary_sha256": "00", "target": "t"},
        "support_version": "", "seeds": {"kat_ngcc": "", "kat_nist": "",
                                         "driver": "", "bootstrap": ""},
        "host": {"fingerprint": host, "cpus": [1], "checks": [],
                 "environment": {"cpu_model": "x", "cpus_online": 2, "max_mhz": null,
                                 "memory_mib": 1, "os": "", "kernel": "",
                                 "virtualization": null, "load_averages": [0.0, 0.0, 0.0],
                                 "utc": ""},
                 "counter": "tsc", "counter_hz": null},
        "environment": {},
        "instances": instances,
        "files": {}
    });
    serde_json::from_value(v).expect("a well-formed lock")
}

/// An operation record of `sign-1/L` with one trial per sample list.
pub(crate) fn record(op: &str, counter: &str, per_trial: &[Vec<u64>]) -> OperationRecord {
    let trials: Vec<Trial> = per_trial
        .iter()
        .map(|s| {
            let cycles = s.iter().sum::<u64>() as f64;
            Trial {
                calls: s.len() as u64,
                seconds: cycles / 2e9,
                cycles,
                samples: s.clone(),
            }
        })
        .collect();
    OperationRecord {
        algorithm: "sign-1".into(),
        label: "L".into(),
        op: op.into(),
        started_utc: None,
        kat_status: "PASS".into(),
        known_issues: vec![],
        status: super::measure::OpStatus::Ok,
        detail: None,
        cpu: Some(1),
        host_fingerprint: None,
        counter: Some(counter.into()),
        counter_hz: Some(2e9),
        calibration: None,
        plan: None,
        trials_wanted: per_trial.len() as u32,
        warmup: 2,
        processes: vec![],
        statistics: stats::summarize(&trials),
        step: None,
        output_checks: Vec::new(),
        full_replays: Vec::new(),
        witness: None,
        witness_sets: None,
        trials,
        repeated_trials: 0,
        sign_failures_retried: 0,
        setup_sign_failures_retried: 0,
        verify_rejects: 0,
        lengths: BTreeMap::new(),
        memory: None,
        measured_by: None,
    }
}
