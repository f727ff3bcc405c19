//! Counting Bloom filters: how likely a counter is to fill up.
//!
//! A counting Bloom filter answers queries exactly as the Bloom filter with
//! the same m and k whose bits are its nonzero counters, so its FPP is
//! [`bloom_fpp_exact`](super::bloom_fpp_exact) (or
//! [`blocked_bloom_fpp`](super::blocked_bloom_fpp) for a blocked layout).
//! What counting adds is a counter of w bits that can fill up: these
//! functions give the probability that a counter has received at least a
//! given number of increments, exactly (a binomial tail, or for blocked
//! filters a mixture of binomial tails over the block load), and Fan et
//! al.'s closed-form bound for comparison.
//!
//! A counter receiving at least `threshold` increments is a per-counter
//! event; the probability that *any* of m counters does is at most m times
//! it (the union bound, also the expected number of such counters, and
//! tight when small).

use std::f64::consts::E;

use crate::Error;
use crate::sizing::ensure;

/// The highest threshold the tails evaluate: the largest value of a 16-bit
/// counter. Their cost grows linearly with it.
pub const MAX_COUNTER_THRESHOLD: u32 = u16::MAX as u32;

/// The value at which a counter of `counter_bits` bits saturates: its
/// largest value, 2^w − 1. A filter whose counters stick there (never
/// decremented again, so never a false negative) loses exactness once one
/// counter has received that many increments.
///
/// # Errors
///
/// [`crate::ErrorKind::InvalidParameter`] unless `counter_bits` is in 1..=16.
///
/// # Examples
///
/// ```
/// use filterlab_core::theory::saturation_threshold;
///
/// assert_eq!(saturation_threshold(4)?, 15);
/// assert!(saturation_threshold(17).is_err());
/// # Ok::<(), filterlab_core::Error>(())
/// ```
pub fn saturation_threshold(counter_bits: u32) -> Result<u32, Error> {
    ensure((1..=16).contains(&counter_bits), || {
        format!("counters are 1 to 16 bits wide, got {counter_bits}")
    })?;
    Ok((1 << counter_bits) - 1)
}

fn check_threshold(threshold: u32) -> Result<(), Error> {
    ensure(threshold <= MAX_COUNTER_THRESHOLD, || {
        format!("counter tails are evaluated up to {MAX_COUNTER_THRESHOLD}, got {threshold}")
    })
}

/// P(X ≥ threshold) for X ~ Binomial(trials, p), for real-valued `trials`
/// (k·n may exceed 2^64). A sum of positive terms in either direction, so
/// it stays accurate from 1 down to 1e-300; O(threshold) terms plus the
/// geometric tail.
fn binomial_upper_tail(trials: f64, p: f64, threshold: u32) -> f64 {
    let t = f64::from(threshold);
    if threshold == 0 {
        return 1.0;
    }
    if p <= 0.0 || trials < t {
        return 0.0;
    }
    if p >= 1.0 {
        return 1.0;
    }
    let log_q = (-p).ln_1p();
    let log_odds = p.ln() - log_q;
    // ln P(X = j + 1) − ln P(X = j).
    let step = |j: f64| ((trials - j) / (j + 1.0)).ln() + log_odds;
    if t > trials * p {
        // Above the mean: sum upwards from the threshold; the terms fall
        // at least geometrically.
        let mut log_pmf = t * log_odds + trials * log_q;
        for i in 0..threshold {
            let i = f64::from(i);
            log_pmf += ((trials - i) / (i + 1.0)).ln();
        }
        let (mut total, mut j) = (0.0, t);
        while j <= trials {
            let term = log_pmf.exp();
            total += term;
            if term <= total * 1e-18 || j - t > 1e7 {
                break;
            }
            log_pmf += step(j);
            j += 1.0;
        }
        total.min(1.0)
    } else {
        // At or below the mean: one minus the lower tail, summed in full.
        let mut log_pmf = trials * log_q;
        let mut lower = 0.0;
        for j in 0..threshold {
            let j = f64::from(j);
            lower += log_pmf.exp();
            log_pmf += step(j);
        }
        (1.0 - lower).clamp(0.0, 1.0)
    }
}

/// The probability that one given counter of a counting Bloom filter with
/// `num_counters` counters and `num_hashes` probes per key (drawn with
/// replacement over the whole array) has received at least `threshold`
/// increments after `items` inserts: the tail of Binomial(k·n, 1/m).
///
/// For the filter's saturation, take `threshold` =
/// [`saturation_threshold`]`(w)`; the probability that any counter
/// saturates is at most `m` times this.
///
/// # Errors
///
/// [`crate::ErrorKind::InvalidParameter`] for a threshold above
/// [`MAX_COUNTER_THRESHOLD`].
///
/// # Examples
///
/// ```
/// use filterlab_core::theory::{counter_tail, saturation_threshold};
///
/// // 10M keys at 1% (m = 95.9M counters, k = 7), 4-bit counters: the
/// // probability that any counter reaches 15 is at most 3.3e-7, and that
/// // any reaches 16 at most 1.5e-8.
/// let m = 95_929_600;
/// let saturates = m as f64 * counter_tail(m, 7, 10_000_000, saturation_threshold(4)?)?;
/// assert!(saturates > 3.2e-7 && saturates < 3.4e-7);
/// let overflows = m as f64 * counter_tail(m, 7, 10_000_000, 16)?;
/// assert!(overflows > 1.4e-8 && overflows < 1.6e-8);
/// # Ok::<(), filterlab_core::Error>(())
/// ```
pub fn counter_tail(
    num_counters: u64,
    num_hashes: u32,
    items: u64,
    threshold: u32,
) -> Result<f64, Error> {
    // The whole array is one block: a key's k increments all land in it.
    tail_in_blocks(
        1,
        num_counters,
        num_hashes,
        items,
        threshold,
        Increments::PerProbe,
    )
}

/// [`counter_tail`] for a blocked counting Bloom filter: `num_blocks`
/// blocks of `block_counters` counters, each key mapped to one block and
/// adding one to each **distinct** counter its `num_hashes` probes name in
/// it (probes drawn with replacement; two on one counter add one).
///
/// A block's load L is Binomial(n, 1/b); a key names a given counter of its
/// block with probability q = 1 − (1 − 1/c)^k, so given L the counter
/// receives Binomial(L, q) increments; the tail is the mixture. Crowded
/// blocks make it heavier than the standard filter's at the same m, and a
/// key adding at most one to a counter makes it lighter; at the loads
/// filters are sized for the two come out close.
///
/// # Errors
///
/// As [`counter_tail`].
///
/// # Examples
///
/// ```
/// use filterlab_core::theory::{blocked_counter_tail, counter_tail};
///
/// // The same 1.28M counters, standard or in 10,000 blocks of 128, with
/// // 128,000 keys of k = 7: a given counter reaches 15 with probability
/// // 1.35e-15 blocked and 1.89e-15 standard.
/// let blocked = blocked_counter_tail(10_000, 128, 7, 128_000, 15)?;
/// let standard = counter_tail(1_280_000, 7, 128_000, 15)?;
/// assert!(blocked > 1.3e-15 && blocked < 1.4e-15);
/// assert!(standard > 1.85e-15 && standard < 1.95e-15);
/// # Ok::<(), filterlab_core::Error>(())
/// ```
pub fn blocked_counter_tail(
    num_blocks: u64,
    block_counters: u32,
    num_hashes: u32,
    items: u64,
    threshold: u32,
) -> Result<f64, Error> {
    tail_in_blocks(
        num_blocks,
        u64::from(block_counters),
        num_hashes,
        items,
        threshold,
        Increments::Distinct,
    )
}

/// What one key adds to the counters its probes name.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Increments {
    /// One per probe: a counter named twice gets two.
    PerProbe,
    /// One per distinct counter.
    Distinct,
}

/// The tail for blocks of any size, so that the standard layout's
/// [`counter_tail`] is the case of one block of m counters: one evaluation,
/// one set of edge cases, for both layouts.
fn tail_in_blocks(
    num_blocks: u64,
    block_counters: u64,
    num_hashes: u32,
    items: u64,
    threshold: u32,
    increments: Increments,
) -> Result<f64, Error> {
    check_threshold(threshold)?;
    if threshold == 0 {
        return Ok(1.0);
    }
    if num_blocks == 0 || block_counters == 0 || num_hashes == 0 || items == 0 {
        return Ok(0.0);
    }
    let n = items as f64;
    let cell = 1.0 / block_counters as f64;
    // Per key: how many increments it makes, each landing on the counter
    // with probability `chance`.
    let (per_key, chance) = match increments {
        Increments::PerProbe => (f64::from(num_hashes), cell),
        Increments::Distinct => (1.0, -(f64::from(num_hashes) * (-cell).ln_1p()).exp_m1()),
    };
    let in_block = |load: f64| binomial_upper_tail(per_key * load, chance, threshold);
    if num_blocks == 1 {
        return Ok(in_block(n));
    }
    let share = 1.0 / num_blocks as f64;
    let mean = n * share;
    let spread = (n * share * (1.0 - share)).sqrt();
    // Beyond 15 standard deviations (and 30 items) the load's mass is below 1e-40.
    let end = (mean + 15.0 * spread + 30.0).min(n);
    let lightest = (mean - 15.0 * spread - 30.0).max(0.0).floor();
    if in_block(lightest) >= 1.0 - 1e-16 {
        // Every plausible block has a full counter.
        return Ok(1.0);
    }
    // Loads below t/k (t for distinct counters) cannot reach the threshold.
    let start = (f64::from(threshold) / per_key).ceil();
    let log_odds = share.ln() - (-share).ln_1p();
    let mut log_pmf = n * (-share).ln_1p();
    let (mut total, mut mass_seen) = (0.0, 0.0);
    let mut work = 0.0;
    let mut load = 0.0;
    while load <= end {
        let pmf = log_pmf.exp();
        // (Loads so unlikely that their probability underflows add nothing.)
        if load >= start && (pmf > 0.0 || load > mean) {
            let inner = in_block(load);
            total += pmf * inner;
            if inner >= 1.0 - 1e-16 {
                // Every heavier block has a full counter too.
                total += (1.0 - mass_seen - pmf).max(0.0);
                break;
            }
            work += f64::from(threshold);
        }
        work += 1.0;
        if work > BLOCKED_TAIL_WORK {
            return Err(Error::invalid(format!(
                "the blocked counter tail is not evaluated exactly for {mean:.3e} keys per block \
                 at threshold {threshold}"
            )));
        }
        mass_seen += pmf;
        log_pmf += ((n - load) / (load + 1.0)).ln() + log_odds;
        load += 1.0;
    }
    Ok(total.min(1.0))
}

/// The most terms the blocked tail evaluates (a fraction of a
/// second): only blocks loaded thousands of times past any sizing, with
/// wide counters, come near it.
const BLOCKED_TAIL_WORK: f64 = (1u64 << 24) as f64;

/// Fan, Cao, Almeida and Broder's bound on the probability that any of `m`
/// counters receives at least `threshold` = j increments after n inserts
/// with k probes each: m·(e·k·n / (j·m))^j ("Summary Cache", 2000). At the
/// optimal k = (m/n)·ln 2 and j = 16 this is the well-known 1.37e-15·m for
/// 4-bit counters. Looser than m·[`counter_tail`], which it bounds.
///
/// # Examples
///
/// ```
/// use filterlab_core::theory::{counter_overflow_bound_fan, counter_tail};
///
/// let (m, k, n) = (1u64 << 20, 7, 151_000);
/// let fan = counter_overflow_bound_fan(m, k, n, 16);
/// assert!(fan > m as f64 * counter_tail(m, k, n, 16)?);
/// # Ok::<(), filterlab_core::Error>(())
/// ```
pub fn counter_overflow_bound_fan(
    num_counters: u64,
    num_hashes: u32,
    items: u64,
    threshold: u32,
) -> f64 {
    if num_counters == 0 || threshold == 0 {
        return 1.0;
    }
    let m = num_counters as f64;
    let j = f64::from(threshold);
    let base = E * f64::from(num_hashes) * items as f64 / (j * m);
    (m * base.powf(j)).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::theory::support::for_each_assignment;
    use std::f64::consts::LN_2;

    /// Every way `throws` throws land in `bins` bins, each configuration
    /// equally likely: the share in which bin 0 gets at least `t`, and the
    /// share in which some bin does.
    fn enumerate(bins: u32, throws: u32, t: u32) -> (f64, f64) {
        let configurations = bins.pow(throws);
        let (mut first, mut any) = (0u64, 0u64);
        for configuration in 0..configurations {
            let mut loads = vec![0u32; bins as usize];
            let mut rest = configuration;
            for _ in 0..throws {
                loads[(rest % bins) as usize] += 1;
                rest /= bins;
            }
            first += u64::from(loads[0] >= t);
            any += u64::from(loads.iter().any(|&load| load >= t));
        }
        let total = f64::from(configurations);
        (first as f64 / total, any as f64 / total)
    }

    #[test]
    fn tail_matches_enumeration_and_bounds_any() {
        for &(m, k, n) in &[(4u64, 2u32, 4u64), (3, 3, 3), (5, 1, 7), (2, 4, 3)] {
            let throws = k * n as u32;
            for t in 0..=throws + 1 {
                let (first, any) = enumerate(m as u32, throws, t);
                let tail = counter_tail(m, k, n, t).unwrap();
                assert!(
                    (tail - first).abs() < 1e-12,
                    "m={m} k={k} n={n} t={t}: {tail} vs {first}"
                );
                assert!(m as f64 * tail >= any - 1e-12, "union bound at t={t}");
            }
        }
    }

    /// The blocked tail by brute force: every assignment of keys to a block
    /// and of their k probes to counters of it, a key adding one to each
    /// distinct counter it names.
    fn enumerate_blocked(blocks: u32, cells: u32, k: u32, items: u32, t: u32) -> f64 {
        let mut hits = 0u64;
        let assignments =
            for_each_assignment(blocks as usize, cells as usize, k, items, |probes| {
                // Keys naming counter 0 of block 0, once each however often.
                let first = probes
                    .chunks(k as usize)
                    .filter(|key| key.contains(&(0, 0)))
                    .count();
                hits += u64::from(first >= t as usize);
            });
        hits as f64 / assignments as f64
    }

    #[test]
    fn blocked_tail_matches_enumeration() {
        for &(blocks, cells, k, items) in &[(2u32, 3u32, 2u32, 3u32), (3, 2, 2, 3), (1, 4, 3, 2)] {
            for t in 0..=k * items + 1 {
                let exact = enumerate_blocked(blocks, cells, k, items, t);
                let formula =
                    blocked_counter_tail(u64::from(blocks), cells, k, u64::from(items), t).unwrap();
                assert!(
                    (formula - exact).abs() < 1e-12,
                    "b={blocks} c={cells} k={k} n={items} t={t}: {formula} vs {exact}"
                );
            }
        }
    }

    #[test]
    fn fan_bound_at_the_optimum() {
        // m·(e·ln 2 / 16)^16 with kn/m = ln 2.
        let m = 1u64 << 30;
        let n = 1u64 << 26;
        let k = 11; // kn/m = 11/16, close to ln 2
        let fan = counter_overflow_bound_fan(m, k, n, 16);
        let at_ln2 = m as f64 * (E * LN_2 / 16.0).powi(16);
        assert!((at_ln2 / m as f64 - 1.37e-15).abs() < 0.01e-15);
        assert!((fan / at_ln2).ln().abs() < 0.2, "{fan} vs {at_ln2}");
        // The exact tail is far below Fan's bound, and saturation (15) is
        // more likely than reaching 16.
        let exact16 = m as f64 * counter_tail(m, k, n, 16).unwrap();
        let exact15 = m as f64 * counter_tail(m, k, n, 15).unwrap();
        assert!(exact16 < fan / 10.0, "{exact16} vs {fan}");
        assert!(exact15 > 10.0 * exact16);
    }

    #[test]
    fn tails_in_every_regime() {
        // Tiny tails stay positive; heavy loads give 1; both directions agree
        // where they meet.
        let tiny = counter_tail(1 << 40, 7, 1000, 15).unwrap();
        assert!(tiny > 0.0 && tiny < 1e-100, "{tiny}");
        assert!((counter_tail(100, 10, 1_000_000, 15).unwrap() - 1.0).abs() < 1e-12);
        let below = binomial_upper_tail(1000.0, 0.014_999_9, 15);
        let above = binomial_upper_tail(1000.0, 0.015_000_1, 15);
        assert!((below / above - 1.0).abs() < 1e-3, "{below} vs {above}");
        // 16-bit saturation evaluates in bounded time.
        let t16 = saturation_threshold(16).unwrap();
        assert_eq!(counter_tail(1 << 20, 7, 100_000, t16).unwrap(), 0.0);
        assert!(counter_tail(16, 8, 1_000_000, t16).unwrap() > 0.99);
        assert!(blocked_counter_tail(1 << 20, 32, 7, 1 << 22, t16).unwrap() < 1e-300);
        assert!(counter_tail(10, 1, 10, MAX_COUNTER_THRESHOLD + 1).is_err());
        // Absurd loads: 1 where every block is full, an error where the
        // exact sum would take too long, never a hang.
        assert_eq!(blocked_counter_tail(10, 128, 7, u64::MAX, 15).unwrap(), 1.0);
        assert!(blocked_counter_tail(1000, 32, 1, 2_000_000_000, t16).is_err());
        assert!(saturation_threshold(0).is_err());
        // Monotone in the load.
        let mut previous = 0.0;
        for n in [1_000u64, 10_000, 100_000, 1_000_000] {
            let tail = blocked_counter_tail(10_000, 128, 7, n, 15).unwrap();
            assert!(tail >= previous, "n={n}");
            previous = tail;
        }
    }
}
