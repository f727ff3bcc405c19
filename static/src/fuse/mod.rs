//! The binary fuse filter (Graf and Lemire, "Binary Fuse Filters: Fast and
//! Smaller Than Xor Filters", 2022): an array of fingerprints in which the
//! XOR of a key's 3 (or 4) slots, one in each of consecutive segments,
//! equals the key's fingerprint.

mod build;
mod layout;
mod persist;

use std::fmt;
use std::marker::PhantomData;

use filterlab_core::theory::fingerprint_fpp;
use filterlab_core::{BuildFromKeys, Built, Error, Key, KeyHasher, Membership};

use crate::builder::{StaticBase, static_setters};
use crate::storage::{Borrowed, Payload};
use layout::{Fuse, Shape};

pub use layout::Fingerprint;

/// What [`BinaryFuseFilter::read_from_expecting`] compares: the hasher,
/// the fingerprint width and the arity (the segments follow from the set).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BinaryFuseConfig {
    /// The key hasher.
    pub hasher: KeyHasher,
    /// Bits of each fingerprint.
    pub fingerprint_bits: u32,
    /// Slots a key has.
    pub arity: usize,
}

impl BinaryFuseConfig {
    /// The configuration of a `F`-fingerprint, `ARITY`-wise filter
    /// hashing with `hasher`.
    pub fn new<F: Fingerprint, const ARITY: usize>(hasher: KeyHasher) -> Self {
        Self {
            hasher,
            fingerprint_bits: F::BITS,
            arity: ARITY,
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
