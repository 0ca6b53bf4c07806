//! A log–log line chart in hand-written SVG: cycles per byte against the
//! message size, one line per hash instance. Like `chart`, plain SVG 1.1
//! with every coordinate printed with one decimal, so output is
//! byte-for-byte reproducible; every label is escaped.

use std::fmt::Write;

use super::chart::escape;

/// One line: its name and (x, y) points, both positive.
#[derive(Debug, Clone)]
pub(crate) struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Drawn dashed (a baseline).
    pub dashed: bool,
}

const WIDTH: f64 = 760.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 200.0;
const TOP: f64 = 44.0;
const HEIGHT: f64 = 300.0;
const BOTTOM: f64 = 40.0;
const COLOURS: [&str; 8] = [
    "#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#000000",
];

/// Decades spanned by the finite positive values, at least one.
fn decades(values: impl Iterator<Item = f64>) -> (i32, i32) {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if !lo.is_finite() {
        return (0, 1);
    }
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    (a, b.max(a + 1))
}

fn tick(v: f64) -> String {
    if v >= 1024.0 && v % 1024.0 == 0.0 {
        format!("{} KiB", v / 1024.0)
    } else {
        short_number(v)
    }
}

/// The plot area's width.
const PLOT_W: f64 = WIDTH - LEFT - RIGHT;

/// `v` on a log scale spanning decades `d0..d1` over `len` (non-positive
/// values at the bottom).
fn log_scale(v: f64, (d0, d1): (i32, i32), len: f64) -> f64 {
    let v = if v.is_finite() && v > 0.0 {
        v
    } else {
        10f64.powi(d0)
    };
    let t = (v.log10() - f64::from(d0)) / f64::from(d1 - d0);
    len * t.clamp(0.0, 1.0)
}

/// The decades both axes span, and the mapping of values to coordinates.
struct Frame {
    xs: (i32, i32),
    ys: (i32, i32),
}

impl Frame {
    fn of(series: &[Series]) -> Frame {
        Frame {
            xs: decades(series.iter().flat_map(|s| s.points.iter().map(|p| p.0))),
            ys: decades(series.iter().flat_map(|s| s.points.iter().map(|p| p.1))),
        }
    }

    fn x(&self, v: f64) -> f64 {
        LEFT + log_scale(v, self.xs, PLOT_W)
    }

    fn y(&self, v: f64) -> f64 {
        TOP + HEIGHT - log_scale(v, self.ys, HEIGHT)
    }
}

/// The chart as a standalone SVG document (also valid inline in HTML).
pub(crate) fn svg(title: &str, x_label: &str, y_label: &str, series: &[Series]) -> String {
    let frame = Frame::of(series);
    let mut s = String::new();
    header(&mut s, title);
    grid(&mut s, &frame);
    axis_labels(&mut s, x_label, y_label);
    for (i, line) in series.iter().enumerate() {
        draw_line(&mut s, &frame, i, line);
    }
    s.push_str("</svg>\n");
    s
}

fn header(s: &mut String, title: &str) {
    let total = TOP + HEIGHT + BOTTOM;
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH:.0}\" height=\"{total:.0}\" \
         viewBox=\"0 0 {WIDTH:.0} {total:.0}\" role=\"img\" font-family=\"sans-serif\" font-size=\"11\">\n\
         <title>{}</title>\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n\
         <text x=\"{LEFT:.0}\" y=\"16\" font-size=\"13\">{} (log–log)</text>\n",
        escape(title),
        escape(title),
    );
}

/// Grid: every power of two on x (the sizes are powers of two), every
/// decade on y.
fn grid(s: &mut String, frame: &Frame) {
    let (x0, x1) = (10f64.powi(frame.xs.0), 10f64.powi(frame.xs.1));
    let mut gx = 1.0;
    while gx <= x1 {
        if gx >= x0 {
            let px = frame.x(gx);
            let _ = writeln!(
                s,
                "<line x1=\"{px:.1}\" y1=\"{TOP:.1}\" x2=\"{px:.1}\" y2=\"{:.1}\" stroke=\"#eee\"/>\
                 <text x=\"{px:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"9\">{}</text>",
                TOP + HEIGHT,
                TOP + HEIGHT + 12.0,
                escape(&tick(gx))
            );
        }
        gx *= 4.0;
    }
    for d in frame.ys.0..=frame.ys.1 {
        let py = frame.y(10f64.powi(d));
        let _ = writeln!(
            s,
            "<line x1=\"{LEFT:.1}\" y1=\"{py:.1}\" x2=\"{:.1}\" y2=\"{py:.1}\" stroke=\"#ccc\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            LEFT + PLOT_W,
            LEFT - 4.0,
            py + 4.0,
            escape(&short_number(10f64.powi(d)))
        );
    }
}

fn axis_labels(s: &mut String, x_label: &str, y_label: &str) {
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\
         <text x=\"14\" y=\"{:.1}\" transform=\"rotate(-90 14 {:.1})\" text-anchor=\"middle\">{}</text>",
        LEFT + PLOT_W / 2.0,
        TOP + HEIGHT + 30.0,
        escape(x_label),
        TOP + HEIGHT / 2.0,
        TOP + HEIGHT / 2.0,
        escape(y_label)
    );
}

/// Series `i`: its path, a dot per point and its legend entry.
fn draw_line(s: &mut String, frame: &Frame, i: usize, line: &Series) {
    let colour = COLOURS[i % COLOURS.len()];
    let dash = if line.dashed {
        " stroke-dasharray=\"5 3\""
    } else {
        ""
    };
    let path: Vec<String> = line
        .points
        .iter()
        .enumerate()
        .map(|(k, (px, py))| {
            format!(
                "{}{:.1} {:.1}",
                if k == 0 { "M" } else { "L" },
                frame.x(*px),
                frame.y(*py)
            )
        })
        .collect();
    let _ = writeln!(
        s,
        "<path d=\"{}\" stroke=\"{colour}\" stroke-width=\"1.5\" fill=\"none\"{dash}><title>{}</title></path>",
        path.join(""),
        escape(&line.name)
    );
    for (px, py) in &line.points {
        let _ = writeln!(
            s,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\" fill=\"{colour}\"/>",
            frame.x(*px),
            frame.y(*py)
        );
    }
    let ly = TOP + 14.0 * i as f64;
    let lx = LEFT + PLOT_W + 12.0;
    let _ = writeln!(
        s,
        "<line x1=\"{lx:.1}\" y1=\"{ly:.1}\" x2=\"{:.1}\" y2=\"{ly:.1}\" stroke=\"{colour}\" stroke-width=\"2\"{dash}/>\
         <text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
        lx + 18.0,
        lx + 22.0,
        ly + 4.0,
        escape(&line.name)
    );
}

/// `1234` → `1234`, `0.5` → `0.5`: short numbers for axes and ratios.
fn short_number(v: f64) -> String {
    crate::format::g(v, 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_escaped_deterministic_and_scaled() {
        let series = [Series {
            name: "<x>&".into(),
            points: vec![(32.0, 60.0), (65536.0, 30.0)],
            dashed: true,
        }];
        let s = svg("t", "message", "cycles/byte", &series);
        assert!(s.contains("&lt;x&gt;&amp;") && !s.contains("<x>"));
        assert!(s.contains("stroke-dasharray"));
        assert_eq!(svg("t", "message", "cycles/byte", &series), s);
        assert_eq!(decades([32.0, 65536.0].into_iter()), (1, 5));
    }
}
