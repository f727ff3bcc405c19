//! Statistics for judging measured FPPs (the normal quantile, the Wilson
//! score interval, how many queries a measurement needs), and the log-space
//! binomial and Poisson probabilities the FPP formulas sum.

/// The standard normal quantile Φ⁻¹(p), by Acklam's rational approximation
/// (relative error below 1.2e-9). NaN outside (0, 1).
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    const P_LOW: f64 = 0.024_25;
    if !(p > 0.0 && p < 1.0) {
        return f64::NAN;
    }
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < P_LOW {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - P_LOW {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

/// The two-sided Wilson score interval for a binomial proportion:
/// `successes` out of `trials` at the given `confidence` (e.g. 0.999).
///
/// Returns `(0.0, 1.0)` for zero trials.
///
/// # Examples
///
/// ```
/// use filterlab_core::theory::wilson_interval;
///
/// let (low, high) = wilson_interval(100, 10_000, 0.95);
/// assert!(low < 0.01 && 0.01 < high);
/// assert!((low - 0.00823).abs() < 1e-4 && (high - 0.01215).abs() < 1e-4);
/// ```
pub fn wilson_interval(successes: u64, trials: u64, confidence: f64) -> (f64, f64) {
    if trials == 0 {
        return (0.0, 1.0);
    }
    let z = normal_quantile(0.5 + confidence / 2.0);
    let n = trials as f64;
    let x = successes as f64;
    let z2 = z * z;
    let center = (x + z2 / 2.0) / (n + z2);
    let half = z / (n + z2) * (x * (n - x) / n + z2 / 4.0).sqrt();
    ((center - half).max(0.0), (center + half).min(1.0))
}

/// Queries needed to measure an FPP near `fpp` with about `false_positives`
/// expected false positives (≈ 400 gives ±10% at 95%).
pub fn queries_for(fpp: f64, false_positives: f64) -> u64 {
    (false_positives / fpp).ceil() as u64
}

/// ln 2π.
const LN_2PI: f64 = 1.837_877_066_409_345_5;

/// Below this count the log-pmfs are summed factor by factor, exactly; above
/// it Loader's saddle-point form takes over, in constant time.
const DIRECT_TERMS: f64 = 15.0;

/// Stirling's error δ(x) = ln x! − (x + ½) ln x + x − ½ ln 2π, by its
/// asymptotic series; accurate to a few ulp for x > 15 (Loader 2000).
fn stirling_error(x: f64) -> f64 {
    const S0: f64 = 1.0 / 12.0;
    const S1: f64 = 1.0 / 360.0;
    const S2: f64 = 1.0 / 1260.0;
    const S3: f64 = 1.0 / 1680.0;
    const S4: f64 = 1.0 / 1188.0;
    let x2 = x * x;
    if x > 500.0 {
        (S0 - S1 / x2) / x
    } else if x > 80.0 {
        (S0 - (S1 - S2 / x2) / x2) / x
    } else if x > 35.0 {
        (S0 - (S1 - (S2 - S3 / x2) / x2) / x2) / x
    } else {
        (S0 - (S1 - (S2 - (S3 - S4 / x2) / x2) / x2) / x2) / x
    }
}

/// The deviance term x ln(x/μ) + μ − x ≥ 0, without cancellation when x ≈ μ
/// (Loader 2000, "Fast and accurate computation of binomial probabilities").
fn deviance(x: f64, mean: f64) -> f64 {
    if (x - mean).abs() < 0.1 * (x + mean) {
        let v = (x - mean) / (x + mean);
        let v2 = v * v;
        let mut sum = (x - mean) * v;
        let mut power = 2.0 * x * v;
        for j in 1..1000 {
            power *= v2;
            let next = sum + power / f64::from(2 * j + 1);
            if next == sum {
                break;
            }
            sum = next;
        }
        sum
    } else {
        x * (x / mean).ln() + mean - x
    }
}

/// ln P(X = x) for X ~ Binomial(n, p), with `q` = 1 − p passed in so that
/// callers can give it exactly. `x` is a whole number; `n` may be any real
/// at least x (counts beyond 2^53 are not exact in f64 anyway).
///
/// Accurate to about 1e-14 absolute for any n up to f64's range: small
/// counts are summed factor by factor, larger ones use Loader's saddle-point
/// form, which never subtracts two large logarithms. −∞ where P = 0.
pub(crate) fn ln_binomial_pmf(x: f64, n: f64, p: f64, q: f64) -> f64 {
    if !(0.0..=n).contains(&x) {
        return f64::NEG_INFINITY;
    }
    if p <= 0.0 || q <= 0.0 {
        let certain = if p <= 0.0 { 0.0 } else { n };
        return if x == certain { 0.0 } else { f64::NEG_INFINITY };
    }
    if x == n && x > DIRECT_TERMS {
        return n * if q < 0.5 { (-q).ln_1p() } else { p.ln() };
    }
    let rest = n - x;
    if x <= DIRECT_TERMS {
        // Σ ln((n − i)p / (i + 1)) + (n − x) ln q: every factor is a ratio
        // near the mean, so nothing large cancels. ln q from whichever of p
        // and q is given more precisely.
        let ln_q = if p < 0.5 { (-p).ln_1p() } else { q.ln() };
        let mut sum = rest * ln_q;
        let mut i = 0.0;
        while i < x {
            sum += ((n - i) * p / (i + 1.0)).ln();
            i += 1.0;
        }
        sum
    } else if rest <= DIRECT_TERMS {
        ln_binomial_pmf(rest, n, q, p)
    } else {
        stirling_error(n)
            - stirling_error(x)
            - stirling_error(rest)
            - deviance(x, n * p)
            - deviance(rest, n * q)
            - 0.5 * (LN_2PI + x.ln() + (-x / n).ln_1p())
    }
}

/// ln P(X = x) for X ~ Poisson(mean), x a whole number; as accurate as
/// [`ln_binomial_pmf`]. −∞ where P = 0.
pub(crate) fn ln_poisson_pmf(x: f64, mean: f64) -> f64 {
    if x < 0.0 {
        return f64::NEG_INFINITY;
    }
    if mean <= 0.0 {
        return if x == 0.0 { 0.0 } else { f64::NEG_INFINITY };
    }
    if x <= DIRECT_TERMS {
        let mut sum = -mean;
        let mut i = 1.0;
        while i <= x {
            sum += (mean / i).ln();
            i += 1.0;
        }
        sum
    } else {
        -stirling_error(x) - deviance(x, mean) - 0.5 * (LN_2PI + x.ln())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ln x! by summing logarithms (exact enough for small x).
    fn ln_factorial(x: u64) -> f64 {
        (2..=x).map(|i| (i as f64).ln()).sum()
    }

    #[test]
    fn stirling_error_matches_factorials() {
        for x in [16u64, 20, 31, 36, 50, 81, 100, 400, 501, 1000] {
            let xf = x as f64;
            let direct = ln_factorial(x) - (xf + 0.5) * xf.ln() + xf - 0.5 * LN_2PI;
            // The direct form cancels about ln x! ≈ 6000 down to 1e-4.
            let tolerance = 8.0 * f64::EPSILON * ln_factorial(x).max(1.0);
            assert!(
                (stirling_error(xf) - direct).abs() < tolerance,
                "x={x}: {} vs {direct}",
                stirling_error(xf)
            );
        }
    }

    #[test]
    fn binomial_pmf_matches_direct_sums_and_normalises() {
        for &(n, p) in &[
            (10u64, 0.3f64),
            (60, 0.5),
            (61, 0.01),
            (200, 0.9),
            (1000, 0.07),
            (5000, 0.5),
        ] {
            let q = 1.0 - p;
            let mut total = 0.0;
            for x in 0..=n {
                let direct = ln_factorial(n) - ln_factorial(x) - ln_factorial(n - x)
                    + x as f64 * p.ln()
                    + (n - x) as f64 * q.ln();
                let fast = ln_binomial_pmf(x as f64, n as f64, p, q);
                // The direct form itself loses ulps of the logarithms it sums.
                let scale = 2.0 * ln_factorial(n) + n as f64 * (p.ln().abs() + q.ln().abs());
                let tolerance = 1e-13 + 4.0 * f64::EPSILON * scale;
                assert!(
                    (fast - direct).abs() < tolerance,
                    "n={n} p={p} x={x}: {fast} vs {direct}"
                );
                total += fast.exp();
            }
            assert!((total - 1.0).abs() < 1e-12, "n={n} p={p}: {total}");
        }
        assert_eq!(ln_binomial_pmf(3.0, 2.0, 0.5, 0.5), f64::NEG_INFINITY);
        assert_eq!(ln_binomial_pmf(0.0, 5.0, 0.0, 1.0), 0.0);
        assert_eq!(ln_binomial_pmf(5.0, 5.0, 1.0, 0.0), 0.0);
        assert_eq!(ln_binomial_pmf(4.0, 5.0, 1.0, 0.0), f64::NEG_INFINITY);
    }

    #[test]
    fn binomial_pmf_for_huge_counts() {
        // n = 2^70 with a Poisson limit: the binomial must agree with it.
        let n = 2f64.powi(70);
        for (mean, x) in [
            (3.0, 0.0),
            (3.0, 5.0),
            (3.0, 64.0),
            (1e6, 1e6),
            (1e6, 1.001e6),
        ] {
            let p = mean / n;
            let binomial = ln_binomial_pmf(x, n, p, 1.0 - p);
            let poisson = ln_poisson_pmf(x, mean);
            assert!(
                (binomial - poisson).abs() < 1e-12 * (1.0 + poisson.abs()),
                "mean={mean} x={x}: {binomial} vs {poisson}"
            );
        }
        // Far tails stay finite in log space.
        assert!(ln_binomial_pmf(64.0, 6.4e7, 5.6e-8, 1.0 - 5.6e-8) < -100.0);
        assert!(ln_binomial_pmf(1e18, 2e19, 0.5, 0.5) < -1e18);
    }

    #[test]
    fn poisson_pmf_matches_direct_sums_and_normalises() {
        for mean in [0.001f64, 0.5, 7.0, 29.5, 31.0, 300.0] {
            let mut total = 0.0;
            for x in 0..2000u64 {
                let direct = x as f64 * mean.ln() - mean - ln_factorial(x);
                let fast = ln_poisson_pmf(x as f64, mean);
                assert!(
                    (fast - direct).abs() < 1e-12 * (1.0 + direct.abs()),
                    "mean={mean} x={x}: {fast} vs {direct}"
                );
                total += fast.exp();
            }
            assert!((total - 1.0).abs() < 1e-12, "mean={mean}: {total}");
        }
        assert_eq!(ln_poisson_pmf(0.0, 0.0), 0.0);
        assert_eq!(ln_poisson_pmf(1.0, 0.0), f64::NEG_INFINITY);
    }

    #[test]
    fn normal_quantiles() {
        assert!((normal_quantile(0.975) - 1.959_963_985).abs() < 1e-8);
        assert!((normal_quantile(0.9995) - 3.290_526_731).abs() < 1e-8);
        assert!((normal_quantile(0.5)).abs() < 1e-12);
        assert!((normal_quantile(0.001) + 3.090_232_306).abs() < 1e-8);
        assert!(normal_quantile(0.0).is_nan());
        assert!(normal_quantile(f64::NAN).is_nan());
    }

    #[test]
    fn wilson_edges() {
        assert_eq!(wilson_interval(0, 0, 0.99), (0.0, 1.0));
        let (low, high) = wilson_interval(0, 1000, 0.999);
        assert_eq!(low, 0.0);
        assert!(high > 0.0 && high < 0.02);
        let (low, high) = wilson_interval(1000, 1000, 0.999);
        assert!(low > 0.98 && high == 1.0);
    }
}
