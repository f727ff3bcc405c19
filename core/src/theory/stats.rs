//! Statistics for judging measured FPPs: the normal quantile, the Wilson
//! score interval, and how many queries a measurement needs.

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

#[cfg(test)]
mod tests {
    use super::*;

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
