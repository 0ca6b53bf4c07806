//! Hand-written SVG charts: one statistic of the cycles per operation on a
//! log scale, one bar per (instance, operation), with that same
//! statistic's bootstrap 95 % interval drawn as the whisker (the mean with
//! the mean's interval, the median with the median's), never a mix: a
//! whisker far from its bar's end then means a wide interval, not another
//! statistic. Plain SVG 1.1, no scripts, no external
//! assets; every coordinate is printed with one decimal so output is
//! byte-for-byte reproducible.

use std::fmt::Write;

use crate::format;
use crate::stats::Summary;

/// The statistic a chart shows: the one of the table it illustrates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Statistic {
    Median,
}

/// The figure the summary's cells and the bar charts lead with: the
/// median cycles per call. On a loaded host a few slow calls pull the mean
/// up by a different factor for each operation, so means order schemes
/// wrongly; the median is the cost of a typical call.
pub(crate) const HEADLINE: Statistic = Statistic::Median;

impl Statistic {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Statistic::Median => "median",
        }
    }

    /// The statistic and its 95 % interval, from one summary.
    pub(crate) fn of(self, s: &Summary) -> (f64, (f64, f64)) {
        match self {
            Statistic::Median => (s.median_cycles, s.ci_median_cycles),
        }
    }
}

/// One bar. Its fields are private: only `Bar::of` makes one, so a bar
/// and its whisker always come from the statistic the chart's caption
/// names.
#[derive(Debug, Clone)]
pub(crate) struct Bar {
    label: String,
    value: f64,
    low: f64,
    high: f64,
    /// Index into the series names (colour and legend).
    pub series: usize,
}

impl Bar {
    /// The bar of `stat` for one operation: its value and whisker both
    /// come from that statistic.
    pub(crate) fn of(stat: Statistic, label: String, s: &Summary, series: usize) -> Bar {
        let (value, (low, high)) = stat.of(s);
        Bar {
            label,
            value,
            low,
            high,
            series,
        }
    }
}

const WIDTH: f64 = 760.0;
const LEFT: f64 = 230.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 44.0;
const ROW: f64 = 18.0;
const BOTTOM: f64 = 34.0;
/// Colour-blind-safe hues (Okabe–Ito), readable in greyscale print too.
const COLOURS: [&str; 4] = ["#0072b2", "#e69f00", "#009e73", "#cc79a7"];

pub(crate) fn escape(s: &str) -> String {
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

/// The left margin that holds the longest bar label at the labels' font
/// size (about 6.2 px a character), never less than `LEFT`.
fn label_room(bars: &[Bar]) -> f64 {
    let longest = bars
        .iter()
        .map(|b| b.label.chars().count())
        .max()
        .unwrap_or(0);
    LEFT.max((12.0 + 6.2 * longest as f64).ceil())
}

/// The chart of `stat` as a standalone SVG document (also valid inline in
/// HTML); `bars` are made with `Bar::of(stat, ...)`.
pub(crate) fn svg(title: &str, stat: Statistic, series: &[&str], bars: &[Bar]) -> String {
    let (d0, d1) = decades(bars);
    // Room for the longest label; the plot keeps its width.
    let left = label_room(bars);
    let width = WIDTH + (left - LEFT);
    let plot_w = WIDTH - LEFT - RIGHT;
    let x = |v: f64| {
        let v = if v.is_finite() && v > 0.0 {
            v
        } else {
            10f64.powi(d0)
        };
        let t = (v.log10() - f64::from(d0)) / f64::from(d1 - d0);
        left + plot_w * t.clamp(0.0, 1.0)
    };
    let height = TOP + ROW * bars.len().max(1) as f64 + BOTTOM;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" \
         viewBox=\"0 0 {width:.0} {height:.0}\" role=\"img\" font-family=\"sans-serif\" font-size=\"11\">\n\
         <title>{}</title>\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n\
         <text x=\"{left:.0}\" y=\"16\" font-size=\"13\">{} (log scale; whisker: 95 % CI of the {})</text>\n",
        escape(title),
        escape(title),
        stat.name(),
    );
    let mut lx = left;
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
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{} cycles per operation</text>",
        left + plot_w / 2.0,
        axis_y + 28.0,
        stat.name()
    );
    for (i, b) in bars.iter().enumerate() {
        let y = TOP + ROW * i as f64;
        let colour = COLOURS[b.series % COLOURS.len()];
        let (x0, xv) = (left, x(b.value));
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\
             <rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{colour}\">\
             <title>{}: {}</title></rect>",
            left - 6.0,
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

    /// A disturbed operation: a few slow calls pull the mean far above the
    /// median, so the two statistics and their intervals do not overlap.
    fn disturbed() -> Summary {
        let mut samples: Vec<u64> = (0..90).map(|i| 1_300_000 + 1000 * (i % 7)).collect();
        samples.extend((0..10).map(|i| 30_000_000 + 100_000 * i));
        let trials: Vec<crate::stats::Trial> = samples
            .chunks(20)
            .map(|c| crate::stats::Trial {
                calls: c.len() as u64,
                seconds: c.iter().sum::<u64>() as f64 / 2e9,
                cycles: c.iter().sum::<u64>() as f64,
                samples: c.to_vec(),
            })
            .collect();
        crate::stats::summarize(&trials).unwrap()
    }

    /// The x coordinates of the one bar's end and of its whisker's ends.
    fn drawn(svg: &str) -> (f64, f64, f64) {
        let num = |s: &str| s.parse::<f64>().unwrap();
        let line = svg.lines().find(|l| l.contains("<title>L op:")).unwrap();
        let rect = &line[line.find("<rect").unwrap()..];
        let attr = |name: &str| {
            let at = rect.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
            num(&rect[at..at + rect[at..].find('"').unwrap()])
        };
        let end = attr("x") + attr("width");
        let path = svg.lines().find(|l| l.starts_with("<path d=\"M")).unwrap();
        let d = &path[9..path[9..].find('"').unwrap() + 9];
        let lo = num(d[1..].split(' ').next().unwrap());
        let hi = num(d.rsplit('M').next().unwrap().split(' ').next().unwrap());
        (end, lo, hi)
    }

    #[test]
    fn bar_and_whisker_come_from_the_same_statistic() {
        let s = disturbed();
        assert!(s.mean_cycles > 3.0 * s.median_cycles, "{s:?}");
        assert!(s.ci_median_cycles.1 < s.ci_mean_cycles.0, "{s:?}");
        for stat in [Statistic::Median] {
            let bar = Bar::of(stat, "L op".into(), &s, 0);
            let (value, (low, high)) = stat.of(&s);
            assert_eq!((bar.value, bar.low, bar.high), (value, low, high));
            // Drawn: the bar ends at the statistic, the whisker spans the
            // same statistic's interval, and so brackets the bar's end.
            let svg = svg("t", stat, &["op"], std::slice::from_ref(&bar));
            let (d0, d1) = decades(std::slice::from_ref(&bar));
            let x = |v: f64| {
                LEFT + (WIDTH - LEFT - RIGHT) * (v.log10() - f64::from(d0)) / f64::from(d1 - d0)
            };
            let (end, lo, hi) = drawn(&svg);
            for (got, want) in [(end, x(value)), (lo, x(low)), (hi, x(high))] {
                assert!((got - want).abs() <= 0.051, "{stat:?}: {got} vs {want}");
            }
            assert!(lo <= end && end <= hi, "{stat:?}: {lo} {end} {hi}");
            assert!(svg.contains(&format!("whisker: 95 % CI of the {}", stat.name())));
        }
        // The other statistic's interval is nowhere near: mixing them would
        // have drawn the median's bar with a whisker far to its right.
        let median = Bar::of(Statistic::Median, "L op".into(), &s, 0);
        assert!(median.high < s.ci_mean_cycles.0 && median.value * 2.0 < s.mean_cycles);
    }

    #[test]
    fn long_labels_widen_the_margin_instead_of_being_cut() {
        let label = "SPHINCS+-shake-128s-simple.avx2 keygen, twice as long".to_string();
        let bars = [Bar {
            label: label.clone(),
            value: 1e6,
            low: 9e5,
            high: 1.1e6,
            series: 0,
        }];
        let left = label_room(&bars);
        assert!(left > LEFT && left >= 6.2 * label.chars().count() as f64);
        let s = svg("t", Statistic::Median, &["keygen"], &bars);
        assert!(
            s.contains(&format!("width=\"{:.0}\"", WIDTH + left - LEFT)),
            "{s}"
        );
        // The label ends just before the bar starts, with the plot as wide
        // as with short labels.
        assert!(s.contains(&format!("<text x=\"{:.1}\"", left - 6.0)), "{s}");
        assert!(s.contains(&format!("<rect x=\"{left:.1}\"")), "{s}");
        let short = [Bar {
            label: "L op".into(),
            ..bars[0].clone()
        }];
        assert_eq!(label_room(&short), LEFT);
    }

    #[test]
    fn labels_are_escaped_and_scale_spans_decades() {
        let bars = [Bar {
            label: "<b>&".into(),
            value: 8.65e6,
            low: 8.6e6,
            high: 8.7e6,
            series: 0,
        }];
        let s = svg("t", Statistic::Median, &["keygen"], &bars);
        assert!(s.contains("&lt;b&gt;&amp;") && !s.contains("<b>"));
        assert_eq!(decades(&bars), (6, 7));
        assert_eq!(decades(&[]), (0, 1));
        assert_eq!(
            svg("t", Statistic::Median, &["keygen"], &bars),
            s,
            "deterministic"
        );
    }
}
