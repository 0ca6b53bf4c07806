//! Malformed input gives one clear error naming the file, the line/column or
//! key, and what to do — never a panic, and nothing runs.

use crate::common;
use common::TestProject;

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

const GOOD_CAMPAIGN: &str = "algorithms = [\"sign-1\"]\n";

/// A project whose algorithm and campaign texts are given.
fn project(alg: &str, campaign: &str) -> TestProject {
    let p = TestProject::bare();
    p.write("algorithms/sign-1/sign.c", "int x;\n");
    p.write("algorithms/sign-1.toml", alg);
    p.write("campaigns/c.toml", campaign);
    p
}

/// Runs `plan c` and returns the error text, checking the exit code.
fn error_of(p: &TestProject) -> String {
    let run = p.pqbench(&["plan", "c"]);
    assert_eq!(
        run.code, 2,
        "expected a bad-input exit\n{}\n{}",
        run.stdout, run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
    run.stderr
}

fn expect(alg: &str, campaign: &str, wanted: &[&str]) {
    let p = project(alg, campaign);
    let err = error_of(&p);
    for w in wanted {
        assert!(err.contains(w), "missing {w:?} in:\n{err}");
    }
}

#[test]
fn a_good_project_plans() {
    let p = project(GOOD_ALG, GOOD_CAMPAIGN);
    let run = p.pqbench(&["plan", "c"]).expect(0);
    assert!(run.stdout.contains("sign-1/ONE-1"), "{}", run.stdout);
}

#[test]
fn toml_syntax_error_points_at_the_line() {
    expect(
        GOOD_ALG,
        "algorithms = [\"sign-1\"\nsystem = 3\n",
        &["TOML syntax error", "campaigns/c.toml:", "help:"],
    );
}

#[test]
fn unknown_key_is_named_with_alternatives() {
    let alg = GOOD_ALG.replace("root = \"sign-1\"", "root = \"sign-1\"\nsourcs = [\"*.c\"]");
    expect(
        &alg,
        GOOD_CAMPAIGN,
        &["unknown key `sourcs`", "sign-1.toml:13:1", "sources"],
    );
}

#[test]
fn wrong_type_is_reported() {
    let alg = GOOD_ALG.replace("name = \"One\"", "name = 3");
    expect(
        &alg,
        GOOD_CAMPAIGN,
        &[
            "`name` wants a string, found an integer",
            "sign-1.toml:2:8",
            "help: change the value to a string",
        ],
    );
}

#[test]
fn unknown_kind_lists_the_choices() {
    let alg = GOOD_ALG.replace("kind = \"sign\"", "kind = \"xof\"");
    expect(
        &alg,
        GOOD_CAMPAIGN,
        &[
            "`kind` wants one of `sign`, `kem`, `kex`, `hash`, found `xof`",
            "sign-1.toml:3:8",
            "help: use one of: sign, kem, kex, hash",
        ],
    );
}

#[test]
fn missing_key_is_named() {
    let alg = GOOD_ALG.replace("name = \"One\"\n", "");
    expect(&alg, GOOD_CAMPAIGN, &["missing key `name`", "sign-1.toml"]);
}

#[test]
fn missing_source_file_is_named() {
    let alg = GOOD_ALG.replace(
        "root = \"sign-1\"",
        "root = \"sign-1\"\nsources = [\"nope.c\"]",
    );
    expect(
        &alg,
        GOOD_CAMPAIGN,
        &["`nope.c` matches no file", "sign-1.toml:13:12", "help:"],
    );
}

#[test]
fn paths_may_not_leave_the_algorithm_root() {
    let alg = GOOD_ALG.replace("root = \"sign-1\"", "root = \"../../etc\"");
    expect(
        &alg,
        GOOD_CAMPAIGN,
        &[
            "points outside",
            "sign-1.toml:12:8",
            "inside the algorithms directory",
        ],
    );
    let alg = GOOD_ALG.replace(
        "root = \"sign-1\"",
        "root = \"sign-1\"\nsources = [\"../../x.c\"]",
    );
    expect(&alg, GOOD_CAMPAIGN, &["points outside", "sign-1.toml:13:"]);
}

#[test]
fn unknown_algorithm_in_a_campaign_lists_the_known_ones() {
    expect(
        GOOD_ALG,
        "algorithms = [\"sign-1\", \"sign-99\"]\n",
        &[
            "unknown algorithm `sign-99`",
            "campaigns/c.toml:1:25",
            "add algorithms/sign-99.toml or use one of: sign-1",
        ],
    );
}

#[test]
fn duplicate_labels_are_refused() {
    let alg = format!("{GOOD_ALG}\n[[parameter-set]]\nlabel = \"ONE-1\"\n");
    expect(
        &alg,
        GOOD_CAMPAIGN,
        &["duplicate label `ONE-1`", "sign-1.toml:18:9"],
    );
}

#[test]
fn unknown_campaign_lists_campaigns() {
    let p = project(GOOD_ALG, GOOD_CAMPAIGN);
    // The system registry beside the campaigns is not one of them.
    p.write("campaigns/systems.toml", "");
    let run = p.pqbench(&["run", "nosuch"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("no campaign named `nosuch`"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("use one of: c\n"), "{}", run.stderr);
}

#[test]
fn unknown_flag_profile_stage_and_component() {
    expect(
        GOOD_ALG,
        "algorithms = [\"sign-1\"]\nflag-profiles = [\"fast\"]\n",
        &[
            "unknown flag profile `fast`",
            "c.toml:2:18",
            "[flag-profile.<name>]",
        ],
    );
    expect(
        GOOD_ALG,
        "algorithms = [\"sign-1\"]\nstages = [\"bild\"]\n",
        &["unknown stage `bild`", "c.toml:2:11"],
    );
    let alg = GOOD_ALG.replace("uses = [\"iccs-standin\"]", "uses = [\"iccs\"]");
    expect(
        &alg,
        GOOD_CAMPAIGN,
        &[
            "unknown component `iccs`",
            "sign-1.toml:5:9",
            "iccs-standin",
        ],
    );
}

#[test]
fn stage_tables_are_checked_by_plan_and_status_before_any_run() {
    let campaign = "algorithms = [\"sign-1\"]\n\n[stage.nope]\nx = 1\n";
    expect(
        GOOD_ALG,
        campaign,
        &[
            "[stage.nope]",
            "no stage `nope` takes settings",
            "c.toml:3:1",
        ],
    );
    let p = project(GOOD_ALG, campaign);
    let run = p.pqbench(&["status", "c"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("c.toml:3:1"), "{}", run.stderr);
    let run = p.pqbench(&["plan", "c", "--nodes", "2", "--cores", "1"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let campaign = "algorithms = [\"sign-1\"]\n[stage.build]\nx = 1\n";
    expect(GOOD_ALG, campaign, &["takes no settings (found `x`)"]);
}

#[test]
fn the_count_and_ct_tables_are_read_by_their_stages_even_when_they_do_not_run() {
    // Neither stage is in the campaign's `stages`: the tables are still
    // checked, by the stage's own settings type.
    let campaign = "algorithms = [\"sign-1\"]\n\n[count]\ncalss = 2\n";
    expect(
        GOOD_ALG,
        campaign,
        &["[count] `calss`: unknown field `calss`", "c.toml:4:1"],
    );
    let campaign = "algorithms = [\"sign-1\"]\n\n[ct]\ncalls = 0\n";
    expect(
        GOOD_ALG,
        campaign,
        &[
            "[ct] `calls`: invalid value",
            "expected an integer ≥ 1",
            "c.toml:4:1",
        ],
    );
    // The key at fault is found among others: its table alone fails.
    let campaign =
        "algorithms = [\"sign-1\"]\n\n[count]\ncalls = 2\nmethod = \"papi\"\nwarmup = 0\n";
    expect(
        GOOD_ALG,
        campaign,
        &["[count] `method`: unknown variant `papi`", "c.toml:5:1"],
    );
    // The stage's table has one name.
    let campaign = "algorithms = [\"sign-1\"]\n\n[stage.count]\ncalls = 2\n";
    expect(
        GOOD_ALG,
        campaign,
        &[
            "the `count` stage's settings are the [count] table",
            "rename [stage.count] to [count]",
            "c.toml:3:1",
        ],
    );
    let campaign = "algorithms = [\"sign-1\"]\n\n[count]\ncalls = 2\nmethod = \"callgrind\"\n\n[ct]\ntimeout-seconds = 30\n";
    let p = project(GOOD_ALG, campaign);
    p.pqbench(&["plan", "c"]).expect(0);
}

#[test]
fn id_must_match_the_file_name_and_patterns_must_compile() {
    let alg = GOOD_ALG.replace("id = \"sign-1\"", "id = \"sign-2\"");
    expect(
        &alg,
        GOOD_CAMPAIGN,
        &["does not match the file name", "sign-1.toml:1:6"],
    );
    let alg = format!(
        "{GOOD_ALG}\n[[known-issue]]\nlabels = \"ONE-(\"\naction = \"measure\"\ncause = \"x\"\n"
    );
    expect(
        &alg,
        GOOD_CAMPAIGN,
        &["bad label pattern", "sign-1.toml:18:10"],
    );
}

#[test]
fn a_bad_manifest_line_is_located() {
    let p = project(GOOD_ALG, GOOD_CAMPAIGN);
    p.write(
        "kat/sign-1/kat.sha256",
        "# ok\nabc strict ONE-1/KAT_SIG.txt\n",
    );
    let err = error_of(&p);
    assert!(
        err.contains("bad manifest line: the first field must be 64 hex digits"),
        "{err}"
    );
    assert!(err.contains("kat/sign-1/kat.sha256:2:1"), "{err}");
}

#[test]
fn every_problem_of_a_campaign_and_its_algorithms_is_listed_at_once() {
    let p = project(
        &GOOD_ALG.replace("root = \"sign-1\"", "root = \"gone\""),
        "algorithms = [\"sign-1\", \"sign-2\", \"sign-99\"]\nstages = [\"bild\"]\n[timing]\nmin-iterations = 9\nmax-iterations = 5\n",
    );
    p.write(
        "algorithms/sign-2.toml",
        &GOOD_ALG
            .replace("sign-1\"\nname", "sign-2\"\nname")
            .replace("label = \"ONE-1\"", "label = \"ONE|1\"\ncolour = 1"),
    );
    let err = error_of(&p);
    for want in [
        "unknown stage `bild`",
        "campaigns/c.toml:2:11",
        "`min-iterations` (9) is more than `max-iterations` (5)",
        "unknown algorithm `sign-99`",
        "source root algorithms/gone not found",
        "algorithms/sign-1.toml:12:8",
        "unknown key `colour` in [[parameter-set]]",
        "algorithms/sign-2.toml:16:1",
        "label `ONE|1` has characters unsafe in file names (|)",
        "algorithms/sign-2.toml:15:9",
    ] {
        assert!(err.contains(want), "missing {want:?} in:\n{err}");
    }
}

#[test]
fn a_wrong_value_is_reported_once_without_follow_on_errors() {
    let alg = GOOD_ALG.replace("name = \"One\"", "name = 3");
    let p = project(&alg, GOOD_CAMPAIGN);
    let err = error_of(&p);
    assert_eq!(err.matches("--> ").count(), 1, "{err}");
    assert!(!err.contains("missing key"), "{err}");
}

#[test]
fn an_executor_value_that_would_be_an_option_is_refused_before_anything_runs() {
    for (key, value) in [
        ("host", "-oProxyCommand=touch /tmp/pqb-pwned"),
        ("host", "a b"),
        ("work-dir", "-rf"),
    ] {
        let p = project(
            GOOD_ALG,
            "algorithms = [\"sign-1\"]\nsystems = [\"x86_9\"]\n",
        );
        let other = if key == "host" {
            "work-dir = \"/w\""
        } else {
            "host = \"h\""
        };
        p.write(
            "campaigns/systems.toml",
            &format!(
                "[[system]]\nid = \"x86_9\"\narch = \"x86_64\"\n\n[system.executor]\nkind = \"ssh\"\n{key} = \"{value}\"\n{other}\n"
            ),
        );
        let run = p.pqbench(&["run", "c"]);
        assert_eq!(run.code, 2, "{key}: {}\n{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains(&format!("executor.{key}")) && run.stderr.contains("systems.toml"),
            "{}",
            run.stderr
        );
        assert!(run.stderr.contains("leading `-`"), "{}", run.stderr);
        assert!(!p.path().join("output/c").exists());
    }
}

#[test]
fn an_assembler_naming_no_program_is_refused_at_its_line() {
    let p = project(
        GOOD_ALG,
        "algorithms = [\"sign-1\"]\nsystems = [\"x86_9\"]\n",
    );
    p.write(
        "campaigns/systems.toml",
        "[[system]]\nid = \"x86_9\"\narch = \"x86_64\"\n\n[system.toolchain]\nassembler = []\n",
    );
    let run = p.pqbench(&["run", "c"]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("toolchain.assembler names no program")
            && run.stderr.contains("systems.toml:6"),
        "{}",
        run.stderr
    );
    assert!(!p.path().join("output/c").exists());
}

#[test]
fn a_toolchain_variable_that_would_undo_the_confinement_or_is_no_name_is_refused_at_its_line() {
    // The second name, on line 8, is the wrong one.
    for (name, wanted) in [
        ("LD_PRELOAD", "load code of its choosing"),
        ("SSH_AUTH_SOCK", "socket"),
        ("PATH", "set by pqbench"),
        ("CCACHE-DIR", "is not a variable name"),
        ("CCACHE_DISABLE", "twice"),
    ] {
        let p = project(
            GOOD_ALG,
            "algorithms = [\"sign-1\"]\nsystems = [\"x86_9\"]\n",
        );
        p.write(
            "campaigns/systems.toml",
            &format!(
                "[[system]]\nid = \"x86_9\"\narch = \"x86_64\"\n\n[system.toolchain]\nenvironment = [\n  \"CCACHE_DISABLE\",\n  \"{name}\",\n]\n"
            ),
        );
        let run = p.pqbench(&["run", "c"]);
        assert_eq!(run.code, 2, "{name}: {}\n{}", run.stdout, run.stderr);
        let err = &run.stderr;
        assert!(!err.contains("panicked"), "{err}");
        let fix = if wanted == "twice" {
            format!("= help: keep one `{name}`")
        } else {
            format!("= help: remove `{name}` from toolchain.environment of system x86_9")
        };
        assert!(
            err.contains(&format!("toolchain.environment names `{name}`"))
                && err.contains(wanted)
                && err.contains("systems.toml:8")
                && err.contains(&fix),
            "{name}: {err}"
        );
        assert_eq!(err.matches("--> ").count(), 1, "{err}");
        assert!(!p.path().join("output/c").exists());
    }
}

#[test]
fn too_many_jobs_and_a_cpu_this_host_lacks_are_refused_with_their_range() {
    let p = project(
        GOOD_ALG,
        "algorithms = [\"sign-1\"]\njobs = 9223372036854775807\n",
    );
    let run = p.pqbench(&["run", "c"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("jobs = 9223372036854775807 is out of range: 0 (one per core) to"),
        "{}",
        run.stderr
    );
    let run = p.pqbench(&["run", "c", "--jobs", "100000"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("--jobs = 100000 is out of range"),
        "{}",
        run.stderr
    );

    let p = project(GOOD_ALG, GOOD_CAMPAIGN);
    let beyond = pqbench::host::allowed_cpus().last().copied().unwrap_or(0) + 1;
    let run = p.pqbench(&["run", "c", "--cpu", &beyond.to_string()]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains(&format!("CPU {beyond} is not one this process may run on")),
        "{}",
        run.stderr
    );
    assert!(!p.path().join("output/c/local/build.json").exists());
}

#[test]
fn merge_refuses_a_dataset_holding_a_link_and_copies_nothing() {
    let p = project(GOOD_ALG, GOOD_CAMPAIGN);
    let home = tempfile::tempdir().unwrap();
    let secret = home.path().join("secret");
    std::fs::write(&secret, "the evaluator's private bytes").unwrap();
    p.write("foreign/campaign.json", "{}");
    p.write("foreign/records/a/x.json", "{}");
    std::fs::create_dir_all(p.path().join("foreign/kat")).unwrap();
    std::os::unix::fs::symlink(home.path(), p.path().join("foreign/kat/x")).unwrap();
    let run = p.pqbench(&["merge", "c", "foreign"]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("foreign/kat/x is a symbolic link"),
        "{}",
        run.stderr
    );
    // Nothing of the secret anywhere under output/.
    let out = p.path().join("output");
    for f in common::all_files(&out) {
        let bytes = std::fs::read(&f).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains("private bytes"),
            "{}",
            f.display()
        );
    }
    assert_eq!(
        std::fs::read_to_string(&secret).unwrap(),
        "the evaluator's private bytes"
    );
}

#[test]
fn check_refuses_a_dataset_holding_a_link_and_reads_nothing_through_it() {
    let p = project(GOOD_ALG, GOOD_CAMPAIGN);
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("secret"), "private").unwrap();
    p.write("foreign/data/x86_1/campaign.json", "{}");
    std::os::unix::fs::symlink(
        home.path().join("secret"),
        p.path().join("foreign/data/x86_1/build.json"),
    )
    .unwrap();
    let run = p.pqbench(&["check", "foreign"]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("foreign/data/x86_1/build.json is a symbolic link"),
        "{}",
        run.stderr
    );
    assert!(!run.stdout.contains("private") && !run.stderr.contains("private"));
}

#[test]
fn merge_refuses_an_oversized_file_before_reading_it() {
    let p = project(GOOD_ALG, GOOD_CAMPAIGN);
    p.write("foreign/campaign.json", "{}");
    // Sparse: 2 GiB long, no disk used; read whole it would take 2 GiB.
    let big = p.path().join("foreign/records/a/notes.bin");
    std::fs::create_dir_all(big.parent().unwrap()).unwrap();
    std::fs::File::create(&big)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    let run = p.pqbench(&["merge", "c", "foreign"]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("foreign/records/a/notes.bin has 2147483648 bytes, more than the 1073741824"),
        "{}",
        run.stderr
    );
    assert!(!p.path().join("output/c/local").exists());
}

#[test]
fn a_flag_that_escapes_the_build_is_refused_at_its_line_in_a_campaign_profile() {
    let p = project(
        GOOD_ALG,
        "algorithms = [\"sign-1\"]\nflag-profiles = [\"mine\"]\n\n[flag-profile.mine]\ncflags = [\"-O2\",\n  \"-fplugin=/tmp/evil.so\"]\nldflags = [\"-Wl,-Map=/tmp/out.map\"]\n",
    );
    let err = error_of(&p);
    assert!(
        err.contains(
            "flag `-fplugin=/tmp/evil.so` is refused: it loads a plugin into the compiler"
        ) && err.contains("c.toml:6"),
        "{err}"
    );
    assert!(
        err.contains("flag `-Wl,-Map=/tmp/out.map` is refused") && err.contains("c.toml:7"),
        "{err}"
    );
}

#[test]
fn a_refused_submitter_flag_and_a_submitter_only_campaign_without_flags_are_named() {
    let alg = GOOD_ALG.replace(
        "root = \"sign-1\"\n",
        "root = \"sign-1\"\nsubmitter-cflags = [\"-O3\", \"-save-temps\"]\n",
    );
    let p = project(
        &alg,
        "algorithms = [\"sign-1\"]\nflag-profiles = [\"submitter\"]\n",
    );
    let err = error_of(&p);
    assert!(
        err.contains("flag `-save-temps` is refused: it writes intermediate files")
            && err.contains("sign-1.toml:13:28"),
        "{err}"
    );
    let p = project(
        GOOD_ALG,
        "algorithms = [\"sign-1\"]\nflag-profiles = [\"submitter\"]\n",
    );
    let err = error_of(&p);
    assert!(
        err.contains("`submitter` is the only flag profile, and these implementations declare no `submitter-cflags`: sign-1/reference")
            && err.contains("c.toml:2"),
        "{err}"
    );
}

#[test]
fn a_folder_that_is_no_project_is_named_as_such_and_an_empty_one_lists_no_campaigns() {
    let empty = tempfile::tempdir().unwrap();
    let p = TestProject::bare();
    for (args, wants) in [
        (
            vec!["-C", empty.path().to_str().unwrap(), "run", "demo"],
            vec![
                "is not a pqbench project: it has no campaigns/ folder",
                "pass -C <project>",
            ],
        ),
        (
            vec!["-C", p.path().to_str().unwrap(), "status", "demo"],
            vec!["no campaign named `demo`", "campaigns/ holds none yet"],
        ),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_pqbench"))
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        for w in wants {
            assert!(err.contains(w), "{w}: {err}");
        }
        assert!(!err.contains("use one of: \n"), "{err}");
    }
}
