//! The Ribbon filter (Dillinger and Walzer, "Ribbon filter: practically
//! smaller than Bloom and Xor", 2021): each key is an equation over 128
//! consecutive slots of a solution with r bits a slot, and a lookup checks
//! that the key's coefficients select slots whose XOR is its fingerprint.
//!
//! This one is standard Ribbon (no bumping, no homogeneous system), band
//! width 128 with smashed starts, cut into 2^k partitions of at most 4096
//! keys on average, each an independent system sized for its own keys and
//! solved in cache; the first partitions keep one fingerprint column more
//! than the others, which gives any FPP between two powers of two. See the
//! crate README for the measurements behind these choices.

mod band;
mod build;
#[allow(unsafe_code)]
mod kernel;
mod lookup;
mod persist;
mod shape;
mod words;

use std::fmt;

use filterlab_core::theory::{mixed_fingerprint_fpp, mixed_fingerprint_widths};
use filterlab_core::{BuildFromKeys, Built, Error, Key, KeyHasher, Membership};

use crate::builder::{StaticBase, static_setters};
use crate::storage::{Borrowed, Payload};
use lookup::Ribbon;
use shape::{Widths, initial_slots, log_partitions};

/// What [`RibbonFilter::read_from_expecting`] compares: the hasher and the
/// fingerprint widths (the slots follow from the set).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RibbonConfig {
    /// The key hasher.
    pub hasher: KeyHasher,
    /// Fingerprint columns of the narrow partitions.
    pub columns: u32,
    /// Partitions (a power of two).
    pub partitions: u64,
    /// Partitions with one column more.
    pub wide_partitions: u64,
}

/// The query side of both the filter and its view, forwarded to the inner
/// [`Ribbon`].
macro_rules! membership {
    ($filter:ty) => {
        impl Membership for $filter {
            fn hasher(&self) -> &KeyHasher {
                &self.inner.hasher
            }

            #[inline]
            fn contains_hash(&self, hash: u64) -> bool {
                self.inner.contains_hash(hash)
            }

            /// Looks up with the bands of the keys ahead prefetched.
            fn contains_hashes(&self, hashes: &[u64], found: &mut [bool]) {
                self.inner.contains_hashes(hashes, found);
            }

            /// The distinct key hashes of the set it was built from.
            fn len(&self) -> usize {
                usize::try_from(self.inner.len).unwrap_or(usize::MAX)
            }

            /// The payload: the partition offsets and the solution words.
            fn memory_usage(&self) -> usize {
                self.inner.payload.bytes().len()
            }

            /// The set it was built from.
            fn capacity(&self) -> Option<usize> {
                Some(self.len())
            }

            /// The exact FPP: 2^−r in the narrow partitions, 2^−(r+1) in
            /// the wide ones, each a query's partition with probability 1/P.
            fn expected_fpp(&self) -> f64 {
                self.inner.widths.fpp()
            }

            /// As [`expected_fpp`](Self::expected_fpp), whatever `items` is.
            fn theoretical_fpp(&self, _items: u64) -> Option<f64> {
                Some(self.inner.widths.fpp())
            }
        }
    };
}

/// A Ribbon filter: a static set of keys in close to log2(1/p) bits per
/// key, for any FPP p from 0.5 to 2^−32.
///
/// Built once from the whole key set ([`with_fpp`](Self::with_fpp)); its
/// FPP is exact (2^−r for a query landing in a partition of r fingerprint
/// columns), and nothing of the set is ever reported absent. A lookup reads
/// 3 words per column from one contiguous stretch of memory. It opens from
/// its bytes without a copy as a [`RibbonView`].
///
/// # Examples
///
/// ```
/// use filterlab_static::RibbonFilter;
///
/// let leaked: Vec<String> = (0..20_000).map(|i| format!("password{i}")).collect();
/// let filter = RibbonFilter::with_fpp(0.01).seed(7).build(&leaked)?;
/// assert!(leaked.iter().all(|word| filter.contains(word)));
/// assert!(filter.bits_per_item() < 7.0); // log2(100) = 6.64
/// let false_positives = (0..100_000).filter(|i| filter.contains(&format!("other{i}"))).count();
/// assert!(false_positives < 1_200);
/// # Ok::<(), filterlab_static::Error>(())
/// ```
#[derive(Clone)]
pub struct RibbonFilter {
    inner: Ribbon<Vec<u8>>,
}

/// A [`RibbonFilter`] answering from the borrowed bytes of its file (a
/// memory map), with no copy and no allocation: made by
/// [`RibbonFilter::view`], it answers exactly as the filter read from those
/// bytes, with the same instructions.
#[derive(Clone)]
pub struct RibbonView<'a> {
    inner: Ribbon<&'a [u8]>,
    file: Borrowed<'a>,
}

membership!(RibbonFilter);
membership!(RibbonView<'_>);

/// What both say of their shape.
macro_rules! shape_methods {
    ($filter:ty) => {
        impl $filter {
            /// Fingerprint columns of the narrow partitions (r); the wide
            /// ones have one more.
            pub fn columns(&self) -> u32 {
                self.inner.widths.columns
            }

            /// The partitions, and how many of them are wide.
            pub fn partitions(&self) -> (u64, u64) {
                (self.inner.widths.partitions(), self.inner.widths.wide)
            }

            /// Slots of all partitions.
            pub fn num_slots(&self) -> u64 {
                self.inner.slots
            }

            /// Bits of the payload per key held.
            pub fn bits_per_item(&self) -> f64 {
                8.0 * self.inner.payload.bytes().len() as f64 / self.inner.len.max(1) as f64
            }
        }
    };
}
shape_methods!(RibbonFilter);
shape_methods!(RibbonView<'_>);

impl RibbonFilter {
    /// A builder for a filter whose exact FPP is at most `fpp` (from 0.5
    /// to 2^−32) with the fewest bits: ⌊log2(1/p)⌋ fingerprint columns, one
    /// more in the fraction of partitions that brings the FPP down to p.
    pub fn with_fpp(fpp: f64) -> RibbonBuilder {
        RibbonBuilder {
            base: StaticBase::default(),
            fpp,
        }
    }

    /// What a filter of `items` keys at `fpp` is expected to be, without
    /// building it.
    ///
    /// # Errors
    ///
    /// As [`RibbonBuilder::sizing`].
    pub fn params(items: u64, fpp: f64) -> Result<RibbonSizing, Error> {
        Self::with_fpp(fpp).sizing(items)
    }

    /// The filter's bytes borrowed as a view (the same answers).
    pub fn as_view(&self) -> RibbonView<'_> {
        RibbonView {
            inner: self.inner.borrow(),
            file: Borrowed::unframed(),
        }
    }
}

impl RibbonView<'_> {
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

impl PartialEq for RibbonFilter {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (&self.inner, &other.inner);
        (a.hasher, a.widths, a.slots, a.len) == (b.hasher, b.widths, b.slots, b.len)
            && a.payload == b.payload
    }
}

impl Eq for RibbonFilter {}

/// Its shape, not its words (they can be gigabytes).
macro_rules! debug_summary {
    ($filter:ty, $name:literal) => {
        impl fmt::Debug for $filter {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let inner = &self.inner;
                f.debug_struct($name)
                    .field("len", &inner.len)
                    .field("columns", &inner.widths.columns)
                    .field("partitions", &inner.widths.partitions())
                    .field("wide_partitions", &inner.widths.wide)
                    .field("slots", &inner.slots)
                    .field("fpp", &inner.widths.fpp())
                    .field("hasher", &inner.hasher)
                    .finish()
            }
        }
    };
}
debug_summary!(RibbonFilter, "RibbonFilter");
debug_summary!(RibbonView<'_>, "RibbonView");

/// Configures a [`RibbonFilter`]; made by [`RibbonFilter::with_fpp`].
#[derive(Clone, Debug)]
#[must_use]
pub struct RibbonBuilder {
    base: StaticBase,
    fpp: f64,
}

/// What a Ribbon filter of a given load and FPP is expected to be
/// ([`RibbonFilter::params`]): its widths exactly, its slots as the
/// sizing rule gives them before any retry.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct RibbonSizing {
    /// The keys it is sized for.
    pub items: u64,
    /// The FPP asked for.
    pub target_fpp: f64,
    /// The exact FPP of the widths: at most the target.
    pub fpp: f64,
    /// Fingerprint columns of the narrow partitions.
    pub columns: u32,
    /// Partitions (a power of two).
    pub partitions: u64,
    /// Partitions with one column more.
    pub wide_partitions: u64,
    /// Slots of all partitions, before retries.
    pub slots: u64,
    /// Bytes of the payload.
    pub bytes: u64,
}

impl RibbonSizing {
    /// Bits of the payload per key.
    pub fn bits_per_item(&self) -> f64 {
        8.0 * self.bytes as f64 / self.items.max(1) as f64
    }
}

impl RibbonBuilder {
    static_setters!();

    /// The widths for `items` keys.
    fn widths(&self, items: u64) -> Result<Widths, Error> {
        let (columns, share) = mixed_fingerprint_widths(self.fpp)?;
        let log_partitions = log_partitions(items);
        let partitions = 1u64 << log_partitions;
        // The fewest wide partitions that meet the target (the share
        // rounded up, then down while rounding errors allow).
        let fpp_with = |wide: u64| mixed_fingerprint_fpp(columns, wide as f64 / partitions as f64);
        let mut wide = ((share * partitions as f64).ceil() as u64).min(partitions);
        while wide > 0 && fpp_with(wide - 1) <= self.fpp {
            wide -= 1;
        }
        while fpp_with(wide) > self.fpp && wide < partitions {
            wide += 1;
        }
        Ok(Widths {
            log_partitions,
            columns,
            wide,
        })
    }

    /// What a filter of `items` keys is expected to be, without building it.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](filterlab_core::ErrorKind::InvalidParameter)
    /// for an FPP outside (0, 1) or below 2^−32.
    pub fn sizing(&self, items: u64) -> Result<RibbonSizing, Error> {
        let widths = self.widths(items)?;
        let partitions = widths.partitions();
        let slots = initial_slots(items / partitions) * (partitions - items % partitions)
            + initial_slots(items / partitions + 1) * (items % partitions);
        let wide_slots = slots / partitions * widths.wide;
        let words = words::word_count(slots, u64::from(widths.columns), wide_slots.div_ceil(64));
        Ok(RibbonSizing {
            items,
            target_fpp: self.fpp,
            fpp: widths.fpp(),
            columns: widths.columns,
            partitions,
            wide_partitions: widths.wide,
            slots,
            bytes: crate::storage::padded(4 * (partitions as usize + 1)) as u64 + 8 * words,
        })
    }

    /// The filter of every key in `keys` (a slice, a vector, any iterator;
    /// duplicates are held once).
    ///
    /// # Errors
    ///
    /// As [`BuildFromKeys::build_from_hashes`].
    pub fn build<I>(&self, keys: I) -> Result<RibbonFilter, Error>
    where
        I: IntoIterator,
        I::Item: Key,
    {
        self.build_from_keys(keys).map(|built| built.filter)
    }
}

impl BuildFromKeys for RibbonBuilder {
    type Filter = RibbonFilter;

    fn hasher(&self) -> KeyHasher {
        self.base.hasher
    }

    /// Groups the hashes by partition in place, then groups, bands and
    /// solves the partitions two at a time, each in cache; a partition
    /// that cannot be solved is retried with more slots (its starts, and
    /// so its system, are new), at most `max_retries` times. Memory: the
    /// hashes, the filter, and about 400 KiB.
    fn build_from_hashes(&self, hashes: Vec<u64>) -> Result<Built<RibbonFilter>, Error> {
        let widths = self.widths(hashes.len() as u64)?;
        let (inner, report) = build::build(&self.base, widths, hashes)?;
        Ok(Built::new(RibbonFilter { inner }, report))
    }
}

#[cfg(test)]
mod tests {
    use filterlab_core::{Membership, mix64};

    use super::RibbonFilter;
    use super::build::build_with;
    use super::kernel::Level;

    /// Run under Miri by `.ci/run`, with POPCNT and with AVX2 enabled and
    /// without: every level this CPU runs builds (its back-substitution)
    /// the same filter as the portable code and answers (one key and
    /// batched, on a filter large enough to prefetch) as it does, with wide
    /// and narrow partitions.
    #[test]
    fn every_kernel_builds_and_answers_as_the_portable_code() {
        // Under Miri two partitions, one of them wide (p = 0.4: one and two
        // columns, which AVX2 computes four at a time).
        let (n, fpp) = if cfg!(miri) {
            (2100, 0.4)
        } else {
            (100_000, 0.01)
        };
        let keys: Vec<u64> = (0..n).map(mix64).collect();
        let builder = RibbonFilter::with_fpp(fpp).seed(3);
        let widths = builder.widths(keys.len() as u64).unwrap();
        assert!(widths.wide > 0 && widths.wide < widths.partitions());
        let hashes = || {
            keys.iter()
                .map(|key| builder.base.hasher.hash(key))
                .collect()
        };
        let portable = build_with(&builder.base, widths, hashes(), Level::Portable)
            .unwrap()
            .0;
        let queries: Vec<u64> = (0..300)
            .map(|i| mix64(i ^ 0xabc))
            .chain(keys.iter().copied().take(100))
            .map(|key| builder.base.hasher.hash(&key))
            .collect();
        assert!(
            cfg!(miri) || portable.payload.len() > 1 << 16,
            "batches prefetch"
        );
        let expected: Vec<bool> = queries
            .iter()
            .map(|&hash| portable.contains_hash(hash))
            .collect();
        assert!(expected[300..].iter().all(|&hit| hit));
        let levels = match Level::detect() {
            Level::Avx2 => &[Level::Portable, Level::Popcnt, Level::Avx2][..],
            Level::Popcnt => &[Level::Portable, Level::Popcnt][..],
            Level::Portable => &[Level::Portable][..],
        };
        for &level in levels {
            let (ribbon, _) = build_with(&builder.base, widths, hashes(), level).unwrap();
            assert!(ribbon.payload == portable.payload, "{level:?}");
            let filter = RibbonFilter { inner: ribbon };
            let one: Vec<bool> = queries
                .iter()
                .map(|&hash| filter.contains_hash(hash))
                .collect();
            assert_eq!(one, expected, "{level:?}");
            let mut batched = vec![false; queries.len()];
            filter.contains_hashes(&queries, &mut batched);
            assert_eq!(batched, expected, "{level:?}");
        }
    }

    /// The out-of-line lookup of the payload's end answers as the inline
    /// one, on the whole payload and on the payload cut right after the
    /// last word the key's band keeps: every key of the set is still found.
    #[test]
    fn the_tail_lookup_answers_as_the_inline_one() {
        let keys: Vec<u64> = (0..5000).map(mix64).collect();
        let filter = RibbonFilter::with_fpp(0.01).seed(3).build(&keys).unwrap();
        let ribbon = &filter.inner;
        assert_eq!(ribbon.widths.max_columns(), 7);
        let absent = (0..2000).map(|i| mix64(i ^ 0xabc));
        for (i, key) in keys.iter().copied().chain(absent).enumerate() {
            let hash = ribbon.hasher.hash(&key);
            let [inline, tail, cut] = ribbon.query.tail_answers::<8>(&ribbon.payload, hash);
            assert!(inline || i >= keys.len(), "key {i} not found");
            assert_eq!((tail, cut), (inline, inline), "key {i}");
        }
    }
}
