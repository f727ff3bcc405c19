//! What every experiment measures through: the [`Subject`] trait, and the two
//! adapters that make a filterlab [`Filter`] or a peer crate's filter one.
//!
//! Experiments hold `Box<dyn Subject>` and never know which filter is behind
//! it, so one code path measures every filter. Keys are `u64`s; each subject
//! hashes them the way its crate does (filterlab filters with their seeded
//! XXH3 [`KeyHasher`](filterlab_core::KeyHasher), peers with their own or
//! their fastest hasher), so speed comparisons include hashing.

use filterlab_core::{Error as FilterError, Filter, RemovableFilter};

/// Keys are hashed and handed to a filter's batch hooks in chunks of this many.
const BATCH: usize = 256;

/// The workload a filter is built for: its capacity, its target FPP, and the
/// seed of its hasher (and of the keys it will see).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Workload {
    /// Distinct items the filter must hold at the target FPP.
    pub items: u64,
    /// The target false-positive probability.
    pub fpp: f64,
    /// The seed for the filter's hasher, where it has one.
    pub seed: u64,
}

/// An FPP predicted by a formula, and how far the formula can be trusted.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Theory {
    /// The predicted FPP.
    pub fpp: f64,
    /// Whether the formula is exact for this design under ideal hashing (the
    /// accuracy gate holds filterlab filters to exact formulas only).
    pub exact: bool,
}

impl Theory {
    /// An exact prediction.
    pub fn exact(fpp: f64) -> Self {
        Self { fpp, exact: true }
    }

    /// An approximate prediction.
    pub fn approximate(fpp: f64) -> Self {
        Self { fpp, exact: false }
    }
}

/// A filter under measurement, over `u64` keys.
pub trait Subject {
    /// Inserts `keys` in order. The positions (in `keys`) of keys the filter
    /// refused, because it is full, are appended to `refused`.
    fn insert_keys(&mut self, keys: &[u64], refused: &mut Vec<usize>);

    /// How many of `keys` the filter reports as present.
    fn count_contained(&self, keys: &[u64]) -> u64;

    /// Removes `keys` (each inserted earlier) and returns how many removals
    /// succeeded; `None` when the filter cannot delete.
    fn remove_keys(&mut self, keys: &[u64]) -> Option<u64>;

    /// Bytes of the filter's storage.
    fn memory_usage(&self) -> usize;

    /// The FPP the filter's design predicts after `load` distinct inserts into
    /// this configuration; `None` when no formula is known.
    fn theory(&self, load: u64) -> Option<Theory>;

    /// The FPP conditional on this instance's actual state (for a Bloom
    /// filter (X/m)^k with X bits set), where the filter can tell.
    fn fill_fpp(&self) -> Option<f64>;

    /// Inserts `keys` from `threads` threads at once, each a contiguous
    /// share; `None` when the filter does not take concurrent inserts.
    fn insert_keys_concurrently(&self, _keys: &[u64], _threads: usize) -> Option<()> {
        None
    }
}

/// A filter whose inserts take `&self`, so threads can share it.
pub trait SharedInsert: Filter + Sync {
    /// Inserts keys through a shared reference, with the filter's batched
    /// (prefetching) insert.
    fn insert_shared(&self, keys: &[u64]);
}

impl SharedInsert for filterlab_bloom::AtomicBloomFilter {
    fn insert_shared(&self, keys: &[u64]) {
        self.insert_many(keys);
    }
}

/// Inserts `keys` into `filter` from `threads` scoped threads, each a
/// contiguous share.
fn insert_from_threads<F: SharedInsert>(filter: &F, keys: &[u64], threads: usize) {
    let share = keys.len().div_ceil(threads.max(1)).max(1);
    std::thread::scope(|scope| {
        for part in keys.chunks(share) {
            scope.spawn(move || filter.insert_shared(part));
        }
    });
}

/// Inserts into a shared filter from several threads.
type ConcurrentInsertFn<F> = fn(&F, &[u64], usize);

/// Removes one pre-hashed key from a filter.
type RemoveFn<F> = fn(&mut F, u64) -> Result<bool, FilterError>;

/// A filterlab filter as a [`Subject`]: keys are hashed with the filter's own
/// hasher and go through its batch hooks (`insert_hashes`, `contains_hashes`).
pub struct FilterlabSubject<F> {
    filter: F,
    remove: Option<RemoveFn<F>>,
    concurrent: Option<ConcurrentInsertFn<F>>,
}

impl<F: Filter + 'static> FilterlabSubject<F> {
    /// Wraps `filter`.
    pub fn new(filter: F) -> Self {
        Self {
            filter,
            remove: None,
            concurrent: None,
        }
    }

    /// Measures inserts from several threads too.
    #[must_use]
    pub fn concurrent(mut self) -> Self
    where
        F: SharedInsert,
    {
        self.concurrent = Some(insert_from_threads::<F>);
        self
    }

    /// Measures removal too.
    #[must_use]
    pub fn removable(mut self) -> Self
    where
        F: RemovableFilter,
    {
        self.remove = Some(<F as RemovableFilter>::remove_hash);
        self
    }

    /// As a boxed subject.
    pub fn boxed(self) -> Box<dyn Subject> {
        Box::new(self)
    }
}

impl<F: Filter> Subject for FilterlabSubject<F> {
    fn insert_keys(&mut self, keys: &[u64], refused: &mut Vec<usize>) {
        let hasher = *self.filter.hasher();
        let mut hashes = [0u64; BATCH];
        for (chunk_index, chunk) in keys.chunks(BATCH).enumerate() {
            let hashes = &mut hashes[..chunk.len()];
            for (hash, key) in hashes.iter_mut().zip(chunk) {
                *hash = hasher.hash(key);
            }
            if self.filter.insert_hashes(hashes).is_err() {
                // The batch stopped at a refused key; redo it key by key to
                // learn which keys were refused (re-inserting is harmless).
                for (offset, &hash) in hashes.iter().enumerate() {
                    if self.filter.insert_hash(hash).is_err() {
                        refused.push(chunk_index * BATCH + offset);
                    }
                }
            }
        }
    }

    fn count_contained(&self, keys: &[u64]) -> u64 {
        let hasher = *self.filter.hasher();
        let mut hashes = [0u64; BATCH];
        let mut found = [false; BATCH];
        let mut count = 0;
        for chunk in keys.chunks(BATCH) {
            let hashes = &mut hashes[..chunk.len()];
            for (hash, key) in hashes.iter_mut().zip(chunk) {
                *hash = hasher.hash(key);
            }
            let found = &mut found[..chunk.len()];
            self.filter.contains_hashes(hashes, found);
            count += found.iter().filter(|&&hit| hit).count() as u64;
        }
        count
    }

    fn remove_keys(&mut self, keys: &[u64]) -> Option<u64> {
        let remove = self.remove?;
        let hasher = *self.filter.hasher();
        let removed = keys
            .iter()
            .filter(|key| remove(&mut self.filter, hasher.hash(*key)).unwrap_or(false))
            .count();
        Some(removed as u64)
    }

    fn memory_usage(&self) -> usize {
        self.filter.memory_usage()
    }

    fn theory(&self, load: u64) -> Option<Theory> {
        self.filter.theoretical_fpp(load).map(Theory::exact)
    }

    fn fill_fpp(&self) -> Option<f64> {
        Some(self.filter.expected_fpp())
    }

    fn insert_keys_concurrently(&self, keys: &[u64], threads: usize) -> Option<()> {
        self.concurrent
            .map(|insert| insert(&self.filter, keys, threads))
    }
}

/// A peer crate's filter, key by key. [`PeerSubject`] turns it into a
/// [`Subject`].
pub trait PeerFilter {
    /// Whether [`remove`](Self::remove) is supported.
    const REMOVABLE: bool = false;

    /// Inserts `key`; `false` when the filter refused it.
    fn insert(&mut self, key: u64) -> bool;

    /// Whether `key` may be present.
    fn contains(&self, key: u64) -> bool;

    /// Removes `key`; whether it was found. Only called when
    /// [`REMOVABLE`](Self::REMOVABLE).
    fn remove(&mut self, _key: u64) -> bool {
        false
    }

    /// Bytes of storage.
    fn memory_usage(&self) -> usize;

    /// The FPP the design predicts after `load` distinct inserts, if known.
    fn theory(&self, _load: u64) -> Option<Theory> {
        None
    }

    /// The FPP conditional on the instance's state, if computable.
    fn fill_fpp(&self) -> Option<f64> {
        None
    }
}

/// A [`PeerFilter`] as a [`Subject`]: the loops are monomorphized per peer so
/// each key costs one direct call of the peer's own API.
pub struct PeerSubject<P>(pub P);

impl<P: PeerFilter + 'static> PeerSubject<P> {
    /// As a boxed subject.
    pub fn boxed(peer: P) -> Box<dyn Subject> {
        Box::new(Self(peer))
    }
}

impl<P: PeerFilter> Subject for PeerSubject<P> {
    fn insert_keys(&mut self, keys: &[u64], refused: &mut Vec<usize>) {
        for (index, &key) in keys.iter().enumerate() {
            if !self.0.insert(key) {
                refused.push(index);
            }
        }
    }

    fn count_contained(&self, keys: &[u64]) -> u64 {
        keys.iter().filter(|&&key| self.0.contains(key)).count() as u64
    }

    fn remove_keys(&mut self, keys: &[u64]) -> Option<u64> {
        if !P::REMOVABLE {
            return None;
        }
        Some(keys.iter().filter(|&&key| self.0.remove(key)).count() as u64)
    }

    fn memory_usage(&self) -> usize {
        self.0.memory_usage()
    }

    fn theory(&self, load: u64) -> Option<Theory> {
        self.0.theory(load)
    }

    fn fill_fpp(&self) -> Option<f64> {
        self.0.fill_fpp()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use filterlab_bloom::BloomFilter;
    use filterlab_core::keys::insert_key;

    #[test]
    fn filterlab_subject_holds_what_it_inserts() {
        let filter = BloomFilter::with_fpp(0.01)
            .expected_items(1000)
            .seed(3)
            .build()
            .unwrap();
        let mut subject = FilterlabSubject::new(filter).boxed();
        let keys: Vec<u64> = (0..1000).map(|i| insert_key(3, i)).collect();
        let mut refused = Vec::new();
        subject.insert_keys(&keys, &mut refused);
        assert!(refused.is_empty());
        assert_eq!(subject.count_contained(&keys), 1000);
        assert!(subject.remove_keys(&keys).is_none());
        let theory = subject.theory(1000).unwrap();
        assert!(theory.exact && theory.fpp <= 0.01);
        let fill = subject.fill_fpp().unwrap();
        assert!(fill > 0.002 && fill < 0.03, "{fill}");
    }
}
