//! `[matrix]`: every instance built, KAT-checked and timed under each
//! compiler × flag profile. The primary combination's figures stay the
//! pages' own; the others have datasets of their own under `matrix/`, a
//! section on each algorithm page, a summary column and method lines.

use serde_json::Value;

use crate::common::{self, measure_campaign, measure_fixture, skip, TestProject};

const MATRIX: &str =
    "[matrix]\ncompilers = [\"gcc\", \"clang\"]\nprofiles = [\"guide\", \"o3-native\"]\n";

/// The median of the trials' mean cycles of `op` of `label` in the dataset
/// `dataset` (relative to the project).
fn median(p: &TestProject, dataset: &str, label: &str, op: &str) -> f64 {
    let r = p.json(&format!("{dataset}/records/fix-80/{label}__{op}.json"));
    r["statistics"]["median_trial_cycles"]
        .as_f64()
        .unwrap_or_else(|| panic!("{dataset} {label} {op}: {r}"))
}

fn kat_status(p: &TestProject, dataset: &str, label: &str) -> String {
    let b = p.json(&format!("{dataset}/build.json"));
    b["instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["label"] == label)
        .map(|i| i["kat_status"].as_str().unwrap().to_string())
        .unwrap_or_else(|| panic!("{dataset}: no {label}"))
}

/// The fixture: VEC's sign adds two 64 KiB byte arrays in a loop gcc
/// vectorises at -O3 and not at -O2; NOCLANG does not compile under clang.
/// The `name` of every entry of a list of `campaign.json`.
fn names_in(list: &Value) -> Vec<&str> {
    let entries = list
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"));
    entries
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect()
}

fn matrix_project() -> TestProject {
    let p = TestProject::bare();
    measure_fixture(
        &p,
        "fix-80",
        &[
            ("VEC", "FIX_VECTOR = 65536, FIX_WORK = 0"),
            ("NOCLANG", "FIX_NO_CLANG = 1"),
        ],
    );
    let campaign = measure_campaign(
        &["fix-80"],
        &["build", "kat", "time", "render"],
        &[],
        MATRIX,
    );
    p.write("campaigns/m.toml", &campaign);
    p
}

#[test]
fn an_o3_vectorised_loop_is_faster_in_its_cells_and_a_clang_buildfail_stays_in_clang_columns() {
    if !skip::tools_or_skip(&["clang"], "apt-get install clang") {
        return;
    }
    let p = matrix_project();
    // The fixture has no reference KAT (NOKAT, measured by a known issue):
    // the primary's NOKAT sets the exit code, the combinations' do not.
    let run = p.pqbench(&["run", "m"]).expect(1);
    let campaign = p.json("output/m/local/campaign.json");
    let names = names_in(&campaign["matrix"]);
    assert_eq!(
        names,
        [
            "gcc.guide",
            "gcc.o3-native",
            "clang.guide",
            "clang.o3-native"
        ],
        "{}",
        run.stderr
    );
    let primary = "output/m/local";
    let sub = |c: &str| format!("output/m/local/matrix/{c}");
    // gcc: -O3 vectorises the loop, -O2 does not. clang vectorises it at
    // -O2 already. Orderings of medians within one run, not time bounds.
    let gcc_o2 = median(&p, primary, "VEC", "sign");
    let gcc_o3 = median(&p, &sub("gcc.o3-native"), "VEC", "sign");
    let clang_o2 = median(&p, &sub("clang.guide"), "VEC", "sign");
    assert!(gcc_o3 < gcc_o2, "gcc -O3 {gcc_o3} vs -O2 {gcc_o2}");
    assert!(
        clang_o2 < gcc_o2,
        "clang -O2 {clang_o2} vs gcc -O2 {gcc_o2}"
    );
    // The combination datasets record their own compiler and profile.
    let clang = p.json(&format!("{}/campaign.json", sub("clang.guide")));
    assert_eq!(clang["child"]["dimension"], "matrix");
    assert_eq!(clang["child"]["name"], "clang.guide");
    // The primary names its further datasets, in the order they ran.
    assert_eq!(names_in(&campaign["children"]), names[1..], "{campaign}");
    assert!(
        clang["compiler"]["version"]
            .as_str()
            .unwrap()
            .contains("clang"),
        "{}",
        clang["compiler"]
    );
    // NOCLANG: BUILDFAIL under clang only.
    for c in ["clang.guide", "clang.o3-native"] {
        assert_eq!(kat_status(&p, &sub(c), "NOCLANG"), "BUILDFAIL", "{c}");
    }
    assert_ne!(kat_status(&p, primary, "NOCLANG"), "BUILDFAIL");
    assert_ne!(
        kat_status(&p, &sub("gcc.o3-native"), "NOCLANG"),
        "BUILDFAIL"
    );
    assert_page(&p, gcc_o2, gcc_o3);
    assert_rerun_and_check(&p);
}

/// The algorithm page's section, the summary's column, the method lines.
fn assert_page(p: &TestProject, gcc_o2: f64, gcc_o3: f64) {
    let page = p.read("output/m/site/local/fix-80.md");
    let section = page
        .split("## Compilers and flags")
        .nth(1)
        .unwrap_or_else(|| panic!("no matrix section:\n{page}"));
    let row = |label: &str, op: &str| -> Vec<String> {
        let start = format!("| {label} | {op} |");
        let line = section
            .lines()
            .find(|l| l.starts_with(&start))
            .unwrap_or_else(|| panic!("no row {start}:\n{section}"));
        line.trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    // Timed under a known issue without a reference KAT: the figure with
    // its status.
    let noclang = row("NOCLANG", "sign");
    assert!(noclang[2].starts_with("NOKAT: "), "{noclang:?}");
    assert!(noclang[2].contains("(1.00×)"), "{noclang:?}");
    assert!(noclang[3].contains('×'), "{noclang:?}");
    assert_eq!(&noclang[4..], ["BUILDFAIL", "BUILDFAIL"], "{noclang:?}");
    let vec = row("VEC", "sign");
    let ratio = format!("({:.2}×)", gcc_o3 / gcc_o2);
    assert!(
        vec[3].ends_with(&ratio) || vec[3].contains(&format!("{ratio} ")),
        "{vec:?} {ratio}"
    );
    assert_eq!(
        vec.iter().filter(|c| c.ends_with('★')).count(),
        1,
        "{vec:?}"
    );
    let summary = p.read("output/m/site/local/summary.md");
    assert!(
        summary.contains("best combination (ratio to primary)"),
        "{summary}"
    );
    let method = p.read("output/m/site/local/method.md");
    for c in ["gcc.o3-native", "clang.guide", "clang.o3-native"] {
        assert!(method.contains(&format!("- `{c}`: ")), "{c}:\n{method}");
    }
    assert!(method.contains("`clang -c -std=c99"), "{method}");
}

/// A second run reuses every combination's results; `check` recomputes
/// every combination's records; `status` names a changed one.
fn assert_rerun_and_check(p: &TestProject) {
    let again = p.pqbench(&["run", "m", "--format", "json"]).expect(1);
    let s: Value =
        serde_json::from_str(&again.stdout).unwrap_or_else(|e| panic!("{e}: {}", again.stdout));
    assert_eq!(s["computed"], 0, "{s}");
    for c in s["children"].as_array().unwrap() {
        assert_eq!(c["dimension"], "matrix", "{c}");
        assert_eq!(c["computed"], 0, "{c}");
        assert!(c["reused"].as_u64().unwrap() > 0, "{c}");
    }
    let check = p.pqbench(&["check", "output/m"]).expect(0);
    // 2 instances × 3 operations in each of the 4 combinations, but the
    // 2 clang BUILDFAILs have no records.
    assert!(
        check.stdout.contains("18 timing records"),
        "{}",
        check.stdout
    );
    let status = p.pqbench(&["status", "m"]).expect(0);
    assert!(
        status.stdout.contains("everything is fresh"),
        "{}",
        status.stdout
    );
    // A record of a combination changed by hand is found by `check`.
    let rec = "output/m/local/matrix/clang.guide/records/fix-80/VEC__sign.json";
    let mut r = p.json(rec);
    r["statistics"]["median_trial_cycles"] = Value::from(1.0);
    p.write(rec, &serde_json::to_string_pretty(&r).unwrap());
    let check = p.pqbench(&["check", "output/m"]).expect(1);
    assert!(
        check
            .stdout
            .contains("matrix/clang.guide/records/fix-80/VEC__sign.json"),
        "{}",
        check.stdout
    );
    // ... and by `status`, as a record of that combination's last run.
    let status = p.pqbench(&["status", "m"]).expect(0);
    assert!(
        status.stdout.contains("matrix clang.guide: campaign"),
        "{}",
        status.stdout
    );
}

#[test]
fn the_first_matrix_entries_must_be_the_campaigns_own() {
    let p = TestProject::bare();
    measure_fixture(&p, "fix-81", &[("A", "FIX_WORK = 1")]);
    let tail = "[matrix]\ncompilers = [\"gcc\"]\nprofiles = [\"o3-native\", \"guide\"]\n";
    let campaign = measure_campaign(&["fix-81"], &["build"], &[], tail);
    p.write("campaigns/m.toml", &campaign);
    let out = p.pqbench(&["run", "m"]).expect(2);
    assert!(
        out.stderr.contains("the matrix's first profile is `o3-native`, the campaign's first flag profile is `guide`"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("m.toml:"), "{}", out.stderr);
    let dup = "[matrix]\ncompilers = [\"gcc\", \"gcc\"]\nprofiles = [\"guide\"]\n";
    p.write(
        "campaigns/m.toml",
        &measure_campaign(&["fix-81"], &["build"], &[], dup),
    );
    let out = p.pqbench(&["run", "m"]).expect(2);
    assert!(
        out.stderr
            .contains("`gcc` is listed twice in matrix.compilers"),
        "{}",
        out.stderr
    );
    assert!(
        !p.path().join("output/m").exists(),
        "nothing runs on a bad matrix"
    );
}

/// `reproduce` re-runs every combination and compares each with its
/// recorded run; `compare --combination` compares two combinations of one
/// run. gcc alone, so it needs no other compiler.
#[test]
fn reproduce_and_compare_cover_every_combination() {
    let p = TestProject::bare();
    measure_fixture(&p, "fix-82", &[("VEC", "FIX_VECTOR = 65536, FIX_WORK = 0")]);
    let tail = "[matrix]\ncompilers = [\"gcc\"]\nprofiles = [\"guide\", \"o3-native\"]\n";
    let campaign = measure_campaign(&["fix-82"], &["build", "kat", "time"], &[], tail);
    p.write("campaigns/r.toml", &campaign);
    p.pqbench(&["run", "r"]).expect(1); // NOKAT
    let (lock_file, lock) = common::only_lock(&p.path().join("output/r/local"));
    let run = lock["run_id"].as_str().unwrap().to_string();
    let matrix = lock["children"].as_array().unwrap();
    assert_eq!(matrix.len(), 1, "{lock}");
    assert_eq!(matrix[0]["dimension"], "matrix");
    assert_eq!(matrix[0]["name"], "gcc.o3-native");
    let combo_run = format!(
        "output/r/local/matrix/gcc.o3-native/runs/{}/lock.json",
        matrix[0]["run_id"].as_str().unwrap()
    );
    let combo_lock = p.json(&combo_run);
    let cflags: Vec<String> =
        serde_json::from_value(combo_lock["instances"][0]["cflags"].clone()).unwrap();
    assert!(cflags.contains(&"-O3".to_string()), "{cflags:?}");

    // Two combinations of one run: the same instance, another build.
    let o3_against_o2 = |format: &str| {
        p.pqbench(&[
            "compare",
            &run,
            "--combination",
            "gcc.o3-native",
            "--against",
            "gcc.guide",
            "--format",
            format,
        ])
        .expect(0)
    };
    let cmp = o3_against_o2("json");
    let cmp: Value = serde_json::from_str(&cmp.stdout).unwrap();
    let sign = cmp["operations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["instance"] == "fix-82/VEC" && o["op"] == "sign")
        .unwrap_or_else(|| panic!("{cmp}"))
        .clone();
    assert!(sign["ratio"].as_f64().unwrap() < 1.0, "{sign}");
    // A lock of version 1 named the combinations' runs `matrix`, each by
    // `combination`: it is still read.
    let kept = std::fs::read(&lock_file).unwrap();
    let mut v1 = lock.clone();
    v1["lock_version"] = 1.into();
    let old: Vec<Value> = matrix
        .iter()
        .map(|r| serde_json::json!({"combination": r["name"], "run_id": r["run_id"]}))
        .collect();
    v1.as_object_mut().unwrap().remove("children");
    v1["matrix"] = old.into();
    std::fs::write(&lock_file, serde_json::to_vec_pretty(&v1).unwrap()).unwrap();
    o3_against_o2("md");
    std::fs::write(&lock_file, kept).unwrap();
    let unknown = p
        .pqbench(&[
            "compare",
            &run,
            "--combination",
            "clang.guide",
            "--against",
            "gcc.guide",
        ])
        .expect(2);
    assert!(
        unknown.stderr.contains("has gcc.guide, gcc.o3-native"),
        "{}",
        unknown.stderr
    );

    // Timings vary between runs on a shared machine: a wide threshold
    // leaves the verdicts that must hold exactly, libraries and KATs.
    let out = p
        .pqbench(&["reproduce", &run, "--threshold", "100", "--format", "json"])
        .expect(0);
    let rep: Value = serde_json::from_str(&out.stdout).unwrap();
    let combos = rep["report"]["children"].as_array().unwrap();
    assert_eq!(combos.len(), 1, "{rep}");
    assert_eq!(combos[0]["original"], matrix[0]["run_id"]);
    for i in combos[0]["instances"].as_array().unwrap() {
        assert_eq!(i["library"], "bit-identical", "{i}");
        assert_eq!(i["kat"], "identical", "{i}");
    }
    let ops = combos[0]["timing"]["operations"].as_array().unwrap();
    assert_eq!(ops.len(), 3, "{}", combos[0]);
}
