//! The traits every filter implements, and the batching helpers their
//! batched operations share.

use crate::{Error, Key, KeyHasher};

/// Keys are hashed in batches of this many before a batched operation.
pub const BATCH: usize = 256;

/// Hashes `keys` with `hasher` in batches of [`BATCH`] and hands each batch
/// of hashes to `step`; returns the sum of what it returns. The one loop
/// behind every filter's batched insert and [`Membership::contains_many`].
///
/// # Errors
///
/// The first error `step` returns; the batches before it were processed.
///
/// # Examples
///
/// ```
/// use filterlab_core::{KeyHasher, for_each_batch};
///
/// let mut seen = 0;
/// let total = for_each_batch(0..1000u64, &KeyHasher::new(1), |hashes| {
///     seen += 1;
///     Ok::<_, filterlab_core::Error>(hashes.len())
/// })?;
/// assert_eq!((total, seen), (1000, 4));
/// # Ok::<(), filterlab_core::Error>(())
/// ```
pub fn for_each_batch<I, E>(
    keys: I,
    hasher: &KeyHasher,
    mut step: impl FnMut(&[u64]) -> Result<usize, E>,
) -> Result<usize, E>
where
    I: IntoIterator,
    I::Item: Key,
{
    let mut hashes = Vec::with_capacity(BATCH);
    let mut keys = keys.into_iter().peekable();
    let mut total = 0;
    while keys.peek().is_some() {
        hashes.clear();
        hashes.extend(keys.by_ref().take(BATCH).map(|key| hasher.hash(&key)));
        total += step(&hashes)?;
    }
    Ok(total)
}

/// Inserts `keys` into `filter` in batches: hashed with the filter's own
/// hasher, each batch through its [`insert_hashes`](Filter::insert_hashes)
/// (so a filter's prefetching batch insert serves typed keys too). Returns
/// how many were new. The `insert_many` of the filters whose inserts can
/// fail.
///
/// # Errors
///
/// The first error an insert returns (for example
/// [`ErrorKind::Full`](crate::ErrorKind::Full)): the keys before it stay
/// inserted, it and the keys after it are not.
pub fn insert_in_batches<F, I>(filter: &mut F, keys: I) -> Result<usize, Error>
where
    F: Filter + ?Sized,
    I: IntoIterator,
    I::Item: Key,
{
    let hasher = *filter.hasher();
    for_each_batch(keys, &hasher, |hashes| filter.insert_hashes(hashes))
}

/// The query side every filterlab filter answers through: lookups of
/// 64-bit key hashes and what a filter reports about itself.
///
/// Filters that take inserts ([`Filter`]) and filters built once from a
/// whole key set (the static filters of filterlab-static, built through
/// [`BuildFromKeys`](crate::BuildFromKeys)) both implement it, so one
/// conformance check, one statistical check, one benchmark loop and one
/// harness adapter written over `F: Membership` (or `dyn Membership`) serve
/// every filter. The trait is object-safe. Keys are hashed with the
/// filter's own stable [`KeyHasher`]; the `*_hash` methods take hashes made
/// by that hasher (or any uniformly distributed 64-bit hash, used
/// consistently), so a caller can hash once and probe several filters.
///
/// # Examples
///
/// ```
/// use filterlab_core::Membership;
///
/// /// Prints what any filter reports about itself.
/// fn describe(filter: &dyn Membership) -> String {
///     let theory = filter.theoretical_fpp(filter.len() as u64);
///     format!("{} items in {} bytes, FPP {:.2e} given its fill, {theory:?} by its formula",
///             filter.len(), filter.memory_usage(), filter.expected_fpp())
/// }
/// # let _ = describe;
/// ```
pub trait Membership {
    /// The hasher this filter hashes keys with.
    fn hasher(&self) -> &KeyHasher;

    /// Whether a pre-hashed key may be present: never `false` for a key the
    /// filter holds, `true` for any other key with the filter's FPP.
    fn contains_hash(&self, hash: u64) -> bool;

    /// Looks up a batch of pre-hashed keys, writing one answer per hash into
    /// `found` (which must be at least as long as `hashes`; extra entries are
    /// left untouched).
    ///
    /// Filters override this to overlap the memory accesses of a batch.
    fn contains_hashes(&self, hashes: &[u64], found: &mut [bool]) {
        for (answer, &hash) in found.iter_mut().zip(hashes) {
            *answer = self.contains_hash(hash);
        }
    }

    /// The number of items the filter counts as held.
    ///
    /// For a set-like filter (the Bloom filters) an exact count of inserts
    /// that returned `true` (RedisBloom's BF.CARD), never more than the
    /// number of distinct keys inserted. For a multiset filter (counting
    /// Bloom, cuckoo), where inserting a key again adds another copy that a
    /// removal can take away, every accepted insert, duplicates included,
    /// minus every successful removal (CF.INFO's inserted − deleted). For a
    /// filter built from a key set, the distinct key hashes of the set.
    fn len(&self) -> usize;

    /// Whether the filter holds nothing.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of the filter's own storage: what a user pays in memory.
    fn memory_usage(&self) -> usize;

    /// The number of items the configured FPP holds for; `None` when the
    /// filter grows without bound. A filter built from a key set holds
    /// exactly its set.
    fn capacity(&self) -> Option<usize>;

    /// The FPP of this instance given its actual state (for a Bloom filter
    /// with X of m bits set, (X/m)^k): exact for the filter as it is now,
    /// whatever its history (merges included).
    fn expected_fpp(&self) -> f64;

    /// The FPP this configuration's exact formula predicts after `items`
    /// distinct inserts, averaged over all filters of the configuration;
    /// `None` where no formula applies. The statistical tests and the
    /// harness's accuracy gate hold every filter to it. A filter built from
    /// a key set has one FPP whatever `items` is.
    fn theoretical_fpp(&self, items: u64) -> Option<f64>;

    /// Whether `key` may be present.
    fn contains<K: Key + ?Sized>(&self, key: &K) -> bool
    where
        Self: Sized,
    {
        self.contains_hash(self.hasher().hash(key))
    }

    /// Looks up many keys at once, hashing them in batches and using the
    /// filter's batched lookup; one answer per key, in order.
    fn contains_many<I>(&self, keys: I) -> Vec<bool>
    where
        I: IntoIterator,
        I::Item: Key,
        Self: Sized,
    {
        let hasher = *self.hasher();
        let mut found = Vec::new();
        let batched = for_each_batch(keys, &hasher, |hashes| {
            let start = found.len();
            found.resize(start + hashes.len(), false);
            self.contains_hashes(hashes, &mut found[start..]);
            Ok::<_, std::convert::Infallible>(hashes.len())
        });
        let Ok(_) = batched;
        found
    }
}

/// An approximate-membership filter that takes inserts: the query side
/// ([`Membership`]) plus inserts and `clear`.
///
/// The trait is object-safe, and it is everything a caller needs to
/// measure a filter that is filled by inserts: one conformance suite, one
/// statistical check, one benchmark loop and one harness adapter are
/// written once over `F: Filter` (or `dyn Filter`) and serve every such
/// filter. The query methods come from its supertrait [`Membership`]
/// (in scope for `F: Filter` and `dyn Filter`; on a concrete type they
/// need `Membership` imported, or the type's own inherent methods).
///
/// # Examples
///
/// ```
/// use filterlab_core::{Filter, KeyHasher};
///
/// /// Inserts keys and prints what any filter reports about itself.
/// fn fill_and_describe(filter: &mut dyn Filter) -> Result<String, filterlab_core::Error> {
///     let hasher = *filter.hasher();
///     filter.insert_hashes(&[hasher.hash("a"), hasher.hash("b")])?;
///     let theory = filter.theoretical_fpp(filter.len() as u64);
///     Ok(format!("{} items in {} bytes, FPP {:.2e} given its fill, {theory:?} by its formula",
///                filter.len(), filter.memory_usage(), filter.expected_fpp()))
/// }
/// # let _ = fill_and_describe;
/// ```
pub trait Filter: Membership {
    /// Adds a pre-hashed key.
    ///
    /// Returns `Ok(true)` when the filter did not already report the key as
    /// present (RedisBloom's BF.ADD semantics), and counts it in
    /// [`len`](Membership::len).
    ///
    /// # Errors
    ///
    /// [`crate::ErrorKind::Full`] when the filter cannot take the key without
    /// losing an item; the filter is then unchanged.
    fn insert_hash(&mut self, hash: u64) -> Result<bool, Error>;

    /// Adds a batch of pre-hashed keys and returns how many were new.
    ///
    /// Filters override this to overlap the memory accesses of a batch; an
    /// override must leave the filter exactly as [`insert_hash`](Self::insert_hash)
    /// on each key in order would (the conformance suite compares them).
    ///
    /// # Errors
    ///
    /// As [`insert_hash`](Self::insert_hash), at the first key refused: the
    /// keys before it stay inserted, it and the keys after it are not.
    fn insert_hashes(&mut self, hashes: &[u64]) -> Result<usize, Error> {
        let mut new = 0;
        for &hash in hashes {
            new += usize::from(self.insert_hash(hash)?);
        }
        Ok(new)
    }

    /// Removes every item, keeping the configuration.
    fn clear(&mut self);
}

/// A filter that can delete items it holds.
pub trait RemovableFilter: Filter {
    /// Removes one occurrence of a pre-hashed key. Returns `Ok(false)` when
    /// the key is not present.
    ///
    /// Only remove keys that were inserted: removing a key that merely tests
    /// positive (a false positive) can remove another key's trace and cause
    /// false negatives.
    ///
    /// # Errors
    ///
    /// Filter-specific, e.g. a saturated counter that cannot be decremented
    /// safely; the filter is then unchanged.
    fn remove_hash(&mut self, hash: u64) -> Result<bool, Error>;

    /// Removes one occurrence of `key`; see [`remove_hash`](Self::remove_hash).
    ///
    /// # Errors
    ///
    /// As [`remove_hash`](Self::remove_hash).
    fn remove<K: Key + ?Sized>(&mut self, key: &K) -> Result<bool, Error>
    where
        Self: Sized,
    {
        let hash = self.hasher().hash(key);
        self.remove_hash(hash)
    }
}

/// Filters of the same configuration that combine set-wise.
pub trait Merge: Filter + Sized {
    /// Makes `self` hold every key of `self` or `other`.
    ///
    /// # Errors
    ///
    /// [`crate::ErrorKind::Incompatible`] unless both filters have the same
    /// configuration (sizes, hash count, hasher and seed); `self` is then unchanged.
    fn union(&mut self, other: &Self) -> Result<(), Error>;

    /// Makes `self` answer `true` only where both `self` and `other` do. Keys
    /// inserted into both stay present; the FPP is at most that of either.
    ///
    /// # Errors
    ///
    /// As [`union`](Self::union).
    fn intersect(&mut self, other: &Self) -> Result<(), Error>;
}
