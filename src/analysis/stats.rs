//! Robust statistics over per-item costs: median, percentile-bootstrap CI of
//! the median, MAD, quantiles, Tukey outlier counts, and the least-squares
//! line the harness uses to remove the timer's fixed overhead.

use super::interval::Figure;
use serde::{Deserialize, Serialize};

/// Quantile `q` in [0, 1] of sorted data, linear interpolation between order
/// statistics (Hyndman & Fan type 7, what R and NumPy use by default).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    assert!(!sorted.is_empty(), "quantile of an empty sample");
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    let frac = pos - lo as f64;
    sorted[lo] + (sorted[hi] - sorted[lo]) * frac
}

pub fn median(sorted: &[f64]) -> f64 {
    quantile(sorted, 0.5)
}

/// The root mean square of steps (changes from one reading to the next,
/// centred on zero) leaving out those beyond three deviations of the
/// median step's size (a normal step's median absolute value is 0.6745 of
/// its deviation), and how many it kept. One odd reading between steady
/// ones steps away and back, and squared, those two steps alone would pass
/// for a spread the readings around them do not have.
pub fn clipped_rms_step(steps: &[f64]) -> Option<(f64, usize)> {
    let mut sizes: Vec<f64> = steps.iter().map(|s| s.abs()).collect();
    if sizes.is_empty() || sizes.iter().any(|s| !s.is_finite()) {
        return None;
    }
    sizes.sort_by(f64::total_cmp);
    let limit = 3.0 * median(&sizes) / 0.6745;
    let kept: Vec<f64> = sizes.into_iter().filter(|s| *s <= limit).collect();
    let rms = (kept.iter().map(|s| s * s).sum::<f64>() / kept.len() as f64).sqrt();
    Some((rms, kept.len()))
}

/// The central `confidence` interval of sorted draws (a bootstrap
/// distribution): the percentile interval.
pub fn central_interval(sorted: &[f64], confidence: f64) -> (f64, f64) {
    let alpha = (1.0 - confidence) / 2.0;
    (quantile(sorted, alpha), quantile(sorted, 1.0 - alpha))
}

/// A normal distribution's standard deviation in median absolute
/// deviations: a MAD times this is a standard deviation that one wild value
/// cannot inflate.
pub const MAD_TO_SD: f64 = 1.4826;

/// The standard deviation that `distances` (values' distances from their
/// centre) read as a normal's: [`MAD_TO_SD`] times their median, or where
/// that is nought (a row at one of two tick levels, most values on the
/// centre) √(π/2) times their mean, the spread it has. Nought for none.
pub fn robust_sd(distances: &mut [f64]) -> f64 {
    if distances.is_empty() {
        return 0.0;
    }
    let mean = distances.iter().sum::<f64>() / distances.len() as f64;
    match median_in_place(distances) {
        0.0 => MEAN_DISTANCE_TO_SD * mean,
        median => MAD_TO_SD * median,
    }
}

/// A normal deviation's standard deviation over its mean size, √(π/2).
const MEAN_DISTANCE_TO_SD: f64 = 1.2533;

/// Median absolute deviation from `center`, unscaled (in the data's unit).
pub fn mad(values: &[f64], center: f64) -> f64 {
    let mut dev: Vec<f64> = values.iter().map(|v| (v - center).abs()).collect();
    dev.sort_by(f64::total_cmp);
    median(&dev)
}

/// Counts of samples outside Tukey's fences: mild beyond 1.5 IQR from the
/// quartiles, severe beyond 3 IQR.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TukeyOutliers {
    pub low_severe: usize,
    pub low_mild: usize,
    pub high_mild: usize,
    pub high_severe: usize,
}

impl TukeyOutliers {
    pub fn total(&self) -> usize {
        self.low_severe + self.low_mild + self.high_mild + self.high_severe
    }
}

pub fn tukey_outliers(sorted: &[f64]) -> TukeyOutliers {
    let q1 = quantile(sorted, 0.25);
    let q3 = quantile(sorted, 0.75);
    let iqr = q3 - q1;
    let mut out = TukeyOutliers::default();
    for &v in sorted {
        if v < q1 - 3.0 * iqr {
            out.low_severe += 1;
        } else if v < q1 - 1.5 * iqr {
            out.low_mild += 1;
        } else if v > q3 + 3.0 * iqr {
            out.high_severe += 1;
        } else if v > q3 + 1.5 * iqr {
            out.high_mild += 1;
        }
    }
    out
}

/// Medians of `blocks` consecutive, equal-as-possible runs of `values`.
pub fn block_medians(values: &[f64], blocks: usize) -> Vec<f64> {
    let size = values.len().div_ceil(blocks.max(1)).max(1);
    values
        .chunks(size)
        .map(|chunk| {
            let mut sorted = chunk.to_vec();
            sorted.sort_by(f64::total_cmp);
            median(&sorted)
        })
        .collect()
}

/// Percentile-bootstrap confidence interval of the median.
///
/// Seeded, so the same samples always give the same interval: a rerun of the
/// analysis must not move the reported CI.
pub fn bootstrap_median_ci(
    values: &[f64],
    confidence: f64,
    resamples: usize,
    seed: u64,
) -> (f64, f64) {
    central_interval(&bootstrap_medians(values, resamples, seed), confidence)
}

/// The median of `values` and its bootstrap 95% interval over `resamples`
/// draws seeded with `seed`.
pub fn median_with_ci(values: &[f64], resamples: usize, seed: u64) -> Figure {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let (lo, hi) = bootstrap_median_ci(values, 0.95, resamples, seed);
    Figure::new(median(&sorted), Some([lo, hi]))
}

/// The medians of `resamples` bootstrap resamples of `values`, sorted.
pub fn bootstrap_medians(values: &[f64], resamples: usize, seed: u64) -> Vec<f64> {
    assert!(!values.is_empty(), "bootstrap of an empty sample");
    let n = values.len();
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut scratch = vec![0.0; n];
    let mut medians = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        for slot in scratch.iter_mut() {
            *slot = values[rng.usize(..n)];
        }
        medians.push(median_in_place(&mut scratch));
    }
    medians.sort_by(f64::total_cmp);
    medians
}

/// `q`-quantile of `b` minus that of `a`, two independent samples of one
/// figure taken under two conditions, with a bootstrap interval at
/// `confidence` (each sample resampled on its own). A low `q` compares the
/// two conditions in the machine's quiet state: noise only ever adds time,
/// so the lower part of each sample is where both were measured alike.
pub fn quantile_difference(
    a: &[f64],
    b: &[f64],
    q: f64,
    confidence: f64,
    resamples: usize,
    seed: u64,
) -> Option<Figure> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let sorted = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v
    };
    let at = |v: &[f64]| quantile(&sorted(v), q);
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut draw =
        |v: &[f64]| -> Vec<f64> { (0..v.len()).map(|_| v[rng.usize(..v.len())]).collect() };
    let mut differences: Vec<f64> = (0..resamples)
        .map(|_| {
            let (ra, rb) = (draw(a), draw(b));
            at(&rb) - at(&ra)
        })
        .collect();
    differences.sort_by(f64::total_cmp);
    let (lo, hi) = central_interval(&differences, confidence);
    Some(Figure::new(at(b) - at(a), Some([lo, hi])))
}

/// Quantile `q` of unsorted data, which is left as it is; None when empty.
pub fn quantile_of(values: &[f64], q: f64) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    (!sorted.is_empty()).then(|| quantile(&sorted, q))
}

/// The largest of unsorted data; None when empty.
pub fn max_of(values: &[f64]) -> Option<f64> {
    values.iter().copied().max_by(f64::total_cmp)
}

/// Arithmetic mean; NaN when empty.
pub fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// Median of unsorted data, which is left as it is; None when empty.
pub fn median_of(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| median_in_place(&mut values.to_vec()))
}

/// Median of unsorted data in O(n), reordering it: the same figure as
/// [`median`] of the sorted data, to the last bit (one interpolation rule),
/// for bootstraps that take thousands of medians of small resamples, where
/// sorting each was most of a comparison's time.
pub fn median_in_place(values: &mut [f64]) -> f64 {
    let n = values.len();
    assert!(n > 0, "median of an empty sample");
    let mid = n / 2;
    let (_, &mut upper, _) = values.select_nth_unstable_by(mid, f64::total_cmp);
    if n % 2 == 1 {
        upper
    } else {
        let lower = values[..mid]
            .iter()
            .copied()
            .max_by(f64::total_cmp)
            .expect("an even sample has a lower half");
        lower + (upper - lower) * 0.5
    }
}

/// A bootstrap resample of `n` values kept as counts: how many times each
/// index was drawn, in the order drawn from `rng` (the same draws as
/// indexing the values one by one), so a median is read by one walk over
/// the values in ascending order instead of a sort of each resample.
pub fn draw_counts(rng: &mut fastrand::Rng, n: usize, counts: &mut Vec<u32>) {
    counts.clear();
    counts.resize(n, 0);
    for _ in 0..n {
        counts[rng.usize(..n)] += 1;
    }
}

/// The median of a resample given as (value, times drawn) in ascending
/// order of value, `n` draws in all: the same figure as [`median`] of the
/// resample sorted.
pub fn median_of_counted(ascending: impl IntoIterator<Item = (f64, u32)>, n: usize) -> f64 {
    let (lower_rank, upper_rank) = ((n.max(1) - 1) / 2, n / 2);
    let (mut seen, mut lower) = (0, None);
    for (value, times) in ascending {
        seen += times as usize;
        if seen > lower_rank && lower.is_none() {
            lower = Some(value);
        }
        if seen > upper_rank {
            let lower = lower.unwrap_or(value);
            return lower + (value - lower) * 0.5;
        }
    }
    panic!("median of a resample of {n} draws that holds {seen}")
}

/// A least-squares line `y = intercept + slope * x`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LineFit {
    pub slope: f64,
    pub intercept: f64,
    /// Coefficient of determination; 1 when every point is on the line.
    pub r2: f64,
}

/// Ordinary least squares with an intercept: a fixed per-sample cost (the
/// timer's own start/stop) lands in the intercept instead of biasing the
/// slope. Needs at least two distinct x values.
pub fn fit_line(xs: &[f64], ys: &[f64]) -> Option<LineFit> {
    assert_eq!(xs.len(), ys.len());
    if xs.len() < 2 {
        return None;
    }
    let n = xs.len() as f64;
    let mean_x = xs.iter().sum::<f64>() / n;
    let mean_y = ys.iter().sum::<f64>() / n;
    let sxx: f64 = xs.iter().map(|x| (x - mean_x).powi(2)).sum();
    let sxy: f64 = xs
        .iter()
        .zip(ys)
        .map(|(x, y)| (x - mean_x) * (y - mean_y))
        .sum();
    if sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let intercept = mean_y - slope * mean_x;
    Some(LineFit {
        slope,
        intercept,
        r2: r_squared(xs, ys, slope, intercept),
    })
}

/// Least squares for the slope of a line through a known intercept: the
/// right fit when the intercept was measured on its own, more precisely than
/// the other points could place it. Needs one x other than 0.
pub fn fit_slope_through(intercept: f64, xs: &[f64], ys: &[f64]) -> Option<LineFit> {
    assert_eq!(xs.len(), ys.len());
    let sxx: f64 = xs.iter().map(|x| x * x).sum();
    if sxx <= 0.0 {
        return None;
    }
    let slope = xs
        .iter()
        .zip(ys)
        .map(|(x, y)| x * (y - intercept))
        .sum::<f64>()
        / sxx;
    Some(LineFit {
        slope,
        intercept,
        r2: r_squared(xs, ys, slope, intercept),
    })
}

/// The share of the variance of `ys` the line explains.
fn r_squared(xs: &[f64], ys: &[f64], slope: f64, intercept: f64) -> f64 {
    let mean_y = ys.iter().sum::<f64>() / ys.len() as f64;
    let total: f64 = ys.iter().map(|y| (y - mean_y).powi(2)).sum();
    let residual: f64 = xs
        .iter()
        .zip(ys)
        .map(|(x, y)| (y - intercept - slope * x).powi(2))
        .sum();
    if total == 0.0 {
        1.0
    } else {
        1.0 - residual / total
    }
}

/// The amortization model every batching probe shares:
/// cost per item(B) = per_item + per_batch / B.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Amortization {
    /// The work every item pays.
    pub per_item: Figure,
    /// The toll each batch (each call, crossing, flush) pays once.
    pub per_batch: Figure,
    pub r2: f64,
    pub points: usize,
}

/// Fits `cost = per_item + per_batch / batch` by least squares on 1/B, with
/// 95% intervals from the residuals (Student's t with points - 2 degrees of
/// freedom), so a curve the model does not describe gets wide intervals.
/// Needs three points and two distinct batch sizes.
pub fn fit_amortization(batches: &[f64], costs: &[f64]) -> Option<Amortization> {
    let k = batches.len();
    if k < 3 || batches.iter().any(|&b| b <= 0.0) {
        return None;
    }
    let xs: Vec<f64> = batches.iter().map(|b| 1.0 / b).collect();
    let line = fit_line(&xs, costs)?;
    let mean_x = xs.iter().sum::<f64>() / k as f64;
    let sxx: f64 = xs.iter().map(|x| (x - mean_x).powi(2)).sum();
    let rss: f64 = xs
        .iter()
        .zip(costs)
        .map(|(x, y)| (y - line.intercept - line.slope * x).powi(2))
        .sum();
    let sigma2 = rss / (k - 2) as f64;
    let se_slope = (sigma2 / sxx).sqrt();
    let se_intercept = (sigma2 * (1.0 / k as f64 + mean_x * mean_x / sxx)).sqrt();
    let t = student_t_975((k - 2) as f64);
    Some(Amortization {
        per_item: Figure::within(line.intercept, Some(t * se_intercept)),
        per_batch: Figure::within(line.slope, Some(t * se_slope)),
        r2: line.r2,
        points: k,
    })
}

/// The normal distribution's 97.5% and 80% points: the t table's last row.
pub const NORMAL_975: f64 = 1.96;
pub const NORMAL_80: f64 = 0.8416;

/// Student's t for 1 to 30 degrees of freedom, at 97.5% and at 80%.
const T_975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];
const T_80: [f64; 30] = [
    1.376, 1.061, 0.978, 0.941, 0.920, 0.906, 0.896, 0.889, 0.883, 0.879, 0.876, 0.873, 0.870,
    0.868, 0.866, 0.865, 0.863, 0.862, 0.861, 0.860, 0.859, 0.858, 0.858, 0.857, 0.856, 0.856,
    0.855, 0.855, 0.854, 0.854,
];

/// Degrees of freedom from which Student's t is read as the normal: t on
/// 1,000 df stands 0.1% above it.
const T_NORMAL_FROM: f64 = 1_000.0;

/// Student's t point with two-sided tail `p` on `dof` degrees of freedom:
/// the table's row where `dof` is a whole number it holds, the normal from
/// [`T_NORMAL_FROM`], and [`t_point`] between (fractional degrees of
/// freedom, and 31 to 999, where reading the normal would be narrow by up
/// to 4%). Infinite on 0; under 1 read as 1, as [`t_two_sided_p`] does.
fn t_of(table: &[f64; 30], normal: f64, p: f64, dof: f64) -> f64 {
    if dof.is_nan() || dof <= 0.0 {
        f64::INFINITY
    } else if dof >= T_NORMAL_FROM {
        normal
    } else if dof <= 1.0 {
        table[0]
    } else if dof.fract() == 0.0 && dof <= table.len() as f64 {
        table[dof as usize - 1]
    } else {
        t_point(p, dof)
    }
}

/// The 97.5th percentile of Student's t distribution.
pub fn student_t_975(dof: f64) -> f64 {
    t_of(&T_975, NORMAL_975, 0.05, dof)
}

/// Student's t, one-sided 80% point (the power a detectable change is
/// stated at): its two-sided tail is 40%.
pub fn student_t_80(dof: f64) -> f64 {
    t_of(&T_80, NORMAL_80, 0.40, dof)
}

/// Student's t point whose two-sided tail is `p` on `dof` degrees of
/// freedom, fractional ones too: the inverse of [`t_two_sided_p`]. A spread
/// pooled from sources of unequal weight stands on fractional degrees of
/// freedom (Welch-Satterthwaite: 1.6 from three runs' successive
/// differences), and its verdict's p-value is read on them; the printed
/// half-width must be the same point, not the table's row below it (t on 1
/// df is 12.7, on 1.6 it is 5.5).
///
/// Newton's method on the tail (its slope is twice t's density), kept
/// inside a bracket that every step shrinks, bisecting where a step would
/// leave it: a handful of tail evaluations where bisection alone took a
/// hundred, which mattered because compare asks for it at every candidate
/// number of runs of every row (`Evidence::runs_to_detect`).
pub fn t_point(p: f64, dof: f64) -> f64 {
    if p >= 1.0 {
        return 0.0;
    }
    if p.is_nan() || p <= 0.0 || dof.is_nan() || dof <= 0.0 {
        return f64::INFINITY;
    }
    let dof = dof.max(1.0);
    let (mut low, mut high) = (0.0, 1.0);
    while t_two_sided_p(high, dof) > p {
        low = high;
        high *= 2.0;
        if high > 1e12 {
            return f64::INFINITY;
        }
    }
    // ln of the density's constant: Γ((ν+1)/2) / (√(νπ) Γ(ν/2)).
    let scale =
        ln_gamma((dof + 1.0) / 2.0) - ln_gamma(dof / 2.0) - 0.5 * (dof * std::f64::consts::PI).ln();
    let density = |t: f64| (scale - (dof + 1.0) / 2.0 * (t * t / dof).ln_1p()).exp();
    let mut t = 0.5 * (low + high);
    for _ in 0..100 {
        let tail = t_two_sided_p(t, dof);
        if tail > p {
            low = t;
        } else {
            high = t;
        }
        let step = (tail - p) / (2.0 * density(t));
        let next = match t + step {
            n if n > low && n < high => n,
            _ => 0.5 * (low + high),
        };
        if (next - t).abs() <= 4.0 * f64::EPSILON * t || high - low <= f64::EPSILON * high {
            return next;
        }
        t = next;
    }
    t
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, nine terms: about 15 digits).
pub fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1 - x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let sum = C[1..]
        .iter()
        .enumerate()
        .fold(C[0], |acc, (i, c)| acc + c / (x + i as f64 + 1.0));
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// The regularized incomplete beta function I_x(a, b), by its continued
/// fraction (Lentz), on the side of x where it converges fast.
pub fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(x, a, b) / a
    } else {
        1.0 - front * beta_fraction(1.0 - x, b, a) / b
    }
}

fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (mut c, mut d) = (1.0, 1.0 - (a + b) * x / (a + 1.0));
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..300 {
        let m = f64::from(m);
        let even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        for coefficient in [
            even,
            -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0)),
        ] {
            d = 1.0 + coefficient * d;
            if d.abs() < TINY {
                d = TINY;
            }
            c = 1.0 + coefficient / c;
            if c.abs() < TINY {
                c = TINY;
            }
            d = 1.0 / d;
            h *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-12 {
            break;
        }
    }
    h
}

/// The two-sided p-value of Student's t statistic `t` on `dof` degrees of
/// freedom: P(|T| >= |t|) = I_{dof/(dof + t²)}(dof/2, 1/2).
pub fn t_two_sided_p(t: f64, dof: f64) -> f64 {
    if !t.is_finite() {
        return 0.0;
    }
    let dof = dof.max(1.0);
    incomplete_beta(dof / (dof + t * t), dof / 2.0, 0.5).clamp(0.0, 1.0)
}

/// The upper tail of Student's t: P(T >= t), either sign of t.
pub fn t_upper_p(t: f64, dof: f64) -> f64 {
    let tail = t_two_sided_p(t, dof) / 2.0;
    if t >= 0.0 { tail } else { 1.0 - tail }
}

/// The upper tail of Snedecor's F on (`d1`, `d2`) degrees of freedom:
/// P(F >= f) = I_{d2/(d2 + d1·f)}(d2/2, d1/2), the p-value of a variance
/// ratio f whose numerator stands on d1 degrees of freedom.
pub fn f_upper_p(f: f64, d1: f64, d2: f64) -> f64 {
    if !f.is_finite() {
        return 0.0;
    }
    if f <= 0.0 {
        return 1.0;
    }
    let (d1, d2) = (d1.max(1.0), d2.max(1.0));
    incomplete_beta(d2 / (d2 + d1 * f), d2 / 2.0, d1 / 2.0).clamp(0.0, 1.0)
}

/// Benjamini-Hochberg at false discovery rate `q`: which of `p_values` are
/// discoveries. The largest k with p_(k) <= k·q/m, and every p at or below
/// it; under no true change at all, any discovery happens with
/// probability at most q.
pub fn benjamini_hochberg(p_values: &[f64], q: f64) -> Vec<bool> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]));
    let cut = order
        .iter()
        .enumerate()
        .filter(|&(k, &i)| p_values[i] <= (k + 1) as f64 * q / m as f64)
        .map(|(k, _)| k + 1)
        .max()
        .unwrap_or(0);
    let mut found = vec![false; m];
    for &i in &order[..cut] {
        found[i] = true;
    }
    found
}

/// Everything reported about one distribution of per-item costs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    /// The median and its bootstrap 95% interval (read as one only from
    /// [`Summary::MIN_FOR_CI`] samples on: [`Summary::has_ci`]).
    pub median: Figure,
    pub mad: f64,
    pub p99: f64,
    pub min: f64,
    pub max: f64,
    pub outliers: TukeyOutliers,
    /// Medians of consecutive quarters of the samples, in the order taken.
    /// They agree within noise when the machine held still.
    pub block_medians: Vec<f64>,
}

impl Summary {
    /// Fewer samples than this give no honest bootstrap interval of the
    /// median (one sample's "interval" is the sample itself).
    pub const MIN_FOR_CI: usize = 5;

    pub fn has_ci(&self) -> bool {
        self.n >= Self::MIN_FOR_CI
    }

    /// Bootstrap resamples used for reported intervals.
    pub const RESAMPLES: usize = 2000;
    /// ... and for one round's own interval: it is a second-order figure
    /// beside the round-level one, and a round must stay cheap to analyse.
    pub const ROUND_RESAMPLES: usize = 100;

    pub fn of(values: &[f64], resamples: usize) -> Summary {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let median = median(&sorted);
        let replicates = bootstrap_medians(values, resamples, 0x6d69_7462_656e_6368);
        let (lo, hi) = central_interval(&replicates, 0.95);
        Summary {
            n: sorted.len(),
            median: Figure::new(median, Some([lo, hi])),
            mad: mad(&sorted, median),
            p99: quantile(&sorted, 0.99),
            min: sorted[0],
            max: sorted[sorted.len() - 1],
            outliers: tukey_outliers(&sorted),
            block_medians: block_medians(values, Self::BLOCKS),
        }
    }

    /// Chronological blocks compared for drift.
    pub const BLOCKS: usize = 4;

    /// Spread of the block medians: how far the cost moved while measuring.
    pub fn drift(&self) -> f64 {
        let max = self
            .block_medians
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        let min = self
            .block_medians
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        if self.block_medians.is_empty() {
            0.0
        } else {
            max - min
        }
    }
}
