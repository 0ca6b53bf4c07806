//! Strings from a TOML or a submission never reach the HTML unescaped.

use pqbench::records::campaign::KnownIssueInfo;
use pqbench::render::bench;

const XSS: &str = "<script>alert(1)</script>";

/// The site rendered from the synthetic dataset `s` (the folder lives as
/// long as the returned handle).
fn rendered(s: &pqbench::render::synth::Synth) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    s.write(&tmp.path().join("synthetic")).unwrap();
    let site = crate::common::render_one(tmp.path(), "synthetic");
    (tmp, site)
}

#[test]
fn hostile_strings_are_escaped() {
    let mut s = bench::bench_dataset(4);
    let a = &mut s.campaign.algorithms[0];
    a.name = XSS.into();
    a.description = format!("desc {XSS}");
    a.links
        .insert("Submission".into(), "javascript:alert(1)".into());
    a.links.insert(
        format!("key {XSS}"),
        "x <\"><img src=x onerror=alert(1)>".into(),
    );
    a.known_issues.push(KnownIssueInfo {
        labels: ".*".into(),
        action: "measure".into(),
        cause: format!("cause {XSS} | pipe"),
    });
    s.survey.as_mut().unwrap().algorithms[0].note = Some(XSS.into());
    s.campaign.system_title = Some(XSS.into());
    let (_tmp, site) = rendered(&s);

    for page in [
        "index.html",
        "survey.html",
        "synthetic/sign-0.html",
        "synthetic/summary.html",
    ] {
        let html = std::fs::read_to_string(site.join(page)).unwrap();
        assert!(!html.contains("<script"), "{page} carries a raw script tag");
        assert!(!html.contains("<img"), "{page} carries a raw img tag");
        assert!(
            !html.contains("href=\"javascript"),
            "{page} links to javascript:"
        );
    }
    let html = std::fs::read_to_string(site.join("synthetic/sign-0.html")).unwrap();
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;"),
        "escaped name shown"
    );
    let md = std::fs::read_to_string(site.join("synthetic/sign-0.md")).unwrap();
    assert!(!md.contains("<script"), "Markdown passes raw HTML through");
    assert!(md.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(md.contains("cause &lt;script&gt;alert(1)&lt;/script&gt; \\| pipe"));
    let svg = std::fs::read_to_string(site.join("synthetic/sign-0.svg")).unwrap();
    assert!(!svg.contains("<script"));
}

/// A build error quoting a hostile source shows as typed on the Markdown
/// page: no emphasis, code span or link comes alive.
#[test]
fn text_from_a_build_error_is_inert_markdown() {
    let mut s = bench::bench_dataset(4);
    let hostile = "a.c:1:2: error: #error **bold** [x](javascript:alert(1)) `code` <b>";
    let rec = &mut s.build.instances[0];
    rec.kat_status = pqbench::kat::Status::Buildfail;
    rec.kat_detail = Some(hostile.into());
    let label = rec.label.clone();
    let (_tmp, site) = rendered(&s);
    let md = std::fs::read_to_string(site.join("synthetic/sign-0.md")).unwrap();
    let line = md
        .lines()
        .find(|l| l.contains("#error"))
        .unwrap_or_else(|| panic!("the build error is on the page:\n{md}"));
    assert!(
        line.ends_with(&format!(
            "{label} BUILDFAIL: a.c:1:2: error: #error \\*\\*bold\\*\\* \\[x\\](javascript:alert(1)) \\`code\\` &lt;b&gt;"
        )),
        "{line}"
    );
    for live in ["**bold**", "[x](", "`code`", "<b>"] {
        assert!(!md.contains(live), "{live} is live on the page");
    }
}

/// A hostile description and hostile links: on the Markdown pages no image
/// loads, no `javascript:` or `data:` link comes alive, a web link shows
/// the host it goes to, and a relative value is not followed.
#[test]
fn a_hostile_description_and_links_are_inert_on_the_markdown_pages() {
    let mut s = bench::bench_dataset(4);
    let a = &mut s.campaign.algorithms[0];
    a.description = "Fast. ![beacon](http://tracker.example/p.png) \
         [official page](javascript:alert(1)) [spec](https://evil.example/x) \
         <a href=\"data:text/html,<script>alert(1)</script>\">x</a> **bold**"
        .into();
    a.links.clear();
    a.links.insert(
        "Submission".into(),
        "Official page <javascript:alert(1)>".into(),
    );
    a.links.insert(
        "Specification".into(),
        "https://good.example/spec <https://evil.example/spec>".into(),
    );
    a.links.insert("Notes".into(), "notes <../../index>".into());
    let (_tmp, site) = rendered(&s);
    let md = std::fs::read_to_string(site.join("synthetic/sign-0.md")).unwrap();
    for live in [
        "![beacon",
        "[beacon",
        "](http://tracker",
        "](javascript",
        "](https://evil.example/x)",
        "<a href",
        "**bold**",
        "](../../index",
    ] {
        // Escaped (`\]`), a character is inert.
        let unescaped = md
            .match_indices(live)
            .any(|(i, _)| i == 0 || md.as_bytes()[i - 1] != b'\\');
        assert!(!unescaped, "{live} is live on the page:\n{md}");
    }
    assert!(md.contains("!\\[beacon\\]"), "{md}");
    // The web link goes where its host says, whatever its text claims.
    assert!(
        md.contains("[https://good.example/spec](https://evil.example/spec) (evil.example)"),
        "{md}"
    );
    assert!(md.contains("- Submission: Official page\n"), "{md}");
    // Text that names no address needs no host beside it.
    assert!(!md.contains("Official page ("), "{md}");
    assert!(md.contains("- Notes: notes\n"), "{md}");
    let html = std::fs::read_to_string(site.join("synthetic/sign-0.html")).unwrap();
    assert!(!html.contains("href=\"javascript"));
    assert!(!html.contains("href=\"../../index"));
}
