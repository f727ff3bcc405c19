//! What the Bloom variants share beside their probing: the builder's common
//! settings, the load and target a filter was sized for (and the header
//! fields that carry them), merges, and serde through the binary format.

use std::f64::consts::LN_2;
use std::fmt;

use filterlab_core::format::Header;
use filterlab_core::memory::DEFAULT_MEMORY_LIMIT;
use filterlab_core::{Error, ErrorKind, KeyHasher};

use filterlab_core::sizing::{check_fpp, check_hashes, check_items};
use filterlab_core::theory::{bloom_optimal_bits, hash_bits_needed};

use crate::sizing::{BloomSizing, HashChoice};

/// How a builder sizes the array.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Target {
    Fpp(f64),
    Bits(u64),
}

/// The settings every Bloom builder has; the builders add their own
/// (power-of-two rounding, the lookup kernel) around it.
#[derive(Clone, Debug)]
pub(crate) struct BuilderBase {
    pub(crate) target: Target,
    pub(crate) expected_items: Option<u64>,
    pub(crate) num_hashes: Option<u32>,
    pub(crate) hasher: KeyHasher,
    pub(crate) max_memory: u64,
}

impl BuilderBase {
    pub(crate) fn new(target: Target) -> Self {
        Self {
            target,
            expected_items: None,
            num_hashes: None,
            hasher: KeyHasher::default(),
            max_memory: DEFAULT_MEMORY_LIMIT,
        }
    }

    /// The most bits the memory limit allows.
    pub(crate) fn max_bits(&self) -> u64 {
        self.max_memory.saturating_mul(8)
    }

    /// The load to size for `fpp`: required, and at least 1.
    pub(crate) fn items_for_fpp(&self, fpp: f64) -> Result<u64, Error> {
        check_fpp(fpp)?;
        let items = self
            .expected_items
            .ok_or_else(|| Error::invalid("sizing by FPP needs expected_items(n)"))?;
        check_items(items)?;
        Ok(items)
    }

    /// The caller's k, validated, if one was given.
    pub(crate) fn explicit_hashes(&self) -> Result<Option<u32>, Error> {
        self.num_hashes
            .map(|k| check_hashes(k).map(|()| k))
            .transpose()
    }

    /// The caller's k, if one was given, with the exact FPP `fpp_of` gives
    /// for it; otherwise the sizing's own choice `(k, fpp, why)`.
    pub(crate) fn explicit_or(
        &self,
        chosen: (u32, f64, HashChoice),
        fpp_of: impl FnOnce(u32) -> Result<f64, Error>,
    ) -> Result<(u32, f64, HashChoice), Error> {
        match self.explicit_hashes()? {
            Some(k) => Ok((k, fpp_of(k)?, HashChoice::Explicit)),
            None => Ok(chosen),
        }
    }

    /// For an explicit array of `bits`: k (the caller's, or `best` for the
    /// stated load) with the reason, and the load the filter is sized for.
    /// Without a stated load, that is the one k is optimal for in a standard
    /// filter of that size.
    pub(crate) fn hashes_for_bits(
        &self,
        bits: u64,
        best: impl FnOnce(u64) -> Result<(u32, HashChoice), Error>,
    ) -> Result<(u32, HashChoice, u64), Error> {
        if let Some(items) = self.expected_items {
            check_items(items)?;
        }
        let (k, choice) = match (self.explicit_hashes()?, self.expected_items) {
            (Some(k), _) => (k, HashChoice::Explicit),
            (None, Some(items)) => best(items)?,
            (None, None) => {
                return Err(Error::invalid(
                    "with_bits needs hashes(k) or expected_items(n)",
                ));
            }
        };
        let items = self
            .expected_items
            .unwrap_or_else(|| ((bits as f64 * LN_2 / f64::from(k)).round() as u64).max(1));
        Ok((k, choice, items))
    }
}

/// What a builder's sizing records say of its array: the filter, the unit
/// the array is a whole number of, the power-of-two rounding, and the
/// family's textbook (independent-bits) FPP at (bits, k, items).
pub(crate) struct Array {
    pub(crate) filter: &'static str,
    pub(crate) unit_bits: u64,
    pub(crate) power_of_two: bool,
    pub(crate) classic: fn(u64, u32, u64) -> f64,
}

impl Array {
    /// The record of a sizing for `items` items and `target`: the array of
    /// `bits` bits with `k` hashes chosen for the reason `why`, whose exact
    /// FPP at that load is `achieved`.
    pub(crate) fn record(
        &self,
        items: u64,
        target: Target,
        (bits, k, why): (u64, u32, HashChoice),
        achieved: f64,
    ) -> BloomSizing {
        let (target_fpp, requested_bits) = match target {
            Target::Fpp(fpp) => (Some(fpp), bloom_optimal_bits(items, fpp)),
            Target::Bits(requested) => (None, requested as f64),
        };
        BloomSizing {
            filter: self.filter,
            expected_items: items,
            target_fpp,
            requested_bits,
            num_bits: bits,
            num_hashes: k,
            hash_choice: why,
            power_of_two: self.power_of_two,
            unit_bits: self.unit_bits,
            fpp_at_capacity: achieved,
            fpp_classic: (self.classic)(bits, k, items),
            hash_bits_needed: hash_bits_needed(items, target_fpp.unwrap_or(achieved)),
        }
    }
}

/// The constructors of a Bloom filter type's builder, `$builder`, which
/// has a `new(Target)`; the doc strings say how the type rounds an explicit
/// size and what its smallest array is.
macro_rules! builder_entry_points {
    ($builder:ident, with_bits: $with_bits:literal, params: $params:literal) => {
        /// A builder that sizes the filter for a target FPP; give it
        #[doc = concat!("[`expected_items`](", stringify!($builder), "::expected_items).")]
        pub fn with_fpp(fpp: f64) -> $builder {
            $builder::new($crate::common::Target::Fpp(fpp))
        }

        #[doc = concat!("A builder for an explicit number of bits", $with_bits, "; give it")]
        #[doc = concat!("[`hashes`](", stringify!($builder), "::hashes) or")]
        #[doc = concat!("[`expected_items`](", stringify!($builder), "::expected_items)")]
        /// to choose k.
        pub fn with_bits(num_bits: u64) -> $builder {
            $builder::new($crate::common::Target::Bits(num_bits))
        }

        /// The sizing for `expected_items` items at `fpp`, without
        #[doc = concat!("allocating: ", $params, " whose exact FPP at that load")]
        /// meets the target.
        ///
        /// # Errors
        ///
        #[doc = concat!("As [`", stringify!($builder), "::sizing`].")]
        pub fn params(
            expected_items: u64,
            fpp: f64,
        ) -> Result<$crate::sizing::BloomSizing, ::filterlab_core::Error> {
            Self::with_fpp(fpp).expected_items(expected_items).sizing()
        }
    };
}
pub(crate) use builder_entry_points;

/// The setters of [`BuilderBase`]'s settings and the sizing entry point,
/// for a builder holding it in a field `base` and sizing with its own
/// `sizing_for_fpp` and `sizing_for_bits`.
macro_rules! builder_setters {
    () => {
        /// The number of distinct items the filter must hold at the target FPP.
        pub fn expected_items(mut self, items: u64) -> Self {
            self.base.expected_items = Some(items);
            self
        }

        /// An explicit number of probes per key, overriding the sizing's
        /// choice (see [`HashChoice`](crate::sizing::HashChoice)).
        pub fn hashes(mut self, num_hashes: u32) -> Self {
            self.base.num_hashes = Some(num_hashes);
            self
        }

        /// The key hasher's seed (default 0). Filters with different seeds
        /// set different bits and cannot be merged.
        pub fn seed(mut self, seed: u64) -> Self {
            self.base.hasher = ::filterlab_core::KeyHasher::new(seed);
            self
        }

        /// The key hasher.
        pub fn hasher(mut self, hasher: ::filterlab_core::KeyHasher) -> Self {
            self.base.hasher = hasher;
            self
        }

        /// The most bytes the filter's array may take (default 64 GiB).
        pub fn max_memory(mut self, bytes: u64) -> Self {
            self.base.max_memory = bytes;
            self
        }

        /// The sizing this builder would allocate, without allocating.
        ///
        /// # Errors
        ///
        /// [`ErrorKind::InvalidParameter`](::filterlab_core::ErrorKind::InvalidParameter)
        /// for an FPP outside (0, 1), zero items, zero bits or a hash count
        /// outside 1..=64; [`ErrorKind::TooLarge`](::filterlab_core::ErrorKind::TooLarge)
        /// over the memory limit.
        pub fn sizing(&self) -> Result<$crate::sizing::BloomSizing, ::filterlab_core::Error> {
            match self.base.target {
                $crate::common::Target::Fpp(fpp) => self.sizing_for_fpp(fpp),
                $crate::common::Target::Bits(bits) => self.sizing_for_bits(bits),
            }
        }
    };
}
pub(crate) use builder_setters;

/// The load and FPP target a filter was sized for: written in its header,
/// part of its equality, reported by `capacity()` and `target_fpp()`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SizedFor {
    pub(crate) items: u64,
    pub(crate) fpp: Option<f64>,
}

impl SizedFor {
    /// What `sizing` sized for.
    pub(crate) fn of(sizing: &BloomSizing) -> Self {
        Self {
            items: sizing.expected_items,
            fpp: sizing.target_fpp,
        }
    }

    /// The two header parameters: the load, then the target's bits (0 for
    /// none).
    pub(crate) fn params(self) -> [u64; 2] {
        [self.items, self.fpp.map_or(0, f64::to_bits)]
    }

    /// Reads the two header parameters at `first` and `first + 1`,
    /// rejecting a zero load or a target outside (0, 1).
    pub(crate) fn from_header(header: &Header, first: usize) -> Result<Self, Error> {
        let items = header.param(first, "capacity")?;
        if items == 0 {
            return Err(Error::new(ErrorKind::InvalidHeader, "zero capacity"));
        }
        let target = header.param(first + 1, "target_fpp")?;
        let fpp = (target != 0).then(|| f64::from_bits(target));
        if let Some(fpp) = fpp.filter(|&fpp| check_fpp(fpp).is_err()) {
            return Err(Error::new(
                ErrorKind::InvalidHeader,
                format!("target FPP {fpp}"),
            ));
        }
        Ok(Self { items, fpp })
    }

    /// The load as `Filter::capacity` reports it.
    pub(crate) fn capacity(self) -> Option<usize> {
        usize::try_from(self.items).ok()
    }
}

impl PartialEq for SizedFor {
    /// Bitwise on the target, so a filter equals itself read back.
    fn eq(&self, other: &Self) -> bool {
        self.params() == other.params()
    }
}

impl Eq for SizedFor {}

/// The start of a Bloom filter's `Debug` summary (the array itself can be
/// gigabytes): its size, `(name, value)`, k, hasher, counter and what it
/// was sized for. The caller adds its own fields and the bits set.
pub(crate) fn debug_summary<'a, 'b>(
    f: &'a mut fmt::Formatter<'b>,
    filter: &str,
    (size_name, size): (&str, u64),
    (num_hashes, hasher): (u32, &KeyHasher),
    len: u64,
    sized_for: &SizedFor,
) -> fmt::DebugStruct<'a, 'b> {
    let mut summary = f.debug_struct(filter);
    summary
        .field(size_name, &size)
        .field("num_hashes", &num_hashes)
        .field("hasher", hasher)
        .field("len", &len)
        .field("sized_for", sized_for);
    summary
}

/// Reads the hash count at header parameter `index`: 1..=64.
pub(crate) fn hashes_from_header(header: &Header, index: usize) -> Result<u32, Error> {
    let num_hashes = header.param(index, "num_hashes")?;
    u32::try_from(num_hashes)
        .ok()
        .filter(|&k| check_hashes(k).is_ok())
        .ok_or_else(|| Error::new(ErrorKind::InvalidHeader, format!("{num_hashes} hashes")))
}

/// Refuses an item counter above the bits set. Every insert a Bloom filter
/// counts sets at least one clear bit, so a valid counter never exceeds the
/// bits set, and a counter within that bound cannot overflow however many
/// keys are inserted after it.
pub(crate) fn check_counter(items: u64, set_bits: u64) -> Result<(), Error> {
    if items > set_bits {
        return Err(Error::new(
            ErrorKind::InvalidHeader,
            format!("the counter says {items} items, but only {set_bits} bits are set"),
        ));
    }
    Ok(())
}

/// A Bloom variant as a merge sees it: a configuration both sides must
/// share, a word array combined word by word, and an item counter the merge
/// replaces with an estimate.
pub(crate) trait WordArray {
    /// What decides which bits a key sets.
    type Config: PartialEq + fmt::Debug;
    fn config(&self) -> Self::Config;
    fn words(&self) -> &[u64];
    fn words_mut(&mut self) -> &mut [u64];
    fn items(&self) -> u64;
    fn set_items(&mut self, items: u64);
    /// Bits set.
    fn set_bits(&self) -> u64;
    /// The distinct items estimated from the set bits; infinite when full.
    fn estimated_len(&self) -> f64;
}

/// Bitwise OR into `mine`; its counter becomes the estimate from the merged
/// bits, clamped to [max(len_a, len_b), min(len_a + len_b, bits set)].
pub(crate) fn union<F: WordArray>(mine: &mut F, theirs: &F) -> Result<(), Error> {
    let bounds = (
        mine.items().max(theirs.items()),
        mine.items().saturating_add(theirs.items()),
    );
    merge(mine, theirs, bounds, |word, other| *word |= other)
}

/// Bitwise AND into `mine`; its counter becomes the estimate from the
/// remaining bits, clamped to [0, min(len_a, len_b, bits set)].
pub(crate) fn intersect<F: WordArray>(mine: &mut F, theirs: &F) -> Result<(), Error> {
    let bounds = (0, mine.items().min(theirs.items()));
    merge(mine, theirs, bounds, |word, other| *word &= other)
}

/// After a merge the exact counter is unknowable; the estimate from the set
/// bits, clamped to what the inputs allow and to the bits now set (the
/// counter's invariant, see [`check_counter`]), takes its place. `mine` is
/// left unchanged when the configurations differ.
fn merge<F: WordArray>(
    mine: &mut F,
    theirs: &F,
    (low, high): (u64, u64),
    combine: impl Fn(&mut u64, u64),
) -> Result<(), Error> {
    if mine.config() != theirs.config() {
        return Err(Error::new(
            ErrorKind::Incompatible,
            format!(
                "cannot merge {:?} with {:?}",
                mine.config(),
                theirs.config()
            ),
        ));
    }
    for (word, &other) in mine.words_mut().iter_mut().zip(theirs.words()) {
        combine(word, other);
    }
    // Inputs that keep the invariant give low <= high; `min` keeps `clamp`
    // from panicking on any that do not.
    let high = high.min(mine.set_bits());
    let low = low.min(high);
    let estimate = mine.estimated_len();
    let estimate = if estimate.is_finite() {
        estimate.round() as u64
    } else {
        high
    };
    mine.set_items(estimate.clamp(low, high));
    Ok(())
}

/// Implements `Merge` through [`union`] and [`intersect`] for a filter
/// with inherent `config`, `estimated_len` and `set_bits`, a counter `len`,
/// and its words behind the `words` and `words_mut` of the field `$storage`.
macro_rules! merge_by_words {
    ($filter:ident, $config:ty, $storage:ident) => {
        impl $crate::common::WordArray for $filter {
            type Config = $config;

            fn config(&self) -> $config {
                $filter::config(self)
            }

            fn words(&self) -> &[u64] {
                self.$storage.words()
            }

            fn words_mut(&mut self) -> &mut [u64] {
                self.$storage.words_mut()
            }

            fn items(&self) -> u64 {
                self.len
            }

            fn set_items(&mut self, items: u64) {
                self.len = items;
            }

            fn set_bits(&self) -> u64 {
                $filter::set_bits(self)
            }

            fn estimated_len(&self) -> f64 {
                $filter::estimated_len(self)
            }
        }

        impl ::filterlab_core::Merge for $filter {
            /// Bitwise OR. `len` becomes the estimate from the merged bits,
            /// clamped to [max(len_a, len_b), min(len_a + len_b, bits set)].
            fn union(&mut self, other: &Self) -> Result<(), ::filterlab_core::Error> {
                $crate::common::union(self, other)
            }

            /// Bitwise AND. `len` becomes the estimate from the remaining
            /// bits, clamped to [0, min(len_a, len_b, bits set)].
            fn intersect(&mut self, other: &Self) -> Result<(), ::filterlab_core::Error> {
                $crate::common::intersect(self, other)
            }
        }
    };
}
pub(crate) use merge_by_words;

/// Implements serde's traits through the binary format: a byte string,
/// validated on the way in like `Persist::from_bytes`.
macro_rules! serde_via_format {
    ($filter:ty) => {
        #[cfg(feature = "serde")]
        impl ::serde::Serialize for $filter {
            /// As the binary format (a byte string).
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                ::filterlab_core::serde_bytes::serialize(self, serializer)
            }
        }

        #[cfg(feature = "serde")]
        impl<'de> ::serde::Deserialize<'de> for $filter {
            /// From the binary format, validated like `Persist::from_bytes`.
            fn deserialize<D: ::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> Result<Self, D::Error> {
                ::filterlab_core::serde_bytes::deserialize(deserializer)
            }
        }
    };
}
pub(crate) use serde_via_format;
