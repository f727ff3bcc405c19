//! One cuckoo table: B buckets of four f-bit slots, bit-packed, and where a
//! key's fingerprint and two buckets come from.
//!
//! Bucket i occupies the 4f bits starting at bit 4f·i of a byte array
//! (slot j at bits 4f·i + jf, little-endian). Its first bit is a multiple of
//! 4, so it starts at byte f·i/2 with a shift of 0 or 4 bits, and
//! 4f + 4 ≤ 128 for every f in 4..=32 except 32, whose buckets are
//! byte-aligned: one unaligned 16-byte load reads any bucket. The array
//! carries 16 bytes of padding after the last bucket so that the load
//! never leaves it; the padding and the bits between the last bucket and
//! the end of its byte are always zero.
//!
//! The four slots of a bucket are compared with a fingerprint at once, as
//! four f-bit lanes of a `u128` (SWAR): after XOR with the fingerprint
//! repeated in each lane, a matching slot is a zero lane, and
//! `(v − low) & !v & high` is nonzero exactly when some lane of v is zero
//! (a borrow only propagates out of a zero lane, so the lowest flagged lane
//! is exact).

use filterlab_core::{Error, ErrorKind, mix64, reduce};

/// Slots per bucket.
pub(crate) const SLOTS: u32 = 4;
/// The narrowest fingerprint.
pub(crate) const MIN_FINGERPRINT_BITS: u32 = 4;
/// The widest fingerprint.
pub(crate) const MAX_FINGERPRINT_BITS: u32 = 32;
/// Zero bytes after the last bucket, so that a 16-byte load at any bucket
/// stays inside the array.
const PADDING: usize = 16;

/// The slot layout of one fingerprint width: the masks the SWAR tests use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Lanes {
    bits: u32,
    fingerprint_mask: u64,
    bucket_mask: u128,
    /// The lowest bit of each of the four lanes.
    low: u128,
    /// The highest bit of each of the four lanes.
    high: u128,
}

impl Lanes {
    /// The layout of `bits`-bit fingerprints (4..=32, checked by callers).
    pub(crate) const fn new(bits: u32) -> Self {
        let low = 1 | 1 << bits | 1 << (2 * bits) | 1 << (3 * bits);
        Self {
            bits,
            fingerprint_mask: (1 << bits) - 1,
            bucket_mask: u128::MAX >> (128 - SLOTS * bits),
            low,
            high: low << (bits - 1),
        }
    }

    /// Bits per fingerprint.
    pub(crate) const fn bits(self) -> u32 {
        self.bits
    }

    /// One flag bit in each lane of `v` that is zero (exact for the lowest
    /// flagged lane; nonzero exactly when some lane is zero).
    #[inline]
    fn zero_lanes(self, v: u128) -> u128 {
        v.wrapping_sub(self.low) & !v & self.high
    }

    /// Whether any slot of `bucket` holds `fingerprint`.
    #[inline]
    pub(crate) fn holds(self, bucket: u128, fingerprint: u64) -> bool {
        self.zero_lanes(bucket ^ (u128::from(fingerprint) * self.low)) != 0
    }

    /// The first slot of `bucket` holding `fingerprint` (0 for an empty slot).
    #[inline]
    pub(crate) fn find(self, bucket: u128, fingerprint: u64) -> Option<u32> {
        let flags = self.zero_lanes(bucket ^ (u128::from(fingerprint) * self.low));
        // The lowest flag is bit jf + f − 1 of lane j: count the lane
        // boundaries below it instead of dividing by f.
        let at = flags.trailing_zeros();
        (flags != 0).then(|| {
            u32::from(at >= self.bits)
                + u32::from(at >= 2 * self.bits)
                + u32::from(at >= 3 * self.bits)
        })
    }

    /// The fingerprint in `slot` of `bucket`.
    #[inline]
    pub(crate) fn slot(self, bucket: u128, slot: u32) -> u64 {
        (bucket >> (slot * self.bits)) as u64 & self.fingerprint_mask
    }

    /// Slots of `bucket` holding `fingerprint`.
    pub(crate) fn count(self, bucket: u128, fingerprint: u64) -> u32 {
        (0..SLOTS)
            .map(|slot| u32::from(self.slot(bucket, slot) == fingerprint))
            .sum()
    }

    /// A key's fingerprint: the low f bits of its hash, in 1..2^f. When
    /// they are all zero (0 marks an empty slot), the next f bits are drawn
    /// instead, and 1 when those are zero too: every nonzero value has
    /// probability 2^-f + 2^-2f (value 1: 2^-f + 2^-2f+1), uniform over the
    /// 2^f − 1 usable values up to a relative 2^-f on one of them.
    #[inline]
    pub(crate) fn fingerprint(self, hash: u64) -> u64 {
        let low = hash & self.fingerprint_mask;
        let redraw = (hash >> self.bits) & self.fingerprint_mask;
        let redraw = redraw + u64::from(redraw == 0);
        if low == 0 { redraw } else { low }
    }
}

/// A key's place in one table: its fingerprint and two buckets.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Place {
    pub(crate) fingerprint: u64,
    pub(crate) first: u64,
    pub(crate) second: u64,
}

/// The other bucket of a fingerprint in `bucket`: (H(fp) − bucket) mod B
/// with H(fp) = reduce(mix64(fp), B). An involution for every B (applied
/// twice it gives back `bucket`), so buckets need not be a power of two.
#[inline]
pub(crate) fn alternate(buckets: u64, bucket: u64, fingerprint: u64) -> u64 {
    let target = reduce(mix64(fingerprint), buckets);
    if target >= bucket {
        target - bucket
    } else {
        target + (buckets - bucket)
    }
}

/// Bytes of bucket data (without padding) of a table: ⌈4f·B / 8⌉; `None`
/// when that overflows.
pub(crate) fn data_bytes(buckets: u64, bits: u32) -> Option<u64> {
    buckets
        .checked_mul(u64::from(bits))
        .map(|half_bytes| half_bytes.div_ceil(2))
}

/// Bytes of memory a table of `buckets` takes (data and padding).
pub(crate) fn table_bytes(buckets: u64, bits: u32) -> Option<u64> {
    data_bytes(buckets, bits).and_then(|bytes| bytes.checked_add(PADDING as u64))
}

/// B buckets of four f-bit slots, bit-packed.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Table {
    buckets: u64,
    /// The packed buckets followed by [`PADDING`] zero bytes.
    bytes: Vec<u8>,
}

impl Table {
    /// An empty table; an error instead of an abort when the allocator
    /// refuses (the zeroed memory is then provided lazily by the OS).
    pub(crate) fn new(buckets: u64, lanes: Lanes) -> Result<Self, Error> {
        let too_large = || {
            Error::new(
                ErrorKind::TooLarge,
                format!("cannot allocate a table of {buckets} buckets"),
            )
        };
        let bytes = table_bytes(buckets, lanes.bits())
            .and_then(|bytes| usize::try_from(bytes).ok())
            .ok_or_else(too_large)?;
        let mut probe: Vec<u8> = Vec::new();
        probe.try_reserve_exact(bytes).map_err(|_| too_large())?;
        drop(probe);
        Ok(Self {
            buckets,
            bytes: vec![0; bytes],
        })
    }

    /// A table from its packed bucket data (without padding), which must
    /// have the length [`data_bytes`] gives.
    pub(crate) fn from_data(buckets: u64, mut data: Vec<u8>) -> Self {
        data.resize(data.len() + PADDING, 0);
        Self {
            buckets,
            bytes: data,
        }
    }

    /// The packed bucket data, without padding.
    pub(crate) fn data(&self) -> &[u8] {
        &self.bytes[..self.bytes.len() - PADDING]
    }

    /// Number of buckets.
    pub(crate) fn buckets(&self) -> u64 {
        self.buckets
    }

    /// Bytes of memory the table takes.
    pub(crate) fn memory(&self) -> usize {
        self.bytes.len()
    }

    /// Empties every slot.
    pub(crate) fn clear(&mut self) {
        self.bytes.fill(0);
    }

    /// Where `hash`'s key lives in this table.
    #[inline]
    pub(crate) fn place(&self, lanes: Lanes, hash: u64) -> Place {
        let fingerprint = lanes.fingerprint(hash);
        let first = reduce(hash, self.buckets);
        Place {
            fingerprint,
            first,
            second: alternate(self.buckets, first, fingerprint),
        }
    }

    /// The byte at which `bucket`'s 16-byte window starts, and the shift
    /// of the bucket in it.
    #[inline]
    fn window(lanes: Lanes, bucket: u64) -> (usize, u32) {
        let half_bytes = bucket * u64::from(lanes.bits());
        ((half_bytes >> 1) as usize, ((half_bytes & 1) as u32) << 2)
    }

    #[inline]
    fn load(&self, at: usize) -> u128 {
        let window: [u8; 16] = self.bytes[at..at + 16].try_into().unwrap_or([0; 16]);
        u128::from_le_bytes(window)
    }

    /// The four slots of `bucket`.
    #[inline]
    pub(crate) fn bucket(&self, lanes: Lanes, bucket: u64) -> u128 {
        let (at, shift) = Self::window(lanes, bucket);
        (self.load(at) >> shift) & lanes.bucket_mask
    }

    /// The first byte of `bucket`, for prefetching.
    #[inline]
    pub(crate) fn bucket_byte(&self, lanes: Lanes, bucket: u64) -> &u8 {
        &self.bytes[Self::window(lanes, bucket).0]
    }

    /// Writes `fingerprint` into `slot` of `bucket`; returns what it held.
    #[inline]
    pub(crate) fn swap(&mut self, lanes: Lanes, bucket: u64, slot: u32, fingerprint: u64) -> u64 {
        let (at, shift) = Self::window(lanes, bucket);
        let window = self.load(at);
        let lane = shift + slot * lanes.bits();
        let mask = u128::from(lanes.fingerprint_mask) << lane;
        let old = ((window & mask) >> lane) as u64;
        let window = (window & !mask) | (u128::from(fingerprint) << lane);
        self.bytes[at..at + 16].copy_from_slice(&window.to_le_bytes());
        old
    }

    /// Whether `fingerprint` is in `first` or `second`: both buckets are
    /// read before either is tested, so their memory accesses overlap.
    #[inline]
    pub(crate) fn holds(&self, lanes: Lanes, place: Place) -> bool {
        let first = self.bucket(lanes, place.first);
        let second = self.bucket(lanes, place.second);
        lanes.holds(first, place.fingerprint) | lanes.holds(second, place.fingerprint)
    }

    /// Puts `fingerprint` into a free slot of `bucket`, if it has one.
    #[inline]
    pub(crate) fn put(&mut self, lanes: Lanes, bucket: u64, fingerprint: u64) -> bool {
        match lanes.find(self.bucket(lanes, bucket), 0) {
            Some(slot) => {
                self.swap(lanes, bucket, slot, fingerprint);
                true
            }
            None => false,
        }
    }

    /// Slots holding the key's fingerprint in its two buckets (once when
    /// the two are the same bucket).
    pub(crate) fn count(&self, lanes: Lanes, place: Place) -> u32 {
        let first = lanes.count(self.bucket(lanes, place.first), place.fingerprint);
        if place.second == place.first {
            first
        } else {
            first + lanes.count(self.bucket(lanes, place.second), place.fingerprint)
        }
    }

    /// `histogram[k]`: buckets holding exactly k fingerprints.
    pub(crate) fn occupancy(&self, lanes: Lanes) -> [u64; SLOTS as usize + 1] {
        let mut histogram = [0u64; SLOTS as usize + 1];
        for bucket in 0..self.buckets {
            let slots = self.bucket(lanes, bucket);
            let empty = lanes.count(slots, 0);
            histogram[(SLOTS - empty) as usize] += 1;
        }
        histogram
    }

    /// Whether any bit outside the buckets is set: the tail of the last
    /// byte when 4f·B is not a multiple of 8 (checked when reading a file).
    pub(crate) fn has_stray_bits(&self, lanes: Lanes) -> bool {
        let half_bytes = self.buckets * u64::from(lanes.bits());
        half_bytes % 2 == 1 && self.data().last().is_some_and(|last| last >> 4 != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swar_finds_exactly_the_matching_slots() {
        for bits in MIN_FINGERPRINT_BITS..=MAX_FINGERPRINT_BITS {
            let lanes = Lanes::new(bits);
            let max = (1u64 << bits) - 1;
            for values in [
                [0, 0, 0, 0],
                [1, max, 0, 3],
                [max, max, max, 1],
                [2, 0, 2, max],
            ] {
                let bucket = values.iter().enumerate().fold(0u128, |acc, (j, &v)| {
                    acc | u128::from(v) << (j as u32 * bits)
                });
                for probe in [0, 1, 2, 3, max, max - 1] {
                    let expected = values.iter().position(|&v| v == probe);
                    assert_eq!(
                        lanes.find(bucket, probe),
                        expected.map(|j| j as u32),
                        "f={bits} {values:?} {probe}"
                    );
                    assert_eq!(lanes.holds(bucket, probe), expected.is_some());
                    let count = values.iter().filter(|&&v| v == probe).count() as u32;
                    assert_eq!(lanes.count(bucket, probe), count);
                }
            }
        }
    }

    #[test]
    fn packed_slots_do_not_disturb_their_neighbours() {
        for bits in [4, 5, 7, 8, 12, 13, 16, 31, 32] {
            let lanes = Lanes::new(bits);
            let buckets = 7;
            let mut table = Table::new(buckets, lanes).unwrap();
            let value = |b: u64, s: u32| 1 + (b * 4 + u64::from(s)) % ((1 << bits) - 1);
            for bucket in 0..buckets {
                for slot in 0..SLOTS {
                    assert_eq!(table.swap(lanes, bucket, slot, value(bucket, slot)), 0);
                }
            }
            for bucket in 0..buckets {
                let slots = table.bucket(lanes, bucket);
                for slot in 0..SLOTS {
                    assert_eq!(lanes.slot(slots, slot), value(bucket, slot), "f={bits}");
                }
            }
            assert!(!table.has_stray_bits(lanes));
            assert_eq!(table.occupancy(lanes), [0, 0, 0, 0, buckets], "f={bits}");
        }
    }

    #[test]
    fn alternate_is_an_involution_for_any_bucket_count() {
        for buckets in [1u64, 2, 3, 7, 1000, 10_007, (1 << 40) + 3] {
            for i in 0..200u64 {
                let bucket = reduce(mix64(i), buckets);
                let fingerprint = 1 + i % 4095;
                let other = alternate(buckets, bucket, fingerprint);
                assert!(other < buckets);
                assert_eq!(alternate(buckets, other, fingerprint), bucket);
            }
        }
    }

    #[test]
    fn fingerprints_are_never_zero() {
        for bits in [4, 8, 32] {
            let lanes = Lanes::new(bits);
            for hash in [0u64, 1 << bits, u64::MAX, 0xffff_0000_0000_0000] {
                let fingerprint = lanes.fingerprint(hash);
                assert!(fingerprint != 0 && fingerprint < 1 << bits);
            }
        }
    }
}
