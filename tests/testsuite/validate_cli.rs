//! `pqbench validate`: every problem listed with file:line:col and a caret,
//! exit code BAD_INPUT (2) when there is any, 0 for the demo TOMLs.

use crate::common;

use common::TestProject;

fn validate(p: &TestProject, id: &str) -> common::Run {
    let toml = p.path().join(format!("algorithms/{id}.toml"));
    p.pqbench(&["validate", toml.to_str().unwrap()])
}

#[test]
fn the_demo_algorithms_are_valid() {
    let p = TestProject::demo();
    for id in ["sign-90", "kem-91", "sign-92"] {
        let out = validate(&p, id).expect(0);
        assert!(out.stdout.contains(": OK ("), "{}", out.stdout);
    }
}

const SIGN90: &str = r#"id = "sign-90"
name = "Wintertide"
kind = "sign"
api = "ngcc"
uses = ["iccs-standin"]

[ngcc]
headers = ["api.h", "drng.h"]

[[implementation]]
name = "reference"
root = "sign-90"
sources = ["*.c", "gone.c"]

[[parameter-set]]
label = "WINTER-128"
defines = { WINTER_N = 16, WINTER_W = 16, WINTER_REJECT = 0 }
"#;

#[test]
fn a_missing_source_is_reported_at_its_pattern() {
    let p = TestProject::demo();
    p.write("algorithms/sign-90.toml", SIGN90);
    let out = validate(&p, "sign-90").expect(2);
    let s = &out.stdout;
    assert!(s.contains("error: `gone.c` matches no file in"), "{s}");
    assert!(s.contains("algorithms/sign-90.toml:13:19"), "{s}");
    assert!(s.contains("13 | sources = [\"*.c\", \"gone.c\"]"), "{s}");
    assert!(s.contains("   |                   ^^^^^^^^"), "{s}");
    assert!(s.contains("sign-90.toml: 1 problem"), "{s}");
}

#[test]
fn a_missing_api_function_names_the_file_and_the_parameter_set() {
    let p = TestProject::demo();
    p.write(
        "algorithms/sign-90.toml",
        &SIGN90.replace(", \"gone.c\"", ""),
    );
    let wots = p.read("algorithms/sign-90/wots.c");
    p.write(
        "algorithms/sign-90/wots.c",
        &wots.replace("int sig_verify(", "int sig_verify_renamed("),
    );
    let out = validate(&p, "sign-90").expect(2);
    let s = &out.stdout;
    assert!(
        s.contains("WINTER-128: API function `sig_verify` is not defined (expected in algorithms/sign-90/wots.c"),
        "{s}"
    );
    assert!(s.contains("algorithms/sign-90.toml:16:9"), "{s}");
    assert!(s.contains("16 | label = \"WINTER-128\""), "{s}");
}

#[test]
fn a_wrong_namespace_is_hinted() {
    let p = TestProject::demo();
    let t = p.read("algorithms/sign-92.toml");
    p.write(
        "algorithms/sign-92.toml",
        &t.replace("namespace = \"PQB_LARCH3_\"", "namespace = \"PQB_LARCH9_\""),
    );
    let out = validate(&p, "sign-92").expect(2);
    assert!(
        out.stdout
            .contains("LARCH-3: API function `PQB_LARCH9_crypto_sign_keypair` is not defined"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("PQB_LARCH3_crypto_sign_keypair: check `namespace`"),
        "{}",
        out.stdout
    );
}

#[test]
fn unknown_keys_and_other_problems_are_all_listed() {
    let p = TestProject::demo();
    let text = SIGN90
        .replace(
            "uses = [\"iccs-standin\"]\n",
            "uses = [\"iccs-standin\", \"nope\"]\nsourcs = 1\n",
        )
        .replace(
            "root = \"sign-90\"\n",
            "root = \"sign-90\"\ncolour = \"red\"\n",
        );
    p.write("algorithms/sign-90.toml", &text);
    let out = validate(&p, "sign-90").expect(2);
    let s = &out.stdout;
    assert!(s.contains("error: unknown key `sourcs`"), "{s}");
    assert!(s.contains("algorithms/sign-90.toml:6:1"), "{s}");
    assert!(s.contains("error: unknown key `colour`"), "{s}");
    assert!(s.contains("algorithms/sign-90.toml:14:1"), "{s}");
    assert!(s.contains("error: unknown component `nope`"), "{s}");
    assert!(s.contains("algorithms/sign-90.toml:5:25"), "{s}");
    assert!(s.contains("`gone.c` matches no file"), "{s}");
    assert!(s.contains("sign-90.toml: 4 problems"), "{s}");
}

#[test]
fn an_include_that_does_not_resolve_names_the_unit_and_the_file() {
    let p = TestProject::demo();
    let kem = p.read("algorithms/kem-91/kem.c");
    p.write(
        "algorithms/kem-91/kem.c",
        &kem.replace("#include \"poly.h\"", "#include \"inc/poly.h\""),
    );
    let out = validate(&p, "kem-91").expect(2);
    let s = &out.stdout;
    assert!(
        s.contains("PEBBLE-2, PEBBLE-3: `#include` of `inc/poly.h` at algorithms/kem-91/kem.c:"),
        "{s}"
    );
    assert!(s.contains("(unit algorithms/kem-91/kem.c)"), "{s}");
    assert!(s.contains("14 | name = \"reference\""), "{s}");
}

/// The demo project with sign-92 built from `sign.c` alone: its SHA-256
/// (`sha256.c`) is left out, so the link misses three symbols per set.
fn demo_without_sha256() -> TestProject {
    let p = TestProject::demo();
    let t = p.read("algorithms/sign-92.toml");
    p.write(
        "algorithms/sign-92.toml",
        &t.replace(
            "root = \"sign-92\"\n",
            "root = \"sign-92\"\nsources = [\"sign.c\"]\n",
        ),
    );
    p
}

#[test]
fn an_undefined_symbol_of_the_trial_link_names_the_unit_and_the_symbol() {
    let p = demo_without_sha256();
    let out = validate(&p, "sign-92").expect(2);
    let s = &out.stdout;
    assert!(
        s.contains("LARCH-1: undefined symbols `PQB_LARCH1_sha256_final`, `PQB_LARCH1_sha256_init`, `PQB_LARCH1_sha256_update`, used by unit algorithms/sign-92/sign.c"),
        "{s}"
    );
    assert!(
        s.contains("LARCH-3: undefined symbols `PQB_LARCH3_sha256_final`"),
        "{s}"
    );
}

/// The same link failure in a run: the summary line, `build.json` and the
/// algorithm page name the missing symbols, not `collect2`'s exit status.
#[test]
fn a_link_failure_names_its_symbols_in_the_run_build_json_and_the_page() {
    let p = demo_without_sha256();
    p.write(
        "campaigns/t.toml",
        "algorithms = [\"sign-92\"]\nstages = [\"build\", \"kat\", \"render\"]\n\n[host]\nrequire-fixed = false\n",
    );
    let out = p.pqbench(&["run", "t"]).expect(1);
    let missing = "undefined reference to `PQB_LARCH1_sha256_";
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with("FAIL sign-92/LARCH-1: KAT BUILDFAIL (link: "))
        .unwrap_or_else(|| panic!("{}", out.stdout));
    assert!(line.contains(missing), "{line}");
    assert!(!line.contains("collect2"), "{line}");
    let build = p.json("output/t/local/build.json");
    let rec = build["instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["label"] == "LARCH-1")
        .unwrap();
    assert!(
        rec["kat_detail"]
            .as_str()
            .is_some_and(|d| d.contains(missing)),
        "{rec:#}"
    );
    // The page escapes the backquote for Markdown.
    let page = p.read("output/t/site/local/sign-92.md");
    assert!(
        page.contains("LARCH-1 BUILDFAIL: link: undefined reference to \\`PQB_LARCH1_sha256_"),
        "{page}"
    );
}

#[test]
fn a_relative_toml_is_taken_from_a_relative_project_directory() {
    let p = TestProject::demo();
    let parent = p.path().parent().unwrap();
    let name = p.path().file_name().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pqbench"))
        .current_dir(parent)
        .arg("-C")
        .arg(name)
        .args(["validate", "algorithms/sign-92.toml"])
        .env_remove("CC")
        .output()
        .unwrap();
    let run = common::Run::from(out).expect(0);
    assert!(run.stdout.contains("sign-92.toml: OK ("), "{}", run.stdout);
}

#[test]
fn a_namespace_over_plain_crypto_macros_is_explained_in_the_files_terms() {
    // The import fixture's TOY-1, its api.h mapping the plain function
    // names to namespaced ones as upstream trees do, its `CRYPTO_` macros
    // plain: a namespace on it made gcc complain about `TOY_16` inside
    // pqbench's adapter, which no key of the file names.
    let p = TestProject::bare();
    p.copy(
        "tests/fixtures/import/nist-toy/Reference_Implementation/toy1",
        "algorithms/toy",
    );
    let api = p.read("algorithms/toy/api.h").replace(
        "#define CRYPTO_BYTES TOY_N\n",
        "#define CRYPTO_BYTES TOY_N\n#define crypto_sign_keypair TOY_crypto_sign_keypair\n\
         #define crypto_sign TOY_crypto_sign\n#define crypto_sign_open TOY_crypto_sign_open\n",
    );
    assert!(api.contains("TOY_crypto_sign_open"));
    p.write("algorithms/toy/api.h", &api);
    let toml = "id = \"toy\"\nname = \"Toy\"\nkind = \"sign\"\napi = \"nist\"\n\n[nist]\n\
                namespace = \"TOY_\"\n\n[[implementation]]\nname = \"ref\"\nroot = \"toy\"\n\
                sources = [\"sign.c\"]\n\n[[parameter-set]]\nlabel = \"TOY-1\"\n";
    p.write("algorithms/toy.toml", toml);
    let out = validate(&p, "toy").expect(2);
    assert!(
        out.stdout
            .contains("the NIST adapter pastes `namespace` onto `CRYPTO_PUBLICKEYBYTES`"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("help: set `namespace`"),
        "{}",
        out.stdout
    );
    // The fix it names is enough.
    p.write(
        "algorithms/toy.toml",
        &toml.replace("namespace = \"TOY_\"\n", ""),
    );
    validate(&p, "toy").expect(0);
}

#[test]
fn a_wrong_root_is_the_one_problem_reported_with_no_manifest_warnings() {
    let p = TestProject::demo();
    let toml = p.read("algorithms/sign-90.toml");
    p.write(
        "algorithms/sign-90.toml",
        &toml.replace("root = \"sign-90\"", "root = \"sign-9O\""),
    );
    let out = validate(&p, "sign-90").expect(2);
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(
        all.contains("source root algorithms/sign-9O not found"),
        "{all}"
    );
    assert!(all.contains("sign-90.toml: 1 problem"), "{all}");
    assert!(!all.contains("not a label"), "{all}");
}

#[test]
fn a_header_without_the_sizes_is_named_with_the_header_that_has_them() {
    // With no namespace to blame, the header is the wrong one.
    let p = TestProject::bare();
    p.copy(
        "tests/fixtures/import/nist-toy/Reference_Implementation/toy1",
        "algorithms/toy",
    );
    let toml = "id = \"toy\"\nname = \"Toy\"\nkind = \"sign\"\napi = \"nist\"\n\n[nist]\n\
                header = \"rng.h\"\n\n[[implementation]]\nname = \"ref\"\nroot = \"toy\"\n\
                sources = [\"sign.c\"]\n\n[[parameter-set]]\nlabel = \"TOY-1\"\n";
    p.write("algorithms/toy.toml", toml);
    let out = validate(&p, "toy").expect(2);
    for want in [
        "TOY-1: the header `rng.h` does not define `CRYPTO_PUBLICKEYBYTES`",
        "help: set `[nist] header` to the header that defines them: `api.h`",
    ] {
        assert!(out.stdout.contains(want), "{want}\n{}", out.stdout);
    }
    assert!(!out.stdout.contains("set `namespace`"), "{}", out.stdout);
    p.write("algorithms/toy.toml", &toml.replace("rng.h", "api.h"));
    validate(&p, "toy").expect(0);
}

#[test]
fn an_error_directive_a_sets_defines_reach_points_at_those_defines() {
    let p = TestProject::demo();
    let toml = p.read("algorithms/sign-90.toml");
    let bad = "defines = { WINTER_N = 24, WINTER_W = 8, WINTER_REJECT = 0 }";
    p.write(
        "algorithms/sign-90.toml",
        &toml.replace(
            "defines = { WINTER_N = 24, WINTER_W = 16, WINTER_REJECT = 0 }",
            bad,
        ),
    );
    let out = validate(&p, "sign-90").expect(2);
    let s = &out.stdout;
    assert!(s.contains("WINTER-192:"), "{s}");
    assert!(s.contains("WINTER_W must be 16"), "{s}");
    // At the set's defines (line 28), not at the implementation's name.
    assert!(s.contains("sign-90.toml:28:"), "{s}");
    assert!(s.contains(&format!("28 | {bad}")), "{s}");
    assert!(
        s.contains("help: the set's defines reach an `#error`"),
        "{s}"
    );
}

#[test]
fn a_misspelt_manifest_beside_the_default_one_is_an_error_at_its_key() {
    let p = TestProject::demo();
    let toml = p.read("algorithms/sign-90.toml");
    let line = "manifest = \"../kat/sign-90/kat.sha265\"";
    assert!(toml.contains("records = 10\n"), "{toml}");
    p.write(
        "algorithms/sign-90.toml",
        &toml.replace("records = 10\n", &format!("records = 10\n{line}\n")),
    );
    let out = validate(&p, "sign-90").expect(2);
    let s = &out.stdout;
    assert!(
        s.contains(
            "KAT manifest kat/sign-90/kat.sha265 not found, while kat/sign-90/kat.sha256 exists"
        ),
        "{s}"
    );
    assert!(s.contains(&format!("| {line}")), "{s}");
    // The path as it should be is fine.
    p.write(
        "algorithms/sign-90.toml",
        &toml.replace(
            "records = 10\n",
            "records = 10\nmanifest = \"../kat/sign-90/kat.sha256\"\n",
        ),
    );
    validate(&p, "sign-90").expect(0);
}

#[test]
fn a_set_suffix_is_checked_where_it_is_written() {
    let p = TestProject::demo();
    let t = p.read("algorithms/sign-92.toml");
    p.write(
        "algorithms/sign-92.toml",
        &t.replace(
            "namespace = \"PQB_LARCH3_\"",
            "namespace = \"PQB_LARCH3_\"\nsuffix = \"_x-y\"",
        ),
    );
    let out = validate(&p, "sign-92").expect(2);
    assert!(
        out.stdout
            .contains("suffix `_x-y` is not the end of a C symbol name"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("algorithms/sign-92.toml:28:10"),
        "{}",
        out.stdout
    );
    // A suffix the sources do not define is named in full.
    p.write(
        "algorithms/sign-92.toml",
        &t.replace(
            "namespace = \"PQB_LARCH3_\"",
            "namespace = \"PQB_LARCH3_\"\nsuffix = \"_L3\"",
        ),
    );
    let out = validate(&p, "sign-92").expect(2);
    assert!(
        out.stdout
            .contains("LARCH-3: API function `PQB_LARCH3_crypto_sign_keypair_L3` is not defined"),
        "{}",
        out.stdout
    );
    // Only NIST-API code has one.
    let t = p.read("algorithms/sign-90.toml");
    p.write(
        "algorithms/sign-90.toml",
        &t.replacen(
            "label = \"WINTER-128\"\n",
            "label = \"WINTER-128\"\nsuffix = \"_W\"\n",
            1,
        ),
    );
    let out = validate(&p, "sign-90").expect(2);
    assert!(
        out.stdout
            .contains("`suffix` applies to NIST-API algorithms"),
        "{}",
        out.stdout
    );
}
