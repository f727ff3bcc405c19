//! Split-block Bloom filters (Parquet's layout, the one sbbf-rs-safe and
//! Impala use): each key maps to one 256-bit block of eight 32-bit words
//! and sets one bit in each word.
//!
//! Given its block's load i, a query tests one uniform bit in each of eight
//! words, and each word's i bits (one per key) are independent of the other
//! words', so the per-block FPP is exactly (1 − (31/32)^i)^8: unlike a
//! block whose k probes may share words, there is no occupancy chain. The
//! exact FPP mixes it with the block load Binomial(n, 1/b), summed as the
//! blocked mixture is (see `blocked.rs`), in time bounded whatever n and b.

use super::blocked::{ClassicValues, binomial_mixture, saturation_load};
use super::support::pow_hashes;

/// 32-bit words per split block; a key sets one bit in each.
pub const SPLIT_BLOCK_WORDS: u32 = 8;

/// Bits per word of a split block.
pub const SPLIT_BLOCK_WORD_BITS: u32 = 32;

/// The exact FPP of a split-block Bloom filter of `num_blocks` blocks of
/// eight 32-bit words after `items` distinct inserts:
/// Σ_i Binomial(i; n, 1/b) · (1 − (31/32)^i)^8.
///
/// The Poisson mixture often quoted for it (Putze, Sanders and Singler's
/// load model) is high by about 1/b relative (1.1e-4 with ten thousand
/// blocks at ten keys per block); with few blocks the gap is large, and the
/// Binomial is the exact load. 1 for no blocks; 0 for no items.
///
/// # Examples
///
/// ```
/// use filterlab_core::theory::{blocked_bloom_fpp, split_block_bloom_fpp};
///
/// // 10 bits per key: about 1.27%, against 0.97% for 512-bit blocks with
/// // six probes at the same size.
/// let split = split_block_bloom_fpp(390_625, 10_000_000);
/// assert!(split > 0.0126 && split < 0.0128);
/// assert!(blocked_bloom_fpp(195_313, 512, 6, 10_000_000)? < 0.0098);
/// # Ok::<(), filterlab_core::Error>(())
/// ```
pub fn split_block_bloom_fpp(num_blocks: u64, items: u64) -> f64 {
    split_fpp(num_blocks, SPLIT_BLOCK_WORD_BITS, SPLIT_BLOCK_WORDS, items)
}

/// The split-block FPP for blocks of `words` words of `word_bits` bits (one
/// probe per word): the public formula's layout, and the tiny ones the
/// brute-force check can enumerate.
fn split_fpp(num_blocks: u64, word_bits: u32, words: u32, items: u64) -> f64 {
    // Each key leaves a given bit of a word clear with probability
    // 1 − 1/w; the word's chance of answering yes at load i is 1 − that^i.
    let ln_clear = (-1.0 / f64::from(word_bits)).ln_1p();
    // From this load every word has every bit set with probability above
    // 1 − 1e-17 (a union bound over the w bits of each word).
    let saturated_from = saturation_load(f64::from(word_bits), 1.0);
    let mut values = ClassicValues::new(ln_clear, words);
    binomial_mixture(num_blocks, items, saturated_from, &mut values)
}

/// The FPP of one split-block filter instance given the bits set in each
/// word of each block (`fills`, one array of eight counts per block): the
/// mean over blocks of Π_w fill_w / 32, since a never-inserted key picks a
/// uniform block and one uniform bit in each of its words. Exact for that
/// instance; 1 for no blocks.
///
/// # Examples
///
/// ```
/// use filterlab_core::theory::split_block_fpp_given_word_fills;
///
/// // One block full, one with a bit in each word.
/// let fpp = split_block_fpp_given_word_fills([[32; 8], [1; 8]]);
/// assert_eq!(fpp, (1.0 + 32f64.powi(-8)) / 2.0);
/// ```
pub fn split_block_fpp_given_word_fills(
    fills: impl IntoIterator<Item = [u32; SPLIT_BLOCK_WORDS as usize]>,
) -> f64 {
    let (blocks, total) = fills
        .into_iter()
        .fold((0u64, 0.0), |(blocks, total), fill| {
            let product: f64 = fill.iter().map(|&set| f64::from(set)).product();
            (blocks + 1, total + product)
        });
    if blocks == 0 {
        return 1.0;
    }
    total / pow_hashes(f64::from(SPLIT_BLOCK_WORD_BITS), SPLIT_BLOCK_WORDS) / blocks as f64
}

/// The number of distinct keys a split block with `set_bits` bits set most
/// likely holds: the load whose expected fill, 256 · (1 − (31/32)^i), is
/// `set_bits` (each key sets one uniform bit in each word). Summed over
/// blocks it estimates a filter's distinct items, after merges too;
/// infinite for a full block.
///
/// # Examples
///
/// ```
/// use filterlab_core::theory::split_block_estimate_items;
///
/// assert_eq!(split_block_estimate_items(0), 0.0);
/// // One key sets eight bits; eight bits set are a little over one key.
/// assert!((split_block_estimate_items(8) - 1.0).abs() < 0.02);
/// assert!(split_block_estimate_items(256).is_infinite());
/// ```
pub fn split_block_estimate_items(set_bits: u64) -> f64 {
    let block_bits = f64::from(SPLIT_BLOCK_WORDS * SPLIT_BLOCK_WORD_BITS);
    let fill = (set_bits as f64 / block_bits).min(1.0);
    (-fill).ln_1p() / (-1.0 / f64::from(SPLIT_BLOCK_WORD_BITS)).ln_1p()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mix64;
    use crate::theory::support::for_each_assignment;

    /// The split-block FPP by brute force: every assignment of `items` keys
    /// to a block and of one bit in each of its `words` words, then a
    /// query's FPP given the resulting fills, averaged over the blocks.
    fn split_by_enumeration(blocks: usize, word_bits: usize, words: u32, items: u32) -> f64 {
        let mut total = 0u128;
        // Probe j of a key is its bit in word j.
        let assignments = for_each_assignment(blocks, word_bits, words, items, |probes| {
            let mut set = vec![vec![vec![false; word_bits]; words as usize]; blocks];
            for (j, &(block, bit)) in probes.iter().enumerate() {
                set[block][j % words as usize][bit] = true;
            }
            for block in &set {
                total += block
                    .iter()
                    .map(|word| word.iter().filter(|&&bit| bit).count() as u128)
                    .product::<u128>();
            }
        });
        total as f64 / (assignments as f64 * blocks as f64 * (word_bits as f64).powi(words as i32))
    }

    #[test]
    fn matches_enumeration() {
        // (blocks, bits per word, words per block, items)
        #[rustfmt::skip]
        let cases: [(usize, usize, u32, u32); 6] =
            [(1, 4, 2, 3), (2, 3, 2, 3), (3, 2, 3, 2), (2, 4, 1, 4), (3, 3, 2, 2), (1, 2, 4, 3)];
        for (blocks, word_bits, words, items) in cases {
            let by_enumeration = split_by_enumeration(blocks, word_bits, words, items);
            let formula = split_fpp(blocks as u64, word_bits as u32, words, u64::from(items));
            assert!(
                (formula / by_enumeration - 1.0).abs() < 1e-12,
                "b={blocks} w={word_bits} words={words} n={items}: {formula} vs {by_enumeration}"
            );
        }
    }

    /// Values in 60-digit arithmetic (mpmath): the Binomial(n, 1/b) mixture
    /// of (1 − (31/32)^i)^8 summed over every load within 40 standard
    /// deviations of the mean.
    const REFERENCES: &[(u64, u64, f64)] = &[
        (1, 1, 9.094_947_017_729_282e-13),
        (1, 50, 0.160_451_061_217_433_47),
        (3, 2, 2.321_195_879_303_936_4e-11),
        (1000, 10_000, 1.159_832_514_104_072_5e-4),
        (390_625, 10_000_000, 0.012_648_442_479_683_275),
        (100_000, 1000, 1.993_646_565_712_128_6e-14),
        (1 << 30, 1_000_000_000, 1.739_269_906_905_797_3e-9),
        (50, 10_000, 0.984_711_704_064_046_8),
    ];

    #[test]
    fn matches_high_precision_references() {
        for &(blocks, items, reference) in REFERENCES {
            let got = split_block_bloom_fpp(blocks, items);
            assert!(
                (got / reference - 1.0).abs() < 1e-12,
                "b={blocks} n={items}: {got:e} vs {reference:e}"
            );
        }
    }

    /// Random filters of a few real blocks: the mean of each instance's
    /// FPP given its fills (uniform bits, as the salts' products are meant
    /// to be) matches the formula within 4 standard errors.
    #[test]
    fn matches_simulation() {
        let mut state = 0x5b1f_0001u64;
        let mut next = move || {
            state = mix64(state.wrapping_add(0x9e37_79b9_7f4a_7c15));
            state
        };
        for &(blocks, items, instances) in &[
            (1usize, 40u64, 40_000u32),
            (4, 120, 20_000),
            (16, 200, 10_000),
        ] {
            let (mut sum, mut sum_sq) = (0.0, 0.0);
            for _ in 0..instances {
                let mut words = vec![[0u32; 8]; blocks];
                for _ in 0..items {
                    let block = &mut words[(next() % blocks as u64) as usize];
                    let bits = next();
                    for (w, word) in block.iter_mut().enumerate() {
                        *word |= 1 << ((bits >> (5 * w)) & 31);
                    }
                }
                let fpp = split_block_fpp_given_word_fills(
                    words.iter().map(|block| block.map(u32::count_ones)),
                );
                sum += fpp;
                sum_sq += fpp * fpp;
            }
            let n = f64::from(instances);
            let mean = sum / n;
            let error = ((sum_sq / n - mean * mean) / n).sqrt();
            let exact = split_block_bloom_fpp(blocks as u64, items);
            assert!(
                (mean - exact).abs() <= 4.0 * error,
                "b={blocks} n={items}: simulated {mean:e} ± {error:e}, exact {exact:e}"
            );
        }
    }

    #[test]
    fn edge_cases_and_bounded_time() {
        assert_eq!(split_block_bloom_fpp(100, 0), 0.0);
        assert_eq!(split_block_bloom_fpp(0, 10), 1.0);
        assert_eq!(split_block_fpp_given_word_fills([]), 1.0);
        // One block holds every key.
        for items in [1u64, 7, 100, 1000] {
            let one = split_block_bloom_fpp(1, items);
            let closed = (1.0 - (31.0f64 / 32.0).powi(items as i32)).powi(8);
            assert!((one / closed - 1.0).abs() < 1e-12, "n={items}");
        }
        let mut previous = 0.0;
        for items in [1u64, 10, 1000, 100_000, 10_000_000] {
            let fpp = split_block_bloom_fpp(100_000, items);
            assert!(fpp > previous, "n={items}");
            previous = fpp;
        }
        let start = std::time::Instant::now();
        for blocks in [1u64, 2, 1000, 1 << 40, u64::MAX] {
            for items in [1u64, 1000, 1 << 40, u64::MAX] {
                let fpp = split_block_bloom_fpp(blocks, items);
                assert!((0.0..=1.0).contains(&fpp), "b={blocks} n={items}: {fpp}");
                if items / blocks > 10_000 {
                    assert!(fpp > 1.0 - 1e-12, "b={blocks} n={items}: {fpp}");
                }
            }
        }
        // A bounded-time contract, not a benchmark.
        assert!(start.elapsed() < std::time::Duration::from_secs(2));
    }

    #[test]
    fn poisson_load_agrees_with_many_blocks() {
        // The Poisson(n/b) mixture the harness's sbbf theory used before.
        let poisson = |blocks: u64, items: u64| {
            let mean = items as f64 / blocks as f64;
            let mut ln_pmf = -mean;
            let mut total = 0.0;
            for i in 0..=(mean + 20.0 * mean.sqrt() + 60.0) as i32 {
                if i > 0 {
                    ln_pmf += mean.ln() - f64::from(i).ln();
                }
                total += ln_pmf.exp() * (1.0 - (31.0f64 / 32.0).powi(i)).powi(8);
            }
            total
        };
        for &(blocks, items) in &[
            (10_000u64, 100_000u64),
            (390_625, 10_000_000),
            (1 << 22, 1 << 27),
        ] {
            let exact = split_block_bloom_fpp(blocks, items);
            let approximate = poisson(blocks, items);
            assert!(
                exact < approximate && approximate / exact - 1.0 < 2.0 / blocks as f64,
                "b={blocks} n={items}: {exact:e} vs {approximate:e}"
            );
        }
    }
}
