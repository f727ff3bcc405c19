//! [`FilterlabSubject`]: any filterlab [`Filter`] as a [`Subject`], through
//! the trait alone; [`StaticSubject`]: any filterlab filter built once from
//! its keys ([`BuildFromKeys`]), the same way.

use filterlab_core::{
    BATCH, BuildFromKeys, BuildReport, Built, Error, Filter, KeyHasher, Membership, RemovableFilter,
};

use crate::subject::{Mode, Subject, Theory};

/// Inserts keys into a filter through a shared reference, in a [`Mode`]
/// (e.g. `AtomicBloomFilter::insert` key by key, or its batched
/// `insert_many`); returns how many were new.
pub type SharedInsert<F> = fn(&F, &[u64], Mode) -> usize;

/// Spreads keys over threads that each call a [`SharedInsert`].
type Spread<F> = fn(&F, &[u64], usize, Mode, SharedInsert<F>) -> u64;

/// Removes one pre-hashed key.
type Remove<F> = fn(&mut F, u64) -> Result<bool, Error>;

/// A filterlab filter as a [`Subject`]. Keys are hashed with the filter's
/// own hasher; [`Mode::OneKey`] goes through `insert_hash` / `contains_hash`,
/// [`Mode::Batched`] through `insert_hashes` / `contains_hashes`. The
/// theory is the filter's `theoretical_fpp` (exact unless
/// [`approximate_theory`](Self::approximate_theory) says otherwise), the
/// fill-conditional FPP its `expected_fpp`.
///
/// Removal and concurrent inserts are opt-in: [`removable`](Self::removable)
/// for a [`RemovableFilter`], [`concurrent`](Self::concurrent) with the
/// filter's shared-reference insert.
pub struct FilterlabSubject<F> {
    filter: F,
    remove: Option<Remove<F>>,
    concurrent: Option<(SharedInsert<F>, Spread<F>)>,
    theory_exact: bool,
}

impl<F: Filter + 'static> FilterlabSubject<F> {
    /// Wraps `filter`.
    pub fn new(filter: F) -> Self {
        Self {
            filter,
            remove: None,
            concurrent: None,
            theory_exact: true,
        }
    }

    /// Its `theoretical_fpp` is an approximation or a bound, not exact (a
    /// cuckoo filter's a-priori formula): reported as
    /// [`Theory::Approximate`], and no gate holds the filter to it.
    #[must_use]
    pub fn approximate_theory(mut self) -> Self {
        self.theory_exact = false;
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

    /// Measures inserts from several threads into the one filter too, each
    /// thread calling `insert` on its share of the keys.
    #[must_use]
    pub fn concurrent(mut self, insert: SharedInsert<F>) -> Self
    where
        F: Sync,
    {
        self.concurrent = Some((insert, insert_from_threads::<F>));
        self
    }

    /// As a boxed subject.
    pub fn boxed(self) -> Box<dyn Subject> {
        Box::new(self)
    }
}

/// Inserts `keys` into `filter` from `threads` scoped threads, each a
/// contiguous share.
fn insert_from_threads<F: Sync>(
    filter: &F,
    keys: &[u64],
    threads: usize,
    mode: Mode,
    insert: SharedInsert<F>,
) -> u64 {
    let share = keys.len().div_ceil(threads.max(1)).max(1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = keys
            .chunks(share)
            .map(|part| scope.spawn(move || insert(filter, part, mode) as u64))
            .collect();
        workers
            .into_iter()
            .map(|worker| {
                worker
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p))
            })
            .sum()
    })
}

/// The hashes of `chunk` (at most [`BATCH`] keys), in `buffer`.
fn hash_chunk<'a>(hasher: &KeyHasher, chunk: &[u64], buffer: &'a mut [u64; BATCH]) -> &'a [u64] {
    let hashes = &mut buffer[..chunk.len()];
    for (hash, key) in hashes.iter_mut().zip(chunk) {
        *hash = hasher.hash(key);
    }
    hashes
}

/// How many of `keys` `filter` reports present: each key hashed with the
/// filter's hasher, then looked up one at a time ([`Mode::OneKey`]) or
/// [`BATCH`] at a time through `contains_hashes` ([`Mode::Batched`]).
fn count_contained<M: Membership>(filter: &M, keys: &[u64], mode: Mode) -> u64 {
    let hasher = *filter.hasher();
    match mode {
        Mode::OneKey => keys
            .iter()
            .filter(|key| filter.contains_hash(hasher.hash(*key)))
            .count() as u64,
        Mode::Batched => {
            let mut buffer = [0u64; BATCH];
            let mut found = [false; BATCH];
            let mut count = 0;
            for chunk in keys.chunks(BATCH) {
                let hashes = hash_chunk(&hasher, chunk, &mut buffer);
                let found = &mut found[..chunk.len()];
                filter.contains_hashes(hashes, found);
                count += found.iter().filter(|&&hit| hit).count() as u64;
            }
            count
        }
    }
}

/// The exact theory of a filter's `theoretical_fpp`.
fn exact_theory<M: Membership>(filter: &M, items: u64) -> Option<Theory> {
    filter.theoretical_fpp(items).map(Theory::Exact)
}

impl<F: Filter> FilterlabSubject<F> {
    /// Inserts one chunk of at most [`BATCH`] keys through `insert_hashes`.
    fn insert_batch(&mut self, chunk: &[u64], offset: usize, refused: &mut Vec<usize>) -> u64 {
        let mut buffer = [0u64; BATCH];
        let hashes = hash_chunk(self.filter.hasher(), chunk, &mut buffer);
        let before = self.filter.len();
        if let Ok(new) = self.filter.insert_hashes(hashes) {
            return new as u64;
        }
        // The batch stopped at a refused key. Redo it key by key to learn
        // which keys were refused: a key the filter already reports present
        // is not inserted again, so the keys before the refusal are
        // unchanged, and `len` counts the new ones.
        for (position, &hash) in hashes.iter().enumerate() {
            if self.filter.insert_hash(hash).is_err() {
                refused.push(offset + position);
            }
        }
        self.filter.len().saturating_sub(before) as u64
    }
}

/// The one-key insert loop, the shape of `PeerSubject`'s arm for arm.
/// Out of line, as each peer's loop is its own function and as a user's
/// loop over a filter is: inlined into `insert_keys`, the loop reached the
/// filter at an offset in the subject (a second pointer kept live across
/// each call) and shared its exit with the batched arm and the hashers'
/// unswitched copies, so the count of new keys took two register moves per
/// key. Callgrind, BlockedBloomFilter's one-key insert: 51 → 46
/// instructions, its kernel's 29 unchanged.
#[inline(never)]
fn insert_one_at_a_time<F: Filter>(filter: &mut F, keys: &[u64], refused: &mut Vec<usize>) -> u64 {
    let hasher = *filter.hasher();
    let mut new = 0;
    for (position, key) in keys.iter().enumerate() {
        match filter.insert_hash(hasher.hash(key)) {
            Ok(true) => new += 1,
            Ok(false) => {}
            Err(_) => refused.push(position),
        }
    }
    new
}

impl<F: Filter> Subject for FilterlabSubject<F> {
    fn has_batch_api(&self) -> bool {
        true
    }

    fn insert_keys(&mut self, keys: &[u64], mode: Mode, refused: &mut Vec<usize>) -> u64 {
        match mode {
            Mode::OneKey => insert_one_at_a_time(&mut self.filter, keys, refused),
            Mode::Batched => keys
                .chunks(BATCH)
                .enumerate()
                .map(|(index, chunk)| self.insert_batch(chunk, index * BATCH, refused))
                .sum(),
        }
    }

    fn count_contained(&self, keys: &[u64], mode: Mode) -> u64 {
        count_contained(&self.filter, keys, mode)
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

    fn insert_keys_concurrently(&self, keys: &[u64], threads: usize, mode: Mode) -> Option<u64> {
        let (insert, spread) = self.concurrent?;
        Some(spread(&self.filter, keys, threads, mode, insert))
    }

    fn clear(&mut self) -> bool {
        self.filter.clear();
        true
    }

    fn memory_usage(&self) -> usize {
        self.filter.memory_usage()
    }

    fn theory(&self, items: u64) -> Option<Theory> {
        let theory = exact_theory(&self.filter, items)?;
        Some(if self.theory_exact {
            theory
        } else {
            Theory::Approximate(theory.fpp())
        })
    }

    fn fill_fpp(&self) -> Option<f64> {
        Some(self.filter.expected_fpp())
    }
}

/// A filterlab filter built once from its whole key set, by any
/// [`BuildFromKeys`] builder, as a [`Subject`]: the one path every static
/// filter takes. Lookups as [`FilterlabSubject`] makes them (one key at a
/// time, or [`BATCH`] hashes at a time through `contains_hashes`); it
/// refuses every insert and cannot be emptied; its theory is the filter's
/// exact `theoretical_fpp`, the fill-conditional FPP its `expected_fpp`.
pub struct StaticSubject<F> {
    filter: F,
    report: BuildReport,
}

impl<F: Membership + 'static> StaticSubject<F> {
    /// The filter `builder` builds from `keys` (hashed with its hasher).
    ///
    /// # Errors
    ///
    /// As the builder's [`BuildFromKeys::build_from_hashes`].
    pub fn build<B: BuildFromKeys<Filter = F>>(builder: &B, keys: &[u64]) -> Result<Self, Error> {
        let Built { filter, report, .. } = builder.build_from_keys(keys)?;
        Ok(Self { filter, report })
    }

    /// What the build reported (its retries, the duplicates it held once).
    pub fn report(&self) -> BuildReport {
        self.report
    }

    /// As a boxed subject.
    pub fn boxed(self) -> Box<dyn Subject> {
        Box::new(self)
    }
}

impl<F: Membership> Subject for StaticSubject<F> {
    fn has_batch_api(&self) -> bool {
        true
    }

    /// Takes none: every position is refused.
    fn insert_keys(&mut self, keys: &[u64], _mode: Mode, refused: &mut Vec<usize>) -> u64 {
        refused.extend(0..keys.len());
        0
    }

    fn count_contained(&self, keys: &[u64], mode: Mode) -> u64 {
        count_contained(&self.filter, keys, mode)
    }

    fn remove_keys(&mut self, _keys: &[u64]) -> Option<u64> {
        None
    }

    fn insert_keys_concurrently(&self, _: &[u64], _: usize, _: Mode) -> Option<u64> {
        None
    }

    fn clear(&mut self) -> bool {
        false
    }

    fn memory_usage(&self) -> usize {
        self.filter.memory_usage()
    }

    fn theory(&self, items: u64) -> Option<Theory> {
        exact_theory(&self.filter, items)
    }

    fn fill_fpp(&self) -> Option<f64> {
        Some(self.filter.expected_fpp())
    }

    fn build_retries(&self) -> Option<u32> {
        Some(self.report.retries)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::sync::Mutex;

    use filterlab_core::keys::insert_key;
    use filterlab_core::{ErrorKind, Membership};

    use super::*;

    /// Stores key hashes exactly, up to a capacity; deletes.
    struct ExactSet {
        hashes: Mutex<BTreeSet<u64>>,
        hasher: KeyHasher,
        capacity: usize,
    }

    impl ExactSet {
        fn new(capacity: usize) -> Self {
            Self {
                hashes: Mutex::new(BTreeSet::new()),
                hasher: KeyHasher::new(3),
                capacity,
            }
        }

        fn insert_shared(&self, keys: &[u64], _mode: Mode) -> usize {
            let mut hashes = self.hashes.lock().unwrap();
            keys.iter()
                .filter(|key| hashes.insert(self.hasher.hash(*key)))
                .count()
        }
    }

    impl Membership for ExactSet {
        fn hasher(&self) -> &KeyHasher {
            &self.hasher
        }
        fn contains_hash(&self, hash: u64) -> bool {
            self.hashes.lock().unwrap().contains(&hash)
        }
        fn len(&self) -> usize {
            self.hashes.lock().unwrap().len()
        }
        fn memory_usage(&self) -> usize {
            8 * self.capacity
        }
        fn capacity(&self) -> Option<usize> {
            Some(self.capacity)
        }
        fn expected_fpp(&self) -> f64 {
            0.0
        }
        fn theoretical_fpp(&self, _: u64) -> Option<f64> {
            Some(0.0)
        }
    }

    impl Filter for ExactSet {
        fn insert_hash(&mut self, hash: u64) -> Result<bool, Error> {
            let hashes = self.hashes.get_mut().unwrap();
            if !hashes.contains(&hash) && hashes.len() == self.capacity {
                return Err(Error::new(ErrorKind::Full, "full"));
            }
            Ok(hashes.insert(hash))
        }
        fn clear(&mut self) {
            self.hashes.get_mut().unwrap().clear();
        }
    }

    impl RemovableFilter for ExactSet {
        fn remove_hash(&mut self, hash: u64) -> Result<bool, Error> {
            Ok(self.hashes.get_mut().unwrap().remove(&hash))
        }
    }

    fn keys(count: u64) -> Vec<u64> {
        (0..count).map(|i| insert_key(3, i)).collect()
    }

    /// A set of `capacity` offered 1000 keys in `mode`: the subject, the
    /// keys, how many were new and the refused positions.
    fn offered(capacity: usize, mode: Mode) -> (Box<dyn Subject>, Vec<u64>, u64, Vec<usize>) {
        let mut subject = FilterlabSubject::new(ExactSet::new(capacity)).boxed();
        let keys = keys(1000);
        let mut refused = Vec::new();
        let new = subject.insert_keys(&keys, mode, &mut refused);
        (subject, keys, new, refused)
    }

    #[test]
    fn both_modes_insert_and_find_the_same_keys() {
        for mode in Mode::ALL {
            let (mut subject, keys, new, mut refused) = offered(1000, mode);
            assert_eq!((new, refused.len()), (1000, 0));
            assert_eq!(subject.insert_keys(&keys[..10], mode, &mut refused), 0);
            for lookup in Mode::ALL {
                assert_eq!(subject.count_contained(&keys, lookup), 1000);
            }
            assert_eq!(subject.theory(1000), Some(Theory::Exact(0.0)));
            assert_eq!(subject.remove_keys(&keys), None);
            assert!(subject.clear());
            assert_eq!(subject.count_contained(&keys, mode), 0);
        }
    }

    #[test]
    fn refused_keys_are_reported_by_position_in_both_modes() {
        for mode in Mode::ALL {
            let (subject, keys, new, refused) = offered(600, mode);
            assert_eq!(new, 600);
            assert_eq!(refused, (600..1000).collect::<Vec<_>>(), "{mode:?}");
            assert_eq!(subject.count_contained(&keys[..600], mode), 600);
        }
    }

    /// Any builder's filter through the one static path: every key of
    /// the set found in both modes, nothing inserted, its exact theory and
    /// the build's retries reported.
    #[test]
    fn static_filters_are_built_once_and_refuse_inserts() {
        use filterlab_static::{BinaryFuseFilter, RibbonFilter};
        let keys = keys(3000);
        let subjects = [
            StaticSubject::build(&RibbonFilter::with_fpp(0.01).seed(3), &keys)
                .unwrap()
                .boxed(),
            StaticSubject::build(&BinaryFuseFilter::<u16, 4>::builder().seed(3), &keys)
                .unwrap()
                .boxed(),
        ];
        for mut subject in subjects {
            assert!(subject.has_batch_api());
            for mode in Mode::ALL {
                assert_eq!(subject.count_contained(&keys, mode), 3000);
            }
            let theory = subject.theory(3000).unwrap();
            assert!(theory.is_exact() && theory.fpp() <= 0.01, "{theory:?}");
            assert_eq!(subject.build_retries().map(|r| r < 32), Some(true));
            let mut refused = Vec::new();
            assert_eq!(
                subject.insert_keys(&keys[..4], Mode::Batched, &mut refused),
                0
            );
            assert_eq!(refused, [0, 1, 2, 3]);
            assert!(!subject.clear());
            assert_eq!(subject.remove_keys(&keys), None);
            assert_eq!(
                subject.insert_keys_concurrently(&keys, 2, Mode::OneKey),
                None
            );
            // No filter holds a set below the bound of log2(1/p) bits a key.
            let bits = subject.memory_usage() as f64 * 8.0 / 3000.0;
            assert!(bits > -theory.fpp().log2(), "{bits}");
        }
    }

    #[test]
    fn removal_and_concurrent_inserts_are_opt_in() {
        let keys = keys(1000);
        let make = || {
            FilterlabSubject::new(ExactSet::new(1000))
                .removable()
                .concurrent(ExactSet::insert_shared)
        };
        for mode in Mode::ALL {
            assert_eq!(make().insert_keys_concurrently(&keys, 3, mode), Some(1000));
        }
        let subject = make();
        subject.insert_keys_concurrently(&keys, 2, Mode::OneKey);
        let mut subject = subject.boxed();
        assert_eq!(subject.count_contained(&keys, Mode::Batched), 1000);
        assert_eq!(subject.remove_keys(&keys[..400]), Some(400));
        assert_eq!(subject.count_contained(&keys, Mode::OneKey), 600);
        let plain = FilterlabSubject::new(ExactSet::new(10)).boxed();
        assert_eq!(plain.insert_keys_concurrently(&keys, 2, Mode::OneKey), None);
    }
}
