//! Flag profiles beside the guide's: `o3-native`, built with what
//! `-march=native` stands for on this host, recorded where a reader looks.

use crate::common;

use common::TestProject;

#[test]
fn o3_native_is_built_with_the_resolved_host_cpu_and_says_so() {
    let p = TestProject::demo();
    p.write(
        "campaigns/native.toml",
        &common::quick_campaign(
            &["sign-92"],
            "stages = [\"build\", \"kat\", \"render\"]\nflag-profiles = [\"o3-native\"]",
        ),
    );
    let run = p.pqbench(&["-q", "run", "native"]).expect(0);
    let campaign = p.json("output/native/local/campaign.json");
    let native: Vec<String> =
        serde_json::from_value(campaign["compiler"]["native_flags"].clone()).unwrap();
    // gcc names the CPU it found, never `native`.
    let march = native
        .iter()
        .find(|f| f.starts_with("-march="))
        .unwrap_or_else(|| panic!("{native:?}"));
    assert_ne!(march, "-march=native");
    let build = p.json("output/native/local/build.json");
    for i in build["instances"].as_array().unwrap() {
        assert_eq!(i["kat_status"], "PASS", "{i}\n{}", run.stderr);
        assert_eq!(i["profile"], "o3-native", "{i}");
    }
    // The lock names the flags each library was built with: the CPU, not
    // `native`, so a cache shared with a host of another CPU misses.
    let (_, lock) = common::only_lock(&p.path().join("output/native/local"));
    for i in lock["instances"].as_array().unwrap() {
        let cflags: Vec<String> = serde_json::from_value(i["cflags"].clone()).unwrap();
        assert!(cflags.contains(&"-O3".to_string()), "{cflags:?}");
        assert!(cflags.contains(march), "{cflags:?}");
        assert!(!cflags.iter().any(|f| f.ends_with("=native")), "{cflags:?}");
    }
    let method = std::fs::read_dir(p.path().join("output/native/site"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .flat_map(|d| common::files_with_ext(&d, "md"))
        .map(|f| std::fs::read_to_string(f).unwrap())
        .find(|t| t.contains("`-march=native` was built as"))
        .expect("a page says what -march=native stood for");
    assert!(method.contains(&format!("`{march}`")), "{method}");
}
