//! One cuckoo table: B buckets of four f-bit slots, bit-packed, and where a
//! key's fingerprint and two buckets come from.
//!
//! Bucket i occupies the 4f bits starting at bit 4f·i of a byte array
//! (slot j at bits 4f·i + jf, little-endian). Its first bit is a multiple of
//! 4, so it starts at byte f·i/2 with a shift of 0 or 4 bits, and
//! 4f + 4 ≤ 128 for every f in 4..=32 except 32, whose buckets are
//! byte-aligned: one unaligned 16-byte load reads any bucket (an 8-byte
//! one when f ≤ 16, see below). The array carries 16 bytes of padding
//! after the last bucket so that the load never leaves it; the padding and
//! the bits between the last bucket and the end of its byte are always
//! zero.
//!
//! The four slots of a bucket are compared with a fingerprint at once, as
//! four f-bit lanes of one machine word (SWAR): after XOR with the
//! fingerprint repeated in each lane, a matching slot is a zero lane, and
//! `(v − low) & !v & high` is nonzero exactly when some lane of v is zero
//! (a borrow only propagates out of a zero lane, so the lowest flagged lane
//! is exact). The word is a `u64` when a bucket and its shift fit in 64
//! bits (f ≤ 15, and f = 16 whose buckets are byte-aligned), which is one
//! 8-byte load and half the arithmetic of the `u128` every width fits.

use std::ops::{BitAnd, BitOr, BitXor, Not, Shl, Shr};

use filterlab_core::{Error, ErrorKind, mix64, prefetch, reduce};

/// Slots per bucket.
pub(crate) const SLOTS: u32 = 4;
/// The narrowest fingerprint.
pub(crate) const MIN_FINGERPRINT_BITS: u32 = 4;
/// The widest fingerprint.
pub(crate) const MAX_FINGERPRINT_BITS: u32 = 32;
/// Zero bytes after the last bucket, so that a 16-byte load at any bucket
/// stays inside the array.
const PADDING: usize = 16;

/// An unsigned word that holds a bucket's four lanes: `u64` or `u128`.
pub(crate) trait Word:
    Copy
    + Eq
    + From<u64>
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + Not<Output = Self>
    + Shl<u32, Output = Self>
    + Shr<u32, Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
    fn wrapping_sub(self, other: Self) -> Self;
    fn wrapping_mul(self, other: Self) -> Self;
    fn trailing_zeros(self) -> u32;
    /// The low 64 bits.
    fn low_u64(self) -> u64;
    /// The little-endian word at byte `at` of `bytes` (zero when out of range).
    fn read(bytes: &[u8], at: usize) -> Self;
    /// Stores the word little-endian at byte `at` of `bytes`.
    fn write(self, bytes: &mut [u8], at: usize);
}

macro_rules! word {
    ($($word:ty),*) => {$(
        impl Word for $word {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            #[inline]
            fn wrapping_sub(self, other: Self) -> Self {
                <$word>::wrapping_sub(self, other)
            }
            #[inline]
            fn wrapping_mul(self, other: Self) -> Self {
                <$word>::wrapping_mul(self, other)
            }
            #[inline]
            fn trailing_zeros(self) -> u32 {
                <$word>::trailing_zeros(self)
            }
            #[inline]
            fn low_u64(self) -> u64 {
                self as u64
            }
            #[inline]
            fn read(bytes: &[u8], at: usize) -> Self {
                const SIZE: usize = size_of::<$word>();
                // Clamped, not checked: a bucket's word always fits (the
                // padding), so the clamp never moves it, and the load needs
                // no branch.
                let Some(last) = bytes.len().checked_sub(SIZE) else {
                    return 0;
                };
                let at = at.min(last);
                bytes[at..at + SIZE]
                    .try_into()
                    .map_or(0, <$word>::from_le_bytes)
            }
            #[inline]
            fn write(self, bytes: &mut [u8], at: usize) {
                const SIZE: usize = size_of::<$word>();
                if let Some(window) = bytes.get_mut(at..at + SIZE) {
                    window.copy_from_slice(&self.to_le_bytes());
                }
            }
        }
    )*};
}

word!(u64, u128);

/// The slot layout of one fingerprint width in words of type `W`: the
/// masks the SWAR tests use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Lanes<W = u128> {
    bits: u32,
    fingerprint_mask: u64,
    /// The lowest bit of each of the four lanes.
    low: W,
    /// The highest bit of each of the four lanes.
    high: W,
}

impl Lanes<u64> {
    /// The layout of `bits`-bit fingerprints in a `u64`, when a bucket and
    /// its shift (4 bits when f is odd) fit in one.
    pub(crate) fn narrow(bits: u32) -> Option<Self> {
        (SLOTS * bits + 4 * (bits % 2) <= u64::BITS).then(|| Self::new(bits))
    }
}

impl<W: Word> Lanes<W> {
    /// The layout of `bits`-bit fingerprints (4..=32, checked by callers;
    /// at most 15 or 16 for `u64`, see [`Lanes::narrow`]).
    pub(crate) fn new(bits: u32) -> Self {
        let low = W::ONE | W::ONE << bits | W::ONE << (2 * bits) | W::ONE << (3 * bits);
        Self {
            bits,
            fingerprint_mask: (1 << bits) - 1,
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
    fn zero_lanes(self, v: W) -> W {
        v.wrapping_sub(self.low) & !v & self.high
    }

    /// The flags of the slots of `bucket` holding `fingerprint`.
    #[inline]
    fn matches(self, bucket: W, fingerprint: u64) -> W {
        self.zero_lanes(bucket ^ W::from(fingerprint).wrapping_mul(self.low))
    }

    /// Whether any slot of either bucket holds `fingerprint`: one test of
    /// the two buckets' flags, no branch between them.
    #[inline]
    pub(crate) fn holds_either(self, buckets: [W; 2], fingerprint: u64) -> bool {
        (self.matches(buckets[0], fingerprint) | self.matches(buckets[1], fingerprint)) != W::ZERO
    }

    /// The first slot of `bucket` holding `fingerprint` (0 for an empty slot).
    #[inline]
    pub(crate) fn find(self, bucket: W, fingerprint: u64) -> Option<u32> {
        let flags = self.matches(bucket, fingerprint);
        (flags != W::ZERO).then(|| self.lowest_lane(flags))
    }

    /// The lane of the lowest flag in `flags` (3 when there is none).
    #[inline]
    fn lowest_lane(self, flags: W) -> u32 {
        // The lowest flag is bit jf + f − 1 of lane j: count the lane
        // boundaries below it instead of dividing by f.
        let at = flags.trailing_zeros();
        u32::from(at >= self.bits) + u32::from(at >= 2 * self.bits) + u32::from(at >= 3 * self.bits)
    }

    /// The first free slot of a key's two buckets (`slots`), the first
    /// bucket's before the second's, chosen by arithmetic: a branch on
    /// which bucket has room is unpredictable at moderate loads, and each
    /// misprediction waits for the buckets' cache misses.
    #[inline]
    pub(crate) fn free_slot(self, place: Place, slots: [W; 2]) -> Option<(u64, u32)> {
        let empty = slots.map(|slots| self.matches(slots, 0));
        // All ones when the first bucket has room, else zero.
        let first = u64::from(empty[0] != W::ZERO).wrapping_neg();
        let bucket = (place.first & first) | (place.second & !first);
        let lanes = empty.map(|flags| self.lowest_lane(flags));
        let slot = (lanes[0] & first as u32) | (lanes[1] & !first as u32);
        (empty[0] | empty[1] != W::ZERO).then_some((bucket, slot))
    }

    /// The fingerprint in `slot` of `bucket`.
    #[inline]
    pub(crate) fn slot(self, bucket: W, slot: u32) -> u64 {
        (bucket >> (slot * self.bits)).low_u64() & self.fingerprint_mask
    }

    /// Slots of `bucket` holding `fingerprint`.
    pub(crate) fn count(self, bucket: W, fingerprint: u64) -> u32 {
        (0..SLOTS)
            .map(|slot| u32::from(self.slot(bucket, slot) == fingerprint))
            .sum()
    }

    /// A key's fingerprint: the low f bits of its hash, in 1..2^f. When
    /// they are all zero (0 marks an empty slot), the next f bits are drawn
    /// instead, and 1 when those are zero too: every nonzero value has
    /// probability 2^-f + 2^-2f (value 1: 2^-f + 2^-2f+1), uniform over the
    /// 2^f − 1 usable values up to a relative 2^-f on one of them.
    ///
    /// The redraw is a branch taken once in 2^f keys, not a select: a
    /// lookup's second bucket, and so its second load, waits on the
    /// fingerprint, and a predicted branch keeps the redraw off that chain.
    #[inline]
    pub(crate) fn fingerprint(self, hash: u64) -> u64 {
        let low = hash & self.fingerprint_mask;
        if low == 0 {
            redraw(hash, self.bits, self.fingerprint_mask)
        } else {
            low
        }
    }
}

/// The fingerprint of a hash whose low `bits` bits are zero. Its
/// arguments are scalars, not the `Lanes`: a struct passed to a call that
/// is not inlined goes through memory, and the lookup loop then stored
/// the lanes to the stack on every key (11 more instructions a lookup,
/// callgrind).
#[cold]
#[inline(never)]
fn redraw(hash: u64, bits: u32, mask: u64) -> u64 {
    let redraw = (hash >> bits) & mask;
    redraw + u64::from(redraw == 0)
}

/// A key's place in one table: its fingerprint and two buckets.
#[derive(Clone, Copy, Debug, Default)]
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

/// Binds `$lanes` to `$table`'s `u64` lanes when its buckets fit a `u64`,
/// else to its `u128` ones, and evaluates `$body`: the hot paths are each
/// one generic function, instantiated for both words, and a filter whose
/// sub-tables have different widths picks the word table by table.
macro_rules! with_lanes {
    ($table:expr, |$lanes:ident| $body:expr) => {
        match $table.narrow() {
            Some($lanes) => $body,
            None => {
                let $lanes = $table.lanes();
                $body
            }
        }
    };
}

pub(crate) use with_lanes;

/// 2^64 / φ: steps the kick stream.
const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// The random choices of one key's kicks: which bucket to start from, and
/// the slot to evict at each step, as a function of the key's hash and the
/// step, so that a failed walk can be retraced backwards without storing it
/// and the same operations always give the same filter.
#[derive(Clone, Copy)]
struct Kicks(u64);

impl Kicks {
    fn start_from_second(self) -> bool {
        mix64(self.0) & 1 == 1
    }

    fn slot(self, step: u32) -> u32 {
        let state = self.0 ^ u64::from(step + 1).wrapping_mul(GOLDEN_GAMMA);
        (mix64(state) >> 62) as u32
    }
}

/// B buckets of four f-bit slots, bit-packed, and what the filter needs to
/// know of them: the fingerprints they hold and how many new keys they
/// take before the filter adds the next sub-table.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Table {
    buckets: u64,
    /// The fingerprint width's layout in a `u128`, which fits every width.
    lanes: Lanes,
    /// The same in a `u64`, when a bucket fits one (f ≤ 16): the hot paths
    /// then use it.
    narrow: Option<Lanes<u64>>,
    /// Fingerprints the table holds before a key new to the filter goes to
    /// a newer sub-table.
    capacity: u64,
    /// Nonzero slots.
    occupied: u64,
    /// The packed buckets followed by [`PADDING`] zero bytes.
    bytes: Vec<u8>,
}

impl Table {
    /// An empty table of `bits`-bit fingerprints that takes `capacity`
    /// fingerprints; an error instead of an abort when the allocator
    /// refuses (the zeroed memory is then provided lazily by the OS).
    pub(crate) fn new(buckets: u64, bits: u32, capacity: u64) -> Result<Self, Error> {
        let too_large = || {
            Error::new(
                ErrorKind::TooLarge,
                format!("cannot allocate a table of {buckets} buckets"),
            )
        };
        let bytes = table_bytes(buckets, bits)
            .and_then(|bytes| usize::try_from(bytes).ok())
            .ok_or_else(too_large)?;
        let mut probe: Vec<u8> = Vec::new();
        probe.try_reserve_exact(bytes).map_err(|_| too_large())?;
        drop(probe);
        Ok(Self::from_bytes(buckets, bits, capacity, vec![0; bytes]))
    }

    /// A table from its packed bucket data (without padding), which must
    /// have the length [`data_bytes`] gives.
    pub(crate) fn from_data(buckets: u64, bits: u32, capacity: u64, mut data: Vec<u8>) -> Self {
        data.resize(data.len() + PADDING, 0);
        let mut table = Self::from_bytes(buckets, bits, capacity, data);
        table.occupied = table
            .occupancy()
            .iter()
            .zip(0u64..)
            .map(|(&count, held)| count * held)
            .sum();
        table
    }

    fn from_bytes(buckets: u64, bits: u32, capacity: u64, bytes: Vec<u8>) -> Self {
        Self {
            buckets,
            lanes: Lanes::new(bits),
            narrow: Lanes::narrow(bits),
            capacity,
            occupied: 0,
            bytes,
        }
    }

    /// The `u128` layout of the table's fingerprints.
    #[inline]
    pub(crate) fn lanes(&self) -> Lanes {
        self.lanes
    }

    /// The `u64` layout of the table's fingerprints, when a bucket fits.
    #[inline]
    pub(crate) fn narrow(&self) -> Option<Lanes<u64>> {
        self.narrow
    }

    /// Bits per fingerprint.
    pub(crate) fn bits(&self) -> u32 {
        self.lanes.bits()
    }

    /// Fingerprints the table takes before the filter adds a sub-table.
    pub(crate) fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Nonzero slots.
    pub(crate) fn occupied(&self) -> u64 {
        self.occupied
    }

    /// The other bucket of `fingerprint` in `bucket` ([`alternate`]).
    #[inline]
    pub(crate) fn alternate(&self, bucket: u64, fingerprint: u64) -> u64 {
        alternate(self.buckets, bucket, fingerprint)
    }

    /// The packed bucket data, without padding.
    pub(crate) fn data(&self) -> &[u8] {
        &self.bytes[..self.bytes.len() - PADDING]
    }

    /// Number of buckets.
    pub(crate) fn buckets(&self) -> u64 {
        self.buckets
    }

    /// Slots: four per bucket.
    pub(crate) fn slots(&self) -> u64 {
        self.buckets * u64::from(SLOTS)
    }

    /// Bytes of memory the table takes.
    pub(crate) fn memory(&self) -> usize {
        self.bytes.len()
    }

    /// Empties every slot.
    pub(crate) fn clear(&mut self) {
        self.bytes.fill(0);
        self.occupied = 0;
    }

    /// Where `hash`'s key lives in this table.
    #[inline]
    pub(crate) fn place<W: Word>(&self, lanes: Lanes<W>, hash: u64) -> Place {
        let fingerprint = lanes.fingerprint(hash);
        let first = reduce(hash, self.buckets);
        Place {
            fingerprint,
            first,
            second: self.alternate(first, fingerprint),
        }
    }

    /// The key's place and its two buckets' slots, and whether its
    /// fingerprint is in either.
    #[inline]
    pub(crate) fn probe<W: Word>(&self, lanes: Lanes<W>, hash: u64) -> (Place, [W; 2], bool) {
        let place = self.place(lanes, hash);
        let slots = self.pair(lanes, place);
        (place, slots, lanes.holds_either(slots, place.fingerprint))
    }

    /// Whether the key's fingerprint is in either of its buckets.
    #[inline]
    pub(crate) fn contains(&self, hash: u64) -> bool {
        with_lanes!(self, |lanes| self.holds(lanes, self.place(lanes, hash)))
    }

    /// The byte at which `bucket`'s word starts, and the shift of the
    /// bucket in it.
    #[inline]
    fn window<W: Word>(lanes: Lanes<W>, bucket: u64) -> (usize, u32) {
        let half_bytes = bucket * u64::from(lanes.bits());
        ((half_bytes >> 1) as usize, ((half_bytes & 1) as u32) << 2)
    }

    /// The four slots of `bucket` in the low 4f bits. The bits above
    /// them (the next bucket's) are left in: every use of a bucket word
    /// looks at slots 0..4 only (a SWAR borrow runs upwards, out of them).
    #[inline]
    pub(crate) fn bucket<W: Word>(&self, lanes: Lanes<W>, bucket: u64) -> W {
        let (at, shift) = Self::window(lanes, bucket);
        W::read(&self.bytes, at) >> shift
    }

    /// The key's two buckets, both addresses computed and both words
    /// loaded before either is tested, so that their cache misses overlap.
    #[inline]
    pub(crate) fn pair<W: Word>(&self, lanes: Lanes<W>, place: Place) -> [W; 2] {
        [
            self.bucket(lanes, place.first),
            self.bucket(lanes, place.second),
        ]
    }

    /// The first byte of `bucket`, for prefetching.
    #[inline]
    pub(crate) fn bucket_byte<W: Word>(&self, lanes: Lanes<W>, bucket: u64) -> &u8 {
        let at = Self::window(lanes, bucket).0;
        self.bytes.get(at).unwrap_or(&self.bytes[0])
    }

    /// Prefetches the key's two buckets.
    #[inline]
    pub(crate) fn prefetch(&self, hash: u64) {
        let lanes = self.lanes;
        let place = self.place(lanes, hash);
        prefetch(self.bucket_byte(lanes, place.first));
        prefetch(self.bucket_byte(lanes, place.second));
    }

    /// Writes `fingerprint` into `slot` of `bucket`; returns what it held.
    #[inline]
    fn swap<W: Word>(&mut self, lanes: Lanes<W>, bucket: u64, slot: u32, fingerprint: u64) -> u64 {
        let (at, shift) = Self::window(lanes, bucket);
        let window = W::read(&self.bytes, at);
        let lane = shift + slot * lanes.bits();
        let mask = W::from(lanes.fingerprint_mask) << lane;
        let old = ((window & mask) >> lane).low_u64();
        let window = (window & !mask) | (W::from(fingerprint) << lane);
        window.write(&mut self.bytes, at);
        old
    }

    /// Whether `fingerprint` is in `first` or `second`.
    #[inline]
    pub(crate) fn holds<W: Word>(&self, lanes: Lanes<W>, place: Place) -> bool {
        lanes.holds_either(self.pair(lanes, place), place.fingerprint)
    }

    /// Puts `fingerprint` into a free slot of `bucket`, if it has one.
    #[inline]
    fn put<W: Word>(&mut self, lanes: Lanes<W>, bucket: u64, fingerprint: u64) -> bool {
        match lanes.find(self.bucket(lanes, bucket), 0) {
            Some(slot) => {
                self.swap(lanes, bucket, slot, fingerprint);
                true
            }
            None => false,
        }
    }

    /// Stores the key's fingerprint, whose two buckets were just read as
    /// `slots`: in a free slot of either; else after a breadth-first
    /// search two moves deep ([`make_room`](Self::make_room): the 8 and
    /// then 32 buckets are read independently, so their cache misses
    /// overlap); else by a random walk of at most `max_kicks` evictions.
    /// When that fails, the walk is retraced so the table is exactly as
    /// before, and `false` returned. Always inlined (see
    /// `CuckooFilter::offer`) with its common case, a free slot (one
    /// write); the rest, rarer and much larger, is
    /// [`place_when_full`](Self::place_when_full), out of line.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn store<W: Word>(
        &mut self,
        lanes: Lanes<W>,
        hash: u64,
        (place, slots): (Place, [W; 2]),
        max_kicks: u32,
    ) -> bool {
        let stored = if let Some((bucket, slot)) = lanes.free_slot(place, slots) {
            self.swap(lanes, bucket, slot, place.fingerprint);
            true
        } else {
            self.place_when_full(lanes, hash, place, slots, max_kicks)
        };
        self.occupied += u64::from(stored);
        stored
    }

    /// Stores a fingerprint whose two buckets are full: by moving at most
    /// two residents ([`make_room`](Self::make_room)), else by a random
    /// walk of at most `max_kicks` evictions, undone when it fails.
    #[inline(never)]
    fn place_when_full<W: Word>(
        &mut self,
        lanes: Lanes<W>,
        hash: u64,
        place: Place,
        slots: [W; 2],
        max_kicks: u32,
    ) -> bool {
        if self.make_room(lanes, place, slots) {
            return true;
        }
        let kicks = Kicks(hash);
        let mut bucket = if kicks.start_from_second() {
            place.second
        } else {
            place.first
        };
        let mut hand = place.fingerprint;
        for step in 0..max_kicks {
            hand = self.swap(lanes, bucket, kicks.slot(step), hand);
            bucket = self.alternate(bucket, hand);
            if self.put(lanes, bucket, hand) {
                return true;
            }
        }
        // Undo the swaps last to first: each fingerprint in hand goes back
        // to the slot it was evicted from, in the bucket it came from.
        for step in (0..max_kicks).rev() {
            bucket = self.alternate(bucket, hand);
            hand = self.swap(lanes, bucket, kicks.slot(step), hand);
        }
        debug_assert_eq!(hand, place.fingerprint);
        false
    }

    /// Empties one slot holding the key's fingerprint (read as `slots`),
    /// the first bucket's before the second's; `false` when neither holds it.
    pub(crate) fn remove<W: Word>(&mut self, lanes: Lanes<W>, place: Place, slots: [W; 2]) -> bool {
        for (bucket, slots) in [(place.first, slots[0]), (place.second, slots[1])] {
            if let Some(slot) = lanes.find(slots, place.fingerprint) {
                self.swap(lanes, bucket, slot, 0);
                self.occupied -= 1;
                return true;
            }
        }
        false
    }

    /// Where each resident of `parents` would move: child 4p + s is the
    /// other bucket of slot s of parent p, with its slots. Every address is
    /// computed and every bucket read before any is tested, so that their
    /// cache misses overlap.
    #[inline]
    fn children<W: Word, const CHILDREN: usize>(
        &self,
        lanes: Lanes<W>,
        parents: &[(u64, W)],
    ) -> [(u64, W); CHILDREN] {
        std::array::from_fn(|child| {
            let (bucket, slots) = parents[child / SLOTS as usize];
            let resident = lanes.slot(slots, child as u32 % SLOTS);
            let other = self.alternate(bucket, resident);
            (other, self.bucket(lanes, other))
        })
    }

    /// Stores `place.fingerprint`, whose two buckets (`slots`) are full, by
    /// moving at most two residents, found breadth-first: the 8 buckets its
    /// residents could move to, then the 32 of theirs (two rounds of
    /// overlapping cache misses instead of a walk of dependent ones).
    /// Nothing is written unless a path is found; `false` then.
    fn make_room<W: Word>(&mut self, lanes: Lanes<W>, place: Place, slots: [W; 2]) -> bool {
        let has_room = |&(_, slots): &(u64, W)| lanes.find(slots, 0).is_some();
        let roots = [(place.first, slots[0]), (place.second, slots[1])];
        let children: [_; 2 * SLOTS as usize] = self.children(lanes, &roots);
        // The path: a child bucket with room, or a grandchild bucket with
        // room (its index) below a full child.
        let (child, grandchild) = if let Some(child) = children.iter().position(has_room) {
            (child, None)
        } else {
            let grandchildren: [_; 8 * SLOTS as usize] = self.children(lanes, &children);
            let Some(grandchild) = grandchildren.iter().position(has_room) else {
                return false;
            };
            (
                grandchild / 4,
                Some((grandchild, grandchildren[grandchild].0)),
            )
        };
        let (root, root_slots) = roots[child / 4];
        let root_slot = child as u32 % SLOTS;
        let resident = lanes.slot(root_slots, root_slot);
        if let Some((grandchild, free_bucket)) = grandchild {
            // The grandchild bucket has room, so it is none of the full
            // buckets above it: the child's resident moves there, then the
            // root's resident into the slot it left.
            let (bucket, slots) = children[child];
            let slot = grandchild as u32 % SLOTS;
            self.put(lanes, free_bucket, lanes.slot(slots, slot));
            self.swap(lanes, bucket, slot, resident);
        } else {
            self.put(lanes, children[child].0, resident);
        }
        self.swap(lanes, root, root_slot, place.fingerprint);
        true
    }

    /// The key's place in the `u128` layout, which every width has: for
    /// the operations off the hot paths.
    pub(crate) fn wide_place(&self, hash: u64) -> Place {
        self.place(self.lanes, hash)
    }

    /// Slots holding the fingerprint of `place` in its two buckets (once
    /// when the two are the same bucket).
    pub(crate) fn count(&self, place: Place) -> u64 {
        let lanes = self.lanes;
        let first = lanes.count(self.bucket(lanes, place.first), place.fingerprint);
        let second = if place.second == place.first {
            0
        } else {
            lanes.count(self.bucket(lanes, place.second), place.fingerprint)
        };
        u64::from(first + second)
    }

    /// `histogram[k]`: buckets holding exactly k fingerprints.
    pub(crate) fn occupancy(&self) -> [u64; SLOTS as usize + 1] {
        let lanes = self.lanes;
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
    pub(crate) fn has_stray_bits(&self) -> bool {
        let half_bytes = self.buckets * u64::from(self.bits());
        half_bytes % 2 == 1 && self.data().last().is_some_and(|last| last >> 4 != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SWAR tests of one width in words of type `W`.
    fn check_swar<W: Word + std::fmt::Debug>(lanes: Lanes<W>) {
        let bits = lanes.bits();
        let max = (1u64 << bits) - 1;
        for values in [
            [0, 0, 0, 0],
            [1, max, 0, 3],
            [max, max, max, 1],
            [2, 0, 2, max],
        ] {
            let bucket = values.iter().enumerate().fold(W::ZERO, |acc, (j, &v)| {
                acc | W::from(v) << (j as u32 * bits)
            });
            // The next bucket's bits above the four slots change nothing.
            let above = if SLOTS * bits < 8 * size_of::<W>() as u32 {
                !W::ZERO << (SLOTS * bits)
            } else {
                W::ZERO
            };
            for (bucket, probe) in [bucket, bucket | above]
                .into_iter()
                .flat_map(|bucket| [0, 1, 2, 3, max, max - 1].map(|probe| (bucket, probe)))
            {
                let expected = values.iter().position(|&v| v == probe);
                assert_eq!(
                    lanes.find(bucket, probe),
                    expected.map(|j| j as u32),
                    "f={bits} {values:?} {probe}"
                );
                assert_eq!(lanes.holds_either([bucket; 2], probe), expected.is_some());
                let count = values.iter().filter(|&&v| v == probe).count() as u32;
                assert_eq!(lanes.count(bucket, probe), count);
            }
        }
    }

    #[test]
    fn swar_finds_exactly_the_matching_slots() {
        for bits in MIN_FINGERPRINT_BITS..=MAX_FINGERPRINT_BITS {
            check_swar(Lanes::<u128>::new(bits));
            let narrow = Lanes::narrow(bits);
            assert_eq!(narrow.is_some(), bits <= 16, "f={bits}");
            if let Some(narrow) = narrow {
                check_swar(narrow);
            }
        }
    }

    /// Fills every slot of a small table through `lanes` and reads it back
    /// through `lanes` and through the `u128` lanes.
    fn check_packing<W: Word>(lanes: Lanes<W>) {
        let bits = lanes.bits();
        let wide = Lanes::<u128>::new(bits);
        let buckets = 7;
        let mut table = Table::new(buckets, bits, 1).unwrap();
        let value = |b: u64, s: u32| 1 + (b * 4 + u64::from(s)) % ((1 << bits) - 1);
        for bucket in 0..buckets {
            for slot in 0..SLOTS {
                assert_eq!(table.swap(lanes, bucket, slot, value(bucket, slot)), 0);
            }
        }
        for bucket in 0..buckets {
            let (slots, wide_slots) = (table.bucket(lanes, bucket), table.bucket(wide, bucket));
            for slot in 0..SLOTS {
                assert_eq!(lanes.slot(slots, slot), value(bucket, slot), "f={bits}");
                assert_eq!(wide.slot(wide_slots, slot), value(bucket, slot), "f={bits}");
            }
        }
        assert!(!table.has_stray_bits());
        assert_eq!(table.occupancy(), [0, 0, 0, 0, buckets], "f={bits}");
    }

    #[test]
    fn packed_slots_do_not_disturb_their_neighbours() {
        for bits in [4, 5, 7, 8, 12, 13, 15, 16, 17, 31, 32] {
            check_packing(Lanes::<u128>::new(bits));
            if let Some(narrow) = Lanes::narrow(bits) {
                check_packing(narrow);
            }
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
            let lanes = Lanes::<u128>::new(bits);
            for hash in [0u64, 1 << bits, u64::MAX, 0xffff_0000_0000_0000] {
                let fingerprint = lanes.fingerprint(hash);
                assert!(fingerprint != 0 && fingerprint < 1 << bits);
            }
        }
    }
}
