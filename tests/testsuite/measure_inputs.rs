//! Figures the measured code cannot fake with its inputs or outputs
//! (tests/fixtures/inputs/cheat.c, the demo KEM Pebble with a cheating
//! dec): a dec that remembers its last ciphertext gains nothing once every
//! timed call gets a ciphertext of its own, and a dec that returns wrong
//! secrets once the KAT run is over is caught by a separate process
//! recomputing timed calls picked after the trial; so are a keygen that
//! hands back stale keys, an enc whose secret its ciphertext does not
//! carry, and a sign that returns stale signatures (tests/fixtures/measure,
//! FIX_SIGN_STALE), while an honest sign with randomness of its own
//! (FIX_SIGN_OWN_NONCE) is checked by verification only, and a key-exchange step that stops deriving
//! (tests/fixtures/inputs/cheat_kex.c). The honest control beside them is
//! measured as usual.

use crate::common;
use common::*;

use pqbench::records::operation::OperationRecord;

const ID: &str = "inp-97";

/// Pebble's KAT (kat/kem-91/kat.sha256, PEBBLE-2): every kind passes it.
const PEBBLE_2_KAT: &str = "74194395821be605c3927b8be903931eb6be03848c4a7205d39bd78a34054350";

fn inputs_project() -> TestProject {
    let kinds = [
        ("HONEST", 0),
        ("MEMO", 1),
        ("LAZY", 2),
        ("STALEKEY", 3),
        ("LAZYENC", 4),
    ];
    pebble_project(&kinds, "3")
}

/// Pebble with the cheating operations `kinds` (label, INPUTS_KIND),
/// measured in `trials` trials.
fn pebble_project(kinds: &[(&str, u32)], trials: &str) -> TestProject {
    let p = TestProject::bare();
    p.copy("algorithms/kem-91", "algorithms/inputs");
    p.copy("tests/fixtures/inputs/cheat.c", "algorithms/inputs/cheat.c");
    let mut toml = format!(
        "id = \"{ID}\"\nname = \"Inputs fixture\"\nkind = \"kem\"\napi = \"ngcc\"\n\
         uses = [\"iccs-standin\"]\n\n[ngcc]\nheaders = [\"api.h\", \"drng.h\"]\n\n\
         [[implementation]]\nname = \"reference\"\nroot = \"inputs\"\nsources = [\"cheat.c\", \"poly.c\"]\n"
    );
    let mut manifest = String::new();
    for (label, kind) in kinds {
        toml += &format!(
            "\n[[parameter-set]]\nlabel = \"{label}\"\ndefines = {{ PEBBLE_K = 2, INPUTS_KIND = {kind} }}\n"
        );
        manifest += &format!("{PEBBLE_2_KAT} strict {label}/KAT_KEM.txt\n");
    }
    p.write(&format!("algorithms/{ID}.toml"), &toml);
    p.write(&format!("kat/{ID}/kat.sha256"), &manifest);
    // Trials long enough that the lazy operations' 300 honest calls run
    // out inside every one of them (each trial: 300 to 900 timed calls).
    let timing = [
        ("trials", trials),
        ("trial-seconds", "10.0"),
        ("budget-seconds", "600.0"),
        ("min-iterations", "600"),
        ("max-iterations", "600"),
        ("timeout-seconds", "120"),
    ];
    p.write(
        "campaigns/t.toml",
        &measure_campaign(&[ID], &["build", "kat", "time"], &timing, ""),
    );
    p
}

fn dec_of(p: &TestProject, label: &str) -> OperationRecord {
    op_record(p, "t", ID, label, "dec")
}

fn median_dec(r: &OperationRecord) -> f64 {
    assert_eq!(r.status, "ok", "{}: {:?}", r.label, r.detail);
    r.statistics.as_ref().expect("statistics").median_cycles
}

#[test]
fn memoised_and_lazy_decapsulation_get_no_forged_figures() {
    let p = inputs_project();
    let run = p.pqbench(&["run", "t"]);
    let build = p.json("output/t/local/build.json");
    for inst in build["instances"].as_array().unwrap() {
        assert_eq!(inst["kat_status"], "PASS", "{}", inst["label"]);
    }

    // The control: ok, every trial's timed calls on distinct inputs and a
    // few of them recomputed to the same secret by a separate process.
    let honest = dec_of(&p, "HONEST");
    let control = median_dec(&honest);
    assert_statistics_recompute(&honest);
    assert_eq!(honest.trials.len(), 3);
    assert!(
        honest.output_checks.len() >= 3,
        "{:?}",
        honest.output_checks
    );
    assert!(honest.output_checks.iter().all(|c| c.problem().is_none()));
    let walked = honest
        .processes
        .iter()
        .filter_map(|pr| pr.line("inputs"))
        .map(|l| l.u64("pool").unwrap())
        .collect::<Vec<_>>();
    assert!(
        walked.len() >= 3 && walked.iter().all(|&k| k >= 2),
        "{walked:?}"
    );

    // The memoising dec never sees a repeat in a row: its figure is the
    // operation's, in the control's order (a forged one would be thousands
    // of times smaller).
    let memo = dec_of(&p, "MEMO");
    let ratio = median_dec(&memo) / control;
    eprintln!("memoising dec / control dec = {ratio:.3}");
    assert!((0.33..3.0).contains(&ratio), "memo/control = {ratio}");

    // The lazy dec: inconsistent, no figures, the detail naming the call.
    let lazy = dec_of(&p, "LAZY");
    assert_eq!(lazy.status, "inconsistent", "{:?}", lazy.detail);
    assert!(lazy.trials.is_empty() && lazy.statistics.is_none());
    let detail = lazy.detail.clone().unwrap_or_default();
    assert!(detail.contains("timed call"), "{detail}");
    assert!(lazy.output_checks.iter().any(|c| c.problem().is_some()));
    // The campaign says so (exit 1).
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);

    // keygen and enc: every timed call draws randomness of its own, and
    // the replay makes the same key pair or ciphertext, twice alike, and
    // it round-trips.
    for label in ["HONEST", "MEMO", "LAZY"] {
        for op in ["keygen", "enc"] {
            let r = op_record(&p, "t", ID, label, op);
            assert_eq!(r.status, "ok", "{label} {op}: {:?}", r.detail);
            assert!(r.output_checks.len() >= 3, "{label} {op}");
            for c in &r.output_checks {
                assert_eq!(c.replay_hash.as_deref(), Some(c.timed_hash.as_str()));
                assert_eq!((c.agrees, c.repeatable), (Some(true), Some(true)));
                assert_eq!(c.pool, 0, "{label} {op}: no pool");
            }
        }
    }
    // A keygen that hands back its last pair once past the KAT run's
    // calls, and an enc whose secret its ciphertext no longer carries.
    for (label, op, why) in [
        ("STALEKEY", "keygen", "a separate process recomputed"),
        ("LAZYENC", "enc", "timed call"),
    ] {
        let r = op_record(&p, "t", ID, label, op);
        assert_eq!(r.status, "inconsistent", "{label} {op}: {:?}", r.detail);
        assert!(r.trials.is_empty() && r.statistics.is_none());
        let detail = r.detail.clone().unwrap_or_default();
        assert!(detail.contains(why), "{label} {op}: {detail}");
        assert!(r.output_checks.iter().any(|c| c.problem().is_some()));
    }
    // Their other operations are the honest ones.
    assert_eq!(op_record(&p, "t", ID, "STALEKEY", "enc").status, "ok");
    assert_eq!(op_record(&p, "t", ID, "LAZYENC", "keygen").status, "ok");
}

/// A dec wrong on one call in 151 only: the three timed calls of a trial
/// picked for the replay rarely land on one, but one trial of each
/// operation, drawn at random and told to nobody, has every timed call
/// remade by a separate process, and that names it. (One trial here, so
/// it is the one remade.)
#[test]
fn a_dec_wrong_on_a_few_calls_is_caught_by_the_trial_remade_in_full() {
    let p = pebble_project(&[("HONEST", 0), ("SPARSE", 5)], "1");
    let run = p.pqbench(&["run", "t"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);

    let honest = dec_of(&p, "HONEST");
    assert_eq!(honest.status, "ok", "{:?}", honest.detail);
    assert_eq!(honest.full_replays.len(), 1, "{:?}", honest.full_replays);
    let full = &honest.full_replays[0];
    assert_eq!((full.trial, full.calls), (1, honest.trials[0].calls));
    assert_eq!(full.differing, Some(0));
    for op in ["keygen", "enc"] {
        let r = op_record(&p, "t", ID, "HONEST", op);
        assert_eq!(r.full_replays.len(), 1, "{op}");
        assert_eq!(r.full_replays[0].differing, Some(0), "{op}");
    }

    let sparse = dec_of(&p, "SPARSE");
    assert_eq!(sparse.status, "inconsistent", "{:?}", sparse.detail);
    assert!(sparse.trials.is_empty() && sparse.statistics.is_none());
    assert_eq!(sparse.full_replays.len(), 1, "{:?}", sparse.full_replays);
    let full = &sparse.full_replays[0];
    // The set-up's round trip and the one warm-up are the trial process's
    // dec calls 1 and 2, so timed call i (from 0) is its call i + 3: of
    // 600, calls 148, 299 and 450 are wrong. The replay runs the same
    // library without the warm-up, so it is wrong on 149, 300 and 451.
    assert_eq!(full.differing, Some(6), "{full:?}");
    assert_eq!(full.first_differing, Some(148), "{full:?}");
}

/// A sign that stops signing after 20 calls in a process and returns its
/// last signature (cheap, and wrong for every other message) is caught by
/// a separate process remaking timed calls picked after the trial: the
/// library's randomness is re-seeded before every call from the trial's
/// seed and the call's number, so the replay makes the same signature the
/// honest control made, and it verifies. An honest sign whose randomness
/// is partly its own is told from it by a second replay of each call.
#[test]
fn a_stale_signature_in_timed_calls_is_caught_by_the_replay() {
    let p = TestProject::bare();
    measure_fixture(
        &p,
        "fix-96",
        &[
            ("HONEST", "FIX_WORK = 1"),
            ("STALE", "FIX_SIGN_STALE = 20"),
            ("OWN", "FIX_SIGN_OWN_NONCE = 1"),
        ],
    );
    let campaign = measure_campaign(&["fix-96"], &["build", "kat", "time"], &[], "");
    p.write("campaigns/t.toml", &campaign);
    let run = p.pqbench(&["run", "t"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);

    let honest = op_record(&p, "t", "fix-96", "HONEST", "sign");
    assert_eq!(honest.status, "ok", "{:?}", honest.detail);
    assert!(!honest.output_checks.is_empty());
    for c in &honest.output_checks {
        assert_eq!(c.replay_hash.as_deref(), Some(c.timed_hash.as_str()));
        assert_eq!((c.agrees, c.repeatable), (Some(true), Some(true)));
    }
    // Outputs that repeated across processes are made once: no replay
    // process made a call twice.
    let (once, twice) = replay_passes(&honest);
    assert!(once >= honest.trials.len() && twice == 0, "{once} {twice}");

    // Honest signatures with randomness of their own: every replay
    // differs from its timed call, a second process makes each picked call
    // twice, sees that it does not repeat, and only verification counts.
    let own = op_record(&p, "t", "fix-96", "OWN", "sign");
    assert_eq!(own.status, "ok", "{:?}", own.detail);
    assert!(!own.output_checks.is_empty());
    for c in &own.output_checks {
        assert_ne!(c.replay_hash.as_deref(), Some(c.timed_hash.as_str()));
        assert_eq!((c.agrees, c.repeatable), (Some(true), Some(false)));
    }
    // (A further set of trials keeps the earlier sets' processes.)
    let (once, twice) = replay_passes(&own);
    assert!(once == twice && twice >= own.trials.len(), "{once} {twice}");

    let stale = op_record(&p, "t", "fix-96", "STALE", "sign");
    assert_eq!(stale.status, "inconsistent", "{:?}", stale.detail);
    assert!(stale.trials.is_empty() && stale.statistics.is_none());
    let detail = stale.detail.unwrap_or_default();
    // The replay catches it. Under load, though, a trial's pool can come
    // out shorter than its calls (it is built in a fixed share of the
    // trial's time): the stale calls then repeat inputs at a fraction of
    // the first pass's cost, and that check, which comes first, names it.
    let by_replay = detail.contains("a separate process recomputed");
    let by_drop = detail.contains("on inputs seen before");
    assert!(by_replay || by_drop, "{detail}");
    if by_replay {
        assert!(stale.output_checks.iter().any(|c| c.problem().is_some()));
    }
    // The honest control's other operations are measured as usual.
    for op in ["keygen", "verify"] {
        let r = op_record(&p, "t", "fix-96", "HONEST", op);
        assert_eq!(r.status, "ok", "{op}: {:?}", r.detail);
    }
}

/// The replay processes of `r` (those that remade picked calls) that made
/// each call once, and those that made each twice (their lines say
/// whether it repeated).
fn replay_passes(r: &OperationRecord) -> (usize, usize) {
    let picked: Vec<_> = r
        .processes
        .iter()
        .filter_map(|p| p.lines.iter().find(|l| l.tag == "replay"))
        .collect();
    let twice = picked
        .iter()
        .filter(|l| l.fields.contains_key("repeat"))
        .count();
    (picked.len() - twice, twice)
}

/// A key-exchange step that stops deriving after 300 calls in a process
/// and hands back its last secret (tests/fixtures/inputs/cheat_kex.c, the
/// demo's Tarn): every protocol run is re-seeded from the trial's seed and
/// its number, so a separate process remakes picked runs, and the lazy
/// step's secret is not the one the run asked for; the two sides'
/// secrets also differ. The honest control's exchange and steps are
/// checked alike and measured.
#[test]
fn a_lazy_key_exchange_step_is_caught_by_the_replay() {
    const KEX: &str = "kex-97";
    let p = TestProject::bare();
    p.copy("algorithms/kex-94", "algorithms/lazykex");
    p.copy(
        "tests/fixtures/inputs/cheat_kex.c",
        "algorithms/lazykex/cheat_kex.c",
    );
    let tarn_kat = "bb4e9e8a1edf8eb23ac0bd5be23db28fdcc62a1e5e96cdb98cad61ebcb08b437";
    let mut toml = format!(
        "id = \"{KEX}\"\nname = \"Lazy KEX fixture\"\nkind = \"kex\"\napi = \"ngcc\"\n\
         uses = [\"iccs-standin\"]\n\n[ngcc]\nheaders = [\"api.h\", \"drng.h\"]\n\n\
         [[implementation]]\nname = \"reference\"\nroot = \"lazykex\"\nsources = [\"cheat_kex.c\"]\n"
    );
    let mut manifest = String::new();
    for (label, lazy) in [("HONEST", 0), ("LAZY", 1)] {
        toml += &format!(
            "\n[[parameter-set]]\nlabel = \"{label}\"\ndefines = {{ KEX_LANES = 16, KEX_LAZY = {lazy} }}\n"
        );
        manifest += &format!("{tarn_kat} strict {label}/KAT_KEX_{label}.txt\n");
    }
    p.write(&format!("algorithms/{KEX}.toml"), &toml);
    p.write(&format!("kat/{KEX}/kat.sha256"), &manifest);
    // Every step trial runs 400 protocols, past the lazy step's 300.
    let timing = [
        ("trials", "3"),
        ("min-iterations", "400"),
        ("max-iterations", "400"),
        ("budget-seconds", "60.0"),
        ("timeout-seconds", "60"),
    ];
    let campaign = measure_campaign(&[KEX], &["build", "kat", "time"], &timing, "");
    p.write("campaigns/t.toml", &campaign);
    let run = p.pqbench(&["run", "t"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let build = p.json("output/t/local/build.json");
    for inst in build["instances"].as_array().unwrap() {
        assert_eq!(inst["kat_status"], "PASS", "{}", inst["label"]);
    }

    for op in [
        "exchange", "init_a", "pass1", "pass3", "derive_a", "derive_b",
    ] {
        let r = op_record(&p, "t", KEX, "HONEST", op);
        assert_eq!(r.status, "ok", "{op}: {:?}", r.detail);
        assert!(r.output_checks.len() >= 3, "{op}");
        for c in &r.output_checks {
            assert_eq!(c.replay_hash.as_deref(), Some(c.timed_hash.as_str()));
            assert_eq!((c.agrees, c.repeatable), (Some(true), Some(true)));
        }
    }
    // The lazy step shows in the exchange, whose every run makes it: the
    // exchange has no figures, and the steps planned from it are not timed.
    let lazy = op_record(&p, "t", KEX, "LAZY", "exchange");
    assert_eq!(lazy.status, "inconsistent", "{:?}", lazy.detail);
    assert!(lazy.trials.is_empty() && lazy.statistics.is_none());
    let detail = lazy.detail.clone().unwrap_or_default();
    assert!(detail.contains("timed call"), "{detail}");
    assert!(lazy.output_checks.iter().any(|c| c.problem().is_some()));
    let step = op_record(&p, "t", KEX, "LAZY", "derive_a");
    assert!(step.statistics.is_none(), "{:?}", step.detail);
}

/// A slow signer whose verify is cheap (about 50 ms a signature): verify's
/// pool of signatures is built once, by a process of its own, and fed to
/// every trial and replay, so a verify trial's set-up (as the kernel
/// counted it up to its first timed call) holds no signature, and its
/// replays agree on the same bytes.
#[test]
fn a_slow_signers_verify_signs_once_for_all_its_processes() {
    let p = TestProject::bare();
    measure_fixture(&p, "fix-95", &[("SLOWSIGN", "FIX_WORK = 3000")]);
    let campaign = measure_campaign(&["fix-95"], &["build", "kat", "time"], &[], "");
    p.write("campaigns/t.toml", &campaign);
    let run = p.pqbench(&["run", "t"]);

    let sign = op_record(&p, "t", "fix-95", "SLOWSIGN", "sign");
    assert_eq!(sign.status, "ok", "{}\n{}", run.stdout, run.stderr);
    assert_eq!(sign.status, "ok", "{:?}", sign.detail);
    let per_sign = sign.calibration.as_ref().unwrap().seconds_per_call;
    // A signature of 50 ms is ten trials long (trial-seconds 0.005): its
    // own warm-up, so no trial or replay of sign makes one.
    assert!(
        sign.plan.as_ref().is_some_and(|p| p.slow_calls),
        "{:?}",
        sign.plan
    );
    assert_eq!(sign.warmup, 0);
    for pr in &sign.processes {
        let warm = pr.command.windows(2).find(|w| w[0] == "--warmup");
        let calibrating = pr.command.iter().any(|a| a == "calibrate");
        assert!(
            calibrating || warm.is_none_or(|w| w[1] == "0"),
            "{:?}",
            pr.command
        );
    }
    let mode = |pr: &pqbench::measure::driver::ProcessRecord, m: &str| {
        pr.command.windows(2).any(|w| w[0] == "--mode" && w[1] == m)
    };
    // The fully replayed trial: remade by a process of its own only when
    // it ran more calls than its check picks (3); otherwise its check
    // picked every call and was the full replay.
    let full = &sign.full_replays;
    assert!(full.len() == 1 && full[0].differing == Some(0), "{full:?}");
    let replayed = &sign.trials[full[0].trial as usize - 1];
    assert_eq!(full[0].calls, replayed.calls);
    let all = |pr: &&pqbench::measure::driver::ProcessRecord| {
        mode(pr, "replay") && pr.command.iter().any(|a| a == "--iters")
    };
    // (A further set of trials keeps the earlier sets' processes.)
    if sign.witness_sets.is_none() {
        let remade = sign.processes.iter().filter(all).count();
        assert_eq!(remade, usize::from(replayed.calls > 3), "{:?}", sign.trials);
    }

    let verify = op_record(&p, "t", "fix-95", "SLOWSIGN", "verify");
    assert_eq!(verify.status, "ok", "{:?}", verify.detail);
    let verify_per_call = verify.calibration.as_ref().unwrap().seconds_per_call;
    assert!(
        per_sign > 20.0 * verify_per_call,
        "sign {per_sign} s, verify {verify_per_call} s"
    );

    let pools: Vec<_> = verify
        .processes
        .iter()
        .filter(|pr| mode(pr, "pool"))
        .collect();
    assert_eq!(pools.len(), 1, "one pool process");
    let head = pools[0].line("pool").expect("pool line");
    let entries = head.u64("entries").unwrap();
    assert!(entries >= 2, "{head:?}");
    assert_eq!(head.get("sha256").map(str::len), Some(64), "{head:?}");
    assert!(head.get("pk").is_none() && pools[0].line("entry").is_none());

    let trials: Vec<_> = verify
        .processes
        .iter()
        .filter(|pr| mode(pr, "trial"))
        .collect();
    assert!(trials.len() >= 5, "{} trial processes", trials.len());
    for t in &trials {
        assert_eq!(t.line("inputs").and_then(|l| l.u64("pool")), Some(entries));
        let setup = t.sandbox.cpu_witness.mark_ns.expect("CPU at the mark") as f64 / 1e9;
        assert!(
            setup < 0.5 * per_sign,
            "a verify trial spent {setup} s before its first timed call; a signature costs {per_sign} s"
        );
    }
    // The signatures' lengths are verify's, from the process that made them.
    assert!(
        verify.lengths.get("sig").copied().unwrap_or(0) > 0,
        "{:?}",
        verify.lengths
    );
    assert!(!verify.output_checks.is_empty());
    for c in &verify.output_checks {
        assert_eq!(c.pool, entries);
        assert_eq!(c.agrees, Some(true), "{c:?}");
        assert_eq!(c.replay_hash.as_deref(), Some(c.timed_hash.as_str()));
    }
}
