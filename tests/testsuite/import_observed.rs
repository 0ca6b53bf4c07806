//! Import from the build a tree's authors wrote. `make-sets`
//! (tests/fixtures/import/make-sets): a make variable chooses the set, its
//! include folder and one of its sources, `CRYPTO_ALGNAME` is built by
//! stringizing, and the KAT target defines the macro without which the
//! library draws from the operating system. Import runs that build
//! confined, drafts from what it compiled and keeps what the tree's own
//! generator wrote; every set then passes byte for byte, and the same
//! bytes come out of the generator built here by plain `make`. Without
//! the KAT-mode define the KAT is reported NONDETERMINISTIC, not as a
//! mismatch. Hostile builds (a Makefile and a CMake project) get no
//! secret, no file outside, no socket, and nothing they start outlives
//! the import.

use std::process::Command;

use crate::common;
use crate::sandbox_hostile::{any_active, layers, pqbench_with};
use common::{skip, TestProject};

fn fixture() -> std::path::PathBuf {
    common::repo().join("tests/fixtures/import/make-sets")
}

/// Fails unless `text` holds every line of `wants`.
fn says(text: &str, wants: &[&str]) {
    for want in wants {
        assert!(text.contains(want), "{want}\n{text}");
    }
}

/// A copy of the fixture to change.
fn fixture_copy() -> tempfile::TempDir {
    let tree = tempfile::tempdir().unwrap();
    common::copy_tree(&fixture(), tree.path());
    tree
}

/// A copy of the fixture with the overlay `tests/fixtures/import/<name>`
/// copied over it.
fn overlaid(name: &str) -> tempfile::TempDir {
    let tree = fixture_copy();
    common::copy_tree(
        &common::repo().join("tests/fixtures/import").join(name),
        tree.path(),
    );
    tree
}

fn make_and_openssl() -> bool {
    skip::tools_or_skip(
        &["make", "/usr/include/openssl/evp.h"],
        "apt-get install make libssl-dev",
    )
}

const CAMPAIGN: &str = "algorithms = [\"mktoy\"]\nstages = [\"build\", \"kat\"]\n\n[kat]\ntimeout-seconds = 60\n\n[host]\nrequire-fixed = false\n";

fn raw(p: &TestProject) -> pqbench::config::algorithm::RawAlgorithm {
    pqbench::config::load(&p.path().join("algorithms/mktoy.toml"))
        .unwrap()
        .value
}

fn strs(v: &[toml::Spanned<String>]) -> Vec<String> {
    v.iter().map(|s| s.get_ref().clone()).collect()
}

fn define(d: Option<&pqbench::config::algorithm::DefineValue>) -> String {
    use pqbench::config::algorithm::DefineValue;
    match d {
        Some(DefineValue::Text(t)) => t.clone(),
        Some(DefineValue::Int(n)) => n.to_string(),
        Some(DefineValue::Bool(b)) => b.to_string(),
        None => "-".into(),
    }
}

/// make-sets with its Makefile replaced by the build file `name` holding
/// `text`, imported unedited: the project and what import printed.
fn import_rebuilt(name: &str, text: &str) -> (TestProject, String) {
    let tree = fixture_copy();
    std::fs::remove_file(tree.path().join("Makefile")).unwrap();
    std::fs::write(tree.path().join(name), text).unwrap();
    let p = TestProject::bare();
    let out = p
        .pqbench(&["import", tree.path().to_str().unwrap(), "--id", "mktoy"])
        .expect(0);
    (p, out.stdout)
}

/// Each drafted set's label and its `MKTOY_SET` define.
fn labels_and_sets(p: &TestProject) -> Vec<(String, String)> {
    raw(p)
        .parameter_sets
        .iter()
        .map(|s| {
            (
                s.label.get_ref().clone(),
                define(s.defines.get("MKTOY_SET")),
            )
        })
        .collect()
}

/// make-sets' two sets, as `labels_and_sets` gives them.
fn both_sets() -> Vec<(String, String)> {
    vec![
        ("MkToy-toy2".to_string(), "toy2".to_string()),
        ("MkToy-toy3".to_string(), "toy3".to_string()),
    ]
}

#[test]
fn sets_chosen_by_a_make_variable_import_unedited_and_equal_their_own_generators() {
    if !make_and_openssl() {
        return;
    }
    let p = TestProject::bare();
    let out = p
        .pqbench(&["import", fixture().to_str().unwrap(), "--id", "mktoy"])
        .expect(0);
    says(
        &out.stdout,
        &[
            "observed `make SET=toy2 PQCgenKAT_sign`, `make SET=toy3 PQCgenKAT_sign`: 2 KAT generator(s) built and run",
            "(0 TODO lines)",
            "validate algorithms/mktoy.toml: OK (2 instances)",
            "proof MkToy-toy2: identical to the tree's own generator",
            "proof MkToy-toy3: identical to the tree's own generator",
        ],
    );
    let a = raw(&p);
    let imp = &a.implementations[0];
    assert_eq!(strs(&imp.sources), ["src/randombytes.c", "src/sign.c"]);
    assert_eq!(strs(&imp.include_dirs), ["include"]);
    assert_eq!(define(imp.defines.get("MKTOY_KAT")), "true");
    let sets: Vec<(String, String, Vec<String>, Vec<String>)> = a
        .parameter_sets
        .iter()
        .map(|s| {
            (
                s.label.get_ref().clone(),
                define(s.defines.get("MKTOY_SET")),
                strs(s.sources.as_deref().unwrap_or_default()),
                strs(s.include_dirs.as_deref().unwrap_or_default()),
            )
        })
        .collect();
    let set = |label: &str, v: &str, mix: &str| {
        (
            label.to_string(),
            v.to_string(),
            vec![
                format!("src/{mix}.c"),
                "src/randombytes.c".to_string(),
                "src/sign.c".to_string(),
            ],
            vec![format!("params/{v}")],
        )
    };
    assert_eq!(
        sets,
        [
            set("MkToy-toy2", "toy2", "mix_fnv"),
            set("MkToy-toy3", "toy3", "mix_djb")
        ]
    );
    let manifest = p.read("kat/mktoy/kat.sha256");
    assert!(manifest.contains("# provenance: generated"), "{manifest}");

    p.write("campaigns/t.toml", CAMPAIGN);
    let out = p.pqbench(&["run", "t"]).expect(0);
    assert!(out.stdout.contains("KAT: 2 PASS of 2"), "{}", out.stdout);
    // The generator built here by the tree's Makefile, outside pqbench,
    // writes what pqbench wrote.
    let work = tempfile::tempdir().unwrap();
    common::copy_tree(&fixture(), work.path());
    let made = Command::new("make")
        .args(["-s", "SET=toy3", "CC=gcc", "PQCgenKAT_sign"])
        .current_dir(work.path())
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let st = Command::new(work.path().join("PQCgenKAT_sign"))
        .current_dir(work.path())
        .status()
        .unwrap();
    assert!(st.success());
    let theirs = std::fs::read(work.path().join("PQCsignKAT_48.rsp")).unwrap();
    let ours = std::fs::read(p.path().join("output/t/local/kat/mktoy/MkToy-toy3.rsp")).unwrap();
    assert!(
        theirs == ours,
        "pqbench's MkToy-toy3 file differs from make's generator"
    );

    // Without the KAT build's define the library draws from getrandom():
    // two runs with the same seeds differ, and the KAT says so.
    let toml = p.read("algorithms/mktoy.toml");
    p.write(
        "algorithms/mktoy.toml",
        &toml.replace("defines = { MKTOY_KAT = true }\n", ""),
    );
    let out = p.pqbench(&["run", "t"]).expect(1);
    assert!(
        out.stdout.contains("KAT: 2 NONDETERMINISTIC of 2"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("two runs with the same seeds differ"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_build_command_with_a_brace_list_makes_one_set_per_value() {
    if !make_and_openssl() {
        return;
    }
    let p = TestProject::bare();
    let out = p
        .pqbench(&[
            "import",
            fixture().to_str().unwrap(),
            "--id",
            "mktoy",
            "--build",
            "make SET={toy3} PQCgenKAT_sign",
        ])
        .expect(0);
    assert!(
        out.stdout
            .contains("observed `make SET=toy3 PQCgenKAT_sign`: 1 KAT generator(s)"),
        "{}",
        out.stdout
    );
    let labels: Vec<String> = raw(&p)
        .parameter_sets
        .iter()
        .map(|s| s.label.get_ref().clone())
        .collect();
    assert_eq!(labels, ["MkToy-toy3"]);
    // A command that fails is the user's error, named with its output.
    let q = TestProject::bare();
    let out = q
        .pqbench(&[
            "import",
            fixture().to_str().unwrap(),
            "--id",
            "mktoy",
            "--build",
            "make SET=toy9 no-such-target",
        ])
        .expect(2);
    assert!(
        out.stderr
            .contains("--build: the build `make SET=toy9 no-such-target` failed"),
        "{}",
        out.stderr
    );
    assert!(!q.path().join("algorithms/mktoy.toml").exists());
}

/// A generator that writes what its build learnt (`PROBE`) into its KAT
/// file, which import keeps as the reference.
const PROBE_GENERATOR: &str = r##"#include <stdio.h>
int main(void)
{
    FILE *f = fopen("PQCsignKAT_1.rsp", "w");
    if (f == NULL)
        return 1;
    fprintf(f, "# %s\n\ncount = 0\nseed = 00\n\n", PROBE);
    return fclose(f) != 0;
}
"##;

/// What the probe says, from the reference import kept.
fn probe(p: &TestProject, id: &str) -> String {
    let dir = p.path().join("kat").join(id);
    let label = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .find(|e| e.path().is_dir())
        .expect("a label folder")
        .path();
    let text = std::fs::read_to_string(label.join("PQCsignKAT_1.rsp")).unwrap();
    text.lines().next().unwrap_or_default().to_string()
}

/// Whether a process whose arguments include `marker` runs on the host.
fn running(marker: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read(e.path().join("cmdline"))
            .map(|c| c.split(|b| *b == 0).any(|a| a == marker.as_bytes()))
            .unwrap_or(false)
    })
}

#[test]
fn a_hostile_makefile_learns_nothing_outside_its_copy_and_leaves_nothing_running() {
    if !skip::tools_or_skip(
        &["make", "bash", "setsid"],
        "apt-get install make bash util-linux",
    ) {
        return;
    }
    let p = TestProject::bare();
    let layers = layers(&p);
    let outside = tempfile::tempdir().unwrap();
    const OUTSIDE: &str = "pqb-outside-9f3e";
    std::fs::write(outside.path().join("notes.txt"), OUTSIDE).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let tree = tempfile::tempdir().unwrap();
    const DAEMON: &str = "4711.25";
    let makefile = format!(
        "PQCgenKAT_sign: gen.c\n\
         \t-cat {o}/notes.txt > got.txt 2>/dev/null; true\n\
         \t-echo escaped > {o}/escaped.txt 2>/dev/null; true\n\
         \t-echo home > $$HOME/../pqb-home-escape 2>/dev/null; true\n\
         \t-bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}' 2>/dev/null; true\n\
         \t-setsid sleep {DAEMON} </dev/null >/dev/null 2>&1 &\n\
         \t$(CC) -DPROBE=\"\\\"uid=$$(id -u) got=$$(cat got.txt) secret=$$PQB_SECRET_PROBE end\\\"\" -o $@ gen.c\n",
        o = outside.path().display()
    );
    std::fs::write(tree.path().join("Makefile"), makefile).unwrap();
    // Its label would name a folder outside the project.
    std::fs::write(
        tree.path().join("api.h"),
        "#define CRYPTO_ALGNAME \"../../pqb-escape\"\n",
    )
    .unwrap();
    std::fs::write(
        tree.path().join("gen.c"),
        format!("#include \"api.h\"\n{PROBE_GENERATOR}"),
    )
    .unwrap();
    const SECRET: &str = "pqb-make-secret-do-not-leak";
    let run = pqbench_with(
        &p,
        &["import", tree.path().to_str().unwrap(), "--id", "hostile"],
        &[("PQB_SECRET_PROBE", SECRET)],
        None,
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("observed `make PQCgenKAT_sign`"),
        "{}",
        run.stdout
    );
    let probe = probe(&p, "hostile");
    assert!(probe.contains("secret= end"), "{probe}");
    assert!(
        p.path().join("kat/hostile/pqb-escape").is_dir(),
        "{}",
        run.stdout
    );
    assert!(!p.path().join("../pqb-escape").exists());
    let toml = p.read("algorithms/hostile.toml");
    assert!(toml.contains("drafted as `pqb-escape`"), "{toml}");
    if any_active(&layers, &["landlock-filesystem"]) {
        assert!(
            probe.contains("got= "),
            "the build read a file outside: {probe}"
        );
        assert!(!outside.path().join("escaped.txt").exists());
    }
    if any_active(&layers, &["job-uid"]) {
        assert!(!probe.contains("uid=0 "), "the build ran as root: {probe}");
    }
    assert!(
        listener.accept().is_err(),
        "the build reached 127.0.0.1:{port}"
    );
    if any_active(&layers, &["pid-namespace"]) {
        assert!(!running(DAEMON), "the build's daemon outlived the import");
    }
    // The tree's copy is the draft's source; nothing of the build's own
    // products or of the tree's copy leaked into the project otherwise.
    assert!(!p.path().join("algorithms/hostile/got.txt").exists());
}

#[test]
fn a_hostile_cmake_project_reads_no_system_file_and_runs_nothing_it_ships() {
    if !skip::tools_or_skip(&["cmake", "make"], "apt-get install cmake make") {
        return;
    }
    let p = TestProject::bare();
    let layers = layers(&p);
    let outside = tempfile::tempdir().unwrap();
    const OUTSIDE: &str = "pqb-cmake-outside-51c0";
    let outside_file = outside.path().join("notes.txt");
    std::fs::write(&outside_file, OUTSIDE).unwrap();
    let tree = tempfile::tempdir().unwrap();
    let cmake = |read: &str| {
        format!(
            r#"cmake_minimum_required(VERSION 3.13)
project(hostile C)
{read}
execute_process(COMMAND cat /etc/hostname OUTPUT_VARIABLE host OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
execute_process(COMMAND cat {f} OUTPUT_VARIABLE outside OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
execute_process(COMMAND ${{CMAKE_CURRENT_SOURCE_DIR}}/tool.sh OUTPUT_VARIABLE tool OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
add_executable(PQCgenKAT_sign gen.c)
target_compile_definitions(PQCgenKAT_sign PRIVATE "PROBE=\"host=${{host}} outside=${{outside}} tool=${{tool}} end\"")
"#,
            f = outside_file.display()
        )
    };
    std::fs::write(tree.path().join("CMakeLists.txt"), cmake("")).unwrap();
    std::fs::write(tree.path().join("gen.c"), PROBE_GENERATOR).unwrap();
    std::fs::write(
        tree.path().join("tool.sh"),
        "#!/bin/sh\necho shipped-tool-ran\n",
    )
    .unwrap();
    std::fs::set_permissions(
        tree.path().join("tool.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let run = pqbench_with(
        &p,
        &["import", tree.path().to_str().unwrap(), "--id", "hcmake"],
        &[],
        None,
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("observed `cmake -S ."),
        "{}",
        run.stdout
    );
    let probe = probe(&p, "hcmake");
    if any_active(&layers, &["landlock-filesystem"]) {
        assert!(
            probe.contains("host= outside= tool= end"),
            "the build read outside its copy or ran its own program: {probe}"
        );
    }
    // A configure step that fails on a file it may not read fails the
    // observed build: import says so and drafts from the sources alone.
    if any_active(&layers, &["landlock-filesystem"]) {
        std::fs::write(
            tree.path().join("CMakeLists.txt"),
            cmake("file(READ /etc/hostname h)"),
        )
        .unwrap();
        let q = TestProject::bare();
        let run = pqbench_with(
            &q,
            &["import", tree.path().to_str().unwrap(), "--id", "hcmake"],
            &[],
            None,
        );
        assert!(
            run.stdout.contains("failed") && run.stdout.contains("drafted from the sources alone"),
            "{}\n{}",
            run.stdout,
            run.stderr
        );
    }
}

#[test]
fn a_define_the_build_gives_two_values_is_a_todo_and_the_proof_shows_the_set_differs() {
    if !make_and_openssl() {
        return;
    }
    let tree = fixture_copy();
    let mk = std::fs::read_to_string(tree.path().join("Makefile")).unwrap();
    std::fs::write(
        tree.path().join("Makefile"),
        mk + "\nDEFS += -DMKTOY_TWEAK=2\nbuild/mix_fnv.o: DEFS += -DMKTOY_TWEAK=1\n",
    )
    .unwrap();
    let mix = std::fs::read_to_string(tree.path().join("src/mix_fnv.c")).unwrap();
    std::fs::write(
        tree.path().join("src/mix_fnv.c"),
        mix.replace(
            "    size_t i;\n",
            "    size_t i;\n#if MKTOY_TWEAK == 1\n    h ^= 0x5a;\n#endif\n",
        ),
    )
    .unwrap();
    let p = TestProject::bare();
    let out = p
        .pqbench(&["import", tree.path().to_str().unwrap(), "--id", "mktoy"])
        .expect(0);
    says(
        &out.stdout,
        &[
            "(1 TODO lines)",
            "proof MkToy-toy2: differs: KAT MISMATCH",
            "proof MkToy-toy3: identical to the tree's own generator",
            "1 of 2 sets not proven",
        ],
    );
    let toml = p.read("algorithms/mktoy.toml");
    assert!(
        toml.contains("# TODO: the build gives MKTOY_TWEAK different values (-DMKTOY_TWEAK=2 for src/sign.c, src/randombytes.c; -DMKTOY_TWEAK=1 for src/mix_fnv.c)"),
        "{toml}"
    );
    assert!(
        toml.contains(
            "# TODO: pqbench's KAT of this set is not proven against the tree's own build"
        ),
        "{toml}"
    );
}

#[test]
fn a_cmake_option_with_documented_values_is_one_build_per_value() {
    if !make_and_openssl() || !skip::tools_or_skip(&["cmake"], "apt-get install cmake") {
        return;
    }
    // The same library, one configuration per security level: the cache
    // variable's documented values are the sets, `-DMKTOY_LEVEL=<value>`
    // each, and nothing but its if/elseif chain maps a level to its set.
    let (p, out) = import_rebuilt(
        "CMakeLists.txt",
        r#"cmake_minimum_required(VERSION 3.13)
project(mktoy C)
set(MKTOY_LEVEL 2 CACHE STRING "security level")
set_property(CACHE MKTOY_LEVEL PROPERTY STRINGS 2 3)
if(MKTOY_LEVEL EQUAL 2)
  set(set toy2)
  set(mix src/mix_fnv.c)
elseif(MKTOY_LEVEL EQUAL 3)
  set(set toy3)
  set(mix src/mix_djb.c)
else()
  message(FATAL_ERROR "MKTOY_LEVEL is 2 or 3")
endif()
add_library(mktoy STATIC src/sign.c ${mix} src/randombytes.c)
target_include_directories(mktoy PUBLIC include params/${set})
target_compile_definitions(mktoy PUBLIC MKTOY_SET=${set} MKTOY_KAT)
add_executable(PQCgenKAT_sign nistkat/PQCgenKAT_sign.c nistkat/rng.c)
target_link_libraries(PQCgenKAT_sign mktoy crypto)
"#,
    );
    says(
        &out,
        &[
            "observed `cmake -S . -B .pqb-build -DMKTOY_LEVEL=2 -DCMAKE_BUILD_TYPE=Release",
            "`cmake -S . -B .pqb-build -DMKTOY_LEVEL=3 -DCMAKE_BUILD_TYPE=Release",
            ": 2 KAT generator(s) built and run",
            "(0 TODO lines)",
            "proof MkToy-toy2: identical to the tree's own generator",
            "proof MkToy-toy3: identical to the tree's own generator",
        ],
    );
    assert_eq!(labels_and_sets(&p), both_sets());
}

#[test]
fn a_cmake_project_with_one_target_per_set_imports_unedited_and_is_proven() {
    if !make_and_openssl() || !skip::tools_or_skip(&["cmake"], "apt-get install cmake") {
        return;
    }
    // The same library built by CMake: a static library and a generator
    // target per set, the set's macros on the library target.
    let (p, out) = import_rebuilt(
        "CMakeLists.txt",
        r#"cmake_minimum_required(VERSION 3.13)
project(mktoy C)
foreach(set toy2 toy3)
  if(set STREQUAL "toy2")
    set(mix src/mix_fnv.c)
  else()
    set(mix src/mix_djb.c)
  endif()
  add_library(mktoy_${set} STATIC src/sign.c ${mix} src/randombytes.c)
  target_include_directories(mktoy_${set} PUBLIC include params/${set})
  target_compile_definitions(mktoy_${set} PUBLIC MKTOY_SET=${set} MKTOY_KAT)
  add_executable(PQCgenKAT_sign_${set} nistkat/PQCgenKAT_sign.c nistkat/rng.c)
  target_link_libraries(PQCgenKAT_sign_${set} mktoy_${set} crypto)
endforeach()
"#,
    );
    says(
        &out,
        &[
            "observed `cmake -S .",
            ": 2 KAT generator(s) built and run",
            "(0 TODO lines)",
            "proof MkToy-toy2: identical to the tree's own generator",
            "proof MkToy-toy3: identical to the tree's own generator",
        ],
    );
    assert_eq!(labels_and_sets(&p), both_sets());
}

#[test]
fn a_meson_project_imports_unedited_and_is_proven() {
    if !make_and_openssl()
        || !skip::tools_or_skip(&["meson", "ninja"], "apt-get install meson ninja-build")
    {
        return;
    }
    let (_, out) = import_rebuilt(
        "meson.build",
        r#"project('mktoy', 'c')
crypto = dependency('libcrypto')
lib = static_library('mktoy', 'src/sign.c', 'src/mix_djb.c', 'src/randombytes.c',
  include_directories: include_directories('include', 'params/toy3'),
  c_args: ['-DMKTOY_SET=toy3', '-DMKTOY_KAT'])
executable('PQCgenKAT_sign', 'nistkat/PQCgenKAT_sign.c', 'nistkat/rng.c',
  include_directories: include_directories('include', 'params/toy3'),
  c_args: ['-DMKTOY_SET=toy3'], link_with: lib, dependencies: crypto)
"#,
    );
    says(
        &out,
        &[
            "observed `meson setup --cross-file \"$PQB_MESON_CROSS_FILE\" .pqb-build && ninja -C .pqb-build`: 1 KAT generator(s)",
            "(0 TODO lines)",
            "proof MkToy-toy3: identical to the tree's own generator",
        ],
    );
}

#[test]
fn a_campaign_runs_the_instances_it_names_and_a_pattern_that_names_none_is_an_error() {
    let p = TestProject::demo();
    p.write(
        "campaigns/some.toml",
        "algorithms = [\"sign-90\"]\ninstances = [\"sign-90/*-192\"]\nstages = [\"build\"]\n\n[host]\nrequire-fixed = false\n",
    );
    let plan = p.pqbench(&["plan", "some"]).expect(0);
    let rows: Vec<&str> = plan
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.starts_with("sign-90/"))
        .collect();
    assert_eq!(rows, ["sign-90/WINTER-192"], "{}", plan.stdout);
    p.write(
        "campaigns/none.toml",
        "algorithms = [\"sign-90\"]\ninstances = [\"sign-90/NOPE\"]\n",
    );
    let out = p.pqbench(&["plan", "none"]).expect(2);
    assert!(
        out.stderr.contains("`sign-90/NOPE` selects no instance"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("none.toml:2:"), "{}", out.stderr);
}

#[test]
fn a_library_on_openssls_libcrypto_is_drafted_with_its_system_library_and_is_proven() {
    if !make_and_openssl() {
        return;
    }
    // toy3's mixing source takes SHA-256 from libcrypto, as submissions
    // that take SHAKE from OpenSSL do.
    let tree = fixture_copy();
    std::fs::write(
        tree.path().join("src/mix_djb.c"),
        r#"#include <string.h>
#include <openssl/sha.h>
#include "mix.h"

void mktoy_mix(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen, uint64_t tweak)
{
    unsigned char d[SHA256_DIGEST_LENGTH];
    SHA256_CTX c;
    size_t i;
    SHA256_Init(&c);
    SHA256_Update(&c, &tweak, sizeof tweak);
    SHA256_Update(&c, in, inlen);
    SHA256_Final(d, &c);
    for (i = 0; i < outlen; i++)
        out[i] = d[i % sizeof d];
}
"#,
    )
    .unwrap();
    let p = TestProject::bare();
    let out = p
        .pqbench(&[
            "import",
            tree.path().to_str().unwrap(),
            "--id",
            "mktoy",
            "--build",
            "make SET={toy2,toy3} CFLAGS='-O2 -Wno-deprecated-declarations' PQCgenKAT_sign",
        ])
        .expect(0);
    says(
        &out.stdout,
        &[
            "validate algorithms/mktoy.toml: OK (2 instances)",
            "proof MkToy-toy2: identical to the tree's own generator",
            "proof MkToy-toy3: identical to the tree's own generator",
        ],
    );
    let a = raw(&p);
    assert_eq!(strs(&a.implementations[0].libraries), ["crypto"]);
    // The run records the file the compiler linked and its bytes' digest,
    // and the method page names them.
    p.write(
        "campaigns/t.toml",
        &CAMPAIGN.replace("\"kat\"]", "\"kat\", \"render\"]"),
    );
    p.pqbench(&["run", "t"]).expect(0);
    let c: serde_json::Value =
        serde_json::from_str(&p.read("output/t/local/campaign.json")).unwrap();
    let lib = &c["system_libraries"][0];
    assert_eq!(lib["name"], "crypto", "{c}");
    assert_eq!(lib["algorithms"], serde_json::json!(["mktoy"]));
    let file = lib["file"].as_str().unwrap();
    assert!(file.contains("libcrypto.so"), "{file}");
    let digest = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(
        std::fs::read(file).unwrap(),
    ));
    assert_eq!(lib["sha256"], digest.as_str());
    let method = p.read("output/t/site/local/method.md");
    assert!(
        method.contains(&format!(
            "System library `-lcrypto` (linked by mktoy): `{file}`"
        )),
        "{method}"
    );
    // Without it the library does not link, and the error names the
    // missing symbol.
    let toml = p.read("algorithms/mktoy.toml");
    p.write(
        "algorithms/mktoy.toml",
        &toml.replace("libraries = [\"crypto\"]\n", ""),
    );
    p.write("campaigns/t.toml", CAMPAIGN);
    let out = p.pqbench(&["run", "t"]).expect(1);
    assert!(out.stdout.contains("SHA256"), "{}", out.stdout);
}

#[test]
fn a_build_that_swaps_its_call_log_for_a_link_is_not_believed() {
    if !skip::tools_or_skip(&["make"], "apt-get install make") {
        return;
    }
    // The build compiles, then replaces pqbench's log of its calls by a
    // link to a file outside holding a call of its own making.
    let outside = tempfile::tempdir().unwrap();
    let fake = outside.path().join("calls.jsonl");
    std::fs::write(
        &fake,
        format!(
            "{{\"tool\":\"cc\",\"cwd\":\"{}\",\"args\":[\"-DPQB_FORGED_CALL\",\"-o\",\"PQCgenKAT_sign\",\"gen.c\"]}}\n",
            outside.path().display()
        ),
    )
    .unwrap();
    let tree = tempfile::tempdir().unwrap();
    std::fs::write(
        tree.path().join("Makefile"),
        format!(
            "PQCgenKAT_sign: gen.c\n\t$(CC) -DPROBE='\"x\"' -o $@ gen.c\n\tln -sf {} \"$$PQB_BUILD_LOG\"\n",
            fake.display()
        ),
    )
    .unwrap();
    std::fs::write(tree.path().join("gen.c"), PROBE_GENERATOR).unwrap();
    let p = TestProject::bare();
    let out = p
        .pqbench(&["import", tree.path().to_str().unwrap(), "--id", "swap"])
        .expect(0);
    says(
        &out.stdout,
        &[
            "linked no KAT generator (0 compiler calls recorded)",
            "drafted from the sources alone",
        ],
    );
    assert!(!p.read("algorithms/swap.toml").contains("PQB_FORGED_CALL"));
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_file_the_build_compiles_for_avx2_alone_is_drafted_as_a_unit_and_is_proven() {
    if !make_and_openssl() {
        return;
    }
    // make-sets with the dispatch overlay: src/mix_avx2.c alone gets
    // -mavx2, and the dispatcher marks its output when it gets it too.
    let tree = overlaid("dispatch");
    let p = TestProject::bare();
    let out = p
        .pqbench(&["import", tree.path().to_str().unwrap(), "--id", "mktoy"])
        .expect(0);
    says(
        &out.stdout,
        &[
            "2 KAT generator(s) built and run",
            "(0 TODO lines)",
            "proof MkToy-toy2: identical to the tree's own generator",
            "proof MkToy-toy3: identical to the tree's own generator",
        ],
    );
    let a = raw(&p);
    let imp = &a.implementations[0];
    assert!(imp.cpu_features.is_empty(), "{:?}", imp.cpu_features);
    let units: Vec<(Vec<String>, Vec<String>)> = imp
        .units
        .iter()
        .map(|u| (strs(&u.sources), u.cpu_features.clone()))
        .collect();
    assert_eq!(
        units,
        [(vec!["src/mix_avx2.c".to_string()], vec!["avx2".to_string()])]
    );

    // Without the unit the AVX2 file does not compile; with the whole
    // library compiled for AVX2 (not the authors' build) the dispatcher's
    // bytes differ.
    let toml = p.read("algorithms/mktoy.toml");
    let unit =
        "\n[[implementation.unit]]\nsources = [\"src/mix_avx2.c\"]\ncpu-features = [\"avx2\"]\n";
    assert!(toml.contains(unit), "{toml}");
    p.write("campaigns/t.toml", CAMPAIGN);
    p.write("algorithms/mktoy.toml", &toml.replace(unit, "\n"));
    let run = p.pqbench(&["run", "t"]).expect(1);
    says(
        &run.stdout,
        &["KAT: 2 BUILDFAIL of 2", "target specific option mismatch"],
    );
    let whole = toml
        .replace(unit, "\n")
        .replace("\nsources = [", "\ncpu-features = [\"avx2\"]\nsources = [");
    p.write("algorithms/mktoy.toml", &whole);
    let run = p.pqbench(&["run", "t"]).expect(1);
    assert!(
        run.stdout.contains("KAT: 2 MISMATCH of 2"),
        "{}",
        run.stdout
    );

    // A unit pattern that selects a file of the tree but none of the
    // sources is an error at its place.
    p.write(
        "algorithms/mktoy.toml",
        &toml.replace("[\"src/mix_avx2.c\"]", "[\"src/mix_fnv.c\"]"),
    );
    let bad = p.pqbench(&["validate", "algorithms/mktoy.toml"]).expect(2);
    says(
        &format!("{}{}", bad.stdout, bad.stderr),
        &[
            "selects none of the implementation's sources",
            "mktoy.toml:",
        ],
    );
}

#[test]
fn levels_a_chain_of_make_conditionals_compares_are_the_sets() {
    if !make_and_openssl() {
        return;
    }
    // make-sets with the make-levels overlay: `LEVEL` is a number that no
    // file or folder is named after; the Makefile's ifeq chain maps it to
    // the set.
    let tree = overlaid("make-levels");
    let p = TestProject::bare();
    let out = p
        .pqbench(&["import", tree.path().to_str().unwrap(), "--id", "mktoy"])
        .expect(0);
    says(
        &out.stdout,
        &[
            "observed `make LEVEL=2 PQCgenKAT_sign`, `make LEVEL=3 PQCgenKAT_sign`: 2 KAT generator(s) built and run",
            "(0 TODO lines)",
            "proof MkToy-toy2: identical to the tree's own generator",
            "proof MkToy-toy3: identical to the tree's own generator",
        ],
    );
    let a = raw(&p);
    let labels: Vec<String> = a
        .parameter_sets
        .iter()
        .map(|s| s.label.get_ref().clone())
        .collect();
    assert_eq!(labels, ["MkToy-toy2", "MkToy-toy3"]);
    let toy3 = &a.parameter_sets[1];
    assert_eq!(define(toy3.defines.get("MKTOY_SET")), "toy3");
    assert!(
        strs(toy3.sources.as_deref().unwrap_or_default()).contains(&"src/mix_djb.c".to_string())
    );
}

#[test]
fn a_switch_that_looks_like_a_set_selector_falls_back_to_one_build() {
    if !make_and_openssl() {
        return;
    }
    // make-sets with its set fixed (`SET = toy2`) and a style switch whose
    // define the code never reads: both styles write the same KAT file,
    // so the switch chooses no set and the plain build is the one set.
    let tree = fixture_copy();
    let mk = tree.path().join("Makefile");
    let text = std::fs::read_to_string(&mk).unwrap();
    let switched = text.replace(
        "SET ?= toy2\n",
        "SET = toy2\nSTYLE ?= plain\nifeq ($(STYLE),fancy)\nCFLAGS += -DMKTOY_STYLE_FANCY\nendif\n",
    );
    assert_ne!(switched, text);
    std::fs::write(&mk, switched).unwrap();
    let p = TestProject::bare();
    let out = p
        .pqbench(&["import", tree.path().to_str().unwrap(), "--id", "mktoy"])
        .expect(0);
    says(
        &out.stdout,
        &[
            "note: `make STYLE=plain PQCgenKAT_sign` and `make STYLE=fancy PQCgenKAT_sign` wrote the same KAT files: their variable chooses no parameter set; built `make PQCgenKAT_sign` instead",
            "observed `make PQCgenKAT_sign`: 1 KAT generator(s) built and run",
            "proof MkToy-toy2: identical to the tree's own generator",
        ],
    );
    assert_eq!(raw(&p).parameter_sets.len(), 1);

    // A switch one of whose values does not build: the plain build too.
    let broken = text.replace(
        "SET ?= toy2\n",
        "SET = toy2\nSTYLE ?= plain\nifeq ($(STYLE),extra)\nCFLAGS += -DMKTOY_EXTRA -include mktoy_extra.h\nendif\n",
    );
    std::fs::write(&mk, broken).unwrap();
    let p = TestProject::bare();
    let out = p
        .pqbench(&["import", tree.path().to_str().unwrap(), "--id", "mktoy"])
        .expect(0);
    says(
        &out.stdout,
        &[
            "note: one build per value of a variable that looked like the set selector failed (",
            "; built `make PQCgenKAT_sign` instead",
            "proof MkToy-toy2: identical to the tree's own generator",
        ],
    );
}

#[test]
fn sets_a_packaging_script_writes_as_folders_are_kept_and_proven() {
    if !make_and_openssl() {
        return;
    }
    // make-sets with the script-sets overlay: no set folder exists until
    // the tree's documented script writes it.
    let tree = overlaid("script-sets");
    assert!(!tree.path().join("packages").exists());
    let p = TestProject::bare();
    let out = p
        .pqbench(&[
            "import",
            tree.path().to_str().unwrap(),
            "--id",
            "mktoy",
            "--build",
            "sh scripts/package.sh && make -C packages/{toy2,toy3} PQCgenKAT_sign",
        ])
        .expect(0);
    says(
        &out.stdout,
        &[
            "2 KAT generator(s) built and run",
            "(0 TODO lines)",
            "kept 20 source file(s) the build wrote beside the copy",
            "proof MkToy-toy2: identical to the tree's own generator",
            "proof MkToy-toy3: identical to the tree's own generator",
        ],
    );
    let a = raw(&p);
    assert_eq!(a.kind.as_str(), "sign");
    let sets: Vec<(String, Vec<String>)> = a
        .parameter_sets
        .iter()
        .map(|s| {
            (
                s.label.get_ref().clone(),
                strs(s.sources.as_deref().unwrap_or_default()),
            )
        })
        .collect();
    let files = |set: &str| -> Vec<String> {
        ["mix.c", "randombytes.c", "sign.c"]
            .iter()
            .map(|f| format!("packages/{set}/{f}"))
            .collect()
    };
    assert_eq!(
        sets,
        [
            ("MkToy-toy2".to_string(), files("toy2")),
            ("MkToy-toy3".to_string(), files("toy3"))
        ]
    );
    // What the draft names is beside the copy, as the script wrote it.
    assert_eq!(
        p.read("algorithms/mktoy/packages/toy3/mix.c"),
        std::fs::read_to_string(tree.path().join("src/mix_djb.c")).unwrap()
    );
    assert!(!tree.path().join("packages").exists());
}

#[test]
fn import_with_force_replaces_the_earlier_copy_whole() {
    if !make_and_openssl() {
        return;
    }
    let p = TestProject::bare();
    let tree = fixture().to_str().unwrap().to_string();
    p.pqbench(&["import", &tree, "--id", "mktoy"]).expect(0);
    // A file of an earlier copy (a source the tree no longer has).
    p.write("algorithms/mktoy/src/stale.c", "#error stale\n");
    let again = p.pqbench(&["import", &tree, "--id", "mktoy"]).expect(2);
    assert!(again.stderr.contains("pass --force"), "{}", again.stderr);
    assert!(p.path().join("algorithms/mktoy/src/stale.c").exists());
    let out = p
        .pqbench(&["import", &tree, "--id", "mktoy", "--force"])
        .expect(0);
    says(
        &out.stdout,
        &["proof MkToy-toy3: identical to the tree's own generator"],
    );
    assert!(!p.path().join("algorithms/mktoy/src/stale.c").exists());
    assert!(p.path().join("algorithms/mktoy/src/sign.c").is_file());
}

/// The `checker` overlay: the build makes one KAT checker per set and no
/// generator, and each set's functions carry its name
/// (`crypto_sign_keypair_Toy2`, behind renaming macros and
/// `#include "sign.c"`). pqbench's KAT file becomes the reference only
/// when the set's checker accepts it and rejects a changed copy.
#[test]
fn a_tree_with_kat_checkers_and_no_generator_is_proven_by_its_checkers() {
    if !make_and_openssl() {
        return;
    }
    let tree = overlaid("checker");
    let p = TestProject::bare();
    let out = p
        .pqbench(&["import", tree.path().to_str().unwrap(), "--id", "mktoy"])
        .expect(0);
    says(
        &out.stdout,
        &[
            "observed `make`: no KAT generator; 2 KAT checker(s) built",
            "(0 TODO lines)",
            "validate algorithms/mktoy.toml: OK (2 instances)",
            "proof MkToy-toy2: the tree's own KAT checker toy2/PQCtestKAT_sign accepts pqbench's KAT file (and rejects a changed copy)",
            "proof MkToy-toy3: the tree's own KAT checker toy3/PQCtestKAT_sign accepts",
        ],
    );
    let a = raw(&p);
    let sets: Vec<(Option<String>, Option<String>)> = a
        .parameter_sets
        .iter()
        .map(|s| {
            (
                s.header.as_ref().map(|h| h.get_ref().clone()),
                s.suffix.clone(),
            )
        })
        .collect();
    assert_eq!(
        sets,
        [
            (Some("api_toy2.h".into()), Some("_Toy2".into())),
            (Some("api_toy3.h".into()), Some("_Toy3".into()))
        ]
    );
    let manifest = p.read("kat/mktoy/kat.sha256");
    assert!(manifest.contains("# provenance: checked"), "{manifest}");
    // The same library under its plain names, built by make-sets' own
    // generator outside pqbench, writes the same bytes.
    let gen = fixture_copy();
    for (set, file) in [("toy2", "PQCsignKAT_32.rsp"), ("toy3", "PQCsignKAT_48.rsp")] {
        let ok = Command::new("make")
            .args([&format!("SET={set}"), "PQCgenKAT_sign"])
            .current_dir(gen.path())
            .output()
            .unwrap();
        assert!(
            ok.status.success(),
            "{}",
            String::from_utf8_lossy(&ok.stderr)
        );
        let ran = Command::new("./PQCgenKAT_sign")
            .current_dir(gen.path())
            .status()
            .unwrap();
        assert!(ran.success());
        let label = format!("MkToy-{set}");
        assert_eq!(
            std::fs::read(gen.path().join(file)).unwrap(),
            std::fs::read(p.path().join("kat/mktoy").join(&label).join(file)).unwrap(),
            "{label}"
        );
        std::fs::remove_dir_all(gen.path().join("build")).unwrap();
    }
    // The campaign's KAT passes against the checked references.
    p.write("campaigns/t.toml", CAMPAIGN);
    let out = p.pqbench(&["run", "t"]).expect(0);
    assert!(out.stdout.contains("KAT: 2 PASS of 2"), "{}", out.stdout);

    // Checkers that accept anything prove nothing, and write no reference.
    let q = TestProject::bare();
    let out = q
        .pqbench(&[
            "import",
            tree.path().to_str().unwrap(),
            "--id",
            "mktoy",
            "--build",
            "make LAX=1",
        ])
        .expect(0);
    says(
        &out.stdout,
        &[
            "proof MkToy-toy2: differs: the tree's checker toy2/PQCtestKAT_sign also accepts a copy with one digit of the last record changed: it proves nothing",
            "2 of 2 sets not proven",
        ],
    );
    assert!(!q.path().join("kat/mktoy/kat.sha256").exists());
}
