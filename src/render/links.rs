//! Link checking of a rendered HTML site: every relative `href`/`src`
//! must name an existing file, and a `#fragment` into an HTML page must
//! name an `id` in it.

use std::path::Path;

use regex::Regex;

/// HTML attribute values are escaped by the templates; undo the few
/// escapes a path can contain.
fn unescape(s: &str) -> String {
    s.replace("&#x2f;", "/")
        .replace("&#47;", "/")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// Links that leave the site by design: a scheme, protocol-relative or
/// in-page only.
fn external(href: &str) -> bool {
    href.is_empty()
        || href.starts_with("//")
        || href
            .split_once(':')
            .is_some_and(|(scheme, _)| !scheme.contains(['/', '#', '?']))
}

/// Returns every broken relative link under `site_dir` as
/// `<page>: <href> (<why>)`, pages in sorted order.
pub fn check_links(site_dir: &Path) -> Vec<String> {
    let attr = Regex::new(r#"(?:href|src)="([^"]*)""#).expect("fixed regex");
    let ids = Regex::new(r#"\sid="([^"]*)""#).expect("fixed regex");
    let pages = match super::site_files(site_dir) {
        Ok(p) => p,
        Err(e) => return vec![format!("{}: {e:#}", site_dir.display())],
    };
    let mut broken = Vec::new();
    for page in pages.iter().filter(|p| p.ends_with(".html")) {
        let path = site_dir.join(page);
        let Ok(text) = std::fs::read_to_string(&path) else {
            broken.push(format!("{page}: unreadable"));
            continue;
        };
        let dir = path.parent().unwrap_or(site_dir);
        for cap in attr.captures_iter(&text) {
            let href = unescape(&cap[1]);
            if external(&href) {
                continue;
            }
            let (target, fragment) = match href.split_once('#') {
                Some((t, f)) => (t, Some(f)),
                None => (href.as_str(), None),
            };
            let target = target.split('?').next().unwrap_or_default();
            let file = if target.is_empty() {
                path.clone()
            } else {
                dir.join(target)
            };
            if !file.is_file() {
                broken.push(format!("{page}: {href} (no such file)"));
                continue;
            }
            let Some(fragment) = fragment.filter(|f| !f.is_empty()) else {
                continue;
            };
            if file.extension().is_some_and(|e| e == "html") {
                let body = std::fs::read_to_string(&file).unwrap_or_default();
                if !ids
                    .captures_iter(&body)
                    .any(|c| unescape(&c[1]) == fragment)
                {
                    broken.push(format!("{page}: {href} (no id `{fragment}`)"));
                }
            }
        }
    }
    broken
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_missing_files_and_fragments() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("s")).unwrap();
        std::fs::write(d.path().join("index.html"), r##"<p id="top"><a href="s/a.html#x">a</a> <a href="https://e.org">e</a> <a href="#top">t</a> <a href="gone.html">g</a></p>"##).unwrap();
        std::fs::write(
            d.path().join("s/a.html"),
            r##"<h2 id="y">y</h2><a href="../index.html#top">i</a>"##,
        )
        .unwrap();
        let b = check_links(d.path());
        assert_eq!(
            b,
            vec![
                "index.html: s/a.html#x (no id `x`)".to_string(),
                "index.html: gone.html (no such file)".to_string()
            ]
        );
    }
}
