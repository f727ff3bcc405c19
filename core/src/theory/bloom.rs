//! Standard Bloom filters: sizing optima, the classic and exact FPP, the
//! FPP given a filter's fill, and cardinality from the fill.

use std::f64::consts::LN_2;

use super::check_exact_hashes;
use crate::Error;

/// The real-valued optimal bit count of a standard Bloom filter for `items`
/// items at `fpp`: m = −n ln p / ln²2.
pub fn bloom_optimal_bits(items: u64, fpp: f64) -> f64 {
    -(items as f64) * fpp.ln() / (LN_2 * LN_2)
}

/// The real-valued optimal hash count for `bits_per_item`: k = (m/n) ln 2.
pub fn bloom_optimal_hashes(bits_per_item: f64) -> f64 {
    bits_per_item * LN_2
}

/// The classic Bloom FPP estimate (1 − (1 − 1/m)^{kn})^k.
///
/// It treats the bits as independent, which they are not; it is slightly
/// optimistic, noticeably so for small filters. See [`bloom_fpp_exact`].
pub fn bloom_fpp_classic(num_bits: u64, num_hashes: u32, items: u64) -> f64 {
    if num_bits == 0 {
        return 1.0;
    }
    let throws = f64::from(num_hashes) * items as f64;
    let zero_fraction = (throws * (-1.0 / num_bits as f64).ln_1p()).exp();
    (1.0 - zero_fraction).powi(num_hashes as i32)
}

/// The FPP of one Bloom filter instance given its fill: (X/m)^k.
///
/// Conditional on the number of set bits X, a never-inserted key's k probes
/// are independent uniform positions, so this is exact for that instance.
pub fn bloom_fpp_given_fill(set_bits: u64, num_bits: u64, num_hashes: u32) -> f64 {
    if num_bits == 0 {
        return 1.0;
    }
    (set_bits as f64 / num_bits as f64).powi(num_hashes as i32)
}

/// The number of distinct items in a Bloom filter estimated from its set bits
/// (Swamidass and Baldi 2007): n ≈ −(m/k) ln(1 − X/m).
///
/// Infinite when every bit is set.
pub fn bloom_estimate_items(set_bits: u64, num_bits: u64, num_hashes: u32) -> f64 {
    if num_bits == 0 || num_hashes == 0 {
        return 0.0;
    }
    let m = num_bits as f64;
    -(m / f64::from(num_hashes)) * (-(set_bits as f64) / m).ln_1p()
}

/// The exact FPP of a standard Bloom filter with `num_bits` bits and
/// `num_hashes` probes (drawn with replacement) after `items` insertions:
/// the expectation of (X/m)^k over the number X of set bits (Bose et al.
/// 2008, "On the false-positive rate of Bloom filters").
///
/// Evaluated as a sum of positive terms only, so it stays accurate down to
/// FPPs of 1e-300 and up to bit arrays of 2^64 bits:
/// `Σ_s P(k probes hit s distinct bits) · P(s given bits are all set)`,
/// where the second factor conditions on how many of the kn insertion probes
/// land among those s bits (a binomial) and then asks whether they cover all
/// s bits (a coupon-collector recurrence).
///
/// # Errors
///
/// [`crate::ErrorKind::InvalidParameter`] for more than
/// [`MAX_EXACT_HASHES`](super::MAX_EXACT_HASHES) probes.
///
/// # Examples
///
/// ```
/// use filterlab_core::theory::{bloom_fpp_classic, bloom_fpp_exact};
///
/// // Large filters: the two agree closely.
/// let exact = bloom_fpp_exact(9_585_059, 7, 1_000_000)?;
/// let classic = bloom_fpp_classic(9_585_059, 7, 1_000_000);
/// assert!((exact / classic - 1.0).abs() < 1e-4);
/// // Small filters: the classic formula is optimistic.
/// assert!(bloom_fpp_exact(64, 12, 7)? > bloom_fpp_classic(64, 12, 7) * 1.2);
/// # Ok::<(), filterlab_core::Error>(())
/// ```
pub fn bloom_fpp_exact(num_bits: u64, num_hashes: u32, items: u64) -> Result<f64, Error> {
    check_exact_hashes(num_hashes)?;
    if num_hashes == 0 || num_bits == 0 {
        return Ok(1.0);
    }
    if items == 0 {
        return Ok(0.0);
    }
    let m = num_bits as f64;
    let throws = f64::from(num_hashes) * items as f64;
    let distinct = distinct_bins_distribution(m, num_hashes as usize);
    let mut fpp = 0.0;
    for (s, &weight) in distinct.iter().enumerate().skip(1) {
        if weight > 0.0 && s as u64 <= num_bits {
            fpp += weight * all_covered(m, s, throws);
        }
    }
    Ok(fpp.min(1.0))
}

/// P(k uniform probes into m bins hit exactly s distinct bins), for s in 0..=k.
fn distinct_bins_distribution(m: f64, k: usize) -> Vec<f64> {
    let mut dist = vec![0.0; k + 1];
    dist[0] = 1.0;
    for _ in 0..k {
        for s in (1..=k).rev() {
            dist[s] = dist[s] * (s as f64 / m) + dist[s - 1] * (1.0 - (s - 1) as f64 / m);
        }
        dist[0] = 0.0;
    }
    dist
}

/// P(s given bins all receive at least one of `throws` uniform throws into m bins).
fn all_covered(m: f64, s: usize, throws: f64) -> f64 {
    let share = s as f64 / m;
    // Beyond this many throws into the s bins, P(one of them still empty) < 1e-30.
    let saturation = if s == 1 {
        1.0
    } else {
        ((1e-30 / s as f64).ln() / (-1.0 / s as f64).ln_1p()).ceil()
    };
    let mut coverage = CoverageChain::new(s);
    if share >= 1.0 {
        // Every throw lands in the s bins.
        return coverage.covered_after(throws.min(saturation) as u64);
    }
    let mean = throws * share;
    let spread = (throws * share * (1.0 - share)).sqrt();
    let tail_end = (mean + 15.0 * spread + 30.0).min(throws);
    let last = tail_end.min(saturation.max(s as f64));
    let log_odds = share.ln() - (-share).ln_1p();
    let mut log_pmf = throws * (-share).ln_1p();
    let mut total = 0.0;
    let mut mass_seen = 0.0;
    let mut j = 0.0;
    while j <= last {
        let pmf = log_pmf.exp();
        mass_seen += pmf;
        total += pmf * coverage.covered_after(j as u64);
        log_pmf += ((throws - j) / (j + 1.0)).ln() + log_odds;
        j += 1.0;
    }
    if last < tail_end {
        // The rest of the binomial mass lies past saturation, where coverage is 1.
        total += (1.0 - mass_seen).max(0.0);
    }
    total
}

/// The distribution of covered bins as throws into s bins accumulate.
struct CoverageChain {
    bins: usize,
    /// P(c bins covered), c in 0..=bins, after `throws` throws.
    dist: Vec<f64>,
    throws: u64,
}

impl CoverageChain {
    fn new(bins: usize) -> Self {
        let mut dist = vec![0.0; bins + 1];
        dist[0] = 1.0;
        Self {
            bins,
            dist,
            throws: 0,
        }
    }

    /// P(all bins covered) after `throws` throws; calls must not go backwards.
    fn covered_after(&mut self, throws: u64) -> f64 {
        let s = self.bins as f64;
        while self.throws < throws {
            for c in (1..=self.bins).rev() {
                self.dist[c] = self.dist[c] * (c as f64 / s)
                    + self.dist[c - 1] * ((self.bins - c + 1) as f64 / s);
            }
            self.dist[0] = 0.0;
            self.throws += 1;
        }
        self.dist[self.bins]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::theory::{hash_bits_needed, lower_bound_bits_per_item};

    /// The distribution of set bits by brute-force Markov chain over every
    /// throw; only feasible for small m and n.
    fn exact_by_occupancy_chain(m: usize, k: u32, n: u64) -> f64 {
        let mut dist = vec![0.0; m + 1];
        dist[0] = 1.0;
        for _ in 0..(u64::from(k) * n) {
            for x in (1..=m).rev() {
                dist[x] =
                    dist[x] * (x as f64 / m as f64) + dist[x - 1] * ((m - x + 1) as f64 / m as f64);
            }
            dist[0] = 0.0;
        }
        dist.iter()
            .enumerate()
            .map(|(x, p)| p * (x as f64 / m as f64).powi(k as i32))
            .sum()
    }

    #[test]
    fn exact_matches_occupancy_chain() {
        for &(m, k, n) in &[
            (64, 3, 10),
            (64, 6, 8),
            (100, 1, 50),
            (256, 4, 30),
            (1000, 7, 100),
            (500, 2, 2000),
            (8, 3, 40),
        ] {
            let by_chain = exact_by_occupancy_chain(m as usize, k, n);
            let exact = bloom_fpp_exact(m, k, n).unwrap();
            let rel = (exact / by_chain - 1.0).abs();
            assert!(rel < 1e-9, "m={m} k={k} n={n}: {exact} vs {by_chain}");
        }
    }

    #[test]
    fn exact_approaches_classic_for_large_filters() {
        for &(m, k, n) in &[
            (9_585_059u64, 7u32, 1_000_000u64),
            (1 << 36, 10, 4_000_000_000),
            (47_925_291_746, 47, 1_000_000_000),
        ] {
            let exact = bloom_fpp_exact(m, k, n).unwrap();
            let classic = bloom_fpp_classic(m, k, n);
            assert!(exact >= classic * (1.0 - 1e-9), "{exact} < {classic}");
            assert!((exact / classic - 1.0).abs() < 1e-3, "{exact} vs {classic}");
        }
    }

    #[test]
    fn exact_edge_cases() {
        assert_eq!(bloom_fpp_exact(100, 3, 0).unwrap(), 0.0);
        assert_eq!(bloom_fpp_exact(100, 0, 5).unwrap(), 1.0);
        assert_eq!(bloom_fpp_exact(0, 3, 5).unwrap(), 1.0);
        // One bit: after any insertion it is set.
        assert!((bloom_fpp_exact(1, 3, 1).unwrap() - 1.0).abs() < 1e-12);
        // Hugely overfilled: saturates to 1 without looping over every throw.
        assert!((bloom_fpp_exact(1000, 5, 1_000_000_000).unwrap() - 1.0).abs() < 1e-12);
        // Tiny FPPs stay positive and finite.
        let tiny = bloom_fpp_exact(1 << 40, 20, 1000).unwrap();
        let classic = bloom_fpp_classic(1 << 40, 20, 1000);
        assert!(
            tiny > 0.0 && (tiny / classic - 1.0).abs() < 1e-3,
            "{tiny} vs {classic}"
        );
        // Monotone in items.
        let mut previous = 0.0;
        for n in [1u64, 10, 100, 1000, 10_000] {
            let fpp = bloom_fpp_exact(20_000, 5, n).unwrap();
            assert!(fpp > previous);
            previous = fpp;
        }
    }

    #[test]
    fn sizing_formulas() {
        let m = bloom_optimal_bits(1_000_000, 0.01);
        assert!((m - 9_585_058.4).abs() < 1.0);
        assert!((bloom_optimal_hashes(m / 1e6) - 6.64).abs() < 0.01);
        assert!((lower_bound_bits_per_item(0.01) - 6.644).abs() < 1e-3);
        assert!(hash_bits_needed(1_000_000_000, 1e-14) > 64.0);
        let estimate = bloom_estimate_items(4_792_530, 9_585_059, 7);
        assert!((estimate - 949_000.0).abs() < 1000.0, "{estimate}");
    }
}
