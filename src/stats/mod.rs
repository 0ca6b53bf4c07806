//! Statistics derived from raw timing trials.
//!
//! `pqbench check` recomputes every published figure from the raw trials and
//! demands identical pages, so everything here is a pure, deterministic
//! function of its input: bootstrap resampling uses a fixed seed and a
//! self-contained PRNG (SplitMix64), sums run in input order, and sorting
//! uses `f64::total_cmp`.
//!
//! - Percentiles interpolate linearly between order statistics (Hyndman &
//!   Fan type 7, numpy's default): for `n` sorted values and `p` in percent,
//!   `h = (n - 1) * p / 100`, result `x[⌊h⌋] + (h - ⌊h⌋) * (x[⌊h⌋+1] - x[⌊h⌋])`.
//! - Median, P5/P95, CV, outliers and bootstrap use the pooled per-call
//!   samples when every trial kept samples, otherwise the per-trial mean
//!   cycles; `Summary::basis` says which.
//! - CV is the sample standard deviation (n − 1) over the mean, 0 when
//!   undefined (fewer than two values or a zero mean): records hold no NaN.
//! - Outliers lie outside Tukey's fences `Q1 − 1.5 IQR`, `Q3 + 1.5 IQR`.
//! - Bootstrap CIs are 95 % percentile intervals over 2000 replicates. Above
//!   20000 values each replicate draws only 20000 (m-out-of-n bootstrap) and
//!   its deviation from the full-sample statistic is shrunk by `√(m/n)`, the
//!   scaling for √n-consistent statistics such as the mean and the median:
//!   bounded cost, right interval width.

use serde::{Deserialize, Serialize};

pub mod welch;

/// Number of bootstrap replicates; part of the published method.
pub(crate) const BOOTSTRAP_RESAMPLES: usize = 2000;
/// Most values drawn per bootstrap replicate.
pub(crate) const MAX_RESAMPLE: usize = 20_000;
/// Seed of every bootstrap; changing it changes published intervals.
pub(crate) const BOOTSTRAP_SEED: u64 = 0x7071_6265_6e63_6801;

/// One timed trial (one process): `calls` timed calls taking `cycles` and
/// `seconds` in total, optionally with per-call cycle samples.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Trial {
    pub calls: u64,
    pub seconds: f64,
    pub cycles: f64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<u64>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    /// Σ calls over all trials.
    pub n: u64,
    /// Σ cycles / n.
    pub mean_cycles: f64,
    /// Σ seconds / n.
    pub mean_seconds: f64,
    /// n / Σ seconds (0 when no time was recorded).
    pub ops_per_sec: f64,
    /// Median of the per-trial mean cycles.
    pub median_trial_cycles: f64,
    /// Median of the per-trial mean seconds.
    pub median_trial_seconds: f64,
    pub min_trial_cycles: f64,
    pub max_trial_cycles: f64,
    pub p5_cycles: f64,
    pub p95_cycles: f64,
    pub median_cycles: f64,
    pub cv: f64,
    pub ci_mean_cycles: (f64, f64),
    pub ci_median_cycles: (f64, f64),
    pub outliers_low: u64,
    pub outliers_high: u64,
    /// `"per-call samples"` or `"trial means"`.
    pub basis: String,
}

/// Comparison of two cycle samples (e.g. a past and a repeated run).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Comparison {
    /// median(b) / median(a).
    pub ratio_of_medians: f64,
    /// 95 % bootstrap percentile interval of the ratio.
    pub ci: (f64, f64),
    /// U statistic of sample `a`: pairs with a > b, ties counting one half.
    pub mann_whitney_u: f64,
    /// Two-sided, normal approximation with tie and continuity correction.
    pub p_value: f64,
}

/// SplitMix64: tiny, well-mixed and fully specified, so published intervals
/// can be recomputed by anyone without depending on a crate's internals.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform index below `n` by multiply-shift; the bias (< n / 2^64) is
    /// far below anything a 2000-replicate bootstrap can resolve.
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

fn sorted_copy(v: &[f64]) -> Vec<f64> {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s
}

/// Median of unsorted values; NaN for an empty slice.
pub fn median(v: &[f64]) -> f64 {
    percentile(&sorted_copy(v), 50.0)
}

/// Percentile `p` (in percent, clamped to 0..=100) of ascending `sorted`
/// values by linear interpolation between order statistics; NaN when empty.
pub(crate) fn percentile(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    let h = (n - 1) as f64 * p.clamp(0.0, 100.0) / 100.0;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(n - 1);
    let frac = h - lo as f64;
    if frac == 0.0 {
        sorted[lo]
    } else {
        sorted[lo] + frac * (sorted[hi] - sorted[lo])
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn coefficient_of_variation(v: &[f64]) -> f64 {
    let m = mean(v);
    if v.len() < 2 || m == 0.0 {
        return 0.0;
    }
    let ss: f64 = v.iter().map(|x| (x - m) * (x - m)).sum();
    (ss / (v.len() - 1) as f64).sqrt() / m.abs()
}

/// One bootstrap replicate of mean and median, drawn from ascending `sorted`.
/// Drawing indices into sorted data lets the median be selected on integer
/// indices, which is exact and avoids float comparisons.
fn replicate(sorted: &[f64], m: usize, rng: &mut SplitMix64, scratch: &mut Scratch) -> (f64, f64) {
    // Counting the draws per index finds the middle ranks in one pass over
    // the counts: a bootstrap of 20,000 samples took 0.67 s instead of
    // 1.0 s here. Worth it while the counts are no longer than twice the
    // draws (uncapped, m = n).
    if sorted.len() <= 2 * m {
        replicate_by_counts(sorted, m, rng, &mut scratch.counts)
    } else {
        replicate_by_selection(sorted, m, rng, &mut scratch.idx)
    }
}

/// What the replicates reuse from one to the next.
#[derive(Default)]
struct Scratch {
    idx: Vec<usize>,
    counts: Vec<u32>,
}

/// Draws `m` indices into `sorted`, handing each to `take`; the sum of
/// the values drawn, in draw order.
fn draw(sorted: &[f64], m: usize, rng: &mut SplitMix64, mut take: impl FnMut(usize)) -> f64 {
    let mut sum = 0.0;
    for _ in 0..m {
        let i = rng.below(sorted.len());
        sum += sorted[i];
        take(i);
    }
    sum
}

fn replicate_by_selection(
    sorted: &[f64],
    m: usize,
    rng: &mut SplitMix64,
    idx: &mut Vec<usize>,
) -> (f64, f64) {
    idx.clear();
    let sum = draw(sorted, m, rng, |i| idx.push(i));
    let half = m / 2;
    let (left, kth, _) = idx.select_nth_unstable(half);
    let upper = sorted[*kth];
    // For even m the lower middle value is the largest index left of kth.
    let lower = left
        .iter()
        .max()
        .filter(|_| m % 2 == 0)
        .map_or(upper, |&i| sorted[i]);
    (sum / m as f64, (lower + upper) / 2.0)
}

/// `replicate_by_selection`'s figures to the last bit (the same draws,
/// summed in the same order; the same order statistics of the indices).
fn replicate_by_counts(
    sorted: &[f64],
    m: usize,
    rng: &mut SplitMix64,
    counts: &mut Vec<u32>,
) -> (f64, f64) {
    counts.clear();
    counts.resize(sorted.len(), 0);
    let sum = draw(sorted, m, rng, |i| counts[i] += 1);
    let half = m / 2;
    // The index of 0-based rank `half`, and of rank `half - 1` for even m.
    let (mut below, mut lower, mut upper) = (0usize, None, 0);
    for (i, &c) in counts.iter().enumerate() {
        below += c as usize;
        if lower.is_none() && half > 0 && below >= half {
            lower = Some(i);
        }
        if below > half {
            upper = i;
            break;
        }
    }
    let lower = lower.filter(|_| m % 2 == 0).unwrap_or(upper);
    (sum / m as f64, (sorted[lower] + sorted[upper]) / 2.0)
}

/// Replicate statistics of mean and median (m-out-of-n rescaled when capped).
fn bootstrap(sorted: &[f64], seed: u64) -> (Vec<f64>, Vec<f64>) {
    let n = sorted.len();
    let m = n.min(MAX_RESAMPLE);
    let shrink = (m as f64 / n as f64).sqrt();
    let (full_mean, full_median) = (mean(sorted), percentile(sorted, 50.0));
    let mut rng = SplitMix64(seed);
    let mut scratch = Scratch::default();
    let mut means = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    let mut medians = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    for _ in 0..BOOTSTRAP_RESAMPLES {
        let (mu, med) = replicate(sorted, m, &mut rng, &mut scratch);
        // Applied only when capped, so uncapped results stay exact.
        let rescale = |full: f64, x: f64| if m < n { full + shrink * (x - full) } else { x };
        means.push(rescale(full_mean, mu));
        medians.push(rescale(full_median, med));
    }
    (means, medians)
}

fn percentile_interval(mut stats: Vec<f64>) -> (f64, f64) {
    stats.sort_by(f64::total_cmp);
    (percentile(&stats, 2.5), percentile(&stats, 97.5))
}

/// Derives every published statistic from raw trials; `None` when no call
/// was timed.
pub fn summarize(trials: &[Trial]) -> Option<Summary> {
    let n: u64 = trials.iter().map(|t| t.calls).sum();
    (n > 0).then_some(())?;
    let total_cycles: f64 = trials.iter().map(|t| t.cycles).sum();
    let total_seconds: f64 = trials.iter().map(|t| t.seconds).sum();
    let timed: Vec<&Trial> = trials.iter().filter(|t| t.calls > 0).collect();
    let trial_cycles: Vec<f64> = timed.iter().map(|t| t.cycles / t.calls as f64).collect();
    let trial_seconds: Vec<f64> = timed.iter().map(|t| t.seconds / t.calls as f64).collect();
    let sorted_trial_cycles = sorted_copy(&trial_cycles);

    let pooled = timed.iter().all(|t| !t.samples.is_empty());
    let (basis, values) = if pooled {
        let v: Vec<f64> = timed
            .iter()
            .flat_map(|t| &t.samples)
            .map(|&s| s as f64)
            .collect();
        ("per-call samples", sorted_copy(&v))
    } else {
        ("trial means", sorted_trial_cycles.clone())
    };

    let (q1, q3) = (percentile(&values, 25.0), percentile(&values, 75.0));
    let (fence_lo, fence_hi) = (q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1));
    let (means, medians) = bootstrap(&values, BOOTSTRAP_SEED);
    let ops_per_sec = if total_seconds > 0.0 {
        n as f64 / total_seconds
    } else {
        0.0
    };

    Some(Summary {
        n,
        mean_cycles: total_cycles / n as f64,
        mean_seconds: total_seconds / n as f64,
        ops_per_sec,
        median_trial_cycles: percentile(&sorted_trial_cycles, 50.0),
        median_trial_seconds: median(&trial_seconds),
        min_trial_cycles: sorted_trial_cycles[0],
        max_trial_cycles: sorted_trial_cycles[sorted_trial_cycles.len() - 1],
        p5_cycles: percentile(&values, 5.0),
        p95_cycles: percentile(&values, 95.0),
        median_cycles: percentile(&values, 50.0),
        cv: coefficient_of_variation(&values),
        ci_mean_cycles: percentile_interval(means),
        ci_median_cycles: percentile_interval(medians),
        outliers_low: values.iter().filter(|&&v| v < fence_lo).count() as u64,
        outliers_high: values.iter().filter(|&&v| v > fence_hi).count() as u64,
        basis: basis.to_string(),
    })
}

/// Complementary error function: the Maclaurin series of erf below 2 (where
/// cancellation costs under two digits), Laplace's continued fraction above.
fn erfc(x: f64) -> f64 {
    const FRAC_1_SQRT_PI: f64 = 0.564_189_583_547_756_3;
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    if x < 2.0 {
        let (mut term, mut sum) = (x, x);
        for k in 1..200 {
            term *= -x * x / k as f64;
            sum += term / (2 * k + 1) as f64;
        }
        return 1.0 - 2.0 * FRAC_1_SQRT_PI * sum;
    }
    let f = (1..=200).rev().fold(x, |f, k| x + (k as f64 / 2.0) / f);
    (-x * x).exp() * FRAC_1_SQRT_PI / f
}

/// Mann–Whitney U of `a` against `b` and its two-sided p-value.
fn mann_whitney(a: &[f64], b: &[f64]) -> (f64, f64) {
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    let tagged = |v: &[f64], in_a: bool| v.iter().map(move |&x| (x, in_a)).collect::<Vec<_>>();
    let mut all = [tagged(a, true), tagged(b, false)].concat();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let (mut rank, mut rank_sum_a, mut tie_term) = (0.0, 0.0, 0.0);
    for tied in all.chunk_by(|x, y| x.0.total_cmp(&y.0).is_eq()) {
        // The tied values share the average of ranks rank+1 ..= rank+t.
        let t = tied.len() as f64;
        rank_sum_a += (rank + (t + 1.0) / 2.0) * tied.iter().filter(|e| e.1).count() as f64;
        tie_term += t * t * t - t;
        rank += t;
    }
    let u = rank_sum_a - n1 * (n1 + 1.0) / 2.0;
    let nn = n1 + n2;
    let variance = n1 * n2 / 12.0 * ((nn + 1.0) - tie_term / (nn * (nn - 1.0)));
    if variance <= 0.0 || !variance.is_finite() {
        return (u, 1.0);
    }
    let z = ((u - n1 * n2 / 2.0).abs() - 0.5).max(0.0) / variance.sqrt();
    (u, erfc(z / std::f64::consts::SQRT_2).min(1.0))
}

/// Compares two cycle samples: ratio of medians (b over a) with a bootstrap
/// interval (each side resampled independently, fixed seeds, same capping
/// as `summarize`) and a Mann–Whitney test. `None` when a side is empty or
/// the median of `a` is zero.
pub fn compare(a: &[f64], b: &[f64]) -> Option<Comparison> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let (sa, sb) = (sorted_copy(a), sorted_copy(b));
    let (med_a, med_b) = (percentile(&sa, 50.0), percentile(&sb, 50.0));
    if med_a == 0.0 {
        return None;
    }
    let (_, boot_a) = bootstrap(&sa, BOOTSTRAP_SEED ^ 0xa);
    let (_, boot_b) = bootstrap(&sb, BOOTSTRAP_SEED ^ 0xb);
    let ratios: Vec<f64> = boot_a.iter().zip(&boot_b).map(|(x, y)| y / x).collect();
    let (u, p) = mann_whitney(a, b);
    Some(Comparison {
        ratio_of_medians: med_b / med_a,
        ci: percentile_interval(ratios),
        mann_whitney_u: u,
        p_value: p,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn trial(calls: u64, seconds: f64, cycles: f64, samples: Vec<u64>) -> Trial {
        Trial {
            calls,
            seconds,
            cycles,
            samples,
        }
    }

    #[test]
    fn replicates_by_counts_equal_replicates_by_selection_to_the_bit() {
        let mut gen = rand::rngs::StdRng::seed_from_u64(7);
        for (n, m) in [
            (1, 1),
            (2, 2),
            (3, 3),
            (4, 4),
            (7, 5),
            (10, 10),
            (101, 101),
            (500, 300),
        ] {
            // Few distinct values too, so equal values sit at many ranks.
            let mut values: Vec<f64> = (0..n).map(|_| gen.gen_range(0..40) as f64).collect();
            values.sort_by(f64::total_cmp);
            for seed in 0..50 {
                let (mut a, mut b) = (SplitMix64(seed), SplitMix64(seed));
                let by_counts = replicate_by_counts(&values, m, &mut a, &mut Vec::new());
                let by_selection = replicate_by_selection(&values, m, &mut b, &mut Vec::new());
                assert_eq!(by_counts.0.to_bits(), by_selection.0.to_bits(), "{n} {m}");
                assert_eq!(by_counts.1.to_bits(), by_selection.1.to_bits(), "{n} {m}");
            }
        }
    }

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn percentile_interpolates() {
        let v = [1.0, 2.0, 3.0, 4.0];
        // h = 3p: P25 sits 0.75 of the way from 1 to 2.
        let got = [0.0, 25.0, 50.0, 100.0].map(|p| percentile(&v, p));
        assert_eq!(got, [1.0, 1.75, 2.5, 4.0]);
        assert_eq!(percentile(&[7.0], 95.0), 7.0);
        assert_eq!(median(&[5.0, 1.0, 3.0]), 3.0);
        assert!(percentile(&[], 50.0).is_nan());
    }

    /// The reference page's SHUTTLE-128 keygen row: 5 × 609 calls,
    /// 8.65 M cycles and 4.13 ms per call.
    #[test]
    fn reference_row_by_hand() {
        let per_call = [8.64e6, 8.66e6, 8.65e6, 8.63e6, 8.67e6];
        let secs = [4.12e-3, 4.14e-3, 4.13e-3, 4.13e-3, 4.13e-3];
        let trials: Vec<Trial> = (0..5)
            .map(|i| trial(609, secs[i] * 609.0, per_call[i] * 609.0, vec![]))
            .collect();
        let s = summarize(&trials).unwrap();
        assert_eq!((s.n, s.basis.as_str()), (3045, "trial means"));
        assert_eq!(crate::format::cycles(s.mean_cycles), "8.65 M");
        assert!(close(s.median_trial_cycles, 8.65e6, 1e-12));
        assert_eq!(crate::format::duration(s.mean_seconds), "4.13 ms");
        assert_eq!(crate::format::ops_per_sec(s.ops_per_sec), "242");
        assert!(close(s.median_trial_seconds, 4.13e-3, 1e-12));
        assert!(close(s.min_trial_cycles, 8.63e6, 1e-12));
        assert!(close(s.max_trial_cycles, 8.67e6, 1e-12));
        // Trial means 8.63..8.67 M: P5 at h = 0.2, P95 at h = 3.8.
        assert!(close(s.p5_cycles, 8.632e6, 1e-12) && close(s.p95_cycles, 8.668e6, 1e-12));
        // Sample sd of {-2, -1, 0, 1, 2}·1e4 is √2.5·1e4.
        assert!(close(s.cv, 2.5f64.sqrt() * 1e4 / 8.65e6, 1e-9));
        assert_eq!((s.outliers_low, s.outliers_high), (0, 0));
        assert!(s.ci_median_cycles.0 >= 8.63e6 && s.ci_median_cycles.1 <= 8.67e6);
    }

    #[test]
    fn uneven_trials_samples_and_outliers() {
        assert!(summarize(&[]).is_none());
        assert!(summarize(&[trial(0, 0.0, 0.0, vec![])]).is_none());
        let s = summarize(&[trial(1, 1.0, 100.0, vec![]), trial(3, 1.0, 900.0, vec![])]).unwrap();
        assert_eq!((s.n, s.mean_cycles, s.mean_seconds), (4, 250.0, 0.5));
        let per_trial = [
            s.median_trial_cycles,
            s.min_trial_cycles,
            s.max_trial_cycles,
        ];
        assert_eq!((s.ops_per_sec, per_trial), (2.0, [200.0, 100.0, 300.0]));

        let t1 = trial(5, 5e-3, 5300.0, vec![1000, 1010, 990, 1000, 1300]);
        let mut t2 = trial(5, 5e-3, 4000.0, vec![1000, 1005, 995, 1000, 0]);
        let s = summarize(&[t1.clone(), t2.clone()]).unwrap();
        assert_eq!((&*s.basis, s.median_cycles), ("per-call samples", 1000.0));
        // Quartiles 995 and 1008.75: fences ≈ 975.6 and 1028.1.
        assert_eq!((s.outliers_low, s.outliers_high), (1, 1));
        // A trial without samples makes the trial means the basis.
        t2.samples.clear();
        let s = summarize(&[t1, t2]).unwrap();
        assert_eq!((s.basis.as_str(), s.median_cycles), ("trial means", 930.0));
    }

    /// Lognormal cycle counts with median e^10.
    fn lognormal(seed: u64, n: usize) -> Vec<u64> {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let mut normal = || {
            let (u1, u2): (f64, f64) = (rng.gen_range(1e-12..1.0), rng.gen());
            (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
        };
        let draw = |_| (10.0 + 0.3 * normal()).exp().round() as u64;
        (0..n).map(draw).collect()
    }

    fn sampled(samples: Vec<u64>) -> Trial {
        let cycles = samples.iter().sum::<u64>() as f64;
        trial(samples.len() as u64, cycles / 2.1e9, cycles, samples)
    }

    #[test]
    fn deterministic_and_serialisable() {
        let trials: Vec<Trial> = (0..5).map(|i| sampled(lognormal(i, 300))).collect();
        let a = summarize(&trials).unwrap();
        assert_eq!(a, summarize(&trials).unwrap());
        // serde_json without its `float_roundtrip` feature may parse a float
        // one ulp off, hence a relative 1e-15 on the round trip.
        let back: Summary = serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
        assert_eq!((back.n, back.outliers_high), (a.n, a.outliers_high));
        assert!(close(back.p95_cycles, a.p95_cycles, 1e-15));
        assert!(close(back.ci_mean_cycles.0, a.ci_mean_cycles.0, 1e-15));
        let bare = serde_json::to_string(&trial(1, 1.0, 2.0, vec![])).unwrap();
        assert_eq!(bare, r#"{"calls":1,"seconds":1.0,"cycles":2.0}"#);
        let parsed: Trial = serde_json::from_str(&bare).unwrap();
        assert!(parsed.samples.is_empty());
    }

    #[test]
    fn intervals_cover_the_truth() {
        let s = summarize(&[sampled(lognormal(42, 2000))]).unwrap();
        let (lo, hi) = s.ci_median_cycles;
        assert!(lo < 10f64.exp() && 10f64.exp() < hi, "{lo} {hi}");
        // Lognormal mean e^(μ + σ²/2).
        let (lo, hi) = s.ci_mean_cycles;
        assert!(lo < 10.045f64.exp() && 10.045f64.exp() < hi, "{lo} {hi}");

        // Above the resample cap the width must match the full sample's
        // (≈ 2·1.96·sd/√n), not what 20000 values alone would give.
        let v: Vec<f64> = lognormal(7, 80_000).iter().map(|&x| x as f64).collect();
        let (lo, hi) = percentile_interval(bootstrap(&sorted_copy(&v), BOOTSTRAP_SEED).0);
        let m = mean(&v);
        let sd = (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / 79_999.0).sqrt();
        let ratio = (hi - lo) / (2.0 * 1.96 * sd / 80_000f64.sqrt());
        assert!((0.85..1.15).contains(&ratio), "width ratio {ratio}");
    }

    #[test]
    fn erfc_matches_known_values() {
        assert_eq!(erfc(0.0), 1.0);
        assert!(close(erfc(0.5), 0.4795001221869535, 1e-12));
        assert!(close(erfc(1.0), 0.15729920705028513, 1e-12));
        assert!(close(erfc(2.0), 0.004677734981047265, 1e-10));
        assert!(close(erfc(3.0), 2.209049699858544e-5, 1e-10));
        assert!(close(erfc(5.0), 1.537459794428035e-12, 1e-10));
        let two_sided_5_percent = erfc(1.96 / std::f64::consts::SQRT_2);
        assert!(close(two_sided_5_percent, 0.04999579029644087, 1e-10));
    }

    #[test]
    fn mann_whitney_by_hand() {
        // Complete separation, 5 vs 5: U = 0, σ² = 25·11/12,
        // z = (12.5 − 0.5)/σ = 2.5067, p = 0.0121858 (textbook asymptotic).
        let (a, b) = ([1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0]);
        let (u, p) = mann_whitney(&a, &b);
        assert_eq!((u, mann_whitney(&b, &a)), (0.0, (25.0, p)));
        assert!(close(p, 0.012185780355344818, 1e-8), "{p}");
        // Ties {2,2,2}, {3,3}, {6,6}: Σ(t³−t) = 36, σ² = 25/12·(11 − 36/90),
        // U = 4.5 counted pair by pair, z = 7.5/4.6993, p = 0.1104920.
        let (a, b) = ([1.0, 2.0, 2.0, 3.0, 4.0], [2.0, 3.0, 5.0, 6.0, 6.0]);
        let pairs: Vec<(f64, f64)> = a.iter().flat_map(|&x| b.map(|y| (x, y))).collect();
        let count = |f: fn(&(f64, f64)) -> bool| pairs.iter().filter(|p| f(p)).count() as f64;
        let brute = count(|(x, y)| x > y) + 0.5 * count(|(x, y)| x == y);
        let (u, p) = mann_whitney(&a, &b);
        assert_eq!((u, brute), (4.5, 4.5));
        assert!(close(p, 0.11049202405566808, 1e-8), "{p}");
        assert_eq!(mann_whitney(&[1.0, 1.0], &[1.0, 1.0]).1, 1.0);
    }

    #[test]
    fn compare_detects_doubling() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let a: Vec<f64> = (0..400).map(|_| 1e6 * rng.gen_range(0.95..1.05)).collect();
        let mut noisy = |x: &f64| 2.0 * x * rng.gen_range(0.98..1.02);
        let b: Vec<f64> = a.iter().map(&mut noisy).collect();
        let c = compare(&a, &b).unwrap();
        assert!(close(c.ratio_of_medians, 2.0, 0.015), "{c:?}");
        assert!(1.9 < c.ci.0 && c.ci.0 < c.ratio_of_medians, "{c:?}");
        assert!(c.ratio_of_medians < c.ci.1 && c.ci.1 < 2.1, "{c:?}");
        assert!(c.p_value < 1e-10);
        assert_eq!(compare(&a, &b).unwrap(), c);
        let same = compare(&a, &a).unwrap();
        assert!(same.ratio_of_medians == 1.0 && same.p_value > 0.9);
        assert!(compare(&[], &a).is_none());
    }
}
