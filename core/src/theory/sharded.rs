//! Sharded Bloom filters: a filter split into S standard Bloom filters of
//! m_s bits each (the shards of a filter spread over a cluster), each key
//! routed by its hash to one shard and setting its k bits there.
//!
//! It is the blocked filter's model with blocks of any size: a shard's load
//! is Binomial(n, 1/S) (the loads together are multinomial), a query lands
//! in a uniform shard, and a shard holding i keys is a standard filter with
//! the exact FPP of [`bloom_fpp_exact`](super::bloom_fpp_exact). The mixture
//! is summed as the blocked filter's is, outward from the load's mode.

use super::blocked::{Values, binomial_mixture, saturation_load};
use super::bloom::ExactBloom;
use super::support::check_exact_hashes;
use crate::Error;
use crate::sizing::ensure;

/// The exact FPP of one shard at each load.
struct ShardFpp {
    exact: ExactBloom,
    hashes: f64,
}

impl Values for ShardFpp {
    fn at(&mut self, items: u64) -> f64 {
        if items == 0 {
            0.0
        } else {
            self.exact.fpp(self.hashes * items as f64)
        }
    }
}

/// The exact FPP of a sharded Bloom filter: `shards` standard Bloom filters
/// of `shard_bits` bits, each key routed to one of them uniformly by its
/// hash and setting `num_hashes` bits there, after `items` insertions.
///
/// E[F(m_s, k, L)] over a shard's load L ~ Binomial(n, 1/S), F the exact
/// standard FPP (Bose et al. 2008): the blocked filter's formula (Putze,
/// Sanders and Singler 2007) with shards of any size. The load's spread
/// makes it slightly above the FPP of one standard filter of all S·m_s bits,
/// by a relative amount that shrinks like S/n.
///
/// The mixture visits O(√(n/S) + 40) loads, each costing microseconds at
/// the usual k (see [`bloom_fpp_exact`](super::bloom_fpp_exact)): measured
/// on a busy 2-core VM at k = 7, 6 ms at 10^3 items per shard, 70 ms at
/// 10^5, 0.2 s at 10^6 and 2.7 s at 10^8.
///
/// # Examples
///
/// ```
/// use filterlab_core::theory::{bloom_fpp_exact, sharded_bloom_fpp};
///
/// // 10^6 keys over 64 shards of 150,000 bits each (9.6 bits per key).
/// let sharded = sharded_bloom_fpp(64, 150_016, 7, 1_000_000)?;
/// let whole = bloom_fpp_exact(64 * 150_016, 7, 1_000_000)?;
/// assert!(sharded > whole && sharded < whole * 1.01);
/// // One shard is a standard filter.
/// assert_eq!(sharded_bloom_fpp(1, 9_600_000, 7, 1_000_000)?, bloom_fpp_exact(9_600_000, 7, 1_000_000)?);
/// # Ok::<(), filterlab_core::Error>(())
/// ```
///
/// # Errors
///
/// [`crate::ErrorKind::InvalidParameter`] for no shards, more than
/// [`MAX_EXACT_HASHES`](super::MAX_EXACT_HASHES) probes, or shards of no bits.
pub fn sharded_bloom_fpp(
    shards: u64,
    shard_bits: u64,
    num_hashes: u32,
    items: u64,
) -> Result<f64, Error> {
    check_exact_hashes(num_hashes)?;
    ensure(shards > 0 && shard_bits > 0, || {
        format!("a sharded filter needs shards and bits, got {shards} shards of {shard_bits} bits")
    })?;
    if num_hashes == 0 {
        return Ok(1.0);
    }
    let k = f64::from(num_hashes);
    let mut values = ShardFpp {
        exact: ExactBloom::new(shard_bits, num_hashes),
        hashes: k,
    };
    let saturated_from = saturation_load(shard_bits as f64, k);
    Ok(binomial_mixture(shards, items, saturated_from, &mut values))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::theory::stats::ln_binomial_pmf;
    use crate::theory::{blocked_bloom_fpp, bloom_fpp_exact};

    /// The mixture summed term by term over every load.
    fn by_full_sum(shards: u64, bits: u64, k: u32, items: u64) -> f64 {
        let p = 1.0 / shards as f64;
        (0..=items)
            .map(|load| {
                let pmf = ln_binomial_pmf(load as f64, items as f64, p, 1.0 - p).exp();
                pmf * bloom_fpp_exact(bits, k, load).unwrap()
            })
            .sum()
    }

    #[test]
    fn matches_the_full_sum() {
        for &(shards, bits, k, items) in &[
            (2u64, 64u64, 3u32, 10u64),
            (4, 256, 3, 100),
            (16, 1000, 7, 1500),
            (7, 12_345, 5, 9_000),
            (64, 150_016, 7, 20_000),
        ] {
            let fast = sharded_bloom_fpp(shards, bits, k, items).unwrap();
            let slow = by_full_sum(shards, bits, k, items);
            assert!(
                (fast / slow - 1.0).abs() < 1e-9,
                "{shards} × {bits}, k = {k}, n = {items}: {fast} vs {slow}"
            );
        }
    }

    /// Shards of a blocked filter's size give its exact FPP; one shard is a
    /// standard filter.
    #[test]
    fn agrees_with_the_blocked_and_standard_formulas() {
        let sharded = sharded_bloom_fpp(195_313, 512, 6, 10_000_000).unwrap();
        let blocked = blocked_bloom_fpp(195_313, 512, 6, 10_000_000).unwrap();
        assert!((sharded / blocked - 1.0).abs() < 1e-12);
        for items in [0, 1, 1000, 100_000] {
            assert_eq!(
                sharded_bloom_fpp(1, 958_506, 7, items).unwrap(),
                bloom_fpp_exact(958_506, 7, items).unwrap()
            );
        }
    }

    /// Above one standard filter of the same bits, by less as the shards fill.
    #[test]
    fn spread_costs_little_and_less_with_load() {
        let excess = |items: u64| {
            let shards = 64;
            let bits = items * 10 / shards;
            sharded_bloom_fpp(shards, bits, 7, items).unwrap()
                / bloom_fpp_exact(bits * shards, 7, items).unwrap()
                - 1.0
        };
        let (small, large) = (excess(64_000), excess(6_400_000));
        assert!(
            small > 0.0 && large > 0.0 && large < small && small < 0.1,
            "{small} {large}"
        );
    }

    #[test]
    fn bad_parameters_are_errors() {
        assert!(sharded_bloom_fpp(0, 100, 3, 10).is_err());
        assert!(sharded_bloom_fpp(3, 0, 3, 10).is_err());
        assert!(sharded_bloom_fpp(3, 100, 1000, 10).is_err());
        assert_eq!(sharded_bloom_fpp(3, 100, 0, 10).unwrap(), 1.0);
        assert_eq!(sharded_bloom_fpp(3, 100, 3, 0).unwrap(), 0.0);
    }
}
