//! What a Ribbon filter's keys map to: their partition, their start and
//! 128-bit coefficient row in it, and their fingerprint; how many
//! fingerprint columns each partition keeps; and how many slots a
//! partition of k keys gets.

use filterlab_core::mix64;
use filterlab_core::theory::mixed_fingerprint_fpp;

/// The band width: a key's equation spans 128 consecutive slots.
pub(crate) const BAND: u64 = 128;

/// Starts are spread over the partition plus this many extra starts at each
/// end, clamped back to its first and last start ("smash", as RocksDB's
/// Ribbon has it): the first and last slots of a band would otherwise be
/// used less than the others.
const SMASH: u64 = BAND / 4;

/// Partitions hold at most this many keys on average: the filter is
/// 2^k independent Ribbon systems, each solved in cache, each sized for
/// its own load (so that a few tenths of a percent of spare slots suffice,
/// where one system of 10^8 keys would need 6%).
pub(crate) const PARTITION_KEYS: u64 = 2048;

/// Spare slots a partition starts with: keys · (1 + 1/[`SPARE_DIVISOR`]) + [`SPARE_SLOTS`].
/// 1/150, not the 1/667 that suffices for most partitions: fewer fail at
/// their first size and each banding walks shorter, a build 12% faster
/// for 0.5% more bits (the crate README has the measurements).
const SPARE_DIVISOR: u64 = 150;
const SPARE_SLOTS: u64 = 2;

/// Slots a retry adds to a partition that could not be solved:
/// keys / [`GROWTH_DIVISOR`], at least [`MIN_GROWTH`].
const GROWTH_DIVISOR: u64 = 667;
const MIN_GROWTH: u64 = 4;

/// log2 of the partitions for `keys` keys: the fewest (a power of two)
/// that hold at most [`PARTITION_KEYS`] keys each on average.
pub(crate) fn log_partitions(keys: u64) -> u32 {
    keys.div_ceil(PARTITION_KEYS)
        .next_power_of_two()
        .trailing_zeros()
}

/// The slots a partition of `keys` keys is first given.
pub(crate) fn initial_slots(keys: u64) -> u64 {
    (keys + keys / SPARE_DIVISOR + SPARE_SLOTS).max(BAND)
}

/// The slots a partition of `keys` keys is given after failing with `slots`.
pub(crate) fn grown_slots(slots: u64, keys: u64) -> u64 {
    slots + (keys / GROWTH_DIVISOR).max(MIN_GROWTH)
}

/// The fingerprint columns of a filter: `columns` in every partition, one
/// more in the first `wide` partitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Widths {
    pub(crate) log_partitions: u32,
    pub(crate) columns: u32,
    pub(crate) wide: u64,
}

impl Widths {
    /// Partitions.
    pub(crate) fn partitions(&self) -> u64 {
        1 << self.log_partitions
    }

    /// The columns of partition `partition`.
    pub(crate) fn columns_of(&self, partition: u64) -> u32 {
        self.columns + u32::from(partition < self.wide)
    }

    /// The most columns any partition has.
    pub(crate) fn max_columns(&self) -> u32 {
        self.columns + u32::from(self.wide > 0)
    }

    /// The exact FPP: a query lands in each partition with probability
    /// 1/P (its top bits), and matches there with probability 2^−columns.
    pub(crate) fn fpp(&self) -> f64 {
        mixed_fingerprint_fpp(self.columns, self.wide as f64 / self.partitions() as f64)
    }
}

/// The row a key hash gives: its coefficients from where its band starts,
/// and its fingerprint (also a row of the system being solved, from the
/// slot it is stored at).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Row {
    /// Coefficients of slots start..start+64 (bit 0 is always set).
    pub(crate) low: u64,
    /// Coefficients of slots start+64..start+128.
    pub(crate) high: u64,
    /// The fingerprint: one bit per column.
    pub(crate) fingerprint: u64,
}

/// An odd 64-bit multiplier for the second half of the coefficients.
const ROW_MULTIPLIER: u64 = 0xd605_bbb5_8c8a_bbb5;

impl Row {
    /// The row of `hash`. The partition and the start come from the top
    /// bits of the hash; the coefficients and the fingerprint from a full
    /// remix of it, so that they are independent of where the band starts.
    #[inline]
    pub(crate) fn of(hash: u64) -> Self {
        let mixed = mix64(hash);
        let product = u128::from(mixed) * u128::from(ROW_MULTIPLIER);
        Self {
            low: mixed | 1,
            high: (product >> 64) as u64,
            fingerprint: product as u64 >> 32,
        }
    }
}

/// The partition of `hash`: its top `log_partitions` bits.
#[inline]
pub(crate) fn partition_of(hash: u64, log_partitions: u32) -> u64 {
    // Two shifts, so that zero partition bits shift by 64 without overflow.
    (hash >> 1) >> (63 - log_partitions)
}

/// Where the band of `hash` starts in a partition of `slots` slots: the
/// hash bits below the partition bits, multiplied by an odd number drawn
/// from the slot count, reduced over the starts with the smash margins and
/// clamped. The multiplier makes the starts of a partition retried with
/// more slots a new draw, not the old starts stretched (with which the
/// same crowded stretch made most retries fail again).
#[inline]
pub(crate) fn start_of(hash: u64, log_partitions: u32, slots: u64) -> u64 {
    let starts = slots - (BAND - 1);
    let drawn = (hash << log_partitions).wrapping_mul(slots.wrapping_mul(GOLDEN_GAMMA) | 1);
    let spread = ((u128::from(drawn) * u128::from(starts + 2 * SMASH)) >> 64) as u64;
    spread.saturating_sub(SMASH).min(starts - 1)
}

/// 2^64 / φ, odd.
const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_and_starts_stay_in_range() {
        assert_eq!(log_partitions(0), 0);
        assert_eq!(log_partitions(PARTITION_KEYS), 0);
        assert_eq!(log_partitions(PARTITION_KEYS + 1), 1);
        assert_eq!(log_partitions(100 * PARTITION_KEYS), 7);
        for hash in [0, 1, u64::MAX, 1 << 63, 0x1234_5678_9abc_def0] {
            assert_eq!(partition_of(hash, 0), 0);
            assert_eq!(partition_of(hash, 3), hash >> 61);
            for slots in [BAND, BAND + 1, 5000] {
                assert!(start_of(hash, 2, slots) + BAND <= slots);
            }
        }
        assert_eq!(start_of(0, 0, 1000), 0);
    }

    #[test]
    fn rows_have_their_first_coefficient_set() {
        for hash in 0..1000u64 {
            let row = Row::of(hash);
            assert_eq!(row.low & 1, 1);
            assert!(row.fingerprint < 1 << 32);
        }
    }
}
