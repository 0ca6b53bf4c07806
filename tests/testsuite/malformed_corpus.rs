//! The malformed-input corpus (`tests/fixtures/malformed/`): every bad
//! campaign or algorithm file gives exit 2, no panic, a message naming the
//! file and a line/column (or a key), a help line, and the texts its
//! `# expect:` lines ask for. Algorithm files go through both `plan` and
//! `validate`, which must agree.

use crate::common;

use std::path::{Path, PathBuf};

use common::{repo, TestProject};

const GOOD_ALG: &str = r#"id = "sign-1"
name = "One"
kind = "sign"
api = "ngcc"
uses = ["iccs-standin"]

[ngcc]
headers = ["api.h", "drng.h"]

[[implementation]]
name = "reference"
root = "sign-1"

[[parameter-set]]
label = "ONE-1"
"#;

/// A case: the expected texts and the file's bytes without them (so line
/// numbers in the expectations count from the first line after them).
struct Case {
    name: String,
    expect: Vec<String>,
    body: Vec<u8>,
}

fn cases(kind: &str) -> Vec<Case> {
    let dir = repo().join("tests/fixtures/malformed").join(kind);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(files.len() > 20, "corpus {} is missing", dir.display());
    files.iter().map(|f| case(f)).collect()
}

fn case(file: &Path) -> Case {
    let bytes = std::fs::read(file).unwrap();
    let mut expect = Vec::new();
    let mut rest: &[u8] = &bytes;
    while let Some(line) = rest.strip_prefix(b"# expect: ") {
        let end = line.iter().position(|&b| b == b'\n').unwrap();
        expect.push(String::from_utf8(line[..end].to_vec()).unwrap());
        rest = &line[end + 1..];
    }
    let name = file.file_stem().unwrap().to_string_lossy().into_owned();
    assert!(!expect.is_empty(), "{name}: no `# expect:` line");
    Case {
        name,
        expect,
        body: rest.to_vec(),
    }
}

fn project() -> TestProject {
    let p = TestProject::bare();
    // Declares and defines the NGCC signature API, so the good file
    // validates (validate compiles and links it).
    let ull = "unsigned long long";
    let decls = [
        format!("{ull} sig_get_pk_len_bytes(void)"),
        format!("{ull} sig_get_sk_len_bytes(void)"),
        format!("{ull} sig_get_sn_len_bytes(void)"),
        format!("int sig_keygen(unsigned char *pk, {ull} *pk_len, unsigned char *sk, {ull} *sk_len)"),
        format!("int sig_sign(const unsigned char *sk, {ull} sk_len, const unsigned char *m, {ull} m_len, unsigned char *sn, {ull} *sn_len)"),
        format!("int sig_verify(const unsigned char *pk, {ull} pk_len, const unsigned char *sn, {ull} sn_len, const unsigned char *m, {ull} m_len)"),
    ];
    let api: String = decls.iter().map(|d| format!("{d};\n")).collect();
    let mut sign = String::from("#include \"api.h\"\n");
    for (i, d) in decls.iter().enumerate() {
        // The lengths return 1; the operations take their arguments unused.
        let body = if i < 3 { "return 1;" } else { "return 0;" };
        let unused: String = d
            .split(['(', ','])
            .skip(1)
            .filter(|p| !p.contains("void"))
            .map(|p| {
                p.trim()
                    .trim_end_matches(')')
                    .rsplit(['*', ' '])
                    .next()
                    .unwrap_or("")
                    .to_string()
            })
            .map(|n| format!("(void){n}; "))
            .collect();
        sign.push_str(&format!("{d} {{ {unused}{body} }}\n"));
    }
    p.write("algorithms/sign-1/sign.c", &sign);
    p.write("algorithms/sign-1/api.h", &api);
    p.write("algorithms/sign-1.toml", GOOD_ALG);
    p.write("campaigns/c.toml", "algorithms = [\"sign-1\"]\n");
    p
}

/// Checks one failing run's message; returns what is wrong with it.
fn judge(case: &Case, target: &str, code: i32, message: &str) -> Option<String> {
    let located = regex::Regex::new(&format!(r"{}:\d+:\d+", regex::escape(target))).unwrap();
    let mut wrong = Vec::new();
    if code != 2 {
        wrong.push(format!("exit {code}, wanted 2"));
    }
    if message.contains("panicked") {
        wrong.push("panicked".into());
    }
    if !message.contains(target) {
        wrong.push(format!("does not name {target}"));
    }
    // A position, or (for a problem of the whole file) the key in question.
    if !located.is_match(message) && !message.contains('`') {
        wrong.push("names neither a line/column nor a key".into());
    }
    if !message.contains("= help: ") {
        wrong.push("has no help line".into());
    }
    for e in &case.expect {
        if !message.contains(e.as_str()) {
            wrong.push(format!("lacks {e:?}"));
        }
    }
    (!wrong.is_empty()).then(|| format!("{}: {}\n{message}", case.name, wrong.join("; ")))
}

#[test]
fn every_malformed_campaign_is_refused_with_a_located_message() {
    let p = project();
    p.pqbench(&["plan", "c"]).expect(0);
    let mut failures = Vec::new();
    for case in cases("campaign") {
        std::fs::write(p.path().join("campaigns/c.toml"), &case.body).unwrap();
        let run = p.pqbench(&["plan", "c"]);
        failures.extend(judge(&case, "campaigns/c.toml", run.code, &run.stderr));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_malformed_algorithm_is_refused_by_plan_and_validate_alike() {
    let p = project();
    p.pqbench(&["validate", "algorithms/sign-1.toml"]).expect(0);
    let mut failures = Vec::new();
    for case in cases("algorithm") {
        std::fs::write(p.path().join("algorithms/sign-1.toml"), &case.body).unwrap();
        let plan = p.pqbench(&["plan", "c"]);
        failures.extend(judge(
            &case,
            "algorithms/sign-1.toml",
            plan.code,
            &plan.stderr,
        ));
        // A relative path is taken from the project directory (-C).
        let validate = p.pqbench(&["validate", "algorithms/sign-1.toml"]);
        let shown = format!("{}{}", validate.stdout, validate.stderr);
        failures.extend(judge(
            &case,
            "algorithms/sign-1.toml",
            validate.code,
            &shown,
        ));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn campaign_names_from_the_command_line_are_names() {
    let p = project();
    p.without_support_tools();
    for name in ["../../name", "..", "/tmp/x", "a|b", ".hidden"] {
        for cmd in ["run", "plan", "status"] {
            let run = p.pqbench(&[cmd, name]);
            assert_eq!(run.code, 2, "{cmd} {name}\n{}", run.stderr);
            assert!(
                run.stderr.contains(&format!("campaign name `{name}`")),
                "{cmd} {name}\n{}",
                run.stderr
            );
            assert!(run.stderr.contains("= help: "), "{}", run.stderr);
        }
    }
    assert!(!p.path().join("output").exists(), "nothing may be written");
}

#[test]
fn a_system_name_never_writes_outside_output() {
    let p = project();
    p.without_support_tools();
    for system in ["../escape", "/tmp/pqbench-escape", "x|y"] {
        p.write(
            "campaigns/c.toml",
            &format!("algorithms = [\"sign-1\"]\nsystem = \"{system}\"\n"),
        );
        let run = p.pqbench(&["run", "c"]);
        assert_eq!(run.code, 2, "{system}\n{}", run.stderr);
        assert!(
            run.stderr.contains("campaigns/c.toml:2:10"),
            "{}",
            run.stderr
        );
    }
    assert!(!p.path().join("escape").exists());
    assert!(!p.path().join("output").exists(), "nothing ran");
}

#[test]
fn an_output_directory_reached_through_a_link_is_refused() {
    let p = project();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(p.path().join("output")).unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), p.path().join("output/c")).unwrap();
    let run = p.pqbench(&["plan", "c"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("is not inside output/"),
        "{}",
        run.stderr
    );
}

#[test]
fn validate_takes_a_relative_path_from_the_project_directory() {
    let p = project();
    // From another working directory, -C decides.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pqbench"))
        .current_dir(std::env::temp_dir())
        .arg("-C")
        .arg(p.path())
        .args(["validate", "algorithms/sign-1.toml"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("sign-1.toml: OK"), "{stdout}");
    let missing = p.pqbench(&["validate", "algorithms/nope.toml"]);
    assert_eq!(missing.code, 2, "{}", missing.stderr);
    assert!(
        missing
            .stderr
            .contains("relative path is taken from the project directory"),
        "{}",
        missing.stderr
    );
}
