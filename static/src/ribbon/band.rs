//! Solving one partition: Gaussian elimination on the fly ("Rapid
//! Incremental Boolean Banding ON the fly", Dillinger and Walzer 2021),
//! then back-substitution column by column into the interleaved words.

use super::kernel::Counting;
use super::shape::{BAND, Row, start_of};
use super::words::Words;

/// The banding of one partition, reused from partition to partition: for
/// each slot, the reduced row whose first coefficient is there (zero when
/// none is) and its fingerprint bits.
#[derive(Default)]
pub(crate) struct Banding {
    coefficients: Vec<u128>,
    fingerprints: Vec<u32>,
    /// The partition's equations in the order of their starts.
    pending: Vec<Equation>,
    /// Keys per start, then where each start's keys go in `pending`.
    per_start: Vec<u32>,
}

/// A key's equation: its coefficients from `slot` on, and its fingerprint.
#[derive(Clone, Copy, Default)]
struct Equation {
    coefficients: u128,
    slot: u32,
    fingerprint: u32,
}

/// A partition that could not be solved: two keys' equations contradict
/// each other in its slots.
#[derive(Debug)]
pub(crate) struct Unsolvable;

impl Banding {
    /// Bands the `hashes` of a partition of `slots` slots, keeping
    /// `columns` fingerprint bits of each; returns how many equations were
    /// a sum of earlier ones with a consistent fingerprint (a repeated key
    /// hash), or [`Unsolvable`].
    ///
    /// Each step waits for the row the step before it chose, so the loop
    /// keeps that chain short: a row is empty exactly when its low half is
    /// (stored rows start with a one), and after an XOR the next one is in
    /// the low half but with probability 2^−63.
    pub(crate) fn band(
        &mut self,
        hashes: &[u64],
        log_partitions: u32,
        slots: usize,
        columns: u32,
    ) -> Result<u64, Unsolvable> {
        self.coefficients.clear();
        self.coefficients.resize(slots, 0);
        self.fingerprints.clear();
        self.fingerprints.resize(slots, 0);
        self.sort_by_start(hashes, log_partitions, slots, columns);
        let (rows, fingerprints) = (&mut self.coefficients[..], &mut self.fingerprints[..]);
        let mut dependent = 0;
        for equation in &self.pending {
            let mut slot = equation.slot as usize;
            let mut coefficients = equation.coefficients;
            let mut fingerprint = equation.fingerprint;
            loop {
                let existing = rows[slot];
                if existing as u64 == 0 {
                    rows[slot] = coefficients;
                    fingerprints[slot] = fingerprint;
                    break;
                }
                coefficients ^= existing;
                fingerprint ^= fingerprints[slot];
                let low = coefficients as u64;
                let skip = if low != 0 {
                    low.trailing_zeros()
                } else if coefficients != 0 {
                    coefficients.trailing_zeros()
                } else {
                    // A sum of earlier equations: consistent only for a
                    // repeated key (or with probability 2^−columns).
                    if fingerprint != 0 {
                        return Err(Unsolvable);
                    }
                    dependent += 1;
                    break;
                };
                slot += skip as usize;
                coefficients >>= skip;
            }
        }
        Ok(dependent)
    }

    /// Computes the keys' equations in the order of their starts (a
    /// counting sort): each elimination then walks the rows the keys just
    /// before it filled, in the fastest cache.
    fn sort_by_start(&mut self, hashes: &[u64], log_partitions: u32, slots: usize, columns: u32) {
        self.per_start.clear();
        self.per_start.resize(slots + 1, 0);
        for &hash in hashes {
            self.per_start[start_of(hash, log_partitions, slots as u64) as usize + 1] += 1;
        }
        for start in 1..=slots {
            self.per_start[start] += self.per_start[start - 1];
        }
        self.pending.clear();
        self.pending.resize(hashes.len(), Equation::default());
        let mask = (1u64 << columns) - 1;
        for &hash in hashes {
            let start = start_of(hash, log_partitions, slots as u64) as usize;
            let at = &mut self.per_start[start];
            let row = Row::of(hash);
            self.pending[*at as usize] = Equation {
                coefficients: row.coefficients(),
                slot: start as u32,
                fingerprint: (row.fingerprint & mask) as u32,
            };
            *at += 1;
        }
    }

    /// The back-substitution of the banded partition into `words` (see
    /// [`solve_into`](Self::solve_into)), to run compiled for a
    /// [`Level`](super::kernel::Level).
    pub(crate) fn solve<'a, 'b>(
        &'a self,
        first: u64,
        columns: u32,
        words: &'a mut Words<'b>,
    ) -> Solve<'a, 'b> {
        Solve {
            banding: self,
            first,
            columns,
            words,
        }
    }

    /// Back-substitutes the banded partition, whose slot 0 is slot `first`
    /// of the filter, into `words`: from the last slot down, each column's
    /// value at a slot is its fingerprint bit XOR the parity of its
    /// coefficients with the values of the next 127 slots (kept in one
    /// 128-bit window per column); each finished group of 64 slots is ORed
    /// into its word (the groups at either end are shared with the
    /// neighbouring partitions).
    // Always inlined: into the function compiled for the level, where with
    // POPCNT its parities are one instruction each.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn solve_into(&self, first: u64, columns: u32, words: &mut Words<'_>) {
        let mut windows = [0u128; 32];
        let windows = &mut windows[..columns as usize];
        for slot in (0..self.coefficients.len()).rev() {
            let tail = self.coefficients[slot] >> 1;
            let fingerprint = self.fingerprints[slot];
            for (column, window) in windows.iter_mut().enumerate() {
                let parity = (tail & *window).count_ones() & 1;
                let value = ((fingerprint >> column) & 1) ^ parity;
                *window = *window << 1 | u128::from(value);
            }
            let global = first + slot as u64;
            if global.is_multiple_of(64) || slot == 0 {
                let (group, shift) = (global / 64, global % 64);
                for (column, window) in windows.iter().enumerate() {
                    words.or(group, column, (*window as u64) << shift);
                }
            }
        }
        debug_assert!(self.coefficients.len() as u64 >= BAND);
    }
}

/// A back-substitution to run compiled for a level
/// ([`Banding::solve`]).
pub(crate) struct Solve<'a, 'b> {
    banding: &'a Banding,
    first: u64,
    columns: u32,
    words: &'a mut Words<'b>,
}

impl Counting for Solve<'_, '_> {
    type Output = ();

    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn run(self) {
        self.banding
            .solve_into(self.first, self.columns, self.words);
    }
}

#[cfg(test)]
mod tests {
    use filterlab_core::mix64;

    use super::*;

    /// The measurement behind the sizing rule of `shape` (run with
    /// `cargo test -p filterlab-static --release --lib sizing_policies --
    /// --ignored --nocapture`): for partitions of 1024 to 4000 keys, the
    /// spare slots and the banding attempts per partition when a partition
    /// starts with `start` spare slots and grows by `step` after each
    /// failure (each retry a new draw of starts).
    #[test]
    #[ignore = "a measurement, not a check"]
    fn sizing_policies() {
        let mut banding = Banding::default();
        for keys in [1024u64, 2048, 4000] {
            for (start, step) in [
                (0.001, 0.001),
                (0.0015, 0.0015),
                (0.0025, 0.0025),
                (0.005, 0.005),
            ] {
                let (mut slots_sum, mut attempts) = (0u64, 0u64);
                let trials = 200u64;
                for trial in 0..trials {
                    let hashes: Vec<u64> = (0..keys)
                        .map(|i| mix64(mix64(trial + 1000 * keys) ^ i))
                        .collect();
                    let mut slots = (keys as f64 * (1.0 + start)) as usize + 2;
                    loop {
                        attempts += 1;
                        if banding.band(&hashes, 0, slots, 7).is_ok() {
                            break;
                        }
                        slots += ((keys as f64 * step) as usize).max(4);
                    }
                    slots_sum += slots as u64;
                }
                let spare = slots_sum as f64 / (trials * keys) as f64 - 1.0;
                println!(
                    "keys {keys}, start {start}, step {step}: {:.3}% spare, {:.3} attempts",
                    100.0 * spare,
                    attempts as f64 / trials as f64
                );
            }
        }
    }

    #[test]
    fn contradictions_and_repeats_are_told_apart() {
        let mut banding = Banding::default();
        let hashes: Vec<u64> = (0..100).map(mix64).collect();
        let mut repeated = hashes.clone();
        repeated.extend_from_slice(&hashes[..10]);
        assert_eq!(banding.band(&repeated, 0, 128, 8).unwrap(), 10);
        // 129 equations in 128 unknowns cannot all hold.
        let many: Vec<u64> = (0..129).map(mix64).collect();
        assert!(banding.band(&many, 0, 128, 8).is_err());
    }
}
