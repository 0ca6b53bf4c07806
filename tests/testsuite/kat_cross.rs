//! The KAT's round trip across processes (tests/fixtures/handles): keys,
//! ciphertexts, signatures and a key exchange's states and messages that
//! are handles into a table the library keeps in memory reproduce their
//! own KAT file in one process; given to a fresh process they are refused
//! (`CROSSFAIL`), while the honest toys beside them pass and their sizes
//! are the bytes that crossed.

use crate::common;
use common::*;

fn toml(id: &str, kind: &str, root: &str) -> String {
    format!(
        "id = \"{id}\"\nname = \"Handle {kind}\"\nkind = \"{kind}\"\napi = \"nist\"\n\n\
         [nist]\nheader = \"api.h\"\n\n\
         [[implementation]]\nname = \"reference\"\nroot = \"{root}\"\n\n\
         [[parameter-set]]\nlabel = \"HONEST\"\n\n\
         [[parameter-set]]\nlabel = \"HANDLES\"\ndefines = {{ HANDLES = 1 }}\n\n\
         [[parameter-set]]\nlabel = \"LENIENT\"\ndefines = {{ HANDLES = 1, ACCEPT_UNKNOWN = 1 }}\n"
    )
}

fn instance(build: &serde_json::Value, id: &str, label: &str) -> serde_json::Value {
    build["instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["algorithm"] == id && r["label"] == label)
        .unwrap_or_else(|| panic!("{id}/{label} missing: {build}"))
        .clone()
}

#[test]
fn keys_and_outputs_that_work_only_in_their_own_process_fail_the_kat() {
    let p = TestProject::bare();
    p.copy("tests/fixtures/handles", "algorithms/handles");
    p.write(
        "algorithms/kem-71.toml",
        &toml("kem-71", "kem", "handles/kem"),
    );
    p.write(
        "algorithms/sign-71.toml",
        &toml("sign-71", "sign", "handles/sign"),
    );
    p.write(
        "campaigns/t.toml",
        &quick_campaign(
            &["kem-71", "sign-71"],
            "stages = [\"build\", \"kat\", \"sizes\"]",
        ),
    );
    // No reference yet: the honest toys are NOKAT, the handles already
    // fail across processes.
    let first = p.pqbench(&["run", "t"]);
    assert_eq!(first.code, 1, "{}\n{}", first.stdout, first.stderr);
    let build = p.json("output/t/local/build.json");
    for id in ["kem-71", "sign-71"] {
        assert_eq!(instance(&build, id, "HONEST")["kat_status"], "NOKAT");
        assert_eq!(instance(&build, id, "HANDLES")["kat_status"], "CROSSFAIL");
    }
    // With the toys' own KAT files as references, the honest ones pass and
    // the handles still fail, the step named.
    // (`bless` records the honest ones and refuses the handles.)
    let blessed = p.pqbench(&["bless", "t"]);
    assert!(
        blessed.stdout.contains("strict HONEST/PQCkemKAT.rsp")
            && blessed
                .stdout
                .contains("not blessed kem-71/HANDLES: its KAT status is CROSSFAIL"),
        "{}",
        blessed.stdout
    );
    let run = p.pqbench(&["run", "t"]);
    let build = p.json("output/t/local/build.json");
    for id in ["kem-71", "sign-71"] {
        let honest = instance(&build, id, "HONEST");
        assert_eq!(honest["kat_status"], "PASS", "{honest}\n{}", run.stdout);
        let log = p.read(&format!("output/t/local/kat/{id}/HONEST.log"));
        assert!(log.contains("cross_process = ok"), "{log}");
        let handles = instance(&build, id, "HANDLES");
        assert_eq!(handles["kat_status"], "CROSSFAIL", "{handles}");
        let detail = handles["kat_detail"].as_str().unwrap_or_default();
        assert!(detail.contains("fresh process"), "{detail}");
        assert!(
            run.stdout.contains(&format!("{id}/HANDLES: KAT CROSSFAIL")),
            "{}",
            run.stdout
        );
    }
    assert_eq!(run.code, 1);
    // A verify that accepts whatever it cannot look up passes the record's
    // signature in a fresh process, and is caught by the flipped bit.
    let lenient = instance(&build, "sign-71", "LENIENT");
    assert_eq!(lenient["kat_status"], "CROSSFAIL", "{lenient}");
    let detail = lenient["kat_detail"].as_str().unwrap_or_default();
    assert!(detail.contains("flipped bit"), "{detail}");
    // The honest toys' sizes are the bytes that crossed.
    let sizes = p.json("output/t/local/sizes.json");
    let text = sizes.to_string();
    assert!(text.contains("kem-71"), "{text}");
    let row = sizes["instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["algorithm"] == "kem-71" && r["label"] == "HONEST")
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(
        row["figures"]["public key"]["observed"], 32,
        "{}",
        row["figures"]
    );
    assert_eq!(row["figures"]["ciphertext"]["observed"], 32);
}

/// The toy key exchange of tests/fixtures/handles/kex: honest, its states
/// handles (`HANDLES`), or its messages handles (`MSG_HANDLES`).
fn kex_toml(id: &str, root: &str) -> String {
    format!(
        "id = \"{id}\"\nname = \"Handle kex\"\nkind = \"kex\"\napi = \"ngcc\"\n\
         uses = [\"iccs-standin\"]\n\n\
         [ngcc]\nheaders = [\"api.h\", \"drng.h\"]\n\n\
         [[implementation]]\nname = \"reference\"\nroot = \"{root}\"\nsources = [\"kex.c\"]\n\n\
         [[parameter-set]]\nlabel = \"HONEST\"\n\n\
         [[parameter-set]]\nlabel = \"HANDLES\"\ndefines = {{ HANDLES = 1 }}\n\n\
         [[parameter-set]]\nlabel = \"MESSAGES\"\ndefines = {{ MSG_HANDLES = 1 }}\n"
    )
}

#[test]
fn key_exchange_states_and_messages_that_work_only_in_their_own_process_fail_the_kat() {
    let p = TestProject::bare();
    p.copy("tests/fixtures/handles", "algorithms/handles");
    p.write("algorithms/kex-71.toml", &kex_toml("kex-71", "handles/kex"));
    p.write(
        "campaigns/t.toml",
        &quick_campaign(
            &["kex-71"],
            "stages = [\"build\", \"kat\", \"sizes\"]\n\n[iccs]\nbaseline = false\n",
        ),
    );
    // No reference yet: the honest toy is NOKAT and crosses; the handles
    // already fail across processes.
    let first = p.pqbench(&["run", "t"]);
    assert_eq!(first.code, 1, "{}\n{}", first.stdout, first.stderr);
    let build = p.json("output/t/local/build.json");
    assert_eq!(instance(&build, "kex-71", "HONEST")["kat_status"], "NOKAT");
    for label in ["HANDLES", "MESSAGES"] {
        let r = instance(&build, "kex-71", label);
        assert_eq!(r["kat_status"], "CROSSFAIL", "{r}");
    }
    let blessed = p.pqbench(&["bless", "t"]);
    assert!(
        blessed
            .stdout
            .contains("not blessed kex-71/HANDLES: its KAT status is CROSSFAIL"),
        "{}",
        blessed.stdout
    );
    // With the honest toy's own KAT file as its reference it passes; the
    // handles still fail, the step named.
    let run = p.pqbench(&["run", "t"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let build = p.json("output/t/local/build.json");
    let honest = instance(&build, "kex-71", "HONEST");
    assert_eq!(honest["kat_status"], "PASS", "{honest}\n{}", run.stdout);
    let log = p.read("output/t/local/kat/kex-71/HONEST.log");
    assert!(log.contains("cross_process = ok"), "{log}");
    for crossed in ["m3 32", "msgs 64", "pka 16", "pkb 16", "ss 32"] {
        assert!(log.contains(crossed), "{crossed}: {log}");
    }
    // A state that is a handle: the record's own final state derives
    // nothing in a fresh process.
    let states = instance(&build, "kex-71", "HANDLES");
    assert_eq!(states["kat_status"], "CROSSFAIL", "{states}");
    let detail = states["kat_detail"].as_str().unwrap_or_default();
    assert!(
        detail.starts_with("derive_a in a fresh process"),
        "{detail}"
    );
    // A message that is a handle: the record's secret comes from the states
    // alone, so the record's step passes, and the new protocol's second
    // pass cannot read the first pass's message.
    let messages = instance(&build, "kex-71", "MESSAGES");
    assert_eq!(messages["kat_status"], "CROSSFAIL", "{messages}");
    let detail = messages["kat_detail"].as_str().unwrap_or_default();
    assert!(detail.starts_with("pass2 in a fresh process"), "{detail}");
    for label in ["HANDLES", "MESSAGES"] {
        assert!(
            run.stdout
                .contains(&format!("kex-71/{label}: KAT CROSSFAIL")),
            "{}",
            run.stdout
        );
    }
    // The honest toy's sizes count the bytes that crossed.
    let sizes = p.json("output/t/local/sizes.json");
    let row = sizes["instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["algorithm"] == "kex-71" && r["label"] == "HONEST")
        .unwrap_or_else(|| panic!("{sizes}"))
        .clone();
    let figures = &row["figures"];
    assert_eq!(figures["protocol messages"]["observed"], 64, "{figures}");
    assert_eq!(figures["shared secret"]["observed"], 32, "{figures}");
    assert_eq!(figures["public key A"]["observed"], 16, "{figures}");
}
