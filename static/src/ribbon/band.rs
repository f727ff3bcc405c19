//! Solving partitions: Gaussian elimination on the fly ("Rapid
//! Incremental Boolean Banding ON the fly", Dillinger and Walzer 2021),
//! two partitions at a time, then back-substitution column by column into
//! the interleaved words.

use std::num::NonZeroU64;
use std::ops::Range;

use super::kernel::Counting;
use super::shape::{BAND, Row, start_of};
use super::words::Words;

/// The banding of one or two partitions side by side, reused from
/// partition to partition: for each slot, the reduced row whose first
/// coefficient is there and its fingerprint bits (all zero when none is).
#[derive(Default)]
pub(crate) struct Banding {
    /// The rows' low halves: all a step waits for, and an empty slot is
    /// one whose low half is zero (a stored row's first coefficient is set).
    lows: Vec<u64>,
    /// The rows' high halves and fingerprints.
    rests: Vec<[u64; 2]>,
    /// Each partition's equations in the order of their starts, each
    /// partition's followed by an [`Equation::END`].
    pending: Vec<Equation>,
    /// Keys per start, then where each start's keys go in `pending`.
    per_start: Vec<u32>,
    /// The slots and the equations of each partition (an unused second
    /// one has none).
    parts: [Part; 2],
}

/// Where one partition lies in a [`Banding`].
#[derive(Clone, Default)]
struct Part {
    slots: Range<usize>,
    equations: Range<usize>,
}

/// A partition to band: its distinct key hashes, its slots, and the
/// fingerprint columns it keeps.
#[derive(Clone, Copy)]
pub(crate) struct Input<'a> {
    pub(crate) hashes: &'a [u64],
    pub(crate) slots: usize,
    pub(crate) columns: u32,
}

/// A key's equation: its coefficients from `slot` on, and its fingerprint.
#[derive(Clone, Copy, Default)]
struct Equation {
    row: Row,
    slot: u32,
}

impl Equation {
    /// What follows a partition's last equation: a walk then needs one
    /// index into the shared equations, not a slice of its own (two
    /// registers fewer in the loop of two walks, which has too few).
    const END: Self = Self {
        row: Row {
            low: 0,
            high: 0,
            fingerprint: 0,
        },
        slot: u32::MAX,
    };
}

/// A partition that could not be solved: two keys' equations contradict
/// each other in its slots.
#[derive(Debug)]
pub(crate) struct Unsolvable;

/// The rows of a [`Banding`] and its equations, shared by the walks of
/// its partitions.
struct Rows<'a> {
    lows: &'a mut [u64],
    rests: &'a mut [[u64; 2]],
    equations: &'a [Equation],
}

/// The elimination of one partition's equations, a step at a time (so
/// that two can interleave): each equation walks the rows from its start,
/// XORing itself with the row stored where its first coefficient is,
/// until it reaches an empty slot and is stored there.
///
/// One step waits for the row the step before it chose (a load, an XOR, a
/// bit count: about ten cycles), so one partition alone leaves the core
/// idle most of the time, and two independent ones fill it. A walk stays
/// in its partition: every row it meets ends where a band of that
/// partition ends, or before (a start leaves a band), and so does every
/// XOR of them.
struct Walk {
    /// The next equation, in the shared ones.
    next: usize,
    /// The slot of the first coefficient of the equation being reduced.
    slot: usize,
    /// The equation being reduced, from `slot` on.
    row: Row,
    dependent: u64,
    unsolvable: bool,
}

impl Walk {
    fn new(first: usize) -> Self {
        Self {
            next: first,
            slot: 0,
            row: Row::default(),
            dependent: 0,
            unsolvable: false,
        }
    }

    /// Takes the next equation; whether there was one.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn next_equation(&mut self, rows: &Rows<'_>) -> bool {
        let Some(&equation) = rows.equations.get(self.next) else {
            return false;
        };
        if equation.slot == Equation::END.slot {
            return false;
        }
        self.next += 1;
        self.slot = equation.slot as usize;
        self.row = equation.row;
        true
    }

    /// One step of the equation being reduced; whether there is work left
    /// (false once every equation is stored, or one contradicted the
    /// others).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn step(&mut self, rows: &mut Rows<'_>) -> bool {
        let slot = self.slot;
        let (Some(low), Some([high, fingerprint])) =
            (rows.lows.get_mut(slot), rows.rests.get_mut(slot))
        else {
            // Not reached: starts leave a band, and walks stay in theirs.
            self.unsolvable = true;
            return false;
        };
        if *low == 0 {
            (*low, *high, *fingerprint) = (self.row.low, self.row.high, self.row.fingerprint);
            return self.next_equation(rows);
        }
        let row = &mut self.row;
        row.low ^= *low;
        row.high ^= *high;
        row.fingerprint ^= *fingerprint;
        let Some(low) = NonZeroU64::new(row.low) else {
            // A sum of earlier equations (all zero), consistent only for a
            // repeated key; or the two rows agreed on 64 coefficients in a
            // row (probability 2^−64 for rows of distinct keys), which is
            // counted as a failure: the partition is retried with a new
            // draw of starts. Either way the step needs no case for a one
            // in the high half only.
            if (row.high, row.fingerprint) == (0, 0) {
                self.dependent += 1;
                return self.next_equation(rows);
            }
            self.unsolvable = true;
            return false;
        };
        // 1 to 63 (bit 0 was set in both rows): the two halves shift
        // with no case for 64 and over.
        let skip = low.trailing_zeros();
        self.slot += skip as usize;
        row.low = (low.get() >> skip) | ((row.high << 1) << (63 - skip));
        row.high >>= skip;
        true
    }

    /// Steps until every equation is stored or one contradicts the others
    /// (`going`: whether an equation is being reduced).
    fn finish(&mut self, going: bool, rows: &mut Rows<'_>) {
        if going {
            while self.step(rows) {}
        }
    }

    fn outcome(&self) -> Result<u64, Unsolvable> {
        if self.unsolvable {
            Err(Unsolvable)
        } else {
            Ok(self.dependent)
        }
    }
}

impl Banding {
    /// Bands each partition of `inputs` (one or two): for each, how many
    /// equations were a sum of earlier ones with a consistent fingerprint
    /// (a repeated key hash), or [`Unsolvable`]. Two are banded at once,
    /// their steps in turn (see [`Walk`]).
    pub(crate) fn band(
        &mut self,
        log_partitions: u32,
        inputs: &[Input<'_>],
    ) -> [Result<u64, Unsolvable>; 2] {
        self.prepare(log_partitions, inputs);
        // One length for both, one bound check for both.
        let slots = self.lows.len();
        let mut rows = Rows {
            lows: &mut self.lows,
            rests: &mut self.rests[..slots],
            equations: &self.pending,
        };
        let [first, second] = &self.parts;
        let mut first = Walk::new(first.equations.start);
        let mut second = Walk::new(second.equations.start);
        let (mut first_going, mut second_going) =
            (first.next_equation(&rows), second.next_equation(&rows));
        while first_going && second_going {
            first_going = first.step(&mut rows);
            second_going = second.step(&mut rows);
        }
        first.finish(first_going, &mut rows);
        second.finish(second_going, &mut rows);
        [first.outcome(), second.outcome()]
    }

    /// Lays out the partitions of `inputs` one after the other, their rows
    /// empty and their equations in the order of their starts.
    fn prepare(&mut self, log_partitions: u32, inputs: &[Input<'_>]) {
        debug_assert!((1..=2).contains(&inputs.len()));
        let slots: usize = inputs.iter().map(|input| input.slots).sum();
        self.lows.clear();
        self.lows.resize(slots, 0);
        self.rests.clear();
        self.rests.resize(slots, [0; 2]);
        self.pending.clear();
        let mut first_slot = 0;
        for (index, input) in inputs.iter().enumerate().take(2) {
            let equations = self.pending.len();
            self.sort_by_start(log_partitions, *input, first_slot);
            self.parts[index] = Part {
                slots: first_slot..first_slot + input.slots,
                equations: equations..self.pending.len(),
            };
            self.pending.push(Equation::END);
            first_slot += input.slots;
        }
        if inputs.len() == 1 {
            // No second partition: its walk starts at the first's END.
            let end = self.pending.len() - 1;
            self.parts[1] = Part {
                slots: first_slot..first_slot,
                equations: end..end,
            };
        }
    }

    /// Appends the equations of `input`, whose first slot is
    /// `first_slot`, in the order of their starts (a counting sort): each
    /// elimination then walks the rows the keys just before it filled, in
    /// the fastest cache.
    fn sort_by_start(&mut self, log_partitions: u32, input: Input<'_>, first_slot: usize) {
        let Input {
            hashes,
            slots,
            columns,
        } = input;
        self.per_start.clear();
        self.per_start.resize(slots + 1, 0);
        for &hash in hashes {
            self.per_start[start_of(hash, log_partitions, slots as u64) as usize + 1] += 1;
        }
        let base = self.pending.len() as u32;
        self.per_start[0] = base;
        for start in 1..=slots {
            self.per_start[start] += self.per_start[start - 1];
        }
        self.pending
            .resize(self.pending.len() + hashes.len(), Equation::default());
        let mask = (1u64 << columns) - 1;
        for &hash in hashes {
            let start = start_of(hash, log_partitions, slots as u64) as usize;
            let at = &mut self.per_start[start];
            let row = Row::of(hash);
            self.pending[*at as usize] = Equation {
                row: Row {
                    fingerprint: row.fingerprint & mask,
                    ..row
                },
                slot: (first_slot + start) as u32,
            };
            *at += 1;
        }
    }

    /// The back-substitution of banded partition `part` (its place in the
    /// last call's inputs) into `words` (see
    /// [`solve_into`](Self::solve_into)), to run compiled for a
    /// [`Level`](super::kernel::Level).
    pub(crate) fn solve<'a, 'b>(
        &'a self,
        part: usize,
        first: u64,
        columns: u32,
        words: &'a mut Words<'b>,
    ) -> Solve<'a, 'b> {
        Solve {
            banding: self,
            part,
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
    fn solve_into(&self, part: usize, first: u64, columns: u32, words: &mut Words<'_>) {
        let mut windows = [0u128; 32];
        let windows = &mut windows[..columns as usize];
        let slots = self.parts[part].slots.clone();
        debug_assert!(slots.len() as u64 >= BAND);
        let rows = self.lows[slots.clone()].iter().zip(&self.rests[slots]);
        for (slot, (&low, &[high, fingerprint])) in rows.enumerate().rev() {
            let tail = (u128::from(high) << 64 | u128::from(low)) >> 1;
            for (column, window) in windows.iter_mut().enumerate() {
                let parity = (tail & *window).count_ones() & 1;
                let value = ((fingerprint >> column) & 1) ^ u64::from(parity);
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
    }
}

/// A back-substitution to run compiled for a level
/// ([`Banding::solve`]).
pub(crate) struct Solve<'a, 'b> {
    banding: &'a Banding,
    part: usize,
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
            .solve_into(self.part, self.first, self.columns, self.words);
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
                // The rule of `shape`: 1/150 spare, then 1/667 a retry.
                (1.0 / 150.0, 0.0015),
            ] {
                let (mut slots_sum, mut attempts) = (0u64, 0u64);
                let mut banding_time = std::time::Duration::ZERO;
                let trials = 200u64;
                for trial in 0..trials {
                    let hashes: Vec<u64> = (0..keys)
                        .map(|i| mix64(mix64(trial + 1000 * keys) ^ i))
                        .collect();
                    let mut slots = (keys as f64 * (1.0 + start)) as usize + 2;
                    loop {
                        attempts += 1;
                        let started = std::time::Instant::now();
                        let [outcome, _] = banding.band(
                            0,
                            &[Input {
                                hashes: &hashes,
                                slots,
                                columns: 7,
                            }],
                        );
                        let solved = outcome.is_ok();
                        banding_time += started.elapsed();
                        if solved {
                            break;
                        }
                        slots += ((keys as f64 * step) as usize).max(4);
                    }
                    slots_sum += slots as u64;
                }
                let spare = slots_sum as f64 / (trials * keys) as f64 - 1.0;
                println!(
                    "keys {keys}, start {start}, step {step}: {:.3}% spare, {:.3} attempts, \
                     {:.1} ns a key banding",
                    100.0 * spare,
                    attempts as f64 / trials as f64,
                    banding_time.as_nanos() as f64 / (trials * keys) as f64
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
        let input = |hashes| Input {
            hashes,
            slots: 128,
            columns: 8,
        };
        let [repeats, _] = banding.band(0, &[input(&repeated)]);
        assert_eq!(repeats.unwrap(), 10);
        // 129 equations in 128 unknowns cannot all hold.
        let many: Vec<u64> = (0..129).map(mix64).collect();
        assert!(banding.band(0, &[input(&many)])[0].is_err());
        // Side by side, each partition answers for itself.
        let [first, second] = banding.band(0, &[input(&many), input(&repeated)]);
        assert!(first.is_err());
        assert_eq!(second.unwrap(), 10);
    }
}
