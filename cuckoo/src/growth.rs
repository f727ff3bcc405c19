//! How a growing filter shapes its sub-tables: sub-table t takes the
//! share P0·r^t of the FPP budget (as the layers of a scalable Bloom filter
//! do), which a fingerprint about log2(1/r) bits longer per sub-table buys
//! at the first table's load, so the compound FPP 1 − Π(1 − p_t) stays
//! below P0 / (1 − r) at every size.

use filterlab_core::theory::{cuckoo_fingerprint_bits, cuckoo_fpp};

use crate::config::Growth;
use crate::table::{MAX_FINGERPRINT_BITS, SLOTS};

/// One sub-table's fingerprint width, buckets and capacity (the
/// fingerprints it holds before new keys go to the next one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    pub(crate) bits: u32,
    pub(crate) buckets: u64,
    pub(crate) capacity: u64,
}

impl Shape {
    /// Slots: four per bucket.
    pub(crate) fn slots(self) -> u64 {
        self.buckets.saturating_mul(u64::from(SLOTS))
    }

    /// The load at capacity.
    fn load(self) -> f64 {
        self.capacity as f64 / self.slots() as f64
    }

    /// As the theory takes it: (fingerprint bits, slots, capacity).
    pub(crate) fn theory(self) -> (u32, u64, u64) {
        (self.bits, self.slots(), self.capacity)
    }
}

/// The load at which f-bit fingerprints give an a-priori FPP of `fpp`,
/// at most `most`.
pub(crate) fn load_meeting(fpp: f64, bits: u32, most: f64) -> f64 {
    let miss = -1.0 / (2f64.powi(bits as i32) - 1.0);
    let load = (-fpp).ln_1p() / (2.0 * f64::from(SLOTS) * miss.ln_1p());
    load.min(most)
}

/// The shapes of the sub-tables a growing filter adds after its first.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Schedule {
    growth: Growth,
    first: Shape,
    /// P0: the first table's share of the budget.
    first_fpp: f64,
}

impl Schedule {
    /// For a filter whose first table is `first`, sized for the compound
    /// FPP `target` (P0 = P·(1 − r)) or, without one, with the first
    /// table's a-priori FPP at capacity as P0.
    pub(crate) fn new(growth: Growth, first: Shape, target: Option<f64>) -> Self {
        let first_fpp = target.map_or_else(
            || cuckoo_fpp(first.bits, SLOTS, first.load()),
            |fpp| fpp * (1.0 - growth.tightening),
        );
        Self {
            growth,
            first,
            first_fpp,
        }
    }

    /// The FPP budget of sub-table `index`: P0·r^index, by repeated
    /// multiplication (the same bits on every platform).
    pub(crate) fn budget(&self, index: u32) -> f64 {
        (0..index).fold(self.first_fpp, |budget, _| budget * self.growth.tightening)
    }

    /// The compound bound of every sub-table: P0 / (1 − r).
    pub(crate) fn bound(&self) -> f64 {
        self.first_fpp / (1.0 - self.growth.tightening)
    }

    /// Sub-table `index` (1 or more) after one of `previous_bits`: e^index
    /// times the first table's buckets and capacity, and the narrowest
    /// fingerprint, no narrower than the previous one's, meeting its
    /// budget at the first table's load. When even 32 bits do not, 32 bits
    /// at the load that does. `None` when the sizes overflow or no slot
    /// would meet the budget.
    pub(crate) fn shape(&self, index: u32, previous_bits: u32) -> Option<Shape> {
        let scale = u64::from(self.growth.expansion).checked_pow(index)?;
        let buckets = self.first.buckets.checked_mul(scale)?;
        let nominal = self.first.capacity.checked_mul(scale)?;
        let load = self.first.load();
        let budget = self.budget(index);
        let widths = previous_bits.min(MAX_FINGERPRINT_BITS)..=MAX_FINGERPRINT_BITS;
        let width = cuckoo_fingerprint_bits(budget, SLOTS, load, *widths.start(), *widths.end());
        let shape = |bits, capacity| Shape {
            bits,
            buckets,
            capacity,
        };
        if let Some(bits) = width {
            return Some(shape(bits, nominal));
        }
        let slots = buckets.checked_mul(u64::from(SLOTS))?;
        let bits = MAX_FINGERPRINT_BITS;
        let capacity = ((load_meeting(budget, bits, load) * slots as f64) as u64).min(nominal);
        (capacity > 0).then(|| shape(bits, capacity))
    }

    /// The shapes of sub-tables `from..max_tables`, the one before
    /// `from` having `previous_bits`, while they can exist.
    pub(crate) fn shapes_from(self, from: u32, previous_bits: u32) -> impl Iterator<Item = Shape> {
        let schedule = self;
        let mut previous = previous_bits;
        (from..self.growth.max_tables).map_while(move |index| {
            let shape = schedule.shape(index, previous)?;
            previous = shape.bits;
            Some(shape)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn growth(expansion: u32, tightening: f64) -> Growth {
        Growth {
            expansion,
            max_tables: 32,
            tightening,
        }
    }

    /// At P = 1e-2 from a first table of 13-bit fingerprints at 95% load:
    /// each budget met, widths never shrinking and growing by about
    /// log2(1/r) bits a sub-table, the compound bound below P.
    #[test]
    fn widths_meet_each_budget() {
        let first = Shape {
            bits: 13,
            buckets: 264,
            capacity: 1000,
        };
        for r in [0.5, 0.85, 0.95] {
            let schedule = Schedule::new(growth(2, r), first, Some(0.01));
            let shapes: Vec<Shape> = schedule.shapes_from(1, first.bits).collect();
            assert_eq!(shapes.len(), 31);
            let mut previous = first;
            let mut pass = 1.0 - cuckoo_fpp(first.bits, SLOTS, first.load());
            for (shape, index) in shapes.iter().zip(1..) {
                let fpp = cuckoo_fpp(shape.bits, SLOTS, shape.load());
                assert!(fpp <= schedule.budget(index), "r={r} t={index}");
                assert!(shape.bits >= previous.bits);
                assert_eq!(shape.buckets, previous.buckets * 2);
                // The narrowest width: one bit less misses the budget (or is the previous width).
                assert!(
                    shape.bits == previous.bits
                        || cuckoo_fpp(shape.bits - 1, SLOTS, shape.load()) > schedule.budget(index)
                );
                pass *= 1.0 - fpp;
                previous = *shape;
            }
            assert!(1.0 - pass <= schedule.bound() && schedule.bound() <= 0.01 * (1.0 + 1e-12));
            // Ten sub-tables on (before r = 0.5 reaches 32 bits).
            let gained = f64::from(shapes[9].bits - first.bits);
            let expected = 10.0 * (1.0 / r).log2();
            assert!(
                (gained - expected).abs() <= 2.0,
                "r={r}: {gained} bits vs {expected}"
            );
        }
    }

    /// When 32-bit fingerprints no longer meet a budget, the load goes down
    /// instead, and growth stops when no slot would.
    #[test]
    fn at_thirty_two_bits_the_load_goes_down() {
        let first = Shape {
            bits: 32,
            buckets: 1000,
            capacity: 3000,
        };
        let schedule = Schedule::new(growth(1, 0.5), first, Some(1e-9));
        let shapes: Vec<Shape> = schedule.shapes_from(1, 32).collect();
        assert!(shapes.len() < 31, "{}", shapes.len());
        for (shape, index) in shapes.iter().zip(1..) {
            assert_eq!(shape.bits, 32);
            assert!(shape.capacity <= 3000 && shape.capacity > 0);
            assert!(cuckoo_fpp(32, SLOTS, shape.load()) <= schedule.budget(index) * (1.0 + 1e-9));
        }
        assert!(shapes.windows(2).all(|w| w[1].capacity < w[0].capacity));
        // Sizes that overflow end the schedule.
        let huge = Schedule::new(growth(32_768, 0.85), first, None);
        assert_eq!(huge.shapes_from(1, 32).count(), 3);
    }
}
