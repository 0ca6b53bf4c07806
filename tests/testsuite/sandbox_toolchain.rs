//! The build is an untrusted job too: the compiler, the assembler, the
//! linker and a submission's own CMake build run confined like submission
//! code (tests/fixtures/hostile/hostile.c at build time, and a hostile
//! CMake project). Each hostile build sits beside an honest control that
//! still builds and passes its KAT.

use crate::common;
use common::*;

use crate::sandbox_hostile::{
    any_active, campaign, hostile_project, kat_status, layers, output_bytes, pqbench_with, ID,
    TOY_KAT,
};

/// The build detail of `label`'s first attempt (what the page shows).
fn build_detail(p: &TestProject, label: &str) -> String {
    let build = p.json("output/t/local/build.json");
    let rec = build["instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == label)
        .unwrap_or_else(|| panic!("{label} missing from build.json"))
        .clone();
    rec.to_string()
}

fn add_set(p: &TestProject, label: &str, defines: &str) {
    let toml = p.read(&format!("algorithms/{ID}.toml"))
        + &format!("\n[[parameter-set]]\nlabel = \"{label}\"\ndefines = {{ {defines} }}\n");
    p.write(&format!("algorithms/{ID}.toml"), &toml);
    let manifest = p.read(&format!("kat/{ID}/kat.sha256"))
        + &format!("{TOY_KAT} strict {label}/KAT_SIG.txt\n");
    p.write(&format!("kat/{ID}/kat.sha256"), &manifest);
}

#[test]
fn a_runaway_build_is_stopped_at_its_systems_limits_and_the_limit_is_named() {
    // `#include "/dev/zero"` grows the compiler without end; a `.fill` of
    // 1 GiB makes the assembler write a 1 GiB object.
    let p = hostile_project(&[
        ("OK", "HOSTILE_KIND = 0"),
        (
            "ZERO",
            "HOSTILE_KIND = 0, HOSTILE_INCLUDE = '\"/dev/zero\"'",
        ),
        ("FILL", "HOSTILE_KIND = 0, HOSTILE_FILL = 1073741824"),
    ]);
    p.write(
        "campaigns/systems.toml",
        "[[system]]\nid = \"local\"\narch = \"any\"\n\n\
         [system.toolchain.limits]\nmemory-mib = 512\nfile-mib = 16\n",
    );
    p.write("campaigns/t.toml", &campaign(&["build", "kat"], 2));
    let layers = layers(&p);
    let run = p.pqbench(&["run", "t"]);
    assert_eq!(kat_status(&p, "t", "OK").0, "PASS", "{}", run.stderr);
    if !any_active(&layers, &["resource-limits"]) {
        return;
    }
    let zero = build_detail(&p, "ZERO");
    assert_eq!(kat_status(&p, "t", "ZERO").0, "BUILDFAIL", "{zero}");
    assert!(
        zero.contains("exceeded its 512 MiB memory limit (toolchain.limits.memory-mib)"),
        "{zero}"
    );
    let fill = build_detail(&p, "FILL");
    assert_eq!(kat_status(&p, "t", "FILL").0, "BUILDFAIL", "{fill}");
    assert!(
        fill.contains("exceeded its 16 MiB file-size limit (toolchain.limits.file-mib)"),
        "{fill}"
    );
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    // Nothing of that size reached the project.
    for f in all_files(p.path()) {
        let len = std::fs::metadata(&f).unwrap().len();
        assert!(len < 16 << 20, "{} is {len} bytes", f.display());
    }
    // The limits the build ran under are on record.
    let campaign = p.json("output/t/local/campaign.json");
    assert_eq!(
        campaign["compiler"]["limits"]["memory_mib"], 512,
        "{}",
        campaign["compiler"]
    );
}

#[test]
fn the_cache_and_links_out_of_the_project_are_not_the_compilers_to_read() {
    let p = hostile_project(&[("OK", "HOSTILE_KIND = 0")]);
    p.write("campaigns/t.toml", &campaign(&["build", "kat"], 2));
    let layers = layers(&p);
    p.pqbench(&["run", "t"]).expect(0);
    // The cache's own records: every file other instances read, with its
    // path, size, inode and times.
    let digests = p.path().join("output/.cache/file-digests.json");
    assert!(digests.is_file());
    add_set(
        &p,
        "CACHE",
        &format!(
            "HOSTILE_KIND = 0, HOSTILE_INCBIN = '\"{}\"'",
            digests.display()
        ),
    );
    let run = p.pqbench(&["run", "t"]);
    if any_active(&layers, &["landlock-filesystem"]) {
        let detail = build_detail(&p, "CACHE");
        assert_eq!(kat_status(&p, "t", "CACHE").0, "BUILDFAIL", "{detail}");
        assert!(detail.contains("file-digests.json"), "{detail}");
        assert_eq!(run.code, 1, "{}", run.stdout);
        let lib_dir = p.path().join("output/t/local/lib");
        for f in all_files(&lib_dir) {
            let bytes = std::fs::read(&f).unwrap();
            assert!(
                !bytes.windows(8).any(|w| w == b"\"files\":"),
                "{} embeds the cache's records",
                f.display()
            );
        }
    }
    // A source that is a link to a file the submission may not read is
    // refused before pqbench (as root) reads it for the build key.
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("private.c");
    const SECRET: &str = "pqb-linked-secret-31f0";
    std::fs::write(&secret, format!("/* {SECRET} */\n")).unwrap();
    std::os::unix::fs::symlink(&secret, p.path().join("algorithms/hostile/leak.c")).unwrap();
    let toml = p
        .read(&format!("algorithms/{ID}.toml"))
        .replace("sources = [\"hostile.c\"]", "sources = [\"*.c\"]");
    p.write(&format!("algorithms/{ID}.toml"), &toml);
    let refused = p.pqbench(&["run", "t"]);
    assert_eq!(refused.code, 2, "{}\n{}", refused.stdout, refused.stderr);
    assert!(
        refused
            .stderr
            .contains("`leak.c` resolves through a link to a place outside"),
        "{}",
        refused.stderr
    );
    let shown = secret.display().to_string();
    for (file, bytes) in output_bytes(&p) {
        assert!(
            !bytes.windows(shown.len()).any(|w| w == shown.as_bytes()),
            "{} names the linked file",
            file.display()
        );
        assert!(
            !bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()),
            "{} carries the linked file",
            file.display()
        );
    }
}

#[test]
fn a_file_the_assembler_reads_is_part_of_the_build_key() {
    let p = hostile_project(&[("OK", "HOSTILE_KIND = 0")]);
    let blob = p.path().join("algorithms/hostile/blob.bin");
    std::fs::write(&blob, "first-blob").unwrap();
    add_set(
        &p,
        "BLOB",
        &format!(
            "HOSTILE_KIND = 0, HOSTILE_INCBIN = '\"{}\"'",
            blob.display()
        ),
    );
    p.write("campaigns/t.toml", &campaign(&["build", "kat"], 2));
    p.pqbench(&["run", "t"]).expect(0);
    let sha = |p: &TestProject| {
        let build = p.json("output/t/local/build.json");
        build["instances"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["label"] == "BLOB")
            .unwrap()["library_sha256"]
            .clone()
    };
    let before = sha(&p);
    let fresh = p.pqbench(&["status", "t"]);
    assert!(!fresh.stdout.contains("BLOB"), "{}", fresh.stdout);
    std::fs::write(&blob, "second-blob").unwrap();
    let status = p.pqbench(&["status", "t"]);
    assert!(
        status.stdout.contains("BLOB") && status.stdout.contains("blob.bin"),
        "the changed file is named: {}",
        status.stdout
    );
    p.pqbench(&["run", "t"]).expect(0);
    assert_ne!(sha(&p), before, "the library was reused");
    let lib = std::fs::read(p.path().join(format!("output/t/local/lib/{ID}/BLOB.so"))).unwrap();
    assert!(lib.windows(11).any(|w| w == b"second-blob"));
}

/// A CMake project that builds the Wintertide demo library and, while it
/// configures, tries what a hostile build would: read pqbench's
/// environment, run a program the submission ships, read a file outside the
/// project, write outside its build folder and reach a server on
/// 127.0.0.1. What it got is compiled into the library as one string.
fn hostile_cmakelists(outside_file: &str, outside_dir: &str, port: u16) -> String {
    format!(
        r#"cmake_minimum_required(VERSION 3.13)
project(wintertide C)
set(secret "$ENV{{PQB_SECRET_PROBE}}")
execute_process(COMMAND id -u OUTPUT_VARIABLE uid OUTPUT_STRIP_TRAILING_WHITESPACE)
execute_process(COMMAND ${{CMAKE_CURRENT_SOURCE_DIR}}/tool.sh
    OUTPUT_VARIABLE tool OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
execute_process(COMMAND cat {outside_file}
    OUTPUT_VARIABLE outside OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
execute_process(COMMAND sh -c "echo escaped > {outside_dir}/escaped.txt" ERROR_QUIET)
file(DOWNLOAD http://127.0.0.1:{port}/ ${{CMAKE_BINARY_DIR}}/downloaded
    STATUS download TIMEOUT 5)
list(GET download 0 download_code)
file(WRITE ${{CMAKE_BINARY_DIR}}/probe.c
    "__attribute__((used)) const char hostile_cmake_probe[] = \"CMAKEPROBE uid=${{uid}} tool=${{tool}} secret=${{secret}} outside=${{outside}} download=${{download_code}} END\";\n")
add_library(wintertide STATIC wots.c ${{CMAKE_BINARY_DIR}}/probe.c)
target_include_directories(wintertide PRIVATE
    ${{CMAKE_CURRENT_SOURCE_DIR}}
    ${{CMAKE_CURRENT_SOURCE_DIR}}/../components/iccs-standin)
"#
    )
}

#[test]
fn a_submissions_cmake_build_gets_no_secret_no_program_of_its_own_and_no_socket() {
    if !common::skip::tools_or_skip(&["cmake"], "apt-get install cmake") {
        return;
    }
    let p = TestProject::demo();
    p.copy("algorithms/sign-90", "algorithms/sign-90c");
    p.copy(
        "tests/fixtures/cmake/sign-90c.toml",
        "algorithms/sign-90c.toml",
    );
    let outside = tempfile::tempdir().unwrap();
    let outside_file = outside.path().join("evaluator-notes.txt");
    const OUTSIDE: &str = "pqb-outside-file-8c21";
    std::fs::write(&outside_file, OUTSIDE).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    p.write(
        "algorithms/sign-90c/CMakeLists.txt",
        &hostile_cmakelists(
            &outside_file.display().to_string(),
            &outside.path().display().to_string(),
            port,
        ),
    );
    p.write(
        "algorithms/sign-90c/tool.sh",
        "#!/bin/sh\necho shipped-tool-ran\n",
    );
    std::fs::set_permissions(
        p.path().join("algorithms/sign-90c/tool.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    p.write(
        "campaigns/c.toml",
        &quick_campaign(&["sign-90c"], "stages = [\"build\", \"kat\"]"),
    );
    let layers = layers(&p);
    const SECRET: &str = "pqb-cmake-secret-do-not-leak";
    let run = pqbench_with(&p, &["run", "c"], &[("PQB_SECRET_PROBE", SECRET)], None);
    // The honest part of the build still builds and passes.
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let lib = std::fs::read(p.path().join("output/c/local/lib/sign-90c/WINTER-128.so")).unwrap();
    let text = String::from_utf8_lossy(&lib);
    let probe = text
        .split("CMAKEPROBE ")
        .nth(1)
        .and_then(|t| t.split(" END").next())
        .expect("the probe string is in the library")
        .to_string();
    assert!(probe.contains("secret= "), "{probe}");
    assert!(!text.contains(SECRET));
    if any_active(&layers, &["landlock-filesystem"]) {
        assert!(probe.contains("tool= "), "a shipped program ran: {probe}");
        assert!(probe.contains("outside= "), "{probe}");
        assert!(!text.contains(OUTSIDE));
        assert!(!outside.path().join("escaped.txt").exists());
    }
    if any_active(&layers, &["seccomp"]) {
        assert!(!probe.contains("download=0 "), "{probe}");
    }
    assert!(
        listener.accept().is_err(),
        "the build reached 127.0.0.1:{port}"
    );
    if any_active(&layers, &["job-uid"]) {
        assert!(!probe.contains("uid=0 "), "the build ran as root: {probe}");
    }
    for (file, bytes) in output_bytes(&p) {
        assert!(
            !bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()),
            "{} carries the secret",
            file.display()
        );
    }
}

#[test]
fn a_variable_the_system_names_reaches_its_cmake_build_and_only_its_name_is_recorded() {
    if !common::skip::tools_or_skip(&["cmake"], "apt-get install cmake") {
        return;
    }
    let p = TestProject::demo();
    p.copy("algorithms/sign-90", "algorithms/sign-90c");
    p.copy(
        "tests/fixtures/cmake/sign-90c.toml",
        "algorithms/sign-90c.toml",
    );
    let outside = tempfile::tempdir().unwrap();
    // A port nothing listens on: the download fails, as it would anyway.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    p.write(
        "algorithms/sign-90c/CMakeLists.txt",
        &hostile_cmakelists(
            &outside.path().join("none").display().to_string(),
            &outside.path().display().to_string(),
            port,
        ),
    );
    p.write("algorithms/sign-90c/tool.sh", "#!/bin/sh\n");
    let registry = |names: &str| {
        format!(
            "[[system]]\nid = \"local\"\narch = \"any\"\n\n[system.toolchain]\nenvironment = [{names}]\n"
        )
    };
    p.write(
        "campaigns/systems.toml",
        &registry("\"PQB_SECRET_PROBE\", \"PQB_UNSET_PROBE\""),
    );
    p.write(
        "campaigns/c.toml",
        &quick_campaign(&["sign-90c"], "stages = [\"build\", \"kat\"]"),
    );
    const VALUE: &str = "pqb-passed-value-7e3a";
    let env = [("PQB_SECRET_PROBE", VALUE), ("PQB_OTHER_PROBE", "x")];
    let run = pqbench_with(&p, &["run", "c"], &env, None);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let lib = std::fs::read(p.path().join("output/c/local/lib/sign-90c/WINTER-128.so")).unwrap();
    let text = String::from_utf8_lossy(&lib);
    assert!(
        text.contains(&format!("secret={VALUE} ")),
        "the named variable did not reach the build"
    );
    // The names are on record, the value nowhere but in what the build
    // itself made of it (its objects and library).
    let campaign = p.json("output/c/local/campaign.json");
    let names = serde_json::json!(["PQB_SECRET_PROBE", "PQB_UNSET_PROBE"]);
    assert_eq!(campaign["compiler"]["environment"], names, "{campaign}");
    assert_eq!(
        campaign["system_spec"]["toolchain_environment"], names,
        "{campaign}"
    );
    for (file, bytes) in output_bytes(&p) {
        let built = bytes.starts_with(b"\x7fELF") || bytes.starts_with(b"!<arch>");
        assert!(
            built || !bytes.windows(VALUE.len()).any(|w| w == VALUE.as_bytes()),
            "{} records the value",
            file.display()
        );
    }
    // Another list is another toolchain: the build is out of date (a
    // value is no part of any key).
    let fresh = pqbench_with(&p, &["status", "c"], &[], None);
    assert!(!fresh.stdout.contains("WINTER-128"), "{}", fresh.stdout);
    p.write("campaigns/systems.toml", &registry("\"PQB_SECRET_PROBE\""));
    let status = pqbench_with(&p, &["status", "c"], &env, None);
    assert!(
        status.stdout.contains("WINTER-128") && status.stdout.contains("toolchain-environment"),
        "{}\n{}",
        status.stdout,
        status.stderr
    );
}
