//! The formulas filters are sized by and measured against.
//!
//! Everything here is a pure function of the parameters, cheap enough to call
//! while sizing a filter, and shared by the filter crates, their statistical
//! tests and the harness.

use std::f64::consts::LN_2;

/// Bits per item of the information-theoretic lower bound for any
/// approximate-membership structure at false-positive rate `fpp`: log2(1/p).
pub fn lower_bound_bits_per_item(fpp: f64) -> f64 {
    -fpp.log2()
}

/// Bits of key hash needed so that two distinct keys sharing a hash adds at
/// most `fpp` to the false-positive rate at `items` items: log2(items / fpp).
///
/// A filter fed 64-bit key hashes cannot do better than about `items / 2^64`.
pub fn hash_bits_needed(items: u64, fpp: f64) -> f64 {
    (items as f64 / fpp).log2()
}

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
/// # Examples
///
/// ```
/// use filterlab_core::theory::{bloom_fpp_classic, bloom_fpp_exact};
///
/// // Large filters: the two agree closely.
/// let exact = bloom_fpp_exact(9_585_059, 7, 1_000_000);
/// let classic = bloom_fpp_classic(9_585_059, 7, 1_000_000);
/// assert!((exact / classic - 1.0).abs() < 1e-4);
/// // Small filters: the classic formula is optimistic.
/// assert!(bloom_fpp_exact(64, 12, 7) > bloom_fpp_classic(64, 12, 7) * 1.2);
/// ```
pub fn bloom_fpp_exact(num_bits: u64, num_hashes: u32, items: u64) -> f64 {
    if num_hashes == 0 || num_bits == 0 {
        return 1.0;
    }
    if items == 0 {
        return 0.0;
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
    fpp.min(1.0)
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

/// The exact FPP of one small Bloom filter (a block of a blocked filter) at
/// every load: entry i is `bloom_fpp_exact(bits, k, i)`, for all i at once.
///
/// An occupancy chain advances the distribution of the number X of set bits
/// throw by throw and reads E[(X/B)^k] after every k throws, so loads 0..=i
/// cost O(i·k·B) together, where calling [`bloom_fpp_exact`] per load would
/// redo the work each time. Once every bit is set with probability within
/// 1e-15 of 1, the FPP is 1 for every larger load and the chain stops.
///
/// # Examples
///
/// ```
/// use filterlab_core::theory::{BlockFppTable, bloom_fpp_exact};
///
/// let mut table = BlockFppTable::new(512, 6);
/// let at_51 = table.fpp_at(51);
/// assert!((at_51 / bloom_fpp_exact(512, 6, 51) - 1.0).abs() < 1e-9);
/// assert!(table.fpp_at(40) < at_51);
/// ```
#[derive(Clone, Debug)]
pub struct BlockFppTable {
    bits: usize,
    hashes: u32,
    /// P(X = x) after `throws` throws, x in 0..=bits.
    chain: Vec<f64>,
    /// (x / bits)^hashes.
    powers: Vec<f64>,
    throws: u64,
    /// The exact FPP at loads 0..fpp.len().
    fpp: Vec<f64>,
    /// Set once the FPP has reached 1 (to within 1e-15) at load `fpp.len() - 1`.
    saturated: bool,
}

impl BlockFppTable {
    /// The table for blocks of `block_bits` bits probed `num_hashes` times per
    /// key. With zero bits or zero hashes the FPP is 1 at every load.
    pub fn new(block_bits: u32, num_hashes: u32) -> Self {
        let bits = block_bits as usize;
        let mut chain = vec![0.0; bits + 1];
        chain[0] = 1.0;
        let powers = (0..=bits)
            .map(|x| (x as f64 / bits.max(1) as f64).powi(num_hashes as i32))
            .collect();
        let degenerate = bits == 0 || num_hashes == 0;
        Self {
            bits,
            hashes: num_hashes,
            chain,
            powers,
            throws: 0,
            fpp: vec![if degenerate { 1.0 } else { 0.0 }],
            saturated: degenerate,
        }
    }

    /// The exact FPP of one block after `items` distinct insertions.
    pub fn fpp_at(&mut self, items: u64) -> f64 {
        while !self.saturated && (self.fpp.len() as u64) <= items {
            self.advance();
        }
        let last = self.fpp.len() - 1;
        self.fpp[usize::try_from(items).map_or(last, |i| i.min(last))]
    }

    /// Extends the table by one load: k more throws.
    fn advance(&mut self) {
        let b = self.bits as f64;
        for _ in 0..self.hashes {
            for x in (1..=self.bits).rev() {
                self.chain[x] = self.chain[x] * (x as f64 / b)
                    + self.chain[x - 1] * ((self.bits - x + 1) as f64 / b);
            }
            self.chain[0] = 0.0;
            self.throws += 1;
        }
        let fpp: f64 = self
            .chain
            .iter()
            .zip(&self.powers)
            .map(|(p, q)| p * q)
            .sum();
        self.fpp.push(fpp.min(1.0));
        // Summed directly: 1 − P(X = B) would drown in the chain's rounding.
        let unsaturated: f64 = self.chain[..self.bits].iter().sum();
        self.saturated = unsaturated < 1e-15;
    }
}

/// The exact FPP of a blocked Bloom filter: `num_blocks` blocks of
/// `block_bits` bits, each key mapped to one block and setting
/// `num_hashes` bits in it, after `items` insertions.
///
/// A block's load is Binomial(n, 1/b) and a block holding i keys is a small
/// Bloom filter with the exact FPP of [`bloom_fpp_exact`] (Putze, Sanders and
/// Singler 2007, "Cache-, hash- and space-efficient Bloom filters", with the
/// exact per-block FPP in place of their independent-bits approximation).
///
/// # Examples
///
/// ```
/// use filterlab_core::theory::{bloom_fpp_exact, blocked_bloom_fpp};
///
/// // 10 bits per key in 512-bit blocks with 6 probes: about 0.97%, against
/// // 0.82% for a standard Bloom filter of the same size.
/// let blocked = blocked_bloom_fpp(195_313, 512, 6, 10_000_000);
/// assert!(blocked > 0.0096 && blocked < 0.0098);
/// assert!(bloom_fpp_exact(100_000_256, 7, 10_000_000) < 0.0083);
/// ```
pub fn blocked_bloom_fpp(num_blocks: u64, block_bits: u32, num_hashes: u32, items: u64) -> f64 {
    blocked_bloom_fpp_with(
        &mut BlockFppTable::new(block_bits, num_hashes),
        num_blocks,
        items,
    )
}

/// [`blocked_bloom_fpp`] reusing a table of per-block FPPs, so that many
/// sizes can be evaluated for one (block size, hash count) at the cost of one.
pub fn blocked_bloom_fpp_with(table: &mut BlockFppTable, num_blocks: u64, items: u64) -> f64 {
    if num_blocks == 0 {
        return 1.0;
    }
    if num_blocks == 1 {
        return table.fpp_at(items);
    }
    let n = items as f64;
    let share = 1.0 / num_blocks as f64;
    let mean = n * share;
    let spread = (n * share * (1.0 - share)).sqrt();
    // Beyond 15 standard deviations (and 30 items) the binomial mass is below 1e-40.
    let tail_end = (mean + 15.0 * spread + 30.0).min(n) as u64;
    let odds = share / (1.0 - share);
    let (mut total, mut mass_seen) = (0.0, 0.0);
    for_each_load(
        n * (-share).ln_1p(),
        tail_end,
        |i| (n - i as f64) / (i as f64 + 1.0) * odds,
        |i, pmf| {
            total += pmf * table.fpp_at(i);
            mass_seen += pmf;
            if table.saturated && i + 1 >= table.fpp.len() as u64 {
                // Every heavier block answers yes.
                total += (1.0 - mass_seen).max(0.0);
                return false;
            }
            true
        },
    );
    total.min(1.0)
}

/// Calls `term(i, P(L = i))` for loads i = 0..=end while it returns true,
/// given ln P(L = 0) and the ratios P(L = i + 1) / P(L = i). The pmf is
/// advanced by multiplication, in log space only while it would underflow
/// (very heavy blocks), so a term costs no `exp` or `ln` in the usual case.
fn for_each_load(
    log_first: f64,
    end: u64,
    ratio: impl Fn(u64) -> f64,
    mut term: impl FnMut(u64, f64) -> bool,
) {
    const LOWEST: f64 = -700.0;
    let mut log_pmf = log_first;
    let mut pmf = if log_pmf > LOWEST { log_pmf.exp() } else { 0.0 };
    for i in 0..=end {
        let current = if log_pmf > LOWEST { pmf } else { log_pmf.exp() };
        if !term(i, current) {
            return;
        }
        if log_pmf > LOWEST {
            pmf *= ratio(i);
        } else {
            log_pmf += ratio(i).ln();
            if log_pmf > LOWEST {
                pmf = log_pmf.exp();
            }
        }
    }
}

/// Putze, Sanders and Singler's approximation of the blocked Bloom FPP: a
/// Poisson(nB/m) mixture of the classic per-block FPP (1 − (1 − 1/B)^{ik})^k.
/// Slightly optimistic, like [`bloom_fpp_classic`]; see [`blocked_bloom_fpp`].
pub fn blocked_bloom_fpp_classic(
    num_blocks: u64,
    block_bits: u32,
    num_hashes: u32,
    items: u64,
) -> f64 {
    if num_blocks == 0 || block_bits == 0 || num_hashes == 0 {
        return 1.0;
    }
    let mean = items as f64 / num_blocks as f64;
    let end = (mean + 15.0 * mean.sqrt() + 30.0) as u64;
    // (1 − 1/B)^k: the share of a block's bits a key leaves clear.
    let clear_per_key = (f64::from(num_hashes) * (-1.0 / f64::from(block_bits)).ln_1p()).exp();
    let mut clear = 1.0f64;
    let mut total = 0.0;
    for_each_load(
        -mean,
        end,
        |i| mean / (i as f64 + 1.0),
        |_, pmf| {
            total += pmf * (1.0 - clear).powi(num_hashes as i32);
            clear *= clear_per_key;
            true
        },
    );
    total.min(1.0)
}

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
            let exact = bloom_fpp_exact(m, k, n);
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
            let exact = bloom_fpp_exact(m, k, n);
            let classic = bloom_fpp_classic(m, k, n);
            assert!(exact >= classic * (1.0 - 1e-9), "{exact} < {classic}");
            assert!((exact / classic - 1.0).abs() < 1e-3, "{exact} vs {classic}");
        }
    }

    #[test]
    fn exact_edge_cases() {
        assert_eq!(bloom_fpp_exact(100, 3, 0), 0.0);
        assert_eq!(bloom_fpp_exact(100, 0, 5), 1.0);
        assert_eq!(bloom_fpp_exact(0, 3, 5), 1.0);
        // One bit: after any insertion it is set.
        assert!((bloom_fpp_exact(1, 3, 1) - 1.0).abs() < 1e-12);
        // Hugely overfilled: saturates to 1 without looping over every throw.
        assert!((bloom_fpp_exact(1000, 5, 1_000_000_000) - 1.0).abs() < 1e-12);
        // Tiny FPPs stay positive and finite.
        let tiny = bloom_fpp_exact(1 << 40, 20, 1000);
        let classic = bloom_fpp_classic(1 << 40, 20, 1000);
        assert!(
            tiny > 0.0 && (tiny / classic - 1.0).abs() < 1e-3,
            "{tiny} vs {classic}"
        );
        // Monotone in items.
        let mut previous = 0.0;
        for n in [1u64, 10, 100, 1000, 10_000] {
            let fpp = bloom_fpp_exact(20_000, 5, n);
            assert!(fpp > previous);
            previous = fpp;
        }
    }

    /// The blocked FPP by brute force: every assignment of `items` keys to a
    /// block and k probes (with replacement), then a query's FPP given the
    /// resulting fill, averaged over the blocks it may land in.
    fn blocked_by_enumeration(blocks: usize, bits: usize, k: u32, items: u32) -> f64 {
        let choices = blocks * bits.pow(k);
        let configurations = choices.pow(items);
        // Counted in integers: summing millions of small floats would round.
        let mut total = 0u128;
        for configuration in 0..configurations {
            let mut filled = vec![vec![false; bits]; blocks];
            let mut rest = configuration;
            for _ in 0..items {
                let mut choice = rest % choices;
                rest /= choices;
                let block = choice % blocks;
                choice /= blocks;
                for _ in 0..k {
                    filled[block][choice % bits] = true;
                    choice /= bits;
                }
            }
            for block in &filled {
                let set = block.iter().filter(|&&b| b).count();
                total += (set as u128).pow(k);
            }
        }
        total as f64 / (configurations as f64 * blocks as f64 * (bits as f64).powi(k as i32))
    }

    #[test]
    fn blocked_matches_enumeration() {
        for &(blocks, bits, k, items) in &[
            (3usize, 4usize, 2u32, 3u32),
            (3, 4, 2, 4),
            (2, 8, 3, 2),
            (4, 2, 1, 5),
            (2, 3, 2, 4),
        ] {
            let by_enumeration = blocked_by_enumeration(blocks, bits, k, items);
            let formula = blocked_bloom_fpp(blocks as u64, bits as u32, k, u64::from(items));
            let rel = (formula / by_enumeration - 1.0).abs();
            assert!(
                rel < 1e-12,
                "b={blocks} B={bits} k={k} n={items}: {formula} vs {by_enumeration}"
            );
        }
    }

    #[test]
    fn block_table_matches_exact_bloom() {
        for &(bits, k) in &[(512u32, 6u32), (512, 12), (64, 3), (256, 1)] {
            let mut table = BlockFppTable::new(bits, k);
            for items in [0u64, 1, 7, 51, 100, 300] {
                let exact = bloom_fpp_exact(u64::from(bits), k, items);
                let tabled = table.fpp_at(items);
                assert!(
                    (tabled - exact).abs() <= 1e-9 * exact,
                    "B={bits} k={k} n={items}: {tabled} vs {exact}"
                );
            }
        }
        // One block is a standard Bloom filter.
        let exact = bloom_fpp_exact(512, 7, 60);
        assert!((blocked_bloom_fpp(1, 512, 7, 60) / exact - 1.0).abs() < 1e-9);
    }

    #[test]
    fn blocked_against_standard_and_classic() {
        // 10 bits per key: blocked costs accuracy against standard Bloom,
        // and the independent-bits approximation is optimistic but close.
        let (blocks, items) = (195_313u64, 10_000_000u64);
        for k in 4..=9 {
            let exact = blocked_bloom_fpp(blocks, 512, k, items);
            let classic = blocked_bloom_fpp_classic(blocks, 512, k, items);
            let standard = bloom_fpp_exact(blocks * 512, k, items);
            assert!(
                exact > standard * 1.05,
                "k={k}: {exact} vs standard {standard}"
            );
            assert!(exact >= classic, "k={k}: {exact} < classic {classic}");
            assert!(
                exact < classic * 1.03,
                "k={k}: {exact} vs classic {classic}"
            );
        }
        let best = (4..=9)
            .map(|k| blocked_bloom_fpp(blocks, 512, k, items))
            .fold(f64::INFINITY, f64::min);
        assert!(best > 0.0096 && best < 0.0097, "{best}");
    }

    #[test]
    fn blocked_edge_cases() {
        assert_eq!(blocked_bloom_fpp(100, 512, 6, 0), 0.0);
        assert_eq!(blocked_bloom_fpp(0, 512, 6, 10), 1.0);
        assert_eq!(blocked_bloom_fpp(100, 512, 0, 10), 1.0);
        assert_eq!(blocked_bloom_fpp(100, 0, 6, 10), 1.0);
        // Overfilled: saturates to 1 without walking every load.
        assert!((blocked_bloom_fpp(10, 512, 6, 1_000_000_000) - 1.0).abs() < 1e-12);
        assert!((blocked_bloom_fpp(1, 512, 6, u64::MAX) - 1.0).abs() < 1e-12);
        // Monotone in items and tiny values stay positive.
        let mut previous = 0.0;
        for n in [1u64, 10, 100, 1000, 10_000, 100_000] {
            let fpp = blocked_bloom_fpp(1000, 512, 8, n);
            assert!(fpp > previous, "n={n}");
            previous = fpp;
        }
        assert!(blocked_bloom_fpp(1 << 30, 512, 16, 1000) > 0.0);
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
