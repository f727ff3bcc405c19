//! Filters built once from a whole key set: the one trait their builders
//! implement, and what a build reports.

use crate::{Error, Key, KeyHasher, Membership};

/// What a build did besides the filter: how often it started again, and
/// how many keys of the input it held once though they came more than once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BuildReport {
    /// Constructions that failed for their seed and were started again with
    /// a new one (for a filter built in independent parts, the parts that
    /// were), at most the builder's retry bound.
    pub retries: u32,
    /// Key hashes of the input that repeated an earlier one: duplicate keys
    /// (and distinct keys whose 64-bit hashes collide), held once.
    pub duplicates: u64,
}

impl BuildReport {
    /// A report of `retries` restarts and `duplicates` repeated key hashes.
    pub const fn new(retries: u32, duplicates: u64) -> Self {
        Self {
            retries,
            duplicates,
        }
    }
}

/// A filter and the report of the build that made it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Built<F> {
    /// The filter.
    pub filter: F,
    /// What the build did.
    pub report: BuildReport,
}

impl<F> Built<F> {
    /// `filter` with its build's `report`.
    pub const fn new(filter: F, report: BuildReport) -> Self {
        Self { filter, report }
    }
}

/// The builder of a filter built once from a whole key set (a static
/// filter): it never takes an insert afterwards, and answers through
/// [`Membership`] like every other filter.
///
/// A builder holds everything but the keys (the target FPP or fingerprint
/// width, the hasher, the retry bound); [`build_from_hashes`](Self::build_from_hashes)
/// is the one method a new static filter writes, and every caller (the
/// typed `build` methods, the conformance suite, the harness) goes through
/// it. Its contract:
///
/// - the filter holds every hash of the input: `contains_hash` is never
///   `false` for one of them;
/// - duplicates are tolerated and held once ([`BuildReport::duplicates`]);
/// - a construction that fails for its seed is started again with a new
///   one, at most a bounded number of times ([`BuildReport::retries`]), then
///   refused with [`ErrorKind::ConstructionFailed`](crate::ErrorKind::ConstructionFailed);
/// - the hash vector is the build's working memory: reordered in place and
///   dropped when the build ends, so a build needs the hashes (8 bytes a
///   key), the filter, and the bounded scratch its filter documents.
///
/// # Examples
///
/// A generic build, as the harness writes it once for every static filter:
///
/// ```
/// use filterlab_core::{BuildFromKeys, Built, Error, Membership};
///
/// fn build_and_describe<B: BuildFromKeys>(builder: &B, keys: &[u64]) -> Result<String, Error> {
///     let Built { filter, report, .. } = builder.build_from_keys(keys)?;
///     assert!(keys.iter().all(|key| filter.contains_hash(builder.hasher().hash(key))));
///     Ok(format!("{} keys in {} bytes after {} retries", filter.len(),
///                filter.memory_usage(), report.retries))
/// }
/// # let _ = build_and_describe::<NoFilter>;
/// # struct NoFilter;
/// # impl BuildFromKeys for NoFilter {
/// #     type Filter = Never;
/// #     fn hasher(&self) -> filterlab_core::KeyHasher { filterlab_core::KeyHasher::new(0) }
/// #     fn build_from_hashes(&self, _: Vec<u64>) -> Result<Built<Never>, Error> { unimplemented!() }
/// # }
/// # enum Never {}
/// # impl Membership for Never {
/// #     fn hasher(&self) -> &filterlab_core::KeyHasher { match *self {} }
/// #     fn contains_hash(&self, _: u64) -> bool { match *self {} }
/// #     fn len(&self) -> usize { match *self {} }
/// #     fn memory_usage(&self) -> usize { match *self {} }
/// #     fn capacity(&self) -> Option<usize> { match *self {} }
/// #     fn expected_fpp(&self) -> f64 { match *self {} }
/// #     fn theoretical_fpp(&self, _: u64) -> Option<f64> { match *self {} }
/// # }
/// ```
pub trait BuildFromKeys {
    /// The filter this builds.
    type Filter: Membership;

    /// The hasher keys are hashed with before a build: the built filter's
    /// [`Membership::hasher`].
    fn hasher(&self) -> KeyHasher;

    /// Builds the filter holding every hash of `hashes`, made by
    /// [`hasher`](Self::hasher) (or any uniform 64-bit hash used
    /// consistently with `contains_hash`).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// for settings the filter refuses;
    /// [`ErrorKind::TooLarge`](crate::ErrorKind::TooLarge) over the memory
    /// limit or the filter's largest size;
    /// [`ErrorKind::ConstructionFailed`](crate::ErrorKind::ConstructionFailed)
    /// when every allowed retry failed.
    fn build_from_hashes(&self, hashes: Vec<u64>) -> Result<Built<Self::Filter>, Error>;

    /// Builds the filter holding every key of `keys` (a slice, a vector or
    /// any iterator): hashes them into one vector (sized exactly when the
    /// iterator knows its length), then [`build_from_hashes`](Self::build_from_hashes).
    ///
    /// # Errors
    ///
    /// As [`build_from_hashes`](Self::build_from_hashes);
    /// [`ErrorKind::TooLarge`](crate::ErrorKind::TooLarge) when the hashes
    /// do not fit in memory.
    fn build_from_keys<I>(&self, keys: I) -> Result<Built<Self::Filter>, Error>
    where
        I: IntoIterator,
        I::Item: Key,
        Self: Sized,
    {
        let hasher = self.hasher();
        let keys = keys.into_iter();
        let mut hashes = Vec::new();
        hashes
            .try_reserve_exact(keys.size_hint().0)
            .map_err(|_| Error::new(crate::ErrorKind::TooLarge, "no memory for the key hashes"))?;
        hashes.extend(keys.map(|key| hasher.hash(&key)));
        self.build_from_hashes(hashes)
    }
}
