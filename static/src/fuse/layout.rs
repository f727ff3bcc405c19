//! What a binary fuse filter's lookups need, owned or borrowed: the
//! fingerprint widths, the segments a key's slots fall in, and the lookup
//! itself over the payload bytes.

use std::fmt;
use std::marker::PhantomData;

use filterlab_core::{KeyHasher, prefetch};

use crate::hashes::attempt_hash;
use crate::storage::{Payload, le_bytes};

/// A fingerprint width of [`BinaryFuseFilter`](crate::BinaryFuseFilter): `u8`, `u16` or `u32`.
///
/// The width is the FPP: 2^−8, 2^−16 or 2^−32, whatever the load.
pub trait Fingerprint:
    sealed::Sealed + Copy + Eq + fmt::Debug + Default + Send + Sync + 'static
{
    /// Bits of the fingerprint.
    const BITS: u32;
    /// Bytes of the fingerprint in the payload.
    #[doc(hidden)]
    const BYTES: usize;
    /// The key's fingerprint: the low bits of hash ⊕ (hash >> 32).
    #[doc(hidden)]
    #[must_use]
    fn from_hash(hash: u64) -> Self;
    /// The `index`-th fingerprint of a payload.
    #[doc(hidden)]
    #[must_use]
    fn read(bytes: &[u8], index: usize) -> Self;
    /// Stores the `index`-th fingerprint of a payload.
    #[doc(hidden)]
    fn write(bytes: &mut [u8], index: usize, value: Self);
    /// Bitwise XOR.
    #[doc(hidden)]
    #[must_use]
    fn xor(self, other: Self) -> Self;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
    impl Sealed for u32 {}
}

macro_rules! fingerprint {
    ($($t:ty),*) => {$(
        impl Fingerprint for $t {
            const BITS: u32 = <$t>::BITS;
            const BYTES: usize = std::mem::size_of::<$t>();
            #[inline]
            fn from_hash(hash: u64) -> Self {
                (hash ^ (hash >> 32)) as $t
            }
            #[inline]
            fn read(bytes: &[u8], index: usize) -> Self {
                <$t>::from_le_bytes(le_bytes(bytes, index))
            }
            #[inline]
            fn write(bytes: &mut [u8], index: usize, value: Self) {
                let at = index * Self::BYTES;
                bytes[at..at + Self::BYTES].copy_from_slice(&value.to_le_bytes());
            }
            #[inline]
            fn xor(self, other: Self) -> Self {
                self ^ other
            }
        }
    )*};
}
fingerprint!(u8, u16, u32);

/// The longest segment (Graf and Lemire cap it at 2^18 slots).
pub(crate) const MAX_SEGMENT_LENGTH: u64 = 1 << 18;

/// Where a filter's keys land: its segments and the attempt that built it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    /// Slots in a segment: a power of two.
    pub(super) segment_length: u64,
    /// Segments a key's first slot may fall in (the array has ARITY − 1 more).
    pub(super) segment_count: u64,
    /// The construction attempt that succeeded: 0, or the retry whose
    /// remixed hashes the filter holds.
    pub(super) attempt: u32,
}

impl Shape {
    /// The layout Graf and Lemire size for `items` keys of arity `arity`
    /// (the constants of their paper and reference code, as xorf has them):
    /// segments of 2^⌊ln n / ln 3.33 + 2.25⌋ slots and 1.125 n slots for
    /// large n with 3 hashes; 2^⌊ln n / ln 2.91 − 0.5⌋ and 1.075 n with 4.
    pub(crate) fn for_items(items: u64, arity: usize) -> Self {
        let n = items as f64;
        let exponent = if items == 0 {
            2.0
        } else if arity == 3 {
            (n.ln() / 3.33f64.ln() + 2.25).floor()
        } else {
            (n.ln() / 2.91f64.ln() - 0.5).floor()
        };
        let segment_length = (1u64 << exponent.clamp(2.0, 18.0) as u32).min(MAX_SEGMENT_LENGTH);
        let factor = if arity == 3 {
            (0.875 + 0.25 * 1e6f64.ln() / n.ln()).max(1.125)
        } else {
            (0.77 + 0.305 * 600_000f64.ln() / n.ln()).max(1.075)
        };
        let capacity = if items > 1 {
            (n * factor).round() as u64
        } else {
            0
        };
        let segments = capacity.div_ceil(segment_length);
        let arity = arity as u64;
        let segment_count = if segments < arity {
            1
        } else {
            segments - (arity - 1)
        };
        Self {
            segment_length,
            segment_count,
            attempt: 0,
        }
    }

    /// Slots of the array.
    pub(crate) fn array_len(&self, arity: usize) -> u64 {
        (self.segment_count + arity as u64 - 1) * self.segment_length
    }

    /// The bits of a hash the construction groups keys by, so that it
    /// walks the array in order: about one group per segment.
    pub(crate) fn group_bits(&self) -> u32 {
        self.segment_count
            .next_power_of_two()
            .trailing_zeros()
            .max(1)
    }
}

/// The precomputed values of a lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Probe {
    /// segment_count · segment_length: where a key's first slot may fall.
    span: u64,
    segment_length: u64,
    mask: u64,
    attempt: u32,
}

impl Probe {
    pub(super) fn new(shape: Shape) -> Self {
        Self {
            span: shape.segment_count * shape.segment_length,
            segment_length: shape.segment_length,
            mask: shape.segment_length - 1,
            attempt: shape.attempt,
        }
    }

    /// The slots of a key hash (already remixed for the attempt): the first
    /// anywhere in the span, the others in the next segments, each moved
    /// within its segment by other bits of the hash.
    #[inline]
    pub(super) fn slots<const ARITY: usize>(&self, hash: u64) -> [usize; ARITY] {
        let first = ((u128::from(hash) * u128::from(self.span)) >> 64) as u64;
        let offsets = [
            0,
            (hash >> 18) & self.mask,
            hash & self.mask,
            (hash >> 36) & self.mask,
        ];
        let mut slots = [0; ARITY];
        for (j, slot) in slots.iter_mut().enumerate() {
            *slot = ((first + j as u64 * self.segment_length) ^ offsets[j]) as usize;
        }
        slots
    }
}

/// The filter over its payload, owned or borrowed: one query code for both.
#[derive(Clone)]
pub(super) struct Fuse<F, const ARITY: usize, S> {
    pub(super) hasher: KeyHasher,
    pub(super) shape: Shape,
    pub(super) probe: Probe,
    /// Distinct key hashes held.
    pub(super) len: u64,
    /// The fingerprints, little-endian, padded to whole 8-byte words.
    pub(super) payload: S,
    pub(super) _fingerprint: PhantomData<F>,
}

/// Arrays at least this large are prefetched by batched lookups. Below
/// it the array sits in a core's L2, where prefetching only adds work:
/// measured one key at a time against prefetched, 4.6 against 5.8 ns at
/// 10^5 keys (112 KB) and 5.0 against 6.0 at 3·10^5 (337 KB); at 10^6
/// (1.1 MB) prefetching wins, 6.2 against 6.9, and at 10^8 43 against 55.
const PREFETCH_MIN_BYTES: usize = 1 << 20;
/// Batched lookups prefetch the slots of the key this many places ahead.
const PREFETCH_AHEAD: usize = 8;

impl<F: Fingerprint, const ARITY: usize, S: Payload> Fuse<F, ARITY, S> {
    /// Refuses an arity other than 3 or 4 when the type is used.
    pub(super) const ARITY_OK: () = assert!(
        ARITY == 3 || ARITY == 4,
        "a binary fuse filter has arity 3 or 4"
    );

    #[inline]
    pub(super) fn contains_hash(&self, hash: u64) -> bool {
        let hash = attempt_hash(hash, self.probe.attempt);
        let bytes = self.payload.bytes();
        let mut value = F::from_hash(hash);
        for slot in self.probe.slots::<ARITY>(hash) {
            value = value.xor(F::read(bytes, slot));
        }
        value == F::default()
    }

    pub(super) fn contains_hashes(&self, hashes: &[u64], found: &mut [bool]) {
        let bytes = self.payload.bytes();
        if bytes.len() < PREFETCH_MIN_BYTES {
            for (answer, &hash) in found.iter_mut().zip(hashes) {
                *answer = self.contains_hash(hash);
            }
            return;
        }
        for (i, (answer, &hash)) in found.iter_mut().zip(hashes).enumerate() {
            if let Some(&ahead) = hashes.get(i + PREFETCH_AHEAD) {
                let ahead = attempt_hash(ahead, self.probe.attempt);
                for slot in self.probe.slots::<ARITY>(ahead) {
                    if let Some(byte) = bytes.get(slot * F::BYTES) {
                        prefetch(byte);
                    }
                }
            }
            *answer = self.contains_hash(hash);
        }
    }

    pub(super) fn array_len(&self) -> u64 {
        self.shape.array_len(ARITY)
    }

    pub(super) fn borrow(&self) -> Fuse<F, ARITY, &[u8]> {
        Fuse {
            hasher: self.hasher,
            shape: self.shape,
            probe: self.probe,
            len: self.len,
            payload: self.payload.bytes(),
            _fingerprint: PhantomData,
        }
    }
}
