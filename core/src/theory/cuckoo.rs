//! Cuckoo filters (Fan, Andersen, Kaminsky, Mitzenmacher 2014): the FPP of
//! a table given its buckets' occupancy, the a-priori FPP at a load, and the
//! compound FPP of a filter grown by sub-tables.
//!
//! A table has B buckets of b slots; a key stores an f-bit fingerprint in
//! one of its two candidate buckets, and the fingerprint 0 marks an empty
//! slot, so there are M = 2^f − 1 usable fingerprints and a stored one
//! equals a never-inserted key's with probability q = 1/M.
//!
//! **Independence assumption.** A never-inserted key's fingerprint is
//! uniform over the M values, its two buckets are uniform and independent of
//! each other and of the fingerprint, and the fingerprints stored in the
//! table are independent uniform draws. A query is then a false positive
//! unless none of the occupied slots of its two buckets equals its
//! fingerprint, each failing to with probability 1 − q independently.
//! (Two copies of the same key store the same fingerprint; the formulas
//! count them as independent, so they slightly overstate the FPP of a
//! table holding duplicates.)

/// Fingerprint values an f-bit fingerprint can take in a slot: 2^f − 1 (the
/// value 0 marks an empty slot).
pub fn cuckoo_usable_fingerprints(fingerprint_bits: u32) -> f64 {
    2f64.powi(fingerprint_bits as i32) - 1.0
}

/// The probability q = 1/(2^f − 1) that one stored fingerprint equals a
/// never-inserted key's; 1 for `fingerprint_bits` 0.
fn match_probability(fingerprint_bits: u32) -> f64 {
    let usable = cuckoo_usable_fingerprints(fingerprint_bits);
    if usable >= 1.0 { 1.0 / usable } else { 1.0 }
}

/// The FPP of one cuckoo table given its state: `occupancy[k]` is the number
/// of buckets holding exactly k fingerprints.
///
/// With q = 1/(2^f − 1) and a query's buckets independent and uniform,
/// the chance that none of its two buckets' occupied slots matches is the
/// square of A = Σₖ `occupancy[k]`·(1 − q)^k / B, the mean over the table's
/// B buckets of (1 − q)^(occupied slots), so the FPP is 1 − A²: the average
/// of 1 − (1 − q)^(occupied slots of both buckets) over every pair of
/// buckets, exact for this table under the module's independence
/// assumption. 0 for an empty histogram.
///
/// # Examples
///
/// ```
/// use filterlab_core::theory::cuckoo_fpp_given_occupancy;
///
/// // 1000 buckets of 4 slots, all full, 8-bit fingerprints: 1 − (1 − 1/255)^8.
/// let full = cuckoo_fpp_given_occupancy(8, &[0, 0, 0, 0, 1000]);
/// assert!((full - (1.0 - (1.0 - 1.0 / 255.0f64).powi(8))).abs() < 1e-15);
/// // Half of them empty instead: fewer occupied slots, a lower FPP.
/// assert!(cuckoo_fpp_given_occupancy(8, &[500, 0, 0, 0, 500]) < full);
/// ```
pub fn cuckoo_fpp_given_occupancy(fingerprint_bits: u32, occupancy: &[u64]) -> f64 {
    let log_miss = (-match_probability(fingerprint_bits)).ln_1p();
    let buckets: u64 = occupancy.iter().sum();
    if buckets == 0 {
        return 0.0;
    }
    // 1 − A² = (1 − A)(1 + A), with 1 − A the mean of 1 − (1 − q)^k
    // evaluated without cancellation, so that tiny FPPs stay accurate.
    let mean_hit = occupancy
        .iter()
        .enumerate()
        .map(|(occupied, &count)| count as f64 * -(occupied as f64 * log_miss).exp_m1())
        .sum::<f64>()
        / buckets as f64;
    mean_hit * (2.0 - mean_hit)
}

/// The a-priori FPP of a cuckoo table at load α (the fraction of its slots
/// occupied), with `slots_per_bucket` slots of `fingerprint_bits` bits:
/// 1 − (1 − q)^(2bα), q = 1/(2^f − 1).
///
/// This is [`cuckoo_fpp_given_occupancy`] for a table whose buckets all hold
/// the mean bα fingerprints. Buckets hold unequal numbers, and the state's
/// FPP is concave in them, so this is an upper bound on the mean FPP of
/// tables at that load (by Jensen's inequality; tight near full load,
/// where almost every bucket is full). Fan et al.'s approximation 2bα/2^f
/// is its first-order term. α is clamped to [0, 1].
///
/// # Examples
///
/// ```
/// use filterlab_core::theory::cuckoo_fpp;
///
/// // 12-bit fingerprints, 4 slots, 95% full: about 8 · 0.95 / 4095.
/// let fpp = cuckoo_fpp(12, 4, 0.95);
/// assert!((fpp / (8.0 * 0.95 / 4095.0) - 1.0).abs() < 0.001);
/// ```
pub fn cuckoo_fpp(fingerprint_bits: u32, slots_per_bucket: u32, load: f64) -> f64 {
    let log_miss = (-match_probability(fingerprint_bits)).ln_1p();
    let probes = 2.0 * f64::from(slots_per_bucket) * load.clamp(0.0, 1.0);
    -(probes * log_miss).exp_m1()
}

/// The FPP of a filter made of several tables, each with the given FPP: a
/// key is a false positive when any table matches it, so 1 − Π(1 − pᵢ), at
/// most Σ pᵢ. (A query's matches in different tables are independent
/// under the module's assumption: the tables hold different keys. That
/// holds when the tables' fingerprints have different widths and a
/// query's are nested bit fields of one hash, as in filterlab-cuckoo:
/// whatever its fingerprint in one table, the stored fingerprints of
/// another are independent uniform draws, so it matches there with the
/// same probability.)
///
/// # Examples
///
/// ```
/// use filterlab_core::theory::cuckoo_compound_fpp;
///
/// let fpp = cuckoo_compound_fpp([0.01, 0.01]);
/// assert!((fpp - 0.0199).abs() < 1e-12 && fpp <= 0.02);
/// ```
pub fn cuckoo_compound_fpp(table_fpps: impl IntoIterator<Item = f64>) -> f64 {
    let log_pass: f64 = table_fpps
        .into_iter()
        .map(|fpp| (-fpp.clamp(0.0, 1.0)).ln_1p())
        .sum();
    -log_pass.exp_m1()
}

/// The a-priori FPP of a cuckoo filter grown by sub-tables after `items`
/// inserts: `tables` gives each sub-table's (fingerprint bits, slots,
/// capacity) in order, four slots a bucket; each takes keys up to its
/// capacity before the next one gets any, and the last one given takes
/// the rest (its load capped at 1). Each sub-table answers
/// [`cuckoo_fpp`] at its load, and a key is a false positive when any
/// does: [`cuckoo_compound_fpp`] of them. Sub-tables past the ones the
/// items reach are not read, so `tables` may be lazy and long.
///
/// # Examples
///
/// ```
/// use filterlab_core::theory::{cuckoo_compound_fpp, cuckoo_fpp, cuckoo_grown_fpp};
///
/// // 100 slots holding up to 95 keys at 12 bits, then 200 at 13 bits.
/// let tables = [(12, 100, 95), (13, 200, 190)];
/// assert_eq!(cuckoo_grown_fpp(95, tables), cuckoo_fpp(12, 4, 0.95));
/// let both = cuckoo_compound_fpp([cuckoo_fpp(12, 4, 0.95), cuckoo_fpp(13, 4, 0.25)]);
/// assert_eq!(cuckoo_grown_fpp(145, tables), both);
/// ```
pub fn cuckoo_grown_fpp(items: u64, tables: impl IntoIterator<Item = (u32, u64, u64)>) -> f64 {
    let mut tables = tables.into_iter().peekable();
    let mut left = items;
    let mut fpps = Vec::new();
    while let Some((bits, slots, capacity)) = tables.next() {
        let last = tables.peek().is_none();
        let held = if last { left } else { left.min(capacity) };
        fpps.push(cuckoo_fpp(bits, 4, held as f64 / slots.max(1) as f64));
        left -= held;
        if left == 0 {
            break;
        }
    }
    cuckoo_compound_fpp(fpps)
}

/// The smallest fingerprint width in `min_bits..=max_bits` whose a-priori
/// FPP ([`cuckoo_fpp`]) at `load` is at most `fpp`, if any.
///
/// # Examples
///
/// ```
/// use filterlab_core::theory::cuckoo_fingerprint_bits;
///
/// assert_eq!(cuckoo_fingerprint_bits(0.001, 4, 0.95, 4, 32), Some(13));
/// assert_eq!(cuckoo_fingerprint_bits(1e-12, 4, 0.95, 4, 32), None);
/// ```
pub fn cuckoo_fingerprint_bits(
    fpp: f64,
    slots_per_bucket: u32,
    load: f64,
    min_bits: u32,
    max_bits: u32,
) -> Option<u32> {
    (min_bits..=max_bits).find(|&bits| cuckoo_fpp(bits, slots_per_bucket, load) <= fpp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mix64;

    /// A deterministic stream of uniform values for the simulations.
    struct Stream(u64);

    impl Stream {
        fn below(&mut self, range: u64) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            crate::reduce(mix64(self.0), range)
        }
    }

    /// The exact FPP of a table state by enumeration of every query: each
    /// first bucket, each fingerprint, each second bucket. The second
    /// bucket is looked up in `second`, an independent draw of the contents
    /// with the same occupancy, so that the two buckets are independent even
    /// when they have the same index (as the formula assumes; in a real
    /// table of B buckets that happens for 1 query in B).
    fn enumerate(first: &[Vec<u64>], second: &[Vec<u64>], usable: u64) -> f64 {
        let mut hits = 0u64;
        for one in first {
            for fingerprint in 1..=usable {
                for other in second {
                    hits += u64::from(one.contains(&fingerprint) || other.contains(&fingerprint));
                }
            }
        }
        hits as f64 / (first.len() * second.len()) as f64 / usable as f64
    }

    /// The state-conditional formula is the mean, over random fingerprint
    /// contents with the given occupancy, of the enumerated FPP: checked on
    /// tiny tables, to within four standard errors of the simulation.
    #[test]
    fn given_occupancy_matches_enumeration_over_random_contents() {
        let mut stream = Stream(7);
        for (bits, occupied) in [
            (2u32, vec![0u64, 1, 4]),
            (3, vec![4, 4, 2, 0, 1]),
            (4, vec![1, 2, 3, 4]),
            (4, vec![4, 4, 4, 4, 4, 0]),
            (5, vec![3, 0, 4]),
        ] {
            let usable = (1u64 << bits) - 1;
            let mut histogram = vec![0u64; 5];
            for &k in &occupied {
                histogram[k as usize] += 1;
            }
            let mut draw = || -> Vec<Vec<u64>> {
                occupied
                    .iter()
                    .map(|&k| (0..k).map(|_| 1 + stream.below(usable)).collect())
                    .collect()
            };
            let rounds = 20_000;
            let (mut sum, mut sum_squares) = (0.0, 0.0);
            for _ in 0..rounds {
                let (first, second) = (draw(), draw());
                let fpp = enumerate(&first, &second, usable);
                sum += fpp;
                sum_squares += fpp * fpp;
            }
            let mean = sum / f64::from(rounds);
            let error =
                ((sum_squares / f64::from(rounds) - mean * mean) / f64::from(rounds)).sqrt();
            let formula = cuckoo_fpp_given_occupancy(bits, &histogram);
            assert!(
                (mean - formula).abs() <= 4.0 * error + 1e-12,
                "f={bits} occupancy {occupied:?}: enumerated {mean} ± {error}, formula {formula}"
            );
        }
    }

    /// The a-priori formula is the state formula for equal buckets, and an
    /// upper bound for unequal ones, close to it near full load.
    #[test]
    fn a_priori_bounds_the_state_formula() {
        for bits in [4, 8, 12, 16, 32] {
            for k in 0..=4u64 {
                let mut equal = [0u64; 5];
                equal[k as usize] = 100;
                let state = cuckoo_fpp_given_occupancy(bits, &equal);
                let a_priori = cuckoo_fpp(bits, 4, k as f64 / 4.0);
                assert!((state - a_priori).abs() <= 1e-12 * a_priori.max(1e-300));
            }
            // 95% load: 80% of buckets full, 20% holding three; within 0.2%.
            let state = cuckoo_fpp_given_occupancy(bits, &[0, 0, 0, 20, 80]);
            let a_priori = cuckoo_fpp(bits, 4, 0.95);
            assert!(
                state <= a_priori && a_priori <= state * 1.002,
                "{state} {a_priori}"
            );
        }
        assert_eq!(cuckoo_fpp_given_occupancy(8, &[]), 0.0);
        assert_eq!(cuckoo_fpp(8, 4, 0.0), 0.0);
        // Full tables: the bound of Fan et al., 1 − (1 − q)^(2b).
        let full = cuckoo_fpp(8, 4, 1.0);
        assert!((full - (1.0 - (254.0f64 / 255.0).powi(8))).abs() < 1e-15);
    }

    #[test]
    fn grown_fills_sub_tables_in_order() {
        let tables = [(10u32, 400u64, 380u64), (11, 800, 760), (12, 1600, 1520)];
        assert_eq!(cuckoo_grown_fpp(0, tables), 0.0);
        assert_eq!(cuckoo_grown_fpp(100, tables), cuckoo_fpp(10, 4, 0.25));
        let expected = cuckoo_compound_fpp([
            cuckoo_fpp(10, 4, 0.95),
            cuckoo_fpp(11, 4, 0.95),
            cuckoo_fpp(12, 4, 0.5),
        ]);
        assert_eq!(cuckoo_grown_fpp(380 + 760 + 800, tables), expected);
        // Past the last capacity the last table takes the rest, full at most.
        let full = cuckoo_compound_fpp([
            cuckoo_fpp(10, 4, 0.95),
            cuckoo_fpp(11, 4, 0.95),
            cuckoo_fpp(12, 4, 1.0),
        ]);
        assert_eq!(cuckoo_grown_fpp(10_000, tables), full);
        // A lazy, endless list of tables is read only as far as needed.
        let endless = (0..).map(|t| (10 + t, 400 << t, 380 << t));
        assert!(cuckoo_grown_fpp(1000, endless) > 0.0);
    }

    #[test]
    fn compound_and_fingerprint_width() {
        assert_eq!(cuckoo_compound_fpp([]), 0.0);
        let p = cuckoo_compound_fpp([0.1, 0.2, 0.3]);
        assert!((p - (1.0 - 0.9 * 0.8 * 0.7)).abs() < 1e-15 && p <= 0.6);
        assert_eq!(cuckoo_usable_fingerprints(4), 15.0);
        // Never more than Fan et al.'s rule f = ⌈log2(2b/p)⌉ (equal at these targets).
        for p in [1e-2, 1e-3, 1e-4, 1e-6] {
            let bits = cuckoo_fingerprint_bits(p, 4, 0.95, 4, 32).unwrap();
            assert!(cuckoo_fpp(bits, 4, 0.95) <= p);
            assert!(cuckoo_fpp(bits - 1, 4, 0.95) > p);
            assert!(f64::from(bits) <= (8.0 / p).log2().ceil());
        }
    }
}
