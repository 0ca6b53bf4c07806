//! Hand-written SVG charts: mean cycles per operation on a log scale, one
//! bar per (instance, operation), with the bootstrap 95 % interval of the
//! median drawn as a whisker. Plain SVG 1.1, no scripts, no external
//! assets; every coordinate is printed with one decimal so output is
//! byte-for-byte reproducible.

use std::fmt::Write;

use crate::format;

/// One bar.
#[derive(Debug, Clone)]
pub struct Bar {
    pub label: String,
    pub value: f64,
    pub low: f64,
    pub high: f64,
    /// Index into the series names (colour and legend).
    pub series: usize,
}

const WIDTH: f64 = 760.0;
const LEFT: f64 = 230.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 44.0;
const ROW: f64 = 18.0;
const BOTTOM: f64 = 34.0;
/// Colour-blind-safe hues (Okabe–Ito), readable in greyscale print too.
const COLOURS: [&str; 4] = ["#0072b2", "#e69f00", "#009e73", "#cc79a7"];

pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Decades spanned by the finite positive values, at least one.
fn decades(bars: &[Bar]) -> (i32, i32) {
    let vals = bars
        .iter()
        .flat_map(|b| [b.value, b.low, b.high])
        .filter(|v| v.is_finite() && *v > 0.0);
    let (lo, hi) = vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !lo.is_finite() {
        return (0, 1);
    }
    // Start at least half a decade below the smallest value, so a bar just
    // above a power of ten still has a visible length.
    let (a, b) = ((lo.log10() - 0.5).floor() as i32, hi.log10().ceil() as i32);
    (a, b.max(a + 1))
}

/// The chart as a standalone SVG document (also valid inline in HTML).
pub fn svg(title: &str, series: &[&str], bars: &[Bar]) -> String {
    let (d0, d1) = decades(bars);
    let plot_w = WIDTH - LEFT - RIGHT;
    let x = |v: f64| {
        let v = if v.is_finite() && v > 0.0 {
            v
        } else {
            10f64.powi(d0)
        };
        let t = (v.log10() - f64::from(d0)) / f64::from(d1 - d0);
        LEFT + plot_w * t.clamp(0.0, 1.0)
    };
    let height = TOP + ROW * bars.len().max(1) as f64 + BOTTOM;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH:.0}\" height=\"{height:.0}\" \
         viewBox=\"0 0 {WIDTH:.0} {height:.0}\" role=\"img\" font-family=\"sans-serif\" font-size=\"11\">\n\
         <title>{}</title>\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n\
         <text x=\"{LEFT:.0}\" y=\"16\" font-size=\"13\">{} (log scale; whisker: 95 % CI of the median)</text>\n",
        escape(title),
        escape(title),
    );
    let mut lx = LEFT;
    for (i, name) in series.iter().enumerate() {
        let _ = writeln!(
            s,
            "<rect x=\"{lx:.1}\" y=\"24\" width=\"10\" height=\"10\" fill=\"{}\"/>\
             <text x=\"{:.1}\" y=\"33\">{}</text>",
            COLOURS[i % COLOURS.len()],
            lx + 14.0,
            escape(name)
        );
        lx += 24.0 + 7.0 * name.chars().count() as f64;
    }
    let axis_y = TOP + ROW * bars.len().max(1) as f64;
    for d in d0..=d1 {
        let gx = x(10f64.powi(d));
        let _ = writeln!(
            s,
            "<line x1=\"{gx:.1}\" y1=\"{TOP:.1}\" x2=\"{gx:.1}\" y2=\"{axis_y:.1}\" stroke=\"#ccc\"/>\
             <text x=\"{gx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            axis_y + 14.0,
            escape(&format::cycles(10f64.powi(d)))
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">mean cycles per operation</text>",
        LEFT + plot_w / 2.0,
        axis_y + 28.0
    );
    for (i, b) in bars.iter().enumerate() {
        let y = TOP + ROW * i as f64;
        let colour = COLOURS[b.series % COLOURS.len()];
        let (x0, xv) = (LEFT, x(b.value));
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\
             <rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{colour}\">\
             <title>{}: {}</title></rect>",
            LEFT - 6.0,
            y + ROW * 0.7,
            escape(&b.label),
            y + 3.0,
            (xv - x0).max(0.5),
            ROW - 6.0,
            escape(&b.label),
            escape(&format::cycles(b.value)),
        );
        if b.low.is_finite() && b.high.is_finite() && b.high >= b.low {
            let (wl, wh, wy) = (x(b.low), x(b.high), y + ROW / 2.0);
            let _ = writeln!(
                s,
                "<path d=\"M{wl:.1} {:.1}V{:.1}M{wl:.1} {wy:.1}H{wh:.1}M{wh:.1} {:.1}V{:.1}\" \
                 stroke=\"#000\" fill=\"none\"/>",
                wy - 4.0,
                wy + 4.0,
                wy - 4.0,
                wy + 4.0
            );
        }
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_escaped_and_scale_spans_decades() {
        let bars = [Bar {
            label: "<b>&".into(),
            value: 8.65e6,
            low: 8.6e6,
            high: 8.7e6,
            series: 0,
        }];
        let s = svg("t", &["keygen"], &bars);
        assert!(s.contains("&lt;b&gt;&amp;") && !s.contains("<b>"));
        assert_eq!(decades(&bars), (6, 7));
        assert_eq!(decades(&[]), (0, 1));
        assert_eq!(svg("t", &["keygen"], &bars), s, "deterministic");
    }
}
