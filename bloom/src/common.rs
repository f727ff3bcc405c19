//! What the Bloom variants share beside their probing and beside what
//! every filter shares through core (the builder base and setters, the
//! sized-for record, serde): the sizing record of an array, the builders'
//! constructors and sizing entry point, the `Debug` summary, the counter
//! invariant, and merges.

use std::fmt;

use filterlab_core::sizing::{HashChoice, SizedFor, Target};
use filterlab_core::theory::{bloom_optimal_bits, hash_bits_needed};
use filterlab_core::{Error, ErrorKind, KeyHasher};

use crate::sizing::BloomSizing;

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
            Target::Size(requested) => (None, requested as f64),
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
            block_probes: None,
        }
    }
}

/// The constructors of a Bloom filter type's builder, `$builder`, which
/// has a `new(Target)`; the doc strings say how the type rounds an explicit
/// size, how it then chooses k and its load (by default: from `hashes` or
/// `expected_items`), and what its smallest array is.
macro_rules! builder_entry_points {
    ($builder:ident, with_bits: $with_bits:literal, params: $params:literal) => {
        $crate::common::builder_entry_points!(
            $builder,
            with_bits: $with_bits,
            then: concat!(
                "give it [`hashes`](", stringify!($builder), "::hashes) or [`expected_items`](",
                stringify!($builder), "::expected_items) to choose k."
            ),
            params: $params
        );
    };
    ($builder:ident, with_bits: $with_bits:literal, then: $then:expr, params: $params:literal) => {
        /// A builder that sizes the filter for a target FPP; give it
        #[doc = concat!("[`expected_items`](", stringify!($builder), "::expected_items).")]
        pub fn with_fpp(fpp: f64) -> $builder {
            $builder::new(::filterlab_core::sizing::Target::Fpp(fpp))
        }

        #[doc = concat!("A builder for an explicit number of bits", $with_bits, ";")]
        #[doc = $then]
        pub fn with_bits(num_bits: u64) -> $builder {
            $builder::new(::filterlab_core::sizing::Target::Size(num_bits))
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

/// The setters of the settings every builder shares that the builder
/// lists (core's [`builder_setters!`](filterlab_core::builder_setters)) and
/// the sizing entry point, for a builder holding a
/// [`BuilderBase`](filterlab_core::sizing::BuilderBase) in a field `base`
/// and sizing with its own `sizing_for_fpp` and `sizing_for_bits`.
macro_rules! builder_methods {
    ($($setter:ident),+) => {
        ::filterlab_core::builder_setters!(base => $($setter),+);

        /// The sizing this builder would allocate, without allocating.
        ///
        /// # Errors
        ///
        /// [`ErrorKind::InvalidParameter`](::filterlab_core::ErrorKind::InvalidParameter)
        /// for an FPP outside (0, 1), zero or no items with a target FPP,
        /// zero bits or a hash count outside 1..=64;
        /// [`ErrorKind::TooLarge`](::filterlab_core::ErrorKind::TooLarge)
        /// over the memory limit.
        pub fn sizing(&self) -> Result<$crate::sizing::BloomSizing, ::filterlab_core::Error> {
            match self.base.target {
                ::filterlab_core::sizing::Target::Fpp(fpp) => self.sizing_for_fpp(fpp),
                ::filterlab_core::sizing::Target::Size(bits) => self.sizing_for_bits(bits),
            }
        }
    };
}
pub(crate) use builder_methods;

/// What `sizing` sized for: the load and target its header records.
pub(crate) fn sized_for(sizing: &BloomSizing) -> SizedFor {
    SizedFor::new(sizing.expected_items, sizing.target_fpp)
}

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
    /// Bits set, and the distinct items estimated from them (infinite when
    /// full), from one pass over the array.
    fn set_bits_and_estimate(&self) -> (u64, f64);
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
    let (set_bits, estimate) = mine.set_bits_and_estimate();
    let high = high.min(set_bits);
    let low = low.min(high);
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

            fn set_bits_and_estimate(&self) -> (u64, f64) {
                $filter::set_bits_and_estimate(self)
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
