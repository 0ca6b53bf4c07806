//! The leak stage's statistics: Welch's t between two classes of per-call
//! cycles, as dudect computes it (Reparaz, Balasch and Verbauwhede, "Dude,
//! is my code constant time?", 2017): once over every call, and once over
//! the calls at or below each of [`CROPS`] thresholds, the pooled samples'
//! percentiles 100 (1 − 0.5^(10 (k + 1) / CROPS)) for k = 0 … CROPS − 1
//! (50 %, 75 %, 87.5 % … 99.9 %). Cropping drops the slow tail that
//! interrupts and other processes add, which would otherwise hide a small
//! difference. Pure and deterministic, like the rest of `stats`: sums run in
//! input order.

use serde::{Deserialize, Serialize};

use super::percentile;

/// Crop thresholds besides the test over every call.
pub(crate) const CROPS: usize = 10;

/// Fewest calls of each class a test needs; a crop with fewer is left out.
pub(crate) const MIN_PER_CLASS: u64 = 50;

/// One test: the calls at or below `below_cycles` (None: every call).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CropTest {
    /// The pooled samples' percentile the threshold is, None for none.
    pub percentile: Option<f64>,
    pub below_cycles: Option<u64>,
    pub fixed: u64,
    pub random: u64,
    pub t: f64,
}

/// Mean and sample variance (n − 1), two passes in input order.
fn mean_var(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let ss: f64 = v.iter().map(|x| (x - mean) * (x - mean)).sum();
    (mean, ss / (n - 1.0))
}

/// Welch's t of `a` against `b`: (mean a − mean b) / √(va/na + vb/nb).
/// None with fewer than two values on a side. Two classes without any
/// spread give 0 when their means agree, else ±1e9 (a difference no noise
/// explains; records hold no infinity).
pub fn welch_t(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (ma, va) = mean_var(a);
    let (mb, vb) = mean_var(b);
    let se = (va / a.len() as f64 + vb / b.len() as f64).sqrt();
    Some(match se {
        s if s > 0.0 => (ma - mb) / s,
        _ if ma == mb => 0.0,
        _ => 1e9_f64.copysign(ma - mb),
    })
}

/// The tests of `fixed` against `random` (per-call cycles): every call,
/// then each crop with at least [`MIN_PER_CLASS`] calls of each class.
pub fn dudect_tests(fixed: &[u64], random: &[u64]) -> Vec<CropTest> {
    let mut pooled: Vec<f64> = fixed.iter().chain(random).map(|&c| c as f64).collect();
    pooled.sort_by(f64::total_cmp);
    let mut tests = Vec::new();
    let mut push = |p: Option<f64>, below: Option<u64>| {
        let keep = |v: &[u64]| -> Vec<f64> {
            v.iter()
                .filter(|&&c| below.is_none_or(|b| c <= b))
                .map(|&c| c as f64)
                .collect()
        };
        let (a, b) = (keep(fixed), keep(random));
        if (a.len() as u64) < MIN_PER_CLASS || (b.len() as u64) < MIN_PER_CLASS {
            return;
        }
        if let Some(t) = welch_t(&a, &b) {
            tests.push(CropTest {
                percentile: p,
                below_cycles: below,
                fixed: a.len() as u64,
                random: b.len() as u64,
                t,
            });
        }
    };
    push(None, None);
    if pooled.is_empty() {
        return tests;
    }
    for k in 0..CROPS {
        let p = 100.0 * (1.0 - 0.5f64.powf(10.0 * (k as f64 + 1.0) / CROPS as f64));
        let below = percentile(&pooled, p).floor() as u64;
        push(Some(p), Some(below));
    }
    tests
}

/// How far the random class's calls lie from the fixed class's: the means
/// of the calls at or below the pooled samples' 90th percentile (the slow
/// tail left out, as a crop does), random minus fixed, and the fixed
/// class's mean, in cycles. None with a class empty below the cut.
pub fn shift(fixed: &[u64], random: &[u64]) -> Option<(f64, f64)> {
    let mut pooled: Vec<f64> = fixed.iter().chain(random).map(|&c| c as f64).collect();
    if pooled.is_empty() {
        return None;
    }
    pooled.sort_by(f64::total_cmp);
    let cut = percentile(&pooled, 90.0);
    let mean_below = |v: &[u64]| {
        let kept: Vec<f64> = v.iter().map(|&c| c as f64).filter(|&c| c <= cut).collect();
        (!kept.is_empty()).then(|| kept.iter().sum::<f64>() / kept.len() as f64)
    };
    let (f, r) = (mean_below(fixed)?, mean_below(random)?);
    Some((r - f, f))
}

/// The largest |t| of `tests`, None without a test.
pub fn max_abs_t(tests: &[CropTest]) -> Option<f64> {
    tests.iter().map(|t| t.t.abs()).reduce(f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welch_t_matches_the_formula_worked_by_hand() {
        // a: mean 3, var 2.5; b: mean 6, var 10 (n = 5 each):
        // t = (3 − 6) / √(2.5/5 + 10/5) = −3 / √2.5.
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        let b = [2.0, 4.0, 6.0, 8.0, 10.0];
        let t = welch_t(&a, &b).unwrap();
        assert!((t + 3.0 / 2.5f64.sqrt()).abs() < 1e-12, "{t}");
        assert_eq!(welch_t(&a, &a), Some(0.0));
        assert_eq!(welch_t(&[1.0], &a), None);
        assert_eq!(welch_t(&[7.0, 7.0], &[7.0, 7.0]), Some(0.0));
        assert_eq!(welch_t(&[8.0, 8.0], &[7.0, 7.0]), Some(1e9));
    }

    /// A deterministic stream of noise (SplitMix64) around `base`.
    fn noisy(n: usize, base: u64, seed: u64) -> Vec<u64> {
        let mut rng = crate::stats::SplitMix64(seed);
        (0..n).map(|_| base + rng.next_u64() % 200).collect()
    }

    #[test]
    fn one_distribution_gives_a_small_t_and_a_shift_a_large_one() {
        let fixed = noisy(4000, 10_000, 1);
        let same = noisy(4000, 10_000, 2);
        let tests = dudect_tests(&fixed, &same);
        assert_eq!(tests.len(), 1 + CROPS);
        assert!(max_abs_t(&tests).unwrap() < 4.5, "{tests:?}");
        // 30 cycles more in the random class: far beyond the noise.
        let shifted: Vec<u64> = same.iter().map(|c| c + 30).collect();
        assert!(max_abs_t(&dudect_tests(&fixed, &shifted)).unwrap() > 10.0);
    }

    #[test]
    fn the_shift_leaves_the_slow_tail_out() {
        let fixed = [100u64, 100, 100, 100, 100, 100, 100, 100, 100, 100_000];
        let random = [110u64, 110, 110, 110, 110, 110, 110, 110, 110, 110];
        let (shift, mean) = shift(&fixed, &random).unwrap();
        assert_eq!((shift, mean), (10.0, 100.0));
        assert_eq!(super::shift(&[], &[]), None);
    }

    #[test]
    fn a_slow_tail_in_one_class_is_cropped_and_a_crop_too_small_is_left_out() {
        let fixed = noisy(2000, 10_000, 3);
        let mut random = noisy(2000, 10_000, 4);
        // Interrupts: 1 % of the random class a hundred times slower.
        for c in random.iter_mut().step_by(100) {
            *c *= 100;
        }
        let tests = dudect_tests(&fixed, &random);
        let cropped = tests.iter().find(|t| t.percentile == Some(50.0)).unwrap();
        assert!(cropped.t.abs() < 4.5, "{cropped:?}");
        assert!(tests.iter().all(|t| t.fixed >= MIN_PER_CLASS));
        assert!(dudect_tests(&fixed[..20], &random[..20]).is_empty());
    }
}
