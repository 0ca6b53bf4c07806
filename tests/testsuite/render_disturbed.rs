//! A disturbed host on the pages: an operation whose mean runs far above
//! its median, or whose trials were repeated after losing the CPU, is
//! flagged `⚠ disturbed` on its algorithm page and in the summary, the
//! method page counts them, and the chart draws each bar with its own
//! statistic's interval.

use pqbench::plan::Kind;
use pqbench::render::synth;
use pqbench::stats::Trial;

/// Five trials of 20 calls around `c` cycles, with per-call samples; with
/// `slow`, two calls of every trial take 40 times as long.
fn trials(c: u64, slow: bool) -> Vec<Trial> {
    (0..5)
        .map(|t| {
            let samples: Vec<u64> = (0..20u64)
                .map(|i| {
                    let base = c + 13 * ((i * 7 + t) % 11);
                    if slow && i % 10 == 3 {
                        base * 40
                    } else {
                        base
                    }
                })
                .collect();
            let cycles = samples.iter().sum::<u64>() as f64;
            Trial {
                calls: 20,
                seconds: cycles / 2e9,
                cycles,
                samples,
            }
        })
        .collect()
}

fn dataset(dir: &std::path::Path) {
    let mut s = crate::common::synth_local();
    let a = synth::algorithm("sign-1", "Noisy", Kind::Sign, &["N-1"]);
    s.add_instance(&a, "N-1", pqbench::kat::Status::Pass, 1000);
    s.add_operation(&a, "N-1", "keygen", trials(100_000, false), 0, None);
    s.add_operation(&a, "N-1", "sign", trials(200_000, true), 0, None);
    s.add_operation(&a, "N-1", "verify", trials(50_000, false), 0, None);
    s.records.last_mut().unwrap().repeated_trials = 2;
    s.campaign.algorithms.push(a);
    // A hash candidate (summarised in a table of its own) with one
    // disturbed message size.
    let h = synth::algorithm("hash-1", "Noisy hash", Kind::Hash, &["H-256"]);
    s.add_instance(&h, "H-256", pqbench::kat::Status::Pass, 1000);
    for bytes in [32u64, 1024, 65536] {
        let slow = bytes == 1024;
        s.add_operation(
            &h,
            "H-256",
            &format!("hash_{bytes}"),
            trials(1000 * bytes, slow),
            0,
            None,
        );
    }
    s.campaign.algorithms.push(h);
    s.write(&dir.join("local")).unwrap();
}

#[test]
fn disturbed_operations_are_flagged_and_counted() {
    let tmp = tempfile::tempdir().unwrap();
    dataset(tmp.path());
    let site = crate::common::render_one(tmp.path(), "local");
    let read = |p: &str| std::fs::read_to_string(site.join(p)).unwrap();

    let page = read("local/sign-1.md");
    let row = |op: &str| {
        page.lines()
            .find(|l| l.starts_with("| `N-1` |") && l.contains(&format!("| {op} |")))
            .unwrap_or_else(|| panic!("no {op} row in\n{page}"))
            .to_string()
    };
    assert!(
        row("sign").contains("⚠ disturbed: mean 4.9× the median"),
        "{}",
        row("sign")
    );
    assert!(
        row("verify").contains("⚠ disturbed: 2 trials repeated after losing the CPU"),
        "{}",
        row("verify")
    );
    assert!(!row("keygen").contains("disturbed"), "{}", row("keygen"));

    let summary = read("local/summary.md");
    let line = summary.lines().find(|l| l.contains("`N-1`")).unwrap();
    assert!(line.contains("⚠ disturbed: sign, verify"), "{line}");
    // The same rule in the hash table.
    let line = summary.lines().find(|l| l.contains("`H-256`")).unwrap();
    assert!(line.contains("⚠ disturbed: hash_1024"), "{line}");

    let method = read("local/method.md");
    assert!(
        method.contains("⚠ disturbed on its page and in the summary: 3 of the 6 timed operations here (2 by the mean, 1 with repeated trials)"),
        "{method}"
    );

    // The sign bar is the median, the figure to compare, and its whisker
    // the median's interval: it brackets the bar's end although the mean
    // lies far above it.
    let svg = read("local/sign-1.svg");
    let line = svg
        .lines()
        .find(|l| l.contains("<title>N-1 sign:"))
        .unwrap();
    let rect = &line[line.find("<rect").unwrap()..];
    let attr = |s: &str, name: &str| -> f64 {
        let at = s.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        s[at..at + s[at..].find('"').unwrap()].parse().unwrap()
    };
    let end = attr(rect, "x") + attr(rect, "width");
    let whiskers: Vec<&str> = svg.lines().filter(|l| l.starts_with("<path")).collect();
    let path = whiskers[1]; // keygen, sign, verify
    let d = &path[9..9 + path[9..].find('"').unwrap()];
    let lo: f64 = d[1..].split(' ').next().unwrap().parse().unwrap();
    let hi: f64 = d
        .rsplit('M')
        .next()
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(lo <= end && end <= hi, "whisker {lo}..{hi}, bar end {end}");
    assert!(svg.contains("whisker: 95 % CI of the median"));
}

/// The figure to compare leads: a small instance whose sign calls are
/// disturbed (mean 4.9× its median) has a mean above a larger, undisturbed
/// instance's; the summary's cells and its chart still order them by their
/// median, and a host that was not fixed is said in the first lines.
#[test]
fn the_summary_and_its_chart_order_instances_by_the_median() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = crate::common::synth_local();
    let a = synth::algorithm("sign-1", "Noisy", Kind::Sign, &["N-1", "N-2"]);
    for (label, sign) in [("N-1", 200_000), ("N-2", 300_000)] {
        s.add_instance(&a, label, pqbench::kat::Status::Pass, 1000);
        s.add_operation(&a, label, "keygen", trials(100_000, false), 0, None);
        s.add_operation(&a, label, "sign", trials(sign, label == "N-1"), 0, None);
        s.add_operation(&a, label, "verify", trials(50_000, false), 0, None);
    }
    s.campaign.algorithms.push(a);
    s.campaign.host_checks[0].problems = vec!["governor is powersave".into()];
    s.write(&tmp.path().join("local")).unwrap();
    let site = crate::common::render_one(tmp.path(), "local");
    let read = |p: &str| std::fs::read_to_string(site.join(p)).unwrap();

    let summary = read("local/summary.md");
    let sign_cell = |label: &str| -> String {
        let line = summary
            .lines()
            .find(|l| l.contains(&format!("`{label}`")))
            .unwrap();
        // algorithm, name, instance, keygen, sign
        line.split(" | ").nth(4).unwrap().to_string()
    };
    assert!(sign_cell("N-1").starts_with("200."), "{summary}");
    assert!(sign_cell("N-2").starts_with("300."), "{summary}");
    // Nothing was profiled: no sentence about shares no cell holds.
    assert!(!summary.contains("in parentheses"), "{summary}");
    let first_lines: Vec<&str> = summary.lines().take(8).collect();
    assert!(
        first_lines
            .iter()
            .any(|l| l.contains("not fixed (governor is powersave)")),
        "{first_lines:#?}"
    );
    let page = read("local/sign-1.md");
    assert!(page
        .lines()
        .take(12)
        .any(|l| l.contains("not fixed (governor is powersave)")));

    // The chart's bars: N-1 sign ends left of N-2 sign.
    let svg = read("local/summary-sign.svg");
    let end = |title: &str| -> f64 {
        let line = svg
            .lines()
            .find(|l| l.contains(&format!("<title>{title}:")))
            .unwrap_or_else(|| panic!("no bar {title} in\n{svg}"));
        let rect = &line[line.find("<rect").unwrap()..];
        let attr = |name: &str| -> f64 {
            let at = rect.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
            rect[at..at + rect[at..].find('"').unwrap()]
                .parse()
                .unwrap()
        };
        attr("x") + attr("width")
    };
    assert!(end("N-1 sign") < end("N-2 sign"), "{svg}");
}

/// A campaign that did not run the sizes stage: section 6 says the sizes
/// were not measured, instead of an empty table under a sentence about
/// API figures.
#[test]
fn sizes_not_measured_are_said_so() {
    let tmp = tempfile::tempdir().unwrap();
    dataset(tmp.path());
    let _ = std::fs::remove_file(tmp.path().join("local/sizes.json"));
    let site = crate::common::render_one(tmp.path(), "local");
    for page in ["local/sign-1.md", "local/sign-1.html"] {
        let text = std::fs::read_to_string(site.join(page)).unwrap();
        let six = &text[text.find("6. Transmission").expect(page)..];
        assert!(
            six.contains("Not measured on this system: its dataset holds no sizes"),
            "{page}:\n{six}"
        );
        assert!(!six.contains("API figures"), "{page}:\n{six}");
    }
}
