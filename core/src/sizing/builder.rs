//! What every filter's builder shares: how it sizes the filter (a target FPP
//! or an explicit size), the load, k, hasher and memory limit, the
//! validation of each, and ([`builder_setters!`](crate::builder_setters))
//! their setters. A builder holds a [`BuilderBase`] and adds its own
//! settings around it.

use std::f64::consts::LN_2;

use crate::memory::DEFAULT_MEMORY_LIMIT;
use crate::sizing::record::HashChoice;
use crate::sizing::rules::{check_fpp, check_hashes, check_items};
use crate::{Error, KeyHasher};

/// How a builder sizes its filter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target {
    /// For this FPP at the builder's expected items.
    Fpp(f64),
    /// An explicit size, in the filter's own unit (bits, counters, buckets).
    Size(u64),
}

/// The settings every filter builder has, with their rules: a builder holds
/// one (in a field `base`) and adds its own settings around it, and
/// [`builder_setters!`](crate::builder_setters) writes the setters.
///
/// # Examples
///
/// ```
/// use filterlab_core::sizing::{BuilderBase, Target};
///
/// let mut base = BuilderBase::new(Target::Fpp(0.01));
/// assert!(base.items_for_fpp(0.01).is_err()); // the load is required
/// base.expected_items = Some(1000);
/// assert_eq!(base.items_for_fpp(0.01)?, 1000);
/// # Ok::<(), filterlab_core::Error>(())
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct BuilderBase {
    /// How the filter is sized.
    pub target: Target,
    /// The load to size for (required with a target FPP).
    pub expected_items: Option<u64>,
    /// An explicit number of probes per key, for filters that have one.
    pub num_hashes: Option<u32>,
    /// The key hasher (seed 0 unless set).
    pub hasher: KeyHasher,
    /// The most bytes the filter may take (64 GiB unless set).
    pub max_memory: u64,
}

impl BuilderBase {
    /// The defaults for `target`: no load, no k, seed 0, 64 GiB.
    pub fn new(target: Target) -> Self {
        Self {
            target,
            expected_items: None,
            num_hashes: None,
            hasher: KeyHasher::default(),
            max_memory: DEFAULT_MEMORY_LIMIT,
        }
    }

    /// The most bits the memory limit allows.
    pub fn max_bits(&self) -> u64 {
        self.max_memory.saturating_mul(8)
    }

    /// The load to size for `fpp`: required, and at least 1. The caller's
    /// k, if any, is checked here too, before any size search, so that a
    /// bad k is refused as such by every filter, whatever size it would
    /// have led to.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// for an FPP [`check_fpp`] refuses, no load, a zero load, or a k
    /// [`check_hashes`] refuses.
    pub fn items_for_fpp(&self, fpp: f64) -> Result<u64, Error> {
        check_fpp(fpp)?;
        let items = self
            .expected_items
            .ok_or_else(|| Error::invalid("sizing by FPP needs expected_items(n)"))?;
        check_items(items)?;
        self.explicit_hashes()?;
        Ok(items)
    }

    /// The caller's k, validated, if one was given.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// for a k [`check_hashes`] refuses.
    pub fn explicit_hashes(&self) -> Result<Option<u32>, Error> {
        self.num_hashes
            .map(|k| check_hashes(k).map(|()| k))
            .transpose()
    }

    /// The caller's k, if one was given, with the exact FPP `fpp_of` gives
    /// for it; otherwise the sizing's own choice `(k, fpp, why)`.
    ///
    /// # Errors
    ///
    /// As [`explicit_hashes`](Self::explicit_hashes); those of `fpp_of`.
    pub fn explicit_or(
        &self,
        chosen: (u32, f64, HashChoice),
        fpp_of: impl FnOnce(u32) -> Result<f64, Error>,
    ) -> Result<(u32, f64, HashChoice), Error> {
        match self.explicit_hashes()? {
            Some(k) => Ok((k, fpp_of(k)?, HashChoice::Explicit)),
            None => Ok(chosen),
        }
    }

    /// For an explicit array of `size` units (bits or counters): k (the
    /// caller's, or `best` for the stated load) with the reason, and the
    /// load the filter is sized for. Without a stated load, that is the one
    /// k is optimal for in a standard Bloom filter of that size.
    /// `constructor` names the builder's constructor in the error.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// for a zero load, an invalid k, or neither a k nor a load; those of
    /// `best`.
    pub fn hashes_for_size(
        &self,
        size: u64,
        constructor: &str,
        best: impl FnOnce(u64) -> Result<(u32, HashChoice), Error>,
    ) -> Result<(u32, HashChoice, u64), Error> {
        if let Some(items) = self.expected_items {
            check_items(items)?;
        }
        let (k, choice) = match (self.explicit_hashes()?, self.expected_items) {
            (Some(k), _) => (k, HashChoice::Explicit),
            (None, Some(items)) => best(items)?,
            (None, None) => {
                return Err(Error::invalid(format!(
                    "{constructor} needs hashes(k) or expected_items(n)"
                )));
            }
        };
        let items = self
            .expected_items
            .unwrap_or_else(|| ((size as f64 * LN_2 / f64::from(k)).round() as u64).max(1));
        Ok((k, choice, items))
    }
}

/// Writes a builder's setters, so that every filter's builder spells and
/// documents them alike and none repeats the same three-line method.
///
/// Two forms:
///
/// - `builder_setters!(base => expected_items, seed, ...)`: the setters of
///   the settings every builder shares, with their documentation, for a
///   builder whose field `base` holds them (a [`BuilderBase`], or any
///   struct with the fields the chosen setters write): any of
///   `expected_items`, `hashes`, `seed`, `hasher` and `max_memory`;
/// - `builder_setters! { /// docs
///   name(arg: Type) => field = value; ... }`: a setter of the builder's
///   own setting, `pub fn name(mut self, arg: Type) -> Self` storing
///   `value` in `self.field` (a field path such as `config.growth`).
///
/// # Examples
///
/// ```
/// use filterlab_core::sizing::{BuilderBase, Target};
///
/// /// Configures a toy filter.
/// pub struct ToyBuilder {
///     base: BuilderBase,
///     slots: Option<u32>,
/// }
///
/// impl ToyBuilder {
///     filterlab_core::builder_setters!(base => expected_items, seed, max_memory);
///
///     filterlab_core::builder_setters! {
///         /// Slots per bucket.
///         slots(slots: u32) => slots = Some(slots);
///     }
/// }
///
/// let builder = ToyBuilder { base: BuilderBase::new(Target::Fpp(0.01)), slots: None }
///     .expected_items(1000)
///     .seed(7)
///     .slots(4);
/// assert_eq!(builder.base.expected_items, Some(1000));
/// assert_eq!(builder.base.hasher.seed(), 7);
/// assert_eq!(builder.slots, Some(4));
/// ```
#[macro_export]
macro_rules! builder_setters {
    ($base:ident => $($setter:ident),+ $(,)?) => {
        $($crate::builder_setters!(@shared $base $setter);)+
    };
    ($($(#[$doc:meta])* $name:ident($arg:ident: $type:ty) => $($field:ident).+ = $value:expr;)+) => {
        $(
            $(#[$doc])*
            pub fn $name(mut self, $arg: $type) -> Self {
                self.$($field).+ = $value;
                self
            }
        )+
    };
    (@shared $base:ident expected_items) => {
        $crate::builder_setters! {
            /// The number of items the filter must hold at the target FPP;
            /// with an explicit size, the load it is sized for (its capacity).
            expected_items(items: u64) => $base.expected_items = Some(items);
        }
    };
    (@shared $base:ident hashes) => {
        $crate::builder_setters! {
            /// An explicit number of probes per key, overriding the sizing's
            /// choice (see [`HashChoice`](filterlab_core::sizing::HashChoice)).
            hashes(num_hashes: u32) => $base.num_hashes = Some(num_hashes);
        }
    };
    (@shared $base:ident seed) => {
        $crate::builder_setters! {
            /// The key hasher's seed (default 0). Filters with different
            /// seeds place keys differently and cannot be merged.
            seed(seed: u64) => $base.hasher = $crate::KeyHasher::new(seed);
        }
    };
    (@shared $base:ident hasher) => {
        $crate::builder_setters! {
            /// The key hasher.
            hasher(hasher: $crate::KeyHasher) => $base.hasher = hasher;
        }
    };
    (@shared $base:ident max_memory) => {
        $crate::builder_setters! {
            /// The most bytes the filter may take (default 64 GiB); a sizing
            /// over it is refused with
            /// [`ErrorKind::TooLarge`](filterlab_core::ErrorKind::TooLarge).
            max_memory(bytes: u64) => $base.max_memory = bytes;
        }
    };
}
