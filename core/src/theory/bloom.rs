//! Standard Bloom filters: sizing optima, the classic and exact FPP, the
//! FPP given a filter's fill, and cardinality from the fill.

use std::f64::consts::LN_2;

use super::stats::ln_binomial_pmf;
use super::support::{check_exact_hashes, pow_hashes};
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
/// It treats the bits as independent, which they are not; by Jensen's
/// inequality it is a lower bound on the exact FPP ([`bloom_fpp_exact`]),
/// noticeably low for small filters. The fill is computed with `expm1`, so
/// the bound stays accurate for very sparse arrays too.
pub fn bloom_fpp_classic(num_bits: u64, num_hashes: u32, items: u64) -> f64 {
    if num_bits == 0 {
        return 1.0;
    }
    let throws = f64::from(num_hashes) * items as f64;
    let fill = -(throws * (-1.0 / num_bits as f64).ln_1p()).exp_m1();
    pow_hashes(fill, num_hashes)
}

/// The FPP of one Bloom filter instance given its fill: (X/m)^k.
///
/// Conditional on the number of set bits X, a never-inserted key's k probes
/// are independent uniform positions, so this is exact for that instance.
pub fn bloom_fpp_given_fill(set_bits: u64, num_bits: u64, num_hashes: u32) -> f64 {
    if num_bits == 0 {
        return 1.0;
    }
    pow_hashes(set_bits as f64 / num_bits as f64, num_hashes)
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
/// Evaluated as `Σ_s P(k probes hit s distinct bits) · P(s given bits are
/// all set)`, a sum of positive terms. The second factor is computed one of
/// two ways, both exact:
///
/// - when the s bits are likely all set (s·(1 − 1/m)^{kn} ≤ ½, so the
///   probability is at least ½ by Bonferroni), by inclusion–exclusion,
///   `Σ_i (−1)^i C(s, i) (1 − i/m)^{kn}`, whose terms then fall like 2^{−i}/i!;
/// - otherwise as a sum over the number j ≥ s of insertion probes landing
///   among the s bits (a binomial, in log space) times the probability that
///   j probes cover s bits (the Stirling-number recurrence, shared by all s).
///   The sum starts at j = s, the least that can cover s bits, and stops
///   once the binomial tail left is below 1e-17 of the sum so far.
///
/// The cost is bounded for every input: O(k²) plus O(k · j) for the sparse
/// sum, where j stays below about k ln 2k + 10√(k ln 2k) (about a millisecond
/// at k = [`MAX_EXACT_HASHES`](super::MAX_EXACT_HASHES), microseconds for
/// the usual k ≤ 30), whatever m and n are.
///
/// Accuracy: relative error below 1e-12 for every result of at least 1e-300
/// (the smallest target [`check_fpp`](crate::sizing::check_fpp) accepts);
/// smaller results carry an absolute error of about 1e-320 (f64's
/// subnormal range) and round to 0 below 5e-324, as any f64 must.
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
/// // Sparse arrays with many probes: still exact, still above the classic bound.
/// let sparse = bloom_fpp_exact(1_152_153_536, 64, 1_000_000)?;
/// assert!(sparse >= bloom_fpp_classic(1_152_153_536, 64, 1_000_000));
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
    let throws = f64::from(num_hashes) * items as f64;
    Ok(ExactBloom::new(num_bits, num_hashes).fpp(throws))
}

/// The exact FPP of Bloom filters of one (m, k) after any number of
/// throws: what [`bloom_fpp_exact`] evaluates, with the part that depends on
/// (m, k) alone computed once (a blocked filter's table evaluates one
/// block's FPP at many loads).
#[derive(Clone, Debug)]
pub(super) struct ExactBloom {
    bits: f64,
    /// P(k probes hit exactly s distinct bits), s in 0..=min(k, m).
    distinct: Vec<f64>,
}

/// Relative size of the tail a sum may leave out.
const TAIL: f64 = 1e-17;

/// At most this many inclusion–exclusion terms are needed: they fall like
/// q^i / i! with q ≤ ½, and 2^-17 / 17! < 1e-19.
const INCLUSION_EXCLUSION_TERMS: usize = 24;

impl ExactBloom {
    /// For m ≥ 1 bits and k ≥ 1 probes.
    pub(super) fn new(num_bits: u64, num_hashes: u32) -> Self {
        let m = num_bits as f64;
        let mut distinct = distinct_bins_distribution(m, num_hashes as usize);
        let most = u64::from(num_hashes).min(num_bits) as usize;
        distinct.truncate(most + 1);
        Self { bits: m, distinct }
    }

    /// The largest number of distinct bits k probes can hit: min(k, m).
    pub(super) fn most_distinct(&self) -> usize {
        self.distinct.len() - 1
    }

    /// The smallest number of throws from which every s is summed by
    /// inclusion–exclusion, s·(1 − 1/m)^throws ≤ ½ for s = min(k, m).
    pub(super) fn dense_from(&self) -> f64 {
        let most = self.most_distinct() as f64;
        let ln_keep = (-1.0 / self.bits).ln_1p();
        if ln_keep == f64::NEG_INFINITY {
            1.0
        } else {
            (-(2.0 * most).ln() / ln_keep).ceil().max(1.0)
        }
    }

    /// E[(X/m)^k] after `throws` ≥ 1 uniform throws.
    pub(super) fn fpp(&self, throws: f64) -> f64 {
        let m = self.bits;
        // P(a given bit is still clear after all throws).
        let clear = (throws * (-1.0 / m).ln_1p()).exp();
        let mut powers: Vec<f64> = Vec::new();
        let mut total = 0.0;
        let mut sparse = Vec::new();
        for (s, &weight) in self.distinct.iter().enumerate().skip(1) {
            if weight == 0.0 {
                continue;
            }
            if s as f64 * clear <= 0.5 {
                if powers.is_empty() {
                    powers = (0..=INCLUSION_EXCLUSION_TERMS.min(self.most_distinct()))
                        .map(|i| (throws * (-(i as f64) / m).ln_1p()).exp())
                        .collect();
                }
                total += weight * covered_by_inclusion_exclusion(s, &powers);
            } else {
                sparse.push(s);
            }
        }
        if !sparse.is_empty() {
            total += covered_by_binomial_sums(m, throws, &sparse)
                .iter()
                .zip(&sparse)
                .map(|(covered, &s)| self.distinct[s] * covered)
                .sum::<f64>();
        }
        total.min(1.0)
    }
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

/// P(s given bins are all hit) by inclusion–exclusion, given
/// `powers[i]` = (1 − i/m)^throws, when q = s·(1 − 1/m)^throws ≤ ½.
///
/// The terms C(s, i)(1 − i/m)^throws ≤ q^i / i! alternate and fall at least
/// by a factor 2(i + 1), so the error is below the first term left out, and
/// the result (at least 1 − q ≥ ½ by Bonferroni) carries a rounding error of
/// a few ulp.
fn covered_by_inclusion_exclusion(s: usize, powers: &[f64]) -> f64 {
    let mut sum = 1.0;
    let mut binomial = 1.0;
    for i in 1..=s {
        binomial *= (s - i + 1) as f64 / i as f64;
        let power = powers.get(i).copied().unwrap_or(0.0);
        let term = binomial * power;
        if i % 2 == 1 {
            sum -= term;
        } else {
            sum += term;
        }
        if term <= TAIL * sum {
            break;
        }
    }
    sum
}

/// P(each of several sets of s bins is all hit) after `throws` uniform
/// throws into m bins, one result per s in `sparse` (increasing):
/// `Σ_{j ≥ s} Binomial(j; throws, s/m) · C(s, j)`, where C(s, j) is the
/// probability that j uniform throws into s bins hit them all.
///
/// C(s, j) for every s advances together in j by the recurrence
/// C(s, j + 1) = C(s, j) + C(s − 1, j) (1 − 1/s)^j (the last empty bin is
/// hit), so the sums cost O(j · k) in all. Each binomial is started at
/// j = s from its log-pmf and advanced by ratios in a rescaled linear form.
fn covered_by_binomial_sums(m: f64, throws: f64, sparse: &[usize]) -> Vec<f64> {
    let top = sparse[sparse.len() - 1];
    let mut walks: Vec<BinomialWalk> = sparse
        .iter()
        .map(|&s| BinomialWalk::new(s, m, throws))
        .collect();
    // covered[s] = C(s, j); keep[s] = (1 − 1/s)^j.
    let mut covered = vec![0.0; top + 1];
    covered[0] = 1.0;
    let mut keep = vec![1.0; top + 1];
    let shrink: Vec<f64> = (0..=top)
        .map(|s| if s == 0 { 1.0 } else { 1.0 - 1.0 / s as f64 })
        .collect();
    let mut active = walks.iter().filter(|walk| !walk.done).count();
    let mut j = 0usize;
    while active > 0 {
        // C(·, j) -> C(·, j + 1).
        for s in (1..=(j + 1).min(top)).rev() {
            covered[s] += covered[s - 1] * keep[s];
        }
        j += 1;
        if j.is_multiple_of(64) {
            // Repeated products drift by an ulp a step; re-anchor them.
            for (s, keep) in keep.iter_mut().enumerate().skip(2) {
                *keep = (j as f64 * (-1.0 / s as f64).ln_1p()).exp();
            }
            keep[1] = 0.0;
        } else {
            for (keep, shrink) in keep.iter_mut().zip(&shrink).skip(1) {
                *keep *= shrink;
            }
        }
        for walk in &mut walks {
            if !walk.done && j >= walk.s {
                walk.add(j, covered[walk.s]);
                if walk.done {
                    active -= 1;
                }
            }
        }
    }
    walks.iter().map(BinomialWalk::value).collect()
}

/// One running sum `Σ_j Binomial(j; throws, s/m) · C(s, j)` from j = s.
struct BinomialWalk {
    s: usize,
    throws: f64,
    /// share / (1 − share): the pmf ratio is (throws − j)/(j + 1) times this.
    odds: f64,
    /// Every throw lands among the s bins (s = m): the pmf is all at `throws`.
    certain: bool,
    /// pmf(j) = scaled · e^offset, and the sum is `sum · e^offset`.
    offset: f64,
    scaled: f64,
    sum: f64,
    done: bool,
}

impl BinomialWalk {
    fn new(s: usize, m: f64, throws: f64) -> Self {
        let share = s as f64 / m;
        let rest = (m - s as f64) / m;
        let certain = rest <= 0.0;
        let offset = if certain {
            0.0
        } else {
            ln_binomial_pmf(s as f64, throws, share, rest)
        };
        Self {
            s,
            throws,
            odds: if certain { 0.0 } else { share / rest },
            certain,
            offset,
            scaled: 1.0,
            sum: 0.0,
            // Fewer throws than bins can never hit them all.
            done: throws < s as f64 || offset == f64::NEG_INFINITY,
        }
    }

    /// Adds the term at j, given C(s, j).
    fn add(&mut self, j: usize, covered: f64) {
        let jf = j as f64;
        if self.certain {
            if jf >= self.throws {
                self.sum = covered;
                self.done = true;
            }
            return;
        }
        self.sum += self.scaled * covered;
        self.scaled *= (self.throws - jf) / (jf + 1.0) * self.odds;
        if self.scaled > 1e200 {
            // Climbing from a far tail toward the mode: rescale.
            self.scaled *= 1e-200;
            self.sum *= 1e-200;
            self.offset += 200.0 * std::f64::consts::LN_10;
        }
        // Past the mode the ratios fall, so the binomial mass beyond j is at
        // most pmf(j + 1) / (1 − ratio(j + 1)); C(s, ·) ≤ 1 bounds the rest.
        let next = (self.throws - jf - 1.0) / (jf + 2.0) * self.odds;
        if self.scaled <= 0.0 || (next < 1.0 && self.scaled <= TAIL * self.sum * (1.0 - next)) {
            self.done = true;
        }
    }

    fn value(&self) -> f64 {
        if self.sum <= 0.0 {
            0.0
        } else if self.offset > -700.0 {
            self.sum * self.offset.exp()
        } else {
            (self.offset + self.sum.ln()).exp()
        }
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

    /// The exact formula against the chain, on ordinary sizes and on sparse
    /// small arrays probed many times (where covering k bits needs at least
    /// k throws, far in the binomial's tail).
    #[test]
    fn exact_matches_occupancy_chain() {
        let ordinary = [(64, 3, 10), (64, 6, 8), (100, 1, 50), (256, 4, 30)];
        let crowded = [(1000, 7, 100), (500, 2, 2000), (8, 3, 40)];
        let many_probes = [
            (200, 64, 1),
            (300, 40, 2),
            (1000, 64, 1),
            (128, 128, 1),
            (90, 30, 3),
        ];
        for (m, k, n) in ordinary.into_iter().chain(crowded).chain(many_probes) {
            let by_chain = exact_by_occupancy_chain(m as usize, k, n);
            let exact = bloom_fpp_exact(m, k, n).unwrap();
            let rel = (exact / by_chain - 1.0).abs();
            assert!(rel < 1e-9, "m={m} k={k} n={n}: {exact:e} vs {by_chain:e}");
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

    /// Reference values in 400-digit arithmetic (mpmath), by a different
    /// formula: Σ_s C(m,s) s! S(k,s) / m^k · Σ_i (−1)^i C(s,i) (1 − i/m)^{kn},
    /// Stirling numbers exact, the inclusion–exclusion's cancellation absorbed
    /// by the precision.
    const REFERENCES: &[(u64, u32, u64, f64)] = &[
        // The sizing the issue reported as 5.2e-102 (p = 1e-100, n = 1e6).
        (1_152_153_536, 64, 1_000_000, 7.770_573_391_998_384e-82),
        // Where HEAD's cut-off began to undercount (p = 1e-58).
        (483_032_576, 64, 1_000_000, 1.000_000_012_904_254_6e-58),
        (483_032_640, 64, 1_000_000, 9.999_920_825_428_868e-59),
        (2_304_966_400, 64, 1_000_000, 9.999_985_342_760_828e-101),
        // One item: near the smallest target accepted, 1e-300.
        (3_200_000, 64, 1, 1.843_936_575_203_797_7e-301),
        (4_194_304, 63, 1, 1.351_301_324_658_408e-304),
        (9_585_059, 7, 1_000_000, 0.010_039_223_613_456_863),
        (64, 12, 7, 0.029_335_918_174_833_6),
        (512, 64, 1, 1.249_486_992_123_695e-59),
        (512, 20, 30, 6.578_328_567_163_656e-4),
        (512, 6, 51, 8.408_666_280_891_92e-3),
        (1 << 40, 20, 1000, 1.572_545_800_433_110_5e-155),
        (1000, 5, 1_000_000_000, 1.0),
        (100, 64, 2, 3.210_122_949_906_87e-8),
        (
            1_000_000_000_000,
            64,
            1_000_000_000,
            5.138_386_031_776_453e-78,
        ),
        (68_719_476_736, 10, 4_000_000_000, 2.798_828_486_654_553e-4),
        (65, 64, 1, 6.027_262_102_001_464e-11),
        (300, 256, 1, 5.532_113_650_228_181e-52),
    ];

    #[test]
    fn exact_matches_high_precision_references() {
        for &(m, k, n, want) in REFERENCES {
            let got = bloom_fpp_exact(m, k, n).unwrap();
            assert!(
                (got / want - 1.0).abs() < 1e-12,
                "m={m} k={k} n={n}: {got:e} vs {want:e}"
            );
        }
    }

    /// Every (m, k, n) of a grid from one bit to 2^64 − 1 bits, one probe to
    /// [`MAX_EXACT_HASHES`], one item to 2^64 − 1 items.
    fn extreme_grid() -> impl Iterator<Item = (u64, u32, u64)> {
        let bits = [
            1u64,
            2,
            63,
            64,
            512,
            4096,
            1 << 20,
            1 << 33,
            1 << 40,
            1 << 52,
            u64::MAX,
        ];
        let hashes = [1u32, 2, 7, 20, 64, 128, crate::theory::MAX_EXACT_HASHES];
        let items = [1u64, 2, 10, 1000, 1_000_000, 1 << 32, 1 << 40, u64::MAX];
        bits.into_iter().flat_map(move |m| {
            hashes
                .into_iter()
                .flat_map(move |k| items.into_iter().map(move |n| (m, k, n)))
        })
    }

    #[test]
    fn exact_is_bounded_and_above_classic_everywhere() {
        use std::time::{Duration, Instant};
        let mut slowest = (Duration::ZERO, (0, 0, 0));
        for (m, k, n) in extreme_grid() {
            let start = Instant::now();
            let exact = bloom_fpp_exact(m, k, n).unwrap();
            let elapsed = start.elapsed();
            if elapsed > slowest.0 {
                slowest = (elapsed, (m, k, n));
            }
            let classic = bloom_fpp_classic(m, k, n);
            assert!((0.0..=1.0).contains(&exact), "m={m} k={k} n={n}: {exact}");
            // Jensen: E[(X/m)^k] ≥ (E[X]/m)^k. Below 1e-290 only the
            // absolute error (about 1e-320) is promised.
            assert!(
                exact >= classic * (1.0 - 1e-9) || classic < 1e-290,
                "m={m} k={k} n={n}: exact {exact:e} < classic {classic:e}"
            );
            // With many items per probe on a large array the two agree (the
            // gap is about k/(2n) plus the fill's variance).
            if m >= 1 << 20 && classic > 1e-280 && n >= 1000 * u64::from(k) {
                assert!(
                    exact <= classic * 1.01,
                    "m={m} k={k} n={n}: {exact:e} vs {classic:e}"
                );
            }
        }
        // A bounded-time contract, not a benchmark: generous for a shared machine.
        assert!(slowest.0 < Duration::from_secs(1), "slowest {slowest:?}");
    }

    #[test]
    fn exact_at_the_extremes() {
        // Saturated: every bit set.
        assert_eq!(bloom_fpp_exact(1 << 20, 256, u64::MAX).unwrap(), 1.0);
        assert_eq!(bloom_fpp_exact(64, 1, u64::MAX).unwrap(), 1.0);
        // m = n = 2^64 − 1, one probe: 1 − (1 − 1/m)^n ≈ 1 − 1/e.
        let one_probe = bloom_fpp_exact(u64::MAX, 1, u64::MAX).unwrap();
        assert!(
            (one_probe - (1.0 - (-1.0f64).exp())).abs() < 1e-12,
            "{one_probe}"
        );
        // One probe is exactly the classic formula: P(the one bit is set).
        for &(m, n) in &[(1000u64, 10u64), (1 << 40, 1 << 30), (u64::MAX, 1)] {
            let exact = bloom_fpp_exact(m, 1, n).unwrap();
            let classic = bloom_fpp_classic(m, 1, n);
            assert!((exact / classic - 1.0).abs() < 1e-12, "m={m} n={n}");
        }
        // Far below f64's range: rounds to 0, never negative or NaN.
        assert_eq!(bloom_fpp_exact(u64::MAX, 256, 1).unwrap(), 0.0);
        assert!(bloom_fpp_exact(u64::MAX, 64, 1000).unwrap() < 1e-300);
        // More probes than the formulas evaluate: a typed error, not a number.
        assert_eq!(
            bloom_fpp_exact(1000, crate::theory::MAX_EXACT_HASHES + 1, 10)
                .unwrap_err()
                .kind(),
            crate::ErrorKind::InvalidParameter
        );
        // The classic formula takes any k.
        assert_eq!(bloom_fpp_classic(1000, u32::MAX, 1_000_000), 1.0);
        assert_eq!(bloom_fpp_given_fill(5, 10, u32::MAX), 0.0);
    }
}
