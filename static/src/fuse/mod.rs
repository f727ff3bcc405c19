//! The binary fuse filter (Graf and Lemire, "Binary Fuse Filters: Fast and
//! Smaller Than Xor Filters", 2022): an array of fingerprints in which the
//! XOR of a key's 3 (or 4) slots, one in each of consecutive segments,
//! equals the key's fingerprint.

mod build;
mod persist;

use std::fmt;
use std::marker::PhantomData;

use filterlab_core::theory::fingerprint_fpp;
use filterlab_core::{BuildFromKeys, Built, Error, Key, KeyHasher, Membership, prefetch};

use crate::builder::{StaticBase, static_setters};
use crate::hashes::attempt_hash;
use crate::storage::{Borrowed, Payload, le_bytes};

pub use persist::BinaryFuseConfig;

/// A fingerprint width of [`BinaryFuseFilter`]: `u8`, `u16` or `u32`.
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
    segment_length: u64,
    /// Segments a key's first slot may fall in (the array has ARITY − 1 more).
    segment_count: u64,
    /// The construction attempt that succeeded: 0, or the retry whose
    /// remixed hashes the filter holds.
    attempt: u32,
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
struct Probe {
    /// segment_count · segment_length: where a key's first slot may fall.
    span: u64,
    segment_length: u64,
    mask: u64,
    attempt: u32,
}

impl Probe {
    fn new(shape: Shape) -> Self {
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
    fn slots<const ARITY: usize>(&self, hash: u64) -> [usize; ARITY] {
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
struct Fuse<F, const ARITY: usize, S> {
    hasher: KeyHasher,
    shape: Shape,
    probe: Probe,
    /// Distinct key hashes held.
    len: u64,
    /// The fingerprints, little-endian, padded to whole 8-byte words.
    payload: S,
    _fingerprint: PhantomData<F>,
}

/// Arrays at least this large are prefetched by batched lookups.
const PREFETCH_MIN_BYTES: usize = 1 << 16;
/// Batched lookups prefetch the slots of the key this many places ahead.
const PREFETCH_AHEAD: usize = 8;

impl<F: Fingerprint, const ARITY: usize, S: Payload> Fuse<F, ARITY, S> {
    /// Refuses an arity other than 3 or 4 when the type is used.
    const ARITY_OK: () = assert!(
        ARITY == 3 || ARITY == 4,
        "a binary fuse filter has arity 3 or 4"
    );

    #[inline]
    fn contains_hash(&self, hash: u64) -> bool {
        let hash = attempt_hash(hash, self.probe.attempt);
        let bytes = self.payload.bytes();
        let mut value = F::from_hash(hash);
        for slot in self.probe.slots::<ARITY>(hash) {
            value = value.xor(F::read(bytes, slot));
        }
        value == F::default()
    }

    fn contains_hashes(&self, hashes: &[u64], found: &mut [bool]) {
        let bytes = self.payload.bytes();
        let prefetching = bytes.len() >= PREFETCH_MIN_BYTES;
        for (i, (answer, &hash)) in found.iter_mut().zip(hashes).enumerate() {
            if let Some(&ahead) = hashes.get(i + PREFETCH_AHEAD).filter(|_| prefetching) {
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

    fn array_len(&self) -> u64 {
        self.shape.array_len(ARITY)
    }

    fn borrow(&self) -> Fuse<F, ARITY, &[u8]> {
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

/// The query side of both the filter and its view, forwarded to the inner
/// [`Fuse`].
macro_rules! membership {
    ($($lifetime:lifetime)?, $filter:ident) => {
        impl<$($lifetime,)? F: Fingerprint, const ARITY: usize> Membership for $filter<$($lifetime,)? F, ARITY> {
            fn hasher(&self) -> &KeyHasher {
                &self.inner.hasher
            }

            #[inline]
            fn contains_hash(&self, hash: u64) -> bool {
                self.inner.contains_hash(hash)
            }

            /// Looks up with the slots of the keys ahead prefetched.
            fn contains_hashes(&self, hashes: &[u64], found: &mut [bool]) {
                self.inner.contains_hashes(hashes, found);
            }

            /// The distinct key hashes of the set it was built from.
            fn len(&self) -> usize {
                usize::try_from(self.inner.len).unwrap_or(usize::MAX)
            }

            /// The fingerprint array (padded to whole 8-byte words).
            fn memory_usage(&self) -> usize {
                self.inner.payload.bytes().len()
            }

            /// The set it was built from.
            fn capacity(&self) -> Option<usize> {
                Some(self.len())
            }

            /// 2^−bits: exact for this instance.
            fn expected_fpp(&self) -> f64 {
                fingerprint_fpp(F::BITS)
            }

            /// 2^−bits, whatever `items` is.
            fn theoretical_fpp(&self, _items: u64) -> Option<f64> {
                Some(fingerprint_fpp(F::BITS))
            }
        }
    };
}

/// A binary fuse filter: a static set of keys in 1.125 × (bits of `F`)
/// bits per key with 3 hashes (`ARITY` = 3, the default), 1.075 × with 4,
/// for large sets; an FPP of exactly 2^−8, 2^−16 or 2^−32 (`F` = `u8`,
/// `u16`, `u32`), whatever the load.
///
/// Built once from the whole key set ([`builder`](Self::builder)); a
/// lookup reads one fingerprint in each of `ARITY` consecutive segments.
/// Nothing of the set is ever reported absent. It opens from its bytes
/// without a copy as a [`BinaryFuseView`].
///
/// # Examples
///
/// ```
/// use filterlab_static::BinaryFuseFilter;
///
/// let revoked: Vec<u64> = (0..10_000).map(|i| i * 7).collect();
/// let filter = BinaryFuseFilter::<u16>::builder().seed(3).build(&revoked)?;
/// assert!(revoked.iter().all(|key| filter.contains(key)));
/// let false_positives = (0..100_000u64).filter(|i| filter.contains(&(i * 7 + 1))).count();
/// assert!(false_positives < 10); // 2^-16 of 100,000 is 1.5
/// # Ok::<(), filterlab_static::Error>(())
/// ```
#[derive(Clone)]
pub struct BinaryFuseFilter<F: Fingerprint = u8, const ARITY: usize = 3> {
    inner: Fuse<F, ARITY, Vec<u8>>,
}

/// A [`BinaryFuseFilter`] answering from the borrowed bytes of its file (a
/// memory map), with no copy and no allocation: made by
/// [`BinaryFuseFilter::view`], it answers exactly as the filter read from
/// those bytes, with the same instructions.
#[derive(Clone)]
pub struct BinaryFuseView<'a, F: Fingerprint = u8, const ARITY: usize = 3> {
    inner: Fuse<F, ARITY, &'a [u8]>,
    file: Borrowed<'a>,
}

membership!(, BinaryFuseFilter);
membership!('a, BinaryFuseView);

impl<F: Fingerprint, const ARITY: usize> BinaryFuseFilter<F, ARITY> {
    /// A builder with the defaults: seed 0, [`DEFAULT_MAX_RETRIES`](crate::DEFAULT_MAX_RETRIES).
    pub fn builder() -> BinaryFuseBuilder<F, ARITY> {
        let () = Fuse::<F, ARITY, Vec<u8>>::ARITY_OK;
        BinaryFuseBuilder {
            base: StaticBase::default(),
            _fingerprint: PhantomData,
        }
    }

    /// Slots of the fingerprint array.
    pub fn num_slots(&self) -> u64 {
        self.inner.array_len()
    }

    /// Slots in each segment.
    pub fn segment_length(&self) -> u64 {
        self.inner.shape.segment_length
    }

    /// The bits of each fingerprint.
    pub const fn fingerprint_bits(&self) -> u32 {
        F::BITS
    }

    /// The construction attempt that built the filter: 0, or the retry
    /// (with a new seed) that succeeded.
    pub fn attempt(&self) -> u32 {
        self.inner.shape.attempt
    }

    /// The filter's bytes borrowed as a view (the same answers).
    pub fn as_view(&self) -> BinaryFuseView<'_, F, ARITY> {
        BinaryFuseView {
            inner: self.inner.borrow(),
            file: Borrowed::unframed(),
        }
    }
}

impl<F: Fingerprint, const ARITY: usize> BinaryFuseView<'_, F, ARITY> {
    /// Checks the checksum of the file the view borrows, for a view opened
    /// with [`Checksum::Defer`](filterlab_core::view::Checksum::Defer): one
    /// pass at memory speed.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ChecksumMismatch`](filterlab_core::ErrorKind::ChecksumMismatch)
    /// when the bytes were corrupted.
    pub fn verify_checksum(&self) -> Result<(), Error> {
        self.file.verify_checksum()
    }
}

impl<F: Fingerprint, const ARITY: usize> PartialEq for BinaryFuseFilter<F, ARITY> {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (&self.inner, &other.inner);
        (a.hasher, a.shape, a.len) == (b.hasher, b.shape, b.len) && a.payload == b.payload
    }
}

impl<F: Fingerprint, const ARITY: usize> Eq for BinaryFuseFilter<F, ARITY> {}

/// Its shape, not its fingerprints (they can be gigabytes).
macro_rules! debug_summary {
    ($($lifetime:lifetime)?, $filter:ident) => {
        impl<$($lifetime,)? F: Fingerprint, const ARITY: usize> fmt::Debug for $filter<$($lifetime,)? F, ARITY> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let inner = &self.inner;
                f.debug_struct(stringify!($filter))
                    .field("fingerprint_bits", &F::BITS)
                    .field("arity", &ARITY)
                    .field("len", &inner.len)
                    .field("segment_length", &inner.shape.segment_length)
                    .field("segment_count", &inner.shape.segment_count)
                    .field("attempt", &inner.shape.attempt)
                    .field("hasher", &inner.hasher)
                    .finish()
            }
        }
    };
}
debug_summary!(, BinaryFuseFilter);
debug_summary!('a, BinaryFuseView);

/// Configures a [`BinaryFuseFilter`]; made by [`BinaryFuseFilter::builder`].
#[derive(Clone, Debug)]
#[must_use]
pub struct BinaryFuseBuilder<F: Fingerprint = u8, const ARITY: usize = 3> {
    base: StaticBase,
    _fingerprint: PhantomData<F>,
}

impl<F: Fingerprint, const ARITY: usize> BinaryFuseBuilder<F, ARITY> {
    static_setters!();

    /// The filter of every key in `keys` (a slice, a vector, any iterator;
    /// duplicates are held once).
    ///
    /// # Errors
    ///
    /// As [`BuildFromKeys::build_from_hashes`].
    pub fn build<I>(&self, keys: I) -> Result<BinaryFuseFilter<F, ARITY>, Error>
    where
        I: IntoIterator,
        I::Item: Key,
    {
        self.build_from_keys(keys).map(|built| built.filter)
    }

    /// The layout a build of `items` keys takes (before duplicates are
    /// removed): its slots, and so its bits per key.
    pub fn num_slots(items: u64) -> u64 {
        Shape::for_items(items, ARITY).array_len(ARITY)
    }
}

impl<F: Fingerprint, const ARITY: usize> BuildFromKeys for BinaryFuseBuilder<F, ARITY> {
    type Filter = BinaryFuseFilter<F, ARITY>;

    fn hasher(&self) -> KeyHasher {
        self.base.hasher
    }

    /// Peels the keys' slots with Graf and Lemire's algorithm, in place:
    /// the hashes are grouped by segment in their own vector, and the
    /// construction needs 13 bytes a slot beside them (a count, the XOR
    /// of the hashes, and one index for the queue and the peel order),
    /// plus the fingerprints.
    fn build_from_hashes(&self, hashes: Vec<u64>) -> Result<Built<Self::Filter>, Error> {
        let () = Fuse::<F, ARITY, Vec<u8>>::ARITY_OK;
        let (inner, report) = build::build::<F, ARITY>(&self.base, hashes)?;
        Ok(Built::new(BinaryFuseFilter { inner }, report))
    }
}
