//! The least-squares line the CPU witness fits (`witness::fit`): CPU time
//! over call count, with an intercept per set of trials and a slope whose
//! standard error takes each set's scatter on its own.

/// A fitted line: the last group's intercept, the slope, and the slope's
/// standard error with the residuals' degrees of freedom (None without one
/// left).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Line {
    pub setup: f64,
    pub slope: f64,
    pub stderr: Option<(f64, u32)>,
}

/// Least squares of `y = a_g + b·x` with an intercept per group `g` (the
/// slope from the variation within each group only, so a set run later,
/// under another load, shifts its own intercept and not the slope), with
/// the last point's group's intercept; None without two distinct `x` in
/// some group.
///
/// The slope's standard error takes each group's residual variance on its
/// own: a set four or sixteen times longer is disturbed that much more in
/// absolute terms, and one variance pooled over every set would take the
/// short sets' small residuals for the long set's, so a wildly scattered
/// long set could pass for a precise one. The degrees of freedom are
/// Welch–Satterthwaite's over the groups (rounded down), each group's
/// share of the slope's one taken by its share of the spread in `x`; with
/// one group this is the ordinary fit's `n − 2`.
pub(crate) fn least_squares(points: &[(i64, f64, f64)]) -> Option<Line> {
    let mut groups: Vec<i64> = points.iter().map(|p| p.0).collect();
    groups.sort_unstable();
    groups.dedup();
    let members = |g: i64| points.iter().filter(move |p| p.0 == g);
    // Per group: its points centred on the group's means.
    let centred: Vec<Vec<(f64, f64)>> = groups
        .iter()
        .map(|&g| {
            let n = members(g).count() as f64;
            let (mx, my) = members(g).fold((0.0, 0.0), |(x, y), p| (x + p.1, y + p.2));
            let (mx, my) = (mx / n, my / n);
            members(g).map(|p| (p.1 - mx, p.2 - my)).collect()
        })
        .collect();
    let sxx_of = |c: &[(f64, f64)]| c.iter().map(|c| c.0 * c.0).sum::<f64>();
    let sxx: f64 = centred.iter().map(|c| sxx_of(c)).sum();
    let sxy: f64 = centred.iter().flatten().map(|c| c.0 * c.1).sum();
    if sxx <= 0.0 {
        return None;
    }
    let b = sxy / sxx;
    let last = points.last().map(|p| p.0)?;
    let (n, sx, sy) =
        members(last).fold((0.0, 0.0, 0.0), |(n, x, y), p| (n + 1.0, x + p.1, y + p.2));
    let a = sy / n - b * (sx / n);
    Some(Line {
        setup: a,
        slope: b,
        stderr: slope_stderr(&centred, b, sxx),
    })
}

/// The slope's standard error from each group's own residual variance,
/// with Welch–Satterthwaite's degrees of freedom; None when no group has
/// a residual degree of freedom left.
fn slope_stderr(centred: &[Vec<(f64, f64)>], b: f64, sxx: f64) -> Option<(f64, u32)> {
    // Per group: its share of the slope's variance, and its degrees of
    // freedom (its points less its intercept and its share of the slope).
    let mut terms = Vec::new();
    for c in centred {
        let own = c.iter().map(|c| c.0 * c.0).sum::<f64>();
        let dof = c.len() as f64 - 1.0 - own / sxx;
        if own <= 0.0 || dof < 1e-9 {
            continue;
        }
        let rss: f64 = c.iter().map(|c| (c.1 - b * c.0).powi(2)).sum();
        // Written so that one group gives the ordinary `rss / dof / sxx`
        // to the last bit (records made before keep their figures).
        terms.push((rss / dof * (own / sxx) / sxx, dof));
    }
    let var: f64 = terms.iter().map(|t| t.0).sum();
    let largest = terms.iter().map(|t| t.0).fold(0.0, f64::max);
    if largest <= 0.0 {
        // Every residual zero: an exact line, known to its last bit, with
        // the degrees of freedom the points leave.
        let dof =
            centred.iter().map(|c| c.len()).sum::<usize>() as f64 - centred.len() as f64 - 1.0;
        return (dof >= 1.0).then_some((0.0, dof as u32));
    }
    // Welch-Satterthwaite, over terms scaled to the largest (no square
    // underflows).
    let (sum, spread) = terms.iter().fold((0.0, 0.0), |(s, q), (t, dof)| {
        let t = t / largest;
        (s + t, q + t * t / dof)
    });
    let dof = (sum * sum / spread + 1e-9).floor();
    (dof >= 1.0).then(|| (var.sqrt(), dof as u32))
}
