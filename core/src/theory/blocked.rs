//! Blocked Bloom filters: each key's probes confined to one block of B
//! bits. The exact FPP mixes the block load's binomial with the exact FPP
//! of a B-bit Bloom filter at each load (Putze, Sanders and Singler 2007);
//! their Poisson, independent-bits approximation is kept for comparison.
//!
//! Both mixtures are summed outward from the load distribution's mode and
//! stop once the probability mass left is negligible, or once the per-block
//! FPP has saturated at 1, so their cost depends on neither the number of
//! items nor the number of blocks.

use super::bloom::{ExactBloom, bloom_fpp_given_fill};
use super::stats::{ln_binomial_pmf, ln_poisson_pmf};
use super::support::{MAX_EXACT_BLOCK_BITS, check_exact_hashes, pow_hashes};
use crate::Error;
use crate::sizing::{MAX_HASHES, ensure};

/// Relative size of the tail a mixture may leave out.
const TAIL: f64 = 1e-17;

/// A table remembers the FPP at dense loads below this too (32 KiB at most),
/// so that sizing searches, which revisit the same loads, evaluate each once.
const REMEMBERED_DENSE_LOADS: u64 = 4096;

/// The FPP of one blocked Bloom filter instance given the fill of each of
/// its blocks: the mean over blocks of (X_b/B)^k, since a never-inserted
/// key picks a uniform block and then k uniform positions in it. Exact for
/// that instance, like [`bloom_fpp_given_fill`](super::bloom_fpp_given_fill)
/// for a standard filter; 1 for no blocks.
///
/// The one formula behind the `expected_fpp` of every blocked layout (bits
/// or counters, where a nonzero counter is a set bit).
///
/// # Examples
///
/// ```
/// use filterlab_core::theory::bloom_fpp_given_block_fills;
///
/// // One block full, one empty: half of all queries land in the full one.
/// assert_eq!(bloom_fpp_given_block_fills([512, 0], 512, 4), 0.5);
/// ```
pub fn bloom_fpp_given_block_fills(
    fills: impl IntoIterator<Item = u64>,
    block_bits: u64,
    num_hashes: u32,
) -> f64 {
    let (blocks, total) = fills.into_iter().fold((0u64, 0.0), |(blocks, total), set| {
        (
            blocks + 1,
            total + bloom_fpp_given_fill(set, block_bits, num_hashes),
        )
    });
    if blocks == 0 {
        return 1.0;
    }
    total / blocks as f64
}

/// The exact FPP of one small Bloom filter (a block of a blocked filter) at
/// any load, remembered per load: entry i is `bloom_fpp_exact(bits, k, i)`.
///
/// Loads where some of a query's bits are likely still clear are evaluated
/// once each and kept (there are at most about B ln k / k of them), as are
/// the next few thousand; heavier loads cost O(k) each by
/// inclusion–exclusion, and from the load where
/// B·(1 − 1/B)^{ik} < 1e-17 every bit is set with probability above
/// 1 − 1e-17, so the FPP is 1 without any work. No call costs more than a
/// millisecond or so, whatever the load.
///
/// # Examples
///
/// ```
/// use filterlab_core::theory::{BlockFppTable, bloom_fpp_exact};
///
/// let mut table = BlockFppTable::new(512, 6)?;
/// let at_51 = table.fpp_at(51);
/// assert!((at_51 / bloom_fpp_exact(512, 6, 51)? - 1.0).abs() < 1e-9);
/// assert!(table.fpp_at(40) < at_51);
/// assert_eq!(table.fpp_at(u64::MAX), 1.0);
/// # Ok::<(), filterlab_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct BlockFppTable {
    hashes: u32,
    /// None when the FPP is 1 at every load (zero bits or zero hashes).
    exact: Option<ExactBloom>,
    /// Loads below this are remembered once evaluated.
    remembered_below: u64,
    /// From this load on the FPP is 1.
    saturated_from: u64,
    /// The FPP at loads 0..fpp.len() (NaN where not yet evaluated).
    fpp: Vec<f64>,
}

impl BlockFppTable {
    /// The table for blocks of `block_bits` bits probed `num_hashes` times per
    /// key. With zero bits or zero hashes the FPP is 1 at every load.
    ///
    /// # Errors
    ///
    /// [`crate::ErrorKind::InvalidParameter`] for more than
    /// [`MAX_EXACT_HASHES`](super::MAX_EXACT_HASHES) probes or blocks of
    /// more than [`MAX_EXACT_BLOCK_BITS`] bits.
    pub fn new(block_bits: u32, num_hashes: u32) -> Result<Self, Error> {
        check_exact_hashes(num_hashes)?;
        ensure(block_bits <= MAX_EXACT_BLOCK_BITS, || {
            format!(
                "the exact blocked FPP is evaluated for blocks of at most {MAX_EXACT_BLOCK_BITS} bits, got {block_bits}"
            )
        })?;
        if block_bits == 0 || num_hashes == 0 {
            return Ok(Self {
                hashes: num_hashes,
                exact: None,
                remembered_below: 0,
                saturated_from: 0,
                fpp: Vec::new(),
            });
        }
        let exact = ExactBloom::new(u64::from(block_bits), num_hashes);
        let k = f64::from(num_hashes);
        let saturated_from = saturation_load(f64::from(block_bits), k);
        // Every sparse load, and the first few thousand dense ones.
        let sparse_loads = (exact.dense_from() / k).ceil() as u64;
        let remembered_below = sparse_loads.max(REMEMBERED_DENSE_LOADS).min(saturated_from);
        Ok(Self {
            hashes: num_hashes,
            exact: Some(exact),
            remembered_below,
            saturated_from,
            fpp: Vec::new(),
        })
    }

    /// The exact FPP of one block after `items` distinct insertions.
    pub fn fpp_at(&mut self, items: u64) -> f64 {
        let Some(exact) = &self.exact else {
            return 1.0;
        };
        if items == 0 {
            return 0.0;
        }
        if items >= self.saturated_from {
            return 1.0;
        }
        let throws = f64::from(self.hashes) * items as f64;
        if items >= self.remembered_below {
            return exact.fpp(throws);
        }
        remember(&mut self.fpp, items, || exact.fpp(throws))
    }

    /// The load from which the FPP is 1.
    fn saturated_from(&self) -> u64 {
        if self.exact.is_some() {
            self.saturated_from
        } else {
            0
        }
    }
}

/// `remembered[items]`, evaluated by `evaluate` the first time (entries
/// not yet evaluated are NaN): the per-load memory of the per-block FPP
/// tables.
pub(super) fn remember(
    remembered: &mut Vec<f64>,
    items: u64,
    evaluate: impl FnOnce() -> f64,
) -> f64 {
    let index = items as usize;
    if remembered.len() <= index {
        remembered.resize(index + 1, f64::NAN);
    }
    if remembered[index].is_nan() {
        remembered[index] = evaluate();
    }
    remembered[index]
}

/// The least load i ≥ 1 with max(B, k)·c^i ≤ 1e-17, where c = (1 − 1/B)^k
/// is the chance a key leaves a given bit clear. From there every bit of the
/// block is set with probability above 1 − 1e-17 (a union bound over the B
/// bits), so the exact per-block FPP rounds to 1; so does the classic one,
/// (1 − c^i)^k ≥ 1 − k·c^i.
pub(super) fn saturation_load(block_bits: f64, hashes: f64) -> u64 {
    let ln_clear = hashes * (-1.0 / block_bits).ln_1p();
    let load = ((TAIL / block_bits.max(hashes)).ln() / ln_clear).ceil();
    // Saturating float-to-int conversion; NaN and 0 (one-bit blocks) give 1.
    (load as u64).max(1)
}

/// The exact FPP of a blocked Bloom filter: `num_blocks` blocks of
/// `block_bits` bits, each key mapped to one block and setting
/// `num_hashes` bits in it, after `items` insertions.
///
/// A block's load is Binomial(n, 1/b) and a block holding i keys is a small
/// Bloom filter with the exact FPP of [`bloom_fpp_exact`](super::bloom_fpp_exact)
/// (Putze, Sanders and Singler 2007, "Cache-, hash- and space-efficient
/// Bloom filters", with the exact per-block FPP in place of their
/// independent-bits approximation).
///
/// # Examples
///
/// ```
/// use filterlab_core::theory::{bloom_fpp_exact, blocked_bloom_fpp};
///
/// // 10 bits per key in 512-bit blocks with 6 probes: about 0.97%, against
/// // 0.82% for a standard Bloom filter of the same size.
/// let blocked = blocked_bloom_fpp(195_313, 512, 6, 10_000_000)?;
/// assert!(blocked > 0.0096 && blocked < 0.0098);
/// assert!(bloom_fpp_exact(100_000_256, 7, 10_000_000)? < 0.0083);
/// # Ok::<(), filterlab_core::Error>(())
/// ```
///
/// # Errors
///
/// As [`BlockFppTable::new`].
pub fn blocked_bloom_fpp(
    num_blocks: u64,
    block_bits: u32,
    num_hashes: u32,
    items: u64,
) -> Result<f64, Error> {
    Ok(blocked_bloom_fpp_with(
        &mut BlockFppTable::new(block_bits, num_hashes)?,
        num_blocks,
        items,
    ))
}

/// [`blocked_bloom_fpp`] reusing a table of per-block FPPs, so that many
/// sizes can be evaluated for one (block size, hash count) at the cost of one.
///
/// The mixture over the block load is summed outward from its mode until
/// the load mass left is below 1e-17 of the sum (or, for loads that
/// saturate every block, of 1), so it visits O(√(load) + 40) loads whatever
/// the number of items and blocks.
pub fn blocked_bloom_fpp_with(table: &mut BlockFppTable, num_blocks: u64, items: u64) -> f64 {
    let saturated_from = table.saturated_from();
    binomial_mixture(num_blocks, items, saturated_from, table)
}

/// E[value(L)] for the load L ~ Binomial(items, 1/num_blocks) of one block
/// of `num_blocks`: the mixture every blocked layout's exact FPP is, given
/// its per-block FPP `value` (nondecreasing in [0, 1], equal to 1 from
/// `saturated_from` on). 1 for no blocks; one block holds every item.
pub(super) fn binomial_mixture(
    num_blocks: u64,
    items: u64,
    saturated_from: u64,
    value: &mut impl Values,
) -> f64 {
    if num_blocks == 0 {
        return 1.0;
    }
    if num_blocks == 1 {
        return if items >= saturated_from {
            1.0
        } else {
            value.at(items)
        };
    }
    let load = Binomial {
        n: items as f64,
        p: 1.0 / num_blocks as f64,
        q: (num_blocks - 1) as f64 / num_blocks as f64,
    };
    mixture(load, saturated_from, value)
}

/// The distribution of a block's load: log-concave, so the ratios of
/// successive probabilities fall as the load grows.
trait Load: Copy {
    /// The largest possible load.
    fn max(self) -> u64;
    /// A mode of the distribution.
    fn mode(self) -> u64;
    fn ln_pmf(self, i: u64) -> f64;
    /// pmf(i + 1) / pmf(i), falling in i.
    fn up(self, i: u64) -> f64;
    /// pmf(i − 1) / pmf(i) for i ≥ 1, falling as i falls.
    fn down(self, i: u64) -> f64;
}

/// n keys, each in this block with probability p = 1 − q.
#[derive(Clone, Copy, Debug)]
struct Binomial {
    n: f64,
    p: f64,
    q: f64,
}

impl Load for Binomial {
    fn max(self) -> u64 {
        self.n as u64
    }

    fn mode(self) -> u64 {
        (((self.n + 1.0) * self.p).floor() as u64).min(self.max())
    }

    fn ln_pmf(self, i: u64) -> f64 {
        ln_binomial_pmf(i as f64, self.n, self.p, self.q)
    }

    fn up(self, i: u64) -> f64 {
        let i = i as f64;
        (self.n - i).max(0.0) / (i + 1.0) * (self.p / self.q)
    }

    fn down(self, i: u64) -> f64 {
        let i = i as f64;
        i / (self.n - i + 1.0) * (self.q / self.p)
    }
}

/// A Poisson load with this mean.
#[derive(Clone, Copy, Debug)]
struct Poisson {
    mean: f64,
}

impl Load for Poisson {
    fn max(self) -> u64 {
        u64::MAX
    }

    fn mode(self) -> u64 {
        self.mean.floor() as u64
    }

    fn ln_pmf(self, i: u64) -> f64 {
        ln_poisson_pmf(i as f64, self.mean)
    }

    fn up(self, i: u64) -> f64 {
        self.mean / (i as f64 + 1.0)
    }

    fn down(self, i: u64) -> f64 {
        i as f64 / self.mean
    }
}

/// A per-block FPP as a function of the load, nondecreasing in [0, 1], read
/// by walks that move one load at a time (so a value may be derived from
/// the one read before it).
pub(super) trait Values {
    /// The value at load i, from scratch.
    fn at(&mut self, i: u64) -> f64;

    /// The value at load i, right after the value at i − 1.
    fn next_up(&mut self, i: u64) -> f64 {
        self.at(i)
    }

    /// The value at load i, right after the value at i + 1.
    fn next_down(&mut self, i: u64) -> f64 {
        self.at(i)
    }
}

impl Values for BlockFppTable {
    fn at(&mut self, i: u64) -> f64 {
        self.fpp_at(i)
    }
}

/// E[value(L)] for a load L with a log-concave pmf (binomial or Poisson)
/// and `value` nondecreasing in [0, 1], equal to 1 from `saturated_from` on.
///
/// Summed outward from the mode in linear space (the pmf there is at least
/// about 1/(3σ + 1), and falls away from it, so nothing overflows and what
/// underflows is negligible). The ratios of a log-concave pmf fall away from
/// the mode, so the mass beyond the last load summed is bounded by a
/// geometric series; the walk stops once that bound is below 1e-17 of the
/// sum. When the mode lies in the saturated range, the deficit
/// Σ pmf(i)(1 − value(i)) below it is summed instead, so the answer keeps
/// its accuracy near 1.
fn mixture(load: impl Load, saturated_from: u64, value: &mut impl Values) -> f64 {
    let mode = load.mode();
    let max = load.max();
    if mode >= saturated_from {
        if saturated_from == 0 {
            return 1.0;
        }
        let mut i = saturated_from - 1;
        let mut pmf = load.ln_pmf(i).exp();
        let mut deficit = pmf * (1.0 - value.at(i));
        while i > 0 && pmf > 0.0 {
            pmf *= load.down(i);
            i -= 1;
            deficit += pmf * (1.0 - value.next_down(i));
            let ratio = if i == 0 { 0.0 } else { load.down(i) };
            // The mass below i is at most pmf(i) · r / (1 − r).
            if ratio < 1.0 && pmf * ratio <= TAIL * (1.0 - ratio) {
                break;
            }
        }
        return (1.0 - deficit).clamp(0.0, 1.0);
    }
    let at_mode = load.ln_pmf(mode).exp();
    let mut total = at_mode * value.at(mode);
    // Upward: loads above the last one summed hold at most
    // pmf(i) · r / (1 − r), r = up(i), and their value is at most 1.
    let (mut i, mut pmf) = (mode, at_mode);
    let mut ratio = load.up(i);
    while i < max {
        pmf *= ratio;
        i += 1;
        if pmf <= 0.0 {
            break;
        }
        total += pmf
            * if i >= saturated_from {
                1.0
            } else {
                value.next_up(i)
            };
        ratio = if i < max { load.up(i) } else { 0.0 };
        if ratio < 1.0 && pmf * ratio <= TAIL * total * (1.0 - ratio) {
            break;
        }
    }
    // Downward: loads below hold at most value(i) · pmf(i) · r / (1 − r),
    // r = down(i), since value is nondecreasing.
    let (mut i, mut pmf) = (mode, at_mode);
    let mut ratio = if i > 0 { load.down(i) } else { 0.0 };
    value.at(mode);
    while i > 0 {
        pmf *= ratio;
        i -= 1;
        if pmf <= 0.0 {
            break;
        }
        let at = value.next_down(i);
        if at <= 0.0 {
            break;
        }
        total += pmf * at;
        ratio = if i > 0 { load.down(i) } else { 0.0 };
        if ratio < 1.0 && at * pmf * ratio <= TAIL * total * (1.0 - ratio) {
            break;
        }
    }
    total.min(1.0)
}

/// Putze, Sanders and Singler's approximation of the blocked Bloom FPP: a
/// Poisson(nB/m) mixture of the classic per-block FPP (1 − (1 − 1/B)^{ik})^k.
///
/// Slightly optimistic against [`blocked_bloom_fpp`] when there are many
/// blocks and many items, as [`bloom_fpp_classic`](super::bloom_fpp_classic)
/// is against the exact standard formula. It is an approximation, not a
/// bound: its Poisson load puts mass on more keys per block than the true
/// Binomial(n, 1/b) can, so with few items in all (a few hundred or less) or
/// few blocks it can exceed the exact value, by orders of magnitude at
/// large k (one block holding one key: Poisson(1) puts 26% on loads of two
/// or more). A true lower bound is the same mixture over the Binomial load,
/// or its Jensen bound (1 − (1 − (1 − c)/b)^n)^k, c = (1 − 1/B)^k.
///
/// Summed like the exact mixture, in bounded time.
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
    // ln (1 − 1/B)^k: a key leaves a given bit of its block clear.
    let ln_clear = f64::from(num_hashes) * (-1.0 / f64::from(block_bits)).ln_1p();
    let saturated_from = saturation_load(f64::from(block_bits), f64::from(num_hashes));
    let mut values = ClassicValues::new(ln_clear, num_hashes);
    mixture(Poisson { mean }, saturated_from, &mut values)
}

/// The k up to [`MAX_HASHES`] with the lowest [`blocked_bloom_fpp_classic`]:
/// cheap (no occupancy chain), and where the sizing of a blocked filter
/// starts its search for the best k under the exact formula, which lies
/// well below the standard filter's (m/n)·ln 2 at many bits per item. The
/// approximation's FPP falls and then rises with k.
///
/// # Examples
///
/// ```
/// use filterlab_core::theory::blocked_bloom_classic_best_hashes;
///
/// // 20 bits per key in 512-bit blocks: fewer probes than a standard
/// // filter's 14 (= 20 · ln 2).
/// let k = blocked_bloom_classic_best_hashes(10_000, 512, 256_000);
/// assert!(k < 14);
/// ```
pub fn blocked_bloom_classic_best_hashes(num_blocks: u64, block_bits: u32, items: u64) -> u32 {
    let fpp = |k: u32| blocked_bloom_fpp_classic(num_blocks, block_bits, k, items);
    let mut best = (1, fpp(1));
    for k in 2..=MAX_HASHES {
        let candidate = fpp(k);
        if candidate >= best.1 {
            break;
        }
        best = (k, candidate);
    }
    best.0
}

/// The classic per-block FPP (1 − c^i)^k at load i, c = (1 − 1/B)^k.
///
/// The fill 1 − c^i comes without an `exp` per load: walking up,
/// fill(i + 1) = (1 − c) + c · fill(i) adds positive terms and shrinks
/// earlier errors by c (restarted from `expm1` every 32 loads); walking
/// down, fill(i − 1) = (fill(i) − (1 − c)) / c grows the absolute error by
/// 1/c a step, so d steps below an exact start at load a the fill is off by
/// about d · (a/i) ulp: restarted every 16 loads, at most a few hundred ulp,
/// and only at the lightest loads, whose terms are negligible.
pub(super) struct ClassicValues {
    ln_clear: f64,
    set_per_key: f64,
    clear_per_key: f64,
    hashes: u32,
    /// The fill at the load last read.
    fill: f64,
}

impl ClassicValues {
    pub(super) fn new(ln_clear: f64, hashes: u32) -> Self {
        let set_per_key = -ln_clear.exp_m1();
        Self {
            ln_clear,
            set_per_key,
            clear_per_key: 1.0 - set_per_key,
            hashes,
            fill: 0.0,
        }
    }

    fn value(&self) -> f64 {
        pow_hashes(self.fill, self.hashes)
    }

    fn exact_fill(&self, i: u64) -> f64 {
        if i == 0 {
            // Not 0 · ln 0 (one-bit blocks): an empty block has nothing set.
            return 0.0;
        }
        -(i as f64 * self.ln_clear).exp_m1()
    }
}

impl Values for ClassicValues {
    fn at(&mut self, i: u64) -> f64 {
        self.fill = self.exact_fill(i);
        self.value()
    }

    fn next_up(&mut self, i: u64) -> f64 {
        self.fill = if i.is_multiple_of(32) {
            self.exact_fill(i)
        } else {
            self.set_per_key + self.clear_per_key * self.fill
        };
        self.value()
    }

    fn next_down(&mut self, i: u64) -> f64 {
        self.fill = if i.is_multiple_of(16) {
            self.exact_fill(i)
        } else {
            (self.fill - self.set_per_key) / self.clear_per_key
        };
        self.value()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::theory::bloom_fpp_exact;
    use crate::theory::support::for_each_assignment;

    /// The blocked FPP by brute force: every assignment of `items` keys to a
    /// block and k probes (with replacement), then a query's FPP given the
    /// resulting fill, averaged over the blocks it may land in.
    fn blocked_by_enumeration(blocks: usize, bits: usize, k: u32, items: u32) -> f64 {
        // Counted in integers: summing millions of small floats would round.
        let mut total = 0u128;
        let assignments = for_each_assignment(blocks, bits, k, items, |probes| {
            let mut filled = vec![vec![false; bits]; blocks];
            for &(block, bit) in probes {
                filled[block][bit] = true;
            }
            for block in &filled {
                let set = block.iter().filter(|&&b| b).count();
                total += (set as u128).pow(k);
            }
        });
        total as f64 / (assignments as f64 * blocks as f64 * (bits as f64).powi(k as i32))
    }

    #[test]
    fn blocked_matches_enumeration() {
        // (blocks, bits per block, k, items)
        #[rustfmt::skip]
        let cases: [(usize, usize, u32, u32); 5] =
            [(3, 4, 2, 3), (3, 4, 2, 4), (2, 8, 3, 2), (4, 2, 1, 5), (2, 3, 2, 4)];
        for (blocks, bits, k, items) in cases {
            let by_enumeration = blocked_by_enumeration(blocks, bits, k, items);
            let formula =
                blocked_bloom_fpp(blocks as u64, bits as u32, k, u64::from(items)).unwrap();
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
            let mut table = BlockFppTable::new(bits, k).unwrap();
            for items in [0u64, 1, 7, 51, 100, 300] {
                let exact = bloom_fpp_exact(u64::from(bits), k, items).unwrap();
                let tabled = table.fpp_at(items);
                assert!(
                    (tabled - exact).abs() <= 1e-9 * exact,
                    "B={bits} k={k} n={items}: {tabled} vs {exact}"
                );
            }
        }
        // One block is a standard Bloom filter.
        let exact = bloom_fpp_exact(512, 7, 60).unwrap();
        assert!((blocked_bloom_fpp(1, 512, 7, 60).unwrap() / exact - 1.0).abs() < 1e-9);
    }

    #[test]
    fn blocked_against_standard_and_classic() {
        // 10 bits per key: blocked costs accuracy against standard Bloom,
        // and the independent-bits approximation is optimistic but close.
        let (blocks, items) = (195_313u64, 10_000_000u64);
        for k in 4..=9 {
            let exact = blocked_bloom_fpp(blocks, 512, k, items).unwrap();
            let classic = blocked_bloom_fpp_classic(blocks, 512, k, items);
            let standard = bloom_fpp_exact(blocks * 512, k, items).unwrap();
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
            .map(|k| blocked_bloom_fpp(blocks, 512, k, items).unwrap())
            .fold(f64::INFINITY, f64::min);
        assert!(best > 0.0096 && best < 0.0097, "{best}");
    }

    #[test]
    fn blocked_edge_cases() {
        assert_eq!(blocked_bloom_fpp(100, 512, 6, 0).unwrap(), 0.0);
        assert_eq!(blocked_bloom_fpp(0, 512, 6, 10).unwrap(), 1.0);
        assert_eq!(blocked_bloom_fpp(100, 512, 0, 10).unwrap(), 1.0);
        assert_eq!(blocked_bloom_fpp(100, 0, 6, 10).unwrap(), 1.0);
        // Overfilled: saturates to 1 without walking every load.
        assert!((blocked_bloom_fpp(10, 512, 6, 1_000_000_000).unwrap() - 1.0).abs() < 1e-12);
        assert!((blocked_bloom_fpp(1, 512, 6, u64::MAX).unwrap() - 1.0).abs() < 1e-12);
        // Monotone in items and tiny values stay positive.
        let mut previous = 0.0;
        for n in [1u64, 10, 100, 1000, 10_000, 100_000] {
            let fpp = blocked_bloom_fpp(1000, 512, 8, n).unwrap();
            assert!(fpp > previous, "n={n}");
            previous = fpp;
        }
        assert!(blocked_bloom_fpp(1 << 30, 512, 16, 1000).unwrap() > 0.0);
    }

    /// References in 300-digit arithmetic (mpmath): the exact value as the
    /// Binomial(n, 1/b) mixture of exact per-block values over every load
    /// that matters, the classic one from its closed form
    /// Σ_j (−1)^j C(k, j) e^{−λ(1 − c^j)}, c = (1 − 1/B)^k.
    const REFERENCES: &[(u64, u32, u32, u64, f64, f64)] = &[
        // (blocks, block bits, k, items, exact, classic)
        (
            3,
            512,
            64,
            1,
            4.164_956_640_412_316_5e-60,
            4.449_437_914_588_391e-21,
        ),
        (
            1,
            512,
            64,
            1,
            1.249_486_992_123_695e-59,
            2.876_042_220_569_424e-16,
        ),
        (
            2,
            512,
            20,
            3,
            1.112_109_900_249_823e-20,
            2.798_754_676_230_699e-15,
        ),
        (
            1000,
            512,
            8,
            10_000,
            1.048_919_258_028_514_7e-6,
            1.026_878_142_247_649_6e-6,
        ),
        (
            100_000,
            512,
            40,
            1000,
            6.983_852_208_164_945e-32,
            4.093_154_027_754_651e-32,
        ),
        (
            50,
            64,
            3,
            200,
            7.970_233_118_620_991e-3,
            7.883_921_529_607_703e-3,
        ),
    ];

    #[test]
    fn blocked_matches_high_precision_references() {
        for &(blocks, bits, k, items, exact, classic) in REFERENCES {
            let got = blocked_bloom_fpp(blocks, bits, k, items).unwrap();
            assert!(
                (got / exact - 1.0).abs() < 1e-12,
                "b={blocks} B={bits} k={k} n={items}: {got:e} vs {exact:e}"
            );
            let got = blocked_bloom_fpp_classic(blocks, bits, k, items);
            assert!(
                (got / classic - 1.0).abs() < 1e-12,
                "classic b={blocks} B={bits} k={k} n={items}: {got:e} vs {classic:e}"
            );
        }
        for &(blocks, bits, k, items, classic) in &[
            (
                42_000u64,
                512u32,
                13u32,
                1_000_000u64,
                1.181_014_928_193_482_5e-4,
            ),
            (195_313, 512, 6, 10_000_000, 9.575_567_759_946_868e-3),
            // Saturated blocks: 1 − e^{−λ/B}, summed as a deficit below 1.
            (10, 512, 1, 100_000, 0.999_999_996_706_285_9),
            (1 << 40, 512, 30, 1000, 5.104_187_697_176_922e-47),
        ] {
            let got = blocked_bloom_fpp_classic(blocks, bits, k, items);
            assert!(
                (got / classic - 1.0).abs() < 1e-12,
                "classic b={blocks} B={bits} k={k} n={items}: {got:e} vs {classic:e}"
            );
        }
    }

    /// Blocks × per-block probes × loads from one item to 2^64 − 1.
    fn blocked_grid() -> impl Iterator<Item = (u64, u32, u32, u64)> {
        let blocks = [1u64, 2, 3, 1000, 1 << 20, 1 << 40, u64::MAX];
        let bits = [1u32, 64, 512, MAX_EXACT_BLOCK_BITS];
        let hashes = [1u32, 2, 7, 20, 64, crate::theory::MAX_EXACT_HASHES];
        let items = [1u64, 10, 1000, 1_000_000, 1 << 40, u64::MAX];
        blocks.into_iter().flat_map(move |b| {
            bits.into_iter().flat_map(move |bits| {
                hashes
                    .into_iter()
                    .flat_map(move |k| items.into_iter().map(move |n| (b, bits, k, n)))
            })
        })
    }

    /// Every formula answers a probability across the grid, including the
    /// mixture's heaviest loads (n = 1e10 once took 4 s). How long they
    /// take is not asserted: a wall-clock bound fails on a loaded machine.
    #[test]
    fn blocked_formulas_are_probabilities_everywhere() {
        let check = |name: String, f: &mut dyn FnMut() -> f64| {
            let value = f();
            assert!((0.0..=1.0).contains(&value), "{name}: {value}");
            value
        };
        for (b, bits, k, n) in blocked_grid() {
            let exact = check(format!("exact({b}, {bits}, {k}, {n})"), &mut || {
                blocked_bloom_fpp(b, bits, k, n).unwrap()
            });
            check(format!("classic({b}, {bits}, {k}, {n})"), &mut || {
                blocked_bloom_fpp_classic(b, bits, k, n)
            });
            // One block is a standard Bloom filter of B bits.
            if b == 1 {
                let standard = bloom_fpp_exact(u64::from(bits), k, n).unwrap();
                assert!(
                    (exact - standard).abs() <= 1e-12 * standard,
                    "B={bits} k={k} n={n}: {exact:e} vs {standard:e}"
                );
            }
        }
        // The mixture's heaviest case: loads near the end of the sparse range.
        for &(bits, k) in &[
            (512u32, 64u32),
            (MAX_EXACT_BLOCK_BITS, 64),
            (MAX_EXACT_BLOCK_BITS, 256),
        ] {
            let sparse_loads = f64::from(bits) * (2.0 * f64::from(k)).ln() / f64::from(k);
            for scale in [0.5, 1.0, 2.0] {
                let n = (sparse_loads * scale * 1000.0) as u64;
                check(format!("exact(1000, {bits}, {k}, {n})"), &mut || {
                    blocked_bloom_fpp(1000, bits, k, n).unwrap()
                });
            }
        }
        let mut table = BlockFppTable::new(MAX_EXACT_BLOCK_BITS, 256).unwrap();
        for n in [1u64, 10, 50, 100, 1000, u64::MAX] {
            check(format!("table.fpp_at({n})"), &mut || table.fpp_at(n));
        }
    }

    #[test]
    fn exact_blocked_is_above_the_classic_approximation_with_many_items() {
        // Exact per-block FPPs exceed the independent-bits ones (Jensen), and
        // with many blocks and many items the Binomial load is nearly the
        // Poisson one; the Jensen gap then outweighs the Poisson's wider tail.
        for &blocks in &[1000u64, 100_000, 1 << 30] {
            for &k in &[1u32, 2, 6, 13, 20, 40, 64] {
                for &per_block in &[1.0, 5.0, 20.0, 50.0, 200.0] {
                    let items = (per_block * blocks as f64) as u64;
                    let exact = blocked_bloom_fpp(blocks, 512, k, items).unwrap();
                    let classic = blocked_bloom_fpp_classic(blocks, 512, k, items);
                    assert!(
                        exact >= classic * (1.0 - 1e-9),
                        "b={blocks} k={k} n={items}: exact {exact:e} < classic {classic:e}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_classic_approximation_is_no_bound_with_few_items_or_blocks() {
        // One block holding one key: Poisson(1) puts 26% on two or more keys,
        // which the one block never holds.
        let exact = blocked_bloom_fpp(1, 512, 64, 1).unwrap();
        let classic = blocked_bloom_fpp_classic(1, 512, 64, 1);
        assert!(classic > exact * 1e40, "{classic:e} vs {exact:e}");
        // Ten keys in a thousand blocks: no block ever holds eleven.
        let exact = blocked_bloom_fpp(1000, 512, 64, 10).unwrap();
        let classic = blocked_bloom_fpp_classic(1000, 512, 64, 10);
        assert!(classic > exact * 2.0, "{classic:e} vs {exact:e}");
        // A hundred keys, few probes: the Poisson tail still outweighs the
        // Jensen gap, by a little.
        let exact = blocked_bloom_fpp(1000, 512, 6, 100).unwrap();
        let classic = blocked_bloom_fpp_classic(1000, 512, 6, 100);
        assert!(
            classic > exact && classic < exact * 1.001,
            "{classic:e} vs {exact:e}"
        );
    }

    #[test]
    fn exact_blocked_is_above_the_standard_classic_bound() {
        // The size search starts blocked filters from the standard filter's
        // classic bound too: below saturation, blocking never beats a
        // standard filter's independent-bits FPP at the same size. (Near
        // FPP 1 it can: a block's FPP is concave in its load there.)
        for &blocks in &[1u64, 2, 10, 1000, 1 << 20] {
            for &k in &[1u32, 4, 8, 16, 32, 64] {
                for &per_block in &[0.01, 0.5, 2.0, 10.0, 30.0, 100.0] {
                    let items = ((per_block * blocks as f64) as u64).max(1);
                    let exact = blocked_bloom_fpp(blocks, 512, k, items).unwrap();
                    let standard = crate::theory::bloom_fpp_classic(blocks * 512, k, items);
                    assert!(
                        exact >= standard * (1.0 - 1e-9) || standard > 0.5,
                        "b={blocks} k={k} n={items}: {exact:e} < {standard:e}"
                    );
                }
            }
        }
    }
}
