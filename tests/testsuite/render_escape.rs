//! Strings from a TOML or a submission never reach the HTML unescaped.

use pqbench::records::campaign::KnownIssueInfo;
use pqbench::render::bench;

const XSS: &str = "<script>alert(1)</script>";

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
    let tmp = tempfile::tempdir().unwrap();
    s.write(&tmp.path().join("synthetic")).unwrap();
    let site = tmp.path().join("site");
    pqbench::render::render_dataset_dirs(&[tmp.path().join("synthetic")], &site, None).unwrap();

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
