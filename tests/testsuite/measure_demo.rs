//! The demo campaign end to end, run once: a complete timing record for
//! every operation of every instance (issue 3), and a sizes record, a
//! profile per operation and a survey verdict with evidence (issue 4).
//! Only this test runs the full demo campaign (every algorithm and stage
//! of `campaigns/demo.toml`, with smaller timing targets: the figures are
//! not judged here, their structure is); keep every demo assertion here.

use crate::common;
use common::*;

use std::collections::BTreeMap;

use pqbench::records::analysis::{ProfileRecord, SizesJson, SurveyJson};
use pqbench::records::operation::OperationRecord;
use pqbench::sandbox::Outcome;

const OUT: &str = "output/demo/local";

/// The timing settings the test gives the demo campaign: `(from, to)`
/// edits of `campaigns/demo.toml`.
const TIMING: [(&str, &str); 4] = [
    ("trials = 5\n", "trials = 3\n"),
    ("budget-seconds = 2.0\n", "budget-seconds = 0.5\n"),
    ("min-calls = 100\n", "min-calls = 20\n"),
    ("max-iterations = 1000\n", "max-iterations = 200\n"),
];
/// Trials per operation and the fewest calls of a trial, as edited.
const TRIALS: usize = 3;
const MIN_CALLS: u64 = 20;

struct Instance {
    id: String,
    label: String,
    kind: String,
    load_bytes: u64,
}

fn ops(kind: &str) -> &'static [&'static str] {
    match kind {
        "sign" => &["keygen", "sign", "verify"],
        "kem" => &["keygen", "enc", "dec"],
        "hash" => pqbench::kinds::HASH_OPERATIONS,
        other => panic!("unknown kind {other}"),
    }
}

/// The operations of an instance: a KEX's by its protocol's passes.
fn inst_ops(inst: &Instance) -> Vec<&'static str> {
    match inst.id.as_str() {
        "kex-93" => pqbench::kinds::kex_operations(2),
        "kex-94" => pqbench::kinds::kex_operations(3),
        _ => ops(&inst.kind).to_vec(),
    }
}

/// The fields of the design's timing record, all present and consistent.
fn assert_complete_record(r: &OperationRecord, inst: &Instance, op: &str) {
    let what = format!("{}/{} {op}", inst.id, inst.label);
    assert_eq!(
        (&*r.algorithm, &*r.label, &*r.op),
        (&*inst.id, &*inst.label, op)
    );
    assert_eq!(r.status, "ok", "{what}: {:?}", r.detail);
    assert_eq!(r.kat_status, "PASS", "{what}");
    // Settings of campaigns/demo.toml.
    assert_eq!((r.trials_wanted as usize, r.warmup), (TRIALS, 2), "{what}");

    // Counter and its rate.
    let counter = r.counter.as_deref().unwrap_or_default();
    assert!(!counter.is_empty(), "{what}: no counter");
    let hz = r.counter_hz.unwrap_or(0.0);
    assert!(hz > 1e6, "{what}: counter rate {hz}");

    // Calibration and plan.
    let cal = r.calibration.as_ref().expect("calibration");
    assert!(cal.calls >= 2 && cal.seconds > 0.0, "{what}: {cal:?}");
    let plan = r.plan.as_ref().expect("plan");
    assert!(plan.iterations >= 1, "{what}");

    // Processes: the calibration, then one per trial attempt, each with
    // its command, exit status and the driver's meta line.
    let modes: Vec<&str> = r
        .processes
        .iter()
        .map(|p| {
            let i = p
                .command
                .iter()
                .position(|a| a == "--mode")
                .expect("--mode");
            p.command[i + 1].as_str()
        })
        .collect();
    // A KEX step has no calibration of its own: it is planned from the
    // exchange's.
    let step = pqbench::kinds::is_kex_step(op);
    assert_eq!(r.step.is_some(), step, "{what}");
    if !step {
        assert_eq!(modes[0], "calibrate", "{what}");
    }
    let trial_processes = modes.iter().filter(|m| **m == "trial").count();
    let sets = trial_sets(r);
    assert_eq!(
        trial_processes,
        TRIALS * sets + r.repeated_trials as usize,
        "{what}"
    );
    // One replay per kept trial of an operation whose outputs are checked,
    // and one more for the trial remade in full.
    let replays = modes.iter().filter(|m| **m == "replay").count();
    let checked = pqbench::measure::inputs::checked(op);
    assert_eq!(
        replays,
        if checked { (TRIALS + 1) * sets } else { 0 },
        "{what}"
    );
    assert_eq!(r.output_checks.len(), TRIALS * 3, "{what}");
    assert!(
        r.output_checks.iter().all(|c| c.problem().is_none()),
        "{what}"
    );
    assert_eq!(r.full_replays.len(), 1, "{what}");
    assert_eq!(r.full_replays[0].differing, Some(0), "{what}");
    // verify's pool of signatures is built once, by a process of its own.
    let pools = modes.iter().filter(|m| **m == "pool").count();
    assert_eq!(pools, usize::from(op == "verify"), "{what}");
    assert_eq!(
        modes.len(),
        usize::from(!step) + pools + trial_processes + replays,
        "{what}"
    );
    for p in &r.processes {
        assert_eq!(p.command[..2], ["--lib", "<library>"], "{what}");
        assert!(p.command.windows(2).any(|w| w == ["--op", op]), "{what}");
        assert_eq!(p.outcome, Outcome::Exited(0), "{what}: {}", p.stderr_tail);
        assert!(p.wall_seconds > 0.0);
        let meta = p
            .line("meta")
            .unwrap_or_else(|| panic!("{what}: no meta line"));
        assert_eq!(meta.get("counter"), Some(counter), "{what}");
        assert_eq!(meta.get("kind"), Some(inst.kind.as_str()), "{what}");
        assert!(p.line("done").is_some(), "{what}");
    }
    let first_trial = modes.iter().position(|m| *m == "trial").expect("a trial");
    let trial_args = &r.processes[first_trial].command;
    assert!(
        trial_args.windows(2).any(|w| w[0] == "--iters"
            && w[1]
                .parse()
                .is_ok_and(|n| within_spread(n, plan.iterations))),
        "{what}"
    );

    // Raw trials with their per-call samples, and the statistics from them.
    assert_eq!(r.trials.len(), TRIALS, "{what}");
    for t in &r.trials {
        assert!(kept_within_spread(r, t.calls, plan.iterations), "{what}");
        assert_eq!(t.samples.len() as u64, t.calls, "{what}");
        // The samples time the calls alone; the trial's cycles also cover
        // the loop around them, by at most a few hundred cycles per call.
        let sum = t.samples.iter().sum::<u64>() as f64;
        assert!(sum <= t.cycles, "{what}: {sum} vs {}", t.cycles);
        assert!(t.seconds > 0.0, "{what}");
    }
    // A single interruption between calls can outweigh a short trial's
    // loop, so the bound holds for at least one trial of the record: a
    // systematic gap (samples that miss part of the calls) breaks it.
    assert!(
        r.trials
            .iter()
            .any(|t| { t.cycles - t.samples.iter().sum::<u64>() as f64 <= gap_allowed(r, t) }),
        "{what}: every trial's cycles exceed its samples' sum beyond the loop"
    );
    kept_trial_processes(r); // every kept trial came from a recorded process
    assert_statistics_recompute(r);
    let s = r.statistics.as_ref().expect("statistics");
    let scale = r.witness_sets.as_ref().map_or(1, |w| w.scale);
    assert_eq!(s.n, TRIALS as u64 * plan.iterations * scale, "{what}");
    assert_eq!(s.basis, "per-call samples", "{what}");
    assert!(
        s.n >= MIN_CALLS || plan.below_min_calls,
        "{what}: {} calls",
        s.n
    );
    assert!(
        s.p5_cycles <= s.median_cycles && s.median_cycles <= s.p95_cycles,
        "{what}"
    );

    // Memory: the library's load size, RSS after setup and at its peak, the
    // operation's stack high-water mark and heap peak.
    let m = r
        .memory
        .as_ref()
        .unwrap_or_else(|| panic!("{what}: no memory figures"));
    assert_eq!(m.status, "ok", "{what}: {:?}", m.detail);
    assert_eq!(m.load_bytes, Some(inst.load_bytes), "{what}");
    let (base, peak) = (m.baseline_rss_kib.unwrap_or(0), m.peak_rss_kib.unwrap_or(0));
    assert!(base > 0 && peak >= base, "{what}: RSS {base} {peak}");
    let stack = m.stack_bytes.unwrap_or(0);
    assert!(stack > 0 && stack < 16 << 20, "{what}: stack {stack}");
    assert!(m.heap_peak_bytes.is_some(), "{what}");
    assert!(
        m.process
            .command
            .windows(2)
            .any(|w| w == ["--mode", "memory"]),
        "{what}"
    );
    assert_eq!(m.process.outcome, Outcome::Exited(0), "{what}");

    // Lengths the library returned: keys in every process (setup makes
    // them), a signature or ciphertext wherever one was made.
    let made: &[&str] = match (inst.kind.as_str(), op) {
        ("hash", _) => &["digest"],
        // Every KEX process runs whole protocols (Tarn's A has no key).
        ("kex", _) => &["pkb", "skb", "ss", "msgs", "m1", "m2"],
        (_, "keygen") => &["pk", "sk"],
        ("sign", _) => &["pk", "sk", "sig"],
        _ => &["pk", "sk", "ct", "ss"],
    };
    for k in made {
        assert!(
            r.lengths.get(*k).copied().unwrap_or(0) > 0,
            "{what}: length {k}"
        );
    }
}

/// Sign retries of the kept trials, from their processes' trial lines.
fn kept_retries(r: &OperationRecord) -> u64 {
    kept_trial_processes(r)
        .iter()
        .map(|p| p.line("trial").unwrap().u64("sign_retries").unwrap())
        .sum()
}

fn assert_profile(
    p: &TestProject,
    inst: &Instance,
    op: &str,
    timed: &OperationRecord,
) -> ProfileRecord {
    let what = format!("{}/{} {op}", inst.id, inst.label);
    let rel = format!("{OUT}/profile/{}/{}__{op}.json", inst.id, inst.label);
    let pr: ProfileRecord = serde_json::from_str(&p.read(&rel)).unwrap();
    assert_eq!(
        (&*pr.algorithm, &*pr.label, &*pr.op),
        (&*inst.id, &*inst.label, op)
    );
    assert_eq!(pr.status, "ok", "{what}: {:?}", pr.detail);
    for h in ["pseudohash", "pseudoXOF", "sm3hash", "get_random_number"] {
        assert!(pr.wrapped.iter().any(|w| w == h), "{what}: {h} not wrapped");
    }
    // The profile runs as many calls as a timing trial.
    assert_eq!(pr.ops, timed.plan.as_ref().unwrap().iterations, "{what}");
    assert!(
        pr.total_ticks > 0 && pr.tick_hz.unwrap_or(0.0) > 1e6,
        "{what}"
    );
    // Shares and calls per operation follow from the shapes.
    let ticks = |drng: bool| -> u64 {
        pr.shapes
            .iter()
            .filter(|s| s.class.is_drng() == drng)
            .map(|s| s.ticks)
            .sum()
    };
    assert_eq!(
        pr.hash_share,
        ticks(false) as f64 / pr.total_ticks as f64,
        "{what}"
    );
    assert_eq!(
        pr.drng_share,
        ticks(true) as f64 / pr.total_ticks as f64,
        "{what}"
    );
    assert!(pr.hash_share + pr.drng_share <= 1.0 + 1e-9, "{what}");
    let mut calls: BTreeMap<String, u64> = BTreeMap::new();
    for s in &pr.shapes {
        *calls.entry(s.function.clone()).or_default() += s.calls;
    }
    let per_op: BTreeMap<String, f64> = calls
        .iter()
        .map(|(f, c)| (f.clone(), *c as f64 / pr.ops as f64))
        .collect();
    assert_eq!(pr.calls_per_op, per_op, "{what}");
    pr
}

#[test]
fn demo_campaign_records_every_operation_with_profiles_sizes_and_survey() {
    let p = TestProject::demo();
    let mut campaign = p.read("campaigns/demo.toml");
    for (from, to) in TIMING {
        assert!(campaign.contains(from), "{from}: {campaign}");
        campaign = campaign.replace(from, to);
    }
    p.write("campaigns/demo.toml", &campaign);
    let run = p.pqbench(&["run", "demo"]).expect(0);
    assert!(
        run.stdout.contains("records in output/demo/local"),
        "{}",
        run.stdout
    );

    let build = p.json(&format!("{OUT}/build.json"));
    let instances: Vec<Instance> = build["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| Instance {
            id: i["algorithm"].as_str().unwrap().into(),
            label: i["label"].as_str().unwrap().into(),
            kind: i["kind"].as_str().unwrap().into(),
            load_bytes: i["load_bytes"].as_u64().expect("load_bytes"),
        })
        .collect();
    let mut names: Vec<String> = instances
        .iter()
        .map(|i| format!("{}/{}", i.id, i.label))
        .collect();
    names.sort();
    let want = [
        "hash-95/RILL-256",
        "hash-95/RILL-512",
        "iccs/pseudoXOF-256",
        "iccs/pseudoXOF-512",
        "iccs/pseudohash-1024",
        "iccs/pseudohash-512",
        "iccs/pseudohash-768",
        "iccs/sm3hash-256",
        "kem-91/PEBBLE-2",
        "kem-91/PEBBLE-3",
        "kex-93/BROOK-16",
        "kex-94/TARN-16",
        "sign-90/WINTER-128",
        "sign-90/WINTER-128R",
        "sign-90/WINTER-192",
        "sign-92/LARCH-1",
        "sign-92/LARCH-3",
    ];
    assert_eq!(names, want);

    // ---- Issue 3: a complete timing record per operation.
    let mut records: BTreeMap<(String, String, String), OperationRecord> = BTreeMap::new();
    for inst in &instances {
        assert!(inst.load_bytes > 0);
        for op in inst_ops(inst) {
            let r = op_record(&p, "demo", &inst.id, &inst.label, op);
            assert_complete_record(&r, inst, op);
            records.insert((inst.id.clone(), inst.label.clone(), op.to_string()), r);
        }
    }
    let rec = |id: &str, label: &str, op: &str| &records[&(id.into(), label.into(), op.into())];
    // Nothing but the operations: 21 records.
    let on_disk = files_with_ext(&p.path().join(OUT).join("records"), "json");
    assert_eq!(on_disk.len(), records.len());
    // Every honest signature verifies.
    for ((_, _, op), r) in &records {
        if op == "verify" {
            assert_eq!(r.verify_rejects, 0, "{}/{}", r.algorithm, r.label);
        }
    }

    // WINTER-128R refuses about 8 % of digests; the driver retries inside
    // the timed call and counts the retries.
    let retried = rec("sign-90", "WINTER-128R", "sign");
    assert!(retried.sign_failures_retried > 0);
    let n = retried.statistics.as_ref().unwrap().n;
    let rate = kept_retries(retried) as f64 / n as f64;
    assert!((0.02..=0.20).contains(&rate), "{rate}: retries per call");
    // Its known issue (measured anyway) travels with the record.
    assert_eq!(retried.known_issues.len(), 1);
    assert!(rec("sign-90", "WINTER-128", "sign").known_issues.is_empty());
    for label in ["WINTER-128", "WINTER-192"] {
        assert_eq!(
            rec("sign-90", label, "sign").sign_failures_retried,
            0,
            "{label}"
        );
    }

    // campaign.json says which counter the records use.
    let campaign = p.json(&format!("{OUT}/campaign.json"));
    let first = records.values().next().unwrap();
    assert_eq!(campaign["counter"].as_str(), first.counter.as_deref());
    assert_eq!(campaign["timing"]["trials"], TRIALS);

    // ---- Issue 4: a sizes record per instance.
    let sizes: SizesJson = serde_json::from_str(&p.read(&format!("{OUT}/sizes.json"))).unwrap();
    assert_eq!(sizes.catalog, None);
    assert_eq!(sizes.instances.len(), instances.len());
    for inst in instances
        .iter()
        .filter(|i| i.kind == "sign" || i.kind == "kem")
    {
        let row = sizes
            .instances
            .iter()
            .find(|r| r.algorithm == inst.id && r.label == inst.label)
            .unwrap_or_else(|| panic!("{}/{}: no sizes row", inst.id, inst.label));
        assert_eq!(row.kind.as_str(), inst.kind);
        let figures: &[(&str, &str)] = if inst.kind == "sign" {
            &[
                ("public key", "pk"),
                ("secret key", "sk"),
                ("signature", "sig"),
            ]
        } else {
            &[
                ("public key", "pk"),
                ("secret key", "sk"),
                ("ciphertext", "ct"),
                ("shared secret", "ss"),
            ]
        };
        let names: Vec<&String> = row.figures.keys().collect();
        let mut want: Vec<&str> = figures.iter().map(|f| f.0).collect();
        want.sort();
        assert_eq!(names, want, "{}/{}", inst.id, inst.label);
        for (name, key) in figures {
            let f = &row.figures[*name];
            // The demo's API figures are exact, and the timing saw them.
            assert!(f.api.unwrap_or(0) > 0, "{}/{} {name}", inst.id, inst.label);
            assert_eq!(f.observed, f.api, "{}/{} {name}", inst.id, inst.label);
            let timed = ops(&inst.kind)
                .iter()
                .filter_map(|op| rec(&inst.id, &inst.label, op).lengths.get(*key).copied())
                .max();
            assert_eq!(timed, f.observed, "{}/{} {name}", inst.id, inst.label);
            assert_eq!((f.shown, f.shown_from.as_str()), (f.api, "api"));
        }
        assert!(row.disagreements.is_empty(), "{:?}", row.disagreements);
    }

    // A profile per operation of every instance over the ICCS helpers
    // (sign-92 has none of its own: see
    // analysis_fixtures::an_instance_without_helpers_still_gets_a_profile_per_operation).
    let mut profiles = BTreeMap::new();
    let profiled = |i: &&Instance| i.id != "sign-92" && i.kind != "hash";
    for inst in instances.iter().filter(profiled) {
        for op in inst_ops(inst)
            .into_iter()
            .filter(|op| inst.kind != "kex" || *op == "exchange")
        {
            let pr = assert_profile(&p, inst, op, rec(&inst.id, &inst.label, op));
            profiles.insert((inst.id.clone(), inst.label.clone(), op.to_string()), pr);
        }
    }
    let prof = |id: &str, label: &str, op: &str| &profiles[&(id.into(), label.into(), op.into())];
    // Wintertide signs with one salt, one pseudohash, one pseudoXOF and
    // chains of sm3hash calls: mostly hashing.
    let w = prof("sign-90", "WINTER-128", "sign");
    for (f, n) in [
        ("get_random_number", 1.0),
        ("pseudohash", 1.0),
        ("pseudoXOF", 1.0),
    ] {
        assert_eq!(w.calls_per_op.get(f), Some(&n), "{f}: {:?}", w.calls_per_op);
    }
    assert!(w.calls_per_op["sm3hash"] > 10.0);
    assert!(w.hash_share > 0.5, "{}", w.hash_share);
    // With retries every attempt draws a fresh salt: more than one DRNG
    // call per timed sign, as many more as there were retries.
    let wr = prof("sign-90", "WINTER-128R", "sign");
    let drng = wr.calls_per_op["get_random_number"];
    assert!((1.02..=1.2).contains(&drng), "{drng} DRNG calls per sign");

    // ---- Issue 4: a survey verdict with evidence per algorithm.
    let survey: SurveyJson = serde_json::from_str(&p.read(&format!("{OUT}/survey.json"))).unwrap();
    let verdicts: Vec<(&str, &str)> = survey
        .algorithms
        .iter()
        .map(|a| (a.algorithm.as_str(), a.verdict.as_str()))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("kem-91", "ICCS-only"),
            ("kex-93", "ICCS-only"),
            ("kex-94", "ICCS-only"),
            ("sign-90", "ICCS-only"),
            ("sign-92", "bypass")
        ]
    );
    for a in &survey.algorithms {
        let count = instances.iter().filter(|i| i.id == a.algorithm).count();
        assert_eq!(a.instances.len(), count, "{}", a.algorithm);
        assert!(!a.reason.is_empty());
        for i in &a.instances {
            assert!(!i.objects.is_empty(), "{} {}", a.algorithm, i.label);
            assert!(
                i.evidence.api_missing.is_empty(),
                "{:?}",
                i.evidence.api_missing
            );
        }
    }
    let larch = &survey
        .algorithms
        .iter()
        .find(|a| a.algorithm == "sign-92")
        .unwrap();
    assert!(
        larch.reason.contains("SHA-256 K in sha256.c"),
        "{}",
        larch.reason
    );
    for i in &larch.instances {
        assert!(i.evidence.reachable_helpers.is_empty());
        assert!(i
            .evidence
            .tables
            .iter()
            .any(|t| t.family == "sha2" && t.object == "sha256.c"));
    }
    let winter = &survey
        .algorithms
        .iter()
        .find(|a| a.algorithm == "sign-90")
        .unwrap();
    for i in &winter.instances {
        let helpers: Vec<&str> = i
            .evidence
            .reachable_helpers
            .iter()
            .map(|h| h.helper.as_str())
            .collect();
        for h in ["pseudoXOF", "pseudohash", "sm3hash", "get_random_number"] {
            assert!(helpers.contains(&h), "{}: {helpers:?}", i.label);
        }
        assert!(i.evidence.tables.is_empty(), "{:?}", i.evidence.tables);
        // The stand-in's own SM3 is ICCS code: present, not reached.
        assert!(i
            .evidence
            .unreachable_tables
            .iter()
            .any(|t| t.table == "SM3 IV"));
    }
    assert!(
        winter.reason.contains("pseudoXOF from sig_"),
        "{}",
        winter.reason
    );
    // A helper is cited from a function whose own code leads to it: the
    // KEX getters return constants and share .text with the callers of
    // the DRNG, yet reach nothing.
    for a in survey
        .algorithms
        .iter()
        .filter(|a| a.algorithm.starts_with("kex-"))
    {
        for i in &a.instances {
            for h in &i.evidence.reachable_helpers {
                let from = &h.reached_from;
                assert!(
                    !from.starts_with("kex_get_"),
                    "{} {}: {h:?}",
                    a.algorithm,
                    i.label
                );
            }
        }
        assert!(
            a.reason.contains("get_random_number from kex_init_a"),
            "{}",
            a.reason
        );
    }
    // The object cited is that of the code calling the helper: PEBBLE's
    // kem.c calls pseudoXOF only in kem_dec, its keygen through poly.c.
    let pebble = &survey.algorithms.iter().find(|a| a.algorithm == "kem-91");
    let reason = &pebble.unwrap().reason;
    assert!(
        reason.contains("pseudoXOF from kem_keygen (poly.c)"),
        "{reason}"
    );

    // ---- Issue 17: instruction counts and the constant-time check of
    // every operation, their cost in the run's output, on the pages.
    assert_demo_counts_and_ct(&p, &instances, &run.stderr);
    // ---- Issue 14: key exchanges, hashes and the ICCS baseline.
    assert_kex_and_hash(&p, &records);

    // ---- Issue 5: the site, its links, and `check` on the published data.
    assert_demo_site(&p);
}

fn assert_demo_counts_and_ct(p: &TestProject, instances: &[Instance], stderr: &str) {
    use pqbench::records::count::{CountRecord, ExactStatus};
    use pqbench::records::ct::{CtRecord, CtStatus};
    for inst in instances {
        // Counted and checked for constant time: every operation but a
        // KEX's steps; a hash is not checked.
        let ct_checked = inst.kind != "hash";
        let ct_dir = p.path().join(format!("{OUT}/ct/{}", inst.id));
        assert_eq!(ct_dir.exists(), ct_checked, "{}", ct_dir.display());
        for op in inst_ops(inst) {
            let what = format!("{}/{} {op}", inst.id, inst.label);
            let count_file = format!("{OUT}/count/{}/{}__{op}.json", inst.id, inst.label);
            if inst.kind == "kex" && op != "exchange" {
                assert!(!p.path().join(&count_file).exists(), "{what}");
                continue;
            }
            let c: CountRecord = serde_json::from_str(&p.read(&count_file)).unwrap();
            assert_eq!(c.status, ExactStatus::Ok, "{what}: {:?}", c.detail);
            assert_eq!(c.per_call.len(), 2, "{what}");
            assert_eq!(c.instructions, c.recomputed(), "{what}");
            if !ct_checked {
                continue;
            }
            let t: CtRecord = serde_json::from_str(
                &p.read(&format!("{OUT}/ct/{}/{}__{op}.json", inst.id, inst.label)),
            )
            .unwrap();
            assert!(
                matches!(t.status, CtStatus::Clean | CtStatus::Flagged),
                "{what}: {:?} {:?}",
                t.status,
                t.detail
            );
            if inst.kind == "kex" {
                // The demo exchanges raise a secret exponent by square and
                // multiply: the branch on each exponent bit is found, in
                // the shared field code, from randomness alone.
                assert_eq!(t.status, CtStatus::Flagged, "{what}");
                assert_eq!(t.secrets, vec!["randomness".to_string()], "{what}");
                assert!(
                    t.sites.iter().any(|s| s.function == "gf61_pow"
                        && s.location() == format!("algorithms/{}/gf61.h:42", inst.id)
                        && s.kinds.contains(&"branch".to_string())),
                    "{what}: {:#?}",
                    t.sites
                );
                continue;
            }
            // Every flagged signature/KEM site is a Winternitz chain walk
            // or the rejection of a public digest, annotated in the TOML.
            for s in &t.sites {
                assert!(s.annotation.is_some(), "{what}: unannotated {s:#?}");
            }
        }
    }
    // The per-operation cost of the ct stage is stated as it runs.
    assert!(stderr.contains("under memcheck in"), "{stderr}");
    let page = p.read("output/demo/site/local/sign-90.md");
    assert!(page.contains("## Constant-time check"), "{page}");
    assert!(page.contains("Instructions executed per call"), "{page}");
    assert!(page.contains("the salt is part of the signature"), "{page}");
    let summary = p.read("output/demo/site/local/summary.md");
    assert!(
        summary.contains("ct-flagged (") && summary.contains("annotated)"),
        "{summary}"
    );
    // The key-exchange table has its constant-time column too.
    let brook = summary
        .lines()
        .find(|l| l.contains("`BROOK-16`"))
        .unwrap_or_else(|| panic!("{summary}"));
    assert!(brook.contains("| ct-flagged (2 sites) |"), "{brook}");
    let method = p.read("output/demo/site/local/method.md");
    assert!(
        method.contains("## Instruction counts and constant-time check"),
        "{method}"
    );
}

type Records = BTreeMap<(String, String, String), OperationRecord>;

/// How far the key-exchange steps' undisturbed costs may add up from the
/// exchange's: a step that timed nothing of its work, or the whole
/// exchange, is outside.
const STEP_BAND: std::ops::RangeInclusive<f64> = 0.67..=1.5;

/// Per key exchange, the sum of its steps' 5th-percentile call cycles over
/// the exchange's; each step checked to be planned from the exchange.
fn step_ratios(rec: impl Fn(&str, &str, &str) -> OperationRecord) -> Vec<(&'static str, f64)> {
    [("kex-93", "BROOK-16"), ("kex-94", "TARN-16")]
        .into_iter()
        .map(|(id, label)| {
            let whole = rec(id, label, "exchange");
            let exchange = low_quantile_call_cycles(&whole, 0.05);
            let steps: f64 = pqbench::kinds::kex_operations(if id == "kex-93" { 2 } else { 3 })
                .iter()
                .filter(|op| pqbench::kinds::is_kex_step(op))
                .map(|op| {
                    let r = rec(id, label, op);
                    let s = r.step.as_ref().unwrap();
                    assert_eq!(s.planned_from, "exchange");
                    let overhead = s.counter_overhead_cycles.unwrap();
                    assert!(overhead > 0.0 && overhead < 10_000.0, "{overhead}");
                    // Planned from the exchange: the same calls per trial.
                    assert_eq!(r.plan, whole.plan);
                    low_quantile_call_cycles(&r, 0.05)
                })
                .sum();
            (id, steps / exchange)
        })
        .collect()
}

/// The key exchanges measured again in a campaign of their own (the
/// demo's settings, time stage only); returns their records.
fn remeasure_kex(
    p: &TestProject,
    remeasure: bool,
) -> impl Fn(&str, &str, &str) -> OperationRecord + '_ {
    let demo = p.read("campaigns/demo.toml");
    let campaign: String = demo
        .lines()
        .map(|l| match l {
            l if l.starts_with("algorithms =") => "algorithms = [\"kex-93\", \"kex-94\"]",
            l if l.starts_with("systems =") => "systems = [\"local\"]",
            l if l.starts_with("stages =") => "stages = [\"time\"]",
            l => l,
        })
        .map(|l| format!("{l}\n"))
        .collect();
    p.write("campaigns/kexsteps.toml", &campaign);
    let args: &[&str] = if remeasure {
        &["-q", "run", "kexsteps", "--remeasure"]
    } else {
        &["-q", "run", "kexsteps"]
    };
    p.pqbench(args).expect(0);
    move |id: &str, label: &str, op: &str| op_record(p, "kexsteps", id, label, op)
}

/// The key-exchange steps' undisturbed costs (the 5th percentile of
/// thousands of per-call samples each) add up to the exchange's within a
/// half (the steps' own counter reads add < 1 %): a step that timed nothing
/// of its work, or the whole exchange, is outside that. Medians are not
/// compared: the records are measured at different moments, and another
/// process on the other core can move one record's median by a third; on a
/// slow, shared day of the 2-core VM even the 5th percentiles of Tarn's
/// steps added up to 1.32 times the exchange's. A neighbour's burst can
/// still land on one record's quantile: the ratio is judged on the best of
/// up to three measurements.
#[test]
#[ignore = "statistical: compares timings (tests/README.md)"]
fn statistical_kex_steps_add_up_to_the_exchange() {
    let p = TestProject::demo();
    let mut ratios = step_ratios(remeasure_kex(&p, false));
    for _ in 0..2 {
        if ratios.iter().all(|(_, r)| STEP_BAND.contains(r)) {
            break;
        }
        for (k, r) in step_ratios(remeasure_kex(&p, true)) {
            let best = ratios.iter_mut().find(|(id, _)| *id == k).unwrap();
            if (r.ln()).abs() < (best.1.ln()).abs() {
                best.1 = r;
            }
        }
    }
    for (id, ratio) in &ratios {
        assert!(
            STEP_BAND.contains(ratio),
            "{id}: the steps' 5th percentiles add up to {ratio:.3} × the exchange's (best of up to three measurements)"
        );
    }
}

fn assert_kex_and_hash(p: &TestProject, records: &Records) {
    let rec = |id: &str, label: &str, op: &str| &records[&(id.into(), label.into(), op.into())];
    // Each step is planned from the exchange and has its counter overhead;
    // whether the steps' costs add up to the exchange's is a comparison of
    // timings, so it is a statistical check
    // (`statistical_kex_steps_add_up_to_the_exchange`).
    for (id, ratio) in step_ratios(|id, label, op| rec(id, label, op).clone()) {
        assert!(ratio.is_finite() && ratio > 0.0, "{id}: {ratio}");
    }
    // Sizes: Tarn's initiator has no long-term key, Brook's has one.
    let sizes: SizesJson = serde_json::from_str(&p.read(&format!("{OUT}/sizes.json"))).unwrap();
    let fig = |id: &str, name: &str| {
        let row = sizes.instances.iter().find(|r| r.algorithm == id).unwrap();
        assert!(row.disagreements.is_empty(), "{:?}", row.disagreements);
        row.figures[name].shown.unwrap()
    };
    assert_eq!(fig("kex-93", "passes"), 2);
    assert_eq!(
        (fig("kex-93", "public key A"), fig("kex-93", "public key B")),
        (128, 128)
    );
    assert_eq!(
        (
            fig("kex-93", "protocol messages"),
            fig("kex-93", "bandwidth")
        ),
        (256, 512)
    );
    assert_eq!(fig("kex-94", "passes"), 3);
    assert_eq!(fig("kex-94", "public key A"), 0);
    assert_eq!(
        (
            fig("kex-94", "message 1"),
            fig("kex-94", "message 2"),
            fig("kex-94", "message 3")
        ),
        (144, 160, 32)
    );
    assert_eq!(fig("kex-94", "bandwidth"), 336 + 128);
    // Every hash and baseline instance has its eight sizes; the baseline's
    // self-check (GB/T 32905's examples, pseudoXOF against KDF-SM3) passed.
    let build = p.json(&format!("{OUT}/build.json"));
    for i in build["instances"].as_array().unwrap() {
        if i["kind"] == "hash" {
            assert_eq!(i["kat_status"], "PASS", "{i}");
            for op in pqbench::kinds::HASH_OPERATIONS {
                let r = rec(
                    i["algorithm"].as_str().unwrap(),
                    i["label"].as_str().unwrap(),
                    op,
                );
                assert_eq!(r.status, "ok");
            }
        }
    }
    let log = p.read(&format!("{OUT}/kat/iccs/sm3hash-256.log"));
    assert!(log.contains("file_status = KAT_ICCS PASS"), "{log}");
    // Only a KEX's exchange is profiled; hashes are not.
    assert!(p
        .path()
        .join(format!("{OUT}/profile/kex-93/BROOK-16__exchange.json"))
        .is_file());
    assert!(!p
        .path()
        .join(format!("{OUT}/profile/kex-93/BROOK-16__pass1.json"))
        .exists());
    assert!(!p.path().join(format!("{OUT}/profile/hash-95")).exists());

    // Pages: the summary's sections, sm3hash's cycles/byte at 64 KiB (of
    // the median, the summary's headline figure).
    let summary = p.read("output/demo/site/local/summary.md");
    for h in [
        "## Key exchange",
        "## Hash functions",
        "## ICCS hash helpers",
    ] {
        assert!(summary.contains(h), "{h} missing:\n{summary}");
    }
    let sm3 = rec("iccs", "sm3hash-256", "hash_65536")
        .statistics
        .as_ref()
        .unwrap()
        .median_cycles;
    let cpb = pqbench::render::kinds::cycles_per_byte(sm3 / 65536.0);
    let line = summary
        .lines()
        .find(|l| l.contains("`sm3hash-256`"))
        .unwrap();
    // The last cell holds the notes: none, or the disturbed flag a loaded
    // host may give.
    let cells: Vec<&str> = line.trim_end().trim_end_matches('|').split(" | ").collect();
    let (cpb_cell, notes) = (cells[cells.len() - 2], cells[cells.len() - 1].trim());
    assert_eq!(cpb_cell.trim(), cpb, "{line}");
    assert!(
        notes.is_empty() || notes.starts_with("⚠ disturbed: hash_"),
        "{line}"
    );
    let rill = summary.lines().find(|l| l.contains("`RILL-512`")).unwrap();
    assert!(rill.contains("(×"), "{rill}");
    let kex = p.read("output/demo/site/local/kex-94.md");
    for s in [
        "function: key exchange",
        "## 6. Transmission",
        "| passes | message 1 | message 2 | message 3 |",
        "step medians add up to",
        "## Symmetric primitives",
    ] {
        assert!(kex.contains(s), "{s} missing from the KEX page");
    }
    let hash = p.read("output/demo/site/local/hash-95.md");
    assert!(
        hash.contains("| instance | message | mean cycles | cycles/byte | mean time | MB/s | n")
    );
    assert!(hash.contains("function: cryptographic hash"));
    for s in ["## 6.", "## Symmetric primitives"] {
        assert!(!hash.contains(s), "{s} on the hash page");
    }
}

fn assert_demo_site(p: &TestProject) {
    let site = p.path().join("output/demo/site");
    for page in [
        "index.html",
        "index.md",
        "survey.html",
        "sizes.html",
        "local/summary.html",
        "local/method.html",
        "local/sign-90.html",
        "local/kem-91.md",
        "local/sign-92.html",
        "local/kex-93.html",
        "local/kex-94.md",
        "local/hash-95.html",
        "local/iccs.md",
        "local/summary-hash.svg",
    ] {
        assert!(site.join(page).is_file(), "{page} missing");
    }
    let broken = pqbench::render::check_links(&site);
    assert!(broken.is_empty(), "broken links: {broken:#?}");
    // Markdown reaches no HTML page raw: code spans are <code>, and a
    // backtick left over would be a span that was not converted.
    for page in common::files_with_ext(&site, "html") {
        let html = std::fs::read_to_string(&page).unwrap();
        let line = html.lines().find(|l| l.contains('`'));
        assert!(
            line.is_none(),
            "{} holds a literal backtick: {}",
            page.display(),
            line.unwrap_or_default()
        );
    }

    assert_kat_provenance(p);

    let published = tempfile::tempdir().unwrap();
    let dest = published.path().join("dataset");
    p.pqbench(&["publish", "demo", dest.to_str().unwrap()])
        .expect(0);
    let ok = p.pqbench(&["check", dest.to_str().unwrap()]);
    assert_eq!(ok.code, 0, "{}\n{}", ok.stdout, ok.stderr);

    // One raw trial edited: `check` names the file.
    let rec = dest.join("data/local/records/sign-90/WINTER-128__sign.json");
    let text = std::fs::read_to_string(&rec).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let c = v["trials"][0]["cycles"].as_f64().unwrap();
    v["trials"][0]["cycles"] = serde_json::json!(c + 1000.0);
    std::fs::write(&rec, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let bad = p.pqbench(&["check", dest.to_str().unwrap()]);
    assert_eq!(bad.code, 1, "{}\n{}", bad.stdout, bad.stderr);
    let said = format!("{}{}", bad.stdout, bad.stderr);
    assert!(
        said.contains("records/sign-90/WINTER-128__sign.json"),
        "{said}"
    );
}

/// Every passing instance says where its references came from, and the
/// pages cite only manifests that exist: the hash candidate's references
/// were blessed (its manifest says so), the ICCS baseline checks itself
/// against built-in answers and has no manifest.
fn assert_kat_provenance(p: &TestProject) {
    let build = p.json("output/demo/local/build.json");
    for r in build["instances"].as_array().unwrap() {
        if r["kat_status"] != "PASS" {
            continue;
        }
        let (id, label) = (r["algorithm"].as_str().unwrap(), &r["label"]);
        let want = match id {
            "iccs" => "built-in",
            "hash-95" => "blessed",
            _ => continue,
        };
        assert_eq!(r["kat_reference"], want, "{id}/{label}");
    }
    for page in common::files_with_ext(&p.path().join("output/demo/site"), "md") {
        let text = std::fs::read_to_string(&page).unwrap();
        for cited in text.split("reference digests in `").skip(1) {
            let path = cited.split('`').next().unwrap();
            assert!(
                p.path().join(path).is_file(),
                "{} cites {path}, which does not exist",
                page.display()
            );
        }
    }
    let iccs = p.read("output/demo/site/local/iccs.md");
    assert!(!iccs.contains("reference digests in"), "{iccs}");
    assert!(iccs.contains("built into pqbench"), "{iccs}");
    let hash = p.read("output/demo/site/local/hash-95.md");
    assert!(
        hash.contains("blessed from pqbench's own earlier output"),
        "{hash}"
    );
}
