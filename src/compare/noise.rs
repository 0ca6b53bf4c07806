//! The noise side of one comparison: trial dispersion, Student's t for
//! few trials, the counter's resolution, and an exact Mann–Whitney test.

use crate::records::operation::OperationRecord;
use crate::stats;

pub(crate) fn timed_trials(r: &OperationRecord) -> Vec<&stats::Trial> {
    r.trials.iter().filter(|t| t.calls > 0).collect()
}

/// Sample standard deviation over the mean of the per-trial mean cycles:
/// everything that disturbs a trial, preemption included.
pub(crate) fn trial_cv(r: &OperationRecord) -> f64 {
    let means: Vec<f64> = timed_trials(r)
        .iter()
        .map(|t| t.cycles / t.calls as f64)
        .collect();
    cv(&means)
}

/// The CV across trials of the statistic that is compared: each trial's
/// median call when samples were kept (robust to the preempted calls that
/// dominate trial means on a loaded host), else each trial's mean.
pub(crate) fn trial_dispersion(r: &OperationRecord, samples: bool) -> f64 {
    if !samples {
        return trial_cv(r);
    }
    let medians: Vec<f64> = timed_trials(r)
        .iter()
        .map(|t| stats::median(&t.samples.iter().map(|&s| s as f64).collect::<Vec<_>>()))
        .collect();
    cv(&medians)
}

/// Sample standard deviation (n − 1) over the mean; 0 when undefined.
fn cv(v: &[f64]) -> f64 {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    if v.len() < 2 || mean == 0.0 {
        return 0.0;
    }
    let var = v.iter().map(|m| (m - mean) * (m - mean)).sum::<f64>() / (n - 1.0);
    var.sqrt() / mean
}

/// Two-sided 95 % quantile of Student's t with `df` degrees of freedom:
/// the dispersions come from a handful of trials, so 1.96 would claim
/// more than they show. Exact to three decimals up to 30, then the first
/// Cornish–Fisher term.
pub(crate) fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        _ => 1.959_964 + 2.372 / df as f64,
    }
}

/// Smallest step between distinct values: the counter's resolution (0
/// when all values are equal).
pub(super) fn resolution(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s.dedup();
    s.windows(2)
        .map(|w| w[1] - w[0])
        .reduce(f64::min)
        .unwrap_or(0.0)
}

/// Exact two-sided Mann–Whitney p for small samples without ties (the
/// normal approximation cannot go below 0.012 for 5 against 5 trials, so
/// a trial-means comparison could never pass α = 0.01); None otherwise.
pub(crate) fn exact_mann_whitney_p(a: &[f64], b: &[f64]) -> Option<f64> {
    let (m, n) = (a.len(), b.len());
    if m == 0 || n == 0 || m + n > 40 {
        return None;
    }
    let mut all: Vec<f64> = a.iter().chain(b).copied().collect();
    all.sort_by(f64::total_cmp);
    if all.windows(2).any(|w| w[0] == w[1]) {
        return None;
    }
    let u = a
        .iter()
        .map(|x| b.iter().filter(|y| x > y).count())
        .sum::<usize>();
    // counts[i][j][u]: arrangements of i values of A and j of B with U = u;
    // the largest value is either A's (beating all j of B) or B's.
    let mut counts = vec![vec![Vec::<f64>::new(); n + 1]; m + 1];
    for i in 0..=m {
        for j in 0..=n {
            counts[i][j] = if i == 0 || j == 0 {
                vec![1.0]
            } else {
                let mut v = vec![0.0; i * j + 1];
                for (k, c) in counts[i - 1][j].iter().enumerate() {
                    v[k + j] += c;
                }
                for (k, c) in counts[i][j - 1].iter().enumerate() {
                    v[k] += c;
                }
                v
            };
        }
    }
    let dist = &counts[m][n];
    let total: f64 = dist.iter().sum();
    let below: f64 = dist[..=u].iter().sum();
    let above: f64 = dist[u..].iter().sum();
    Some((2.0 * below.min(above) / total).min(1.0))
}
