//! [`Exercise`] for every filter of the workspace: which capabilities each
//! has (merging, removing, how `len` counts), and the calls only it has.
//! The counting filters are one implementation for both layouts and every
//! counter width, the scalable filter one for both layer types.

use filterlab_bloom::{
    AtomicBloomFilter, BlockedBloomFilter, BloomFilter, Kernel, SplitBlockBloomFilter,
};
use filterlab_core::{Error, ErrorKind, Filter, Membership, Persist, RemovableFilter};
use filterlab_counting_bloom::{Blocked, CountingBloom, Layout, Standard};
use filterlab_cuckoo::CuckooFilter;
use filterlab_scalable::{Layer, ScalableBloomFilter};

use crate::exercise::{
    Exercise, GROW_LIMIT_BYTES, MergeOp, keys_from, merge_with, persists, remove_with, timed,
};

/// The hooks of a filter that merges and takes keys through `Extend`.
macro_rules! merges_and_extends {
    () => {
        fn merge(&mut self, other: &Self, op: MergeOp) -> Option<Result<(), Error>> {
            merge_with(self, other, op)
        }

        fn insert_keys(&mut self, keys: &[u64]) -> Result<Option<usize>, Error> {
            self.extend(keys.iter().copied());
            Ok(None)
        }
    };
}

/// [`Exercise`] for a filterlab-bloom filter: merges, `Extend`, the
/// accessors they share, then `$more(filter, keys)`.
macro_rules! bloom_filter {
    ($filter:ty, $more:expr) => {
        impl Exercise for $filter {
            merges_and_extends!();

            fn exercise_more(&self, keys: &[u64]) {
                let _ = (self.set_bits(), self.fill_ratio(), self.estimated_len());
                let _ = (self.num_bits(), self.num_hashes(), self.target_fpp());
                let more: fn(&$filter, &[u64]) = $more;
                more(self, keys);
            }
        }
    };
}

bloom_filter!(BloomFilter, atomic_twin);
bloom_filter!(AtomicBloomFilter, shared_inserts);
bloom_filter!(BlockedBloomFilter, kernels);
bloom_filter!(SplitBlockBloomFilter, split_kernels);

/// The classic estimate; the atomic twin answers the same and converts
/// back unchanged.
fn atomic_twin(filter: &BloomFilter, keys: &[u64]) {
    let _ = timed("classic_fpp", filter, || {
        filter.classic_fpp(filter.len() as u64)
    });
    let atomic = filter.clone().into_atomic();
    for key in keys {
        assert_eq!(atomic.contains(key), filter.contains(key));
    }
    assert_eq!(&atomic.snapshot(), filter);
    assert_eq!(&atomic.freeze(), filter);
}

/// Inserts through a shared reference, as from many threads, count each
/// new key exactly; a snapshot answers the same.
fn shared_inserts(filter: &AtomicBloomFilter, keys: &[u64]) {
    let shared = filter.clone();
    let before = shared.len();
    let mut new = 0usize;
    for key in keys {
        new += usize::from(shared.insert(&key.wrapping_add(0x5555)));
    }
    assert_eq!(
        Some(shared.len()),
        before.checked_add(new),
        "the atomic counter must count each new insert exactly"
    );
    let plain: BloomFilter = filter.snapshot();
    for key in keys {
        assert_eq!(plain.contains(key), filter.contains(key));
    }
}

/// The classic estimate; every kernel this CPU runs gives the same answers.
fn kernels(filter: &BlockedBloomFilter, keys: &[u64]) {
    let _ = timed("classic_fpp", filter, || {
        filter.classic_fpp(filter.len() as u64)
    });
    let _ = filter.num_blocks();
    kernels_agree(filter, keys, BlockedBloomFilter::set_kernel);
}

/// Every kernel answers as the one the split-block filter was read with.
fn split_kernels(filter: &SplitBlockBloomFilter, keys: &[u64]) {
    let _ = filter.num_blocks();
    kernels_agree(filter, keys, SplitBlockBloomFilter::set_kernel);
}

/// Every kernel this CPU runs, set on a copy by `set_kernel`, answers as
/// `filter` does, in a batch and one key at a time.
fn kernels_agree<F: Filter + Clone>(
    filter: &F,
    keys: &[u64],
    set_kernel: fn(&mut F, Kernel) -> Result<(), Error>,
) {
    let answers = filter.contains_many(keys.iter().copied());
    for kernel in [Kernel::Scalar, Kernel::Avx2] {
        if !kernel.is_available() {
            continue;
        }
        let mut other = filter.clone();
        if set_kernel(&mut other, kernel).is_ok() {
            assert_eq!(
                other.contains_many(keys.iter().copied()),
                answers,
                "{kernel:?}"
            );
            let one_by_one: Vec<bool> = keys.iter().map(|key| other.contains(key)).collect();
            assert_eq!(one_by_one, answers, "{kernel:?} one key at a time");
        }
    }
}

/// What differs between the counting layouts: only the standard one
/// converts to a `BloomFilter`.
pub trait CountingLayout: Layout {
    /// Checks `to_bloom` where the layout has it.
    fn check_to_bloom<const BITS: u32>(filter: &CountingBloom<Self, BITS>, keys: &[u64]);
}

impl CountingLayout for Standard {
    /// The equivalent Bloom filter: same size, k and hasher, the same
    /// answer for every key, never more items. Documented to fail only for
    /// memory (`TooLarge`).
    fn check_to_bloom<const BITS: u32>(filter: &CountingBloom<Self, BITS>, keys: &[u64]) {
        let bloom = match filter.to_bloom() {
            Ok(bloom) => bloom,
            Err(err) if err.kind() == ErrorKind::TooLarge => return,
            Err(err) => panic!("to_bloom failed: {err}"),
        };
        assert_eq!(bloom.num_bits(), filter.num_counters());
        assert_eq!(bloom.num_hashes(), filter.num_hashes());
        assert_eq!(bloom.hasher(), filter.hasher());
        assert!(bloom.len() <= filter.len(), "to_bloom counts more items");
        let probes = keys
            .iter()
            .flat_map(|&key| keys_from(key.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
        for key in keys.iter().copied().chain(probes) {
            assert_eq!(
                bloom.contains(&key),
                filter.contains(&key),
                "to_bloom answers differently"
            );
        }
    }
}

impl CountingLayout for Blocked {
    fn check_to_bloom<const BITS: u32>(_: &CountingBloom<Self, BITS>, _: &[u64]) {}
}

impl<L: CountingLayout, const BITS: u32> Exercise for CountingBloom<L, BITS> {
    const MULTISET: bool = true;

    merges_and_extends!();

    fn try_remove(&mut self, hash: u64) -> Option<Result<bool, Error>> {
        remove_with(self, hash)
    }

    fn exercise_more(&self, keys: &[u64]) {
        assert_eq!(self.counter_bits(), BITS);
        assert_eq!(u64::from(self.counter_max()), (1 << BITS) - 1);
        assert_eq!(Persist::config(self), self.config());
        let (saturated, nonzero) = (self.saturated_counters(), self.nonzero_counters());
        assert!(saturated <= nonzero && nonzero <= self.num_counters());
        assert!((0.0..=1.0).contains(&self.fill_ratio()));
        for key in keys {
            let count = self.count(key);
            assert!(count <= self.counter_max());
            assert_eq!(count > 0, self.contains(key), "count and contains differ");
        }
        let overflow = timed("overflow_probability", self, || self.overflow_probability());
        assert!((0.0..=1.0).contains(&overflow), "overflow {overflow}");
        let len = self.len() as u64;
        let overflow = timed("overflow_probability_at", self, || {
            self.overflow_probability_at(len)
        });
        assert!((0.0..=1.0).contains(&overflow), "overflow {overflow}");

        // The inherent batch calls: inserting keys and removing them again
        // restores the filter exactly, unless an insert saturated a counter
        // (which is then never decremented).
        let mut copy = self.clone();
        copy.insert_many(keys.iter().copied());
        assert_eq!(copy.len(), self.len().saturating_add(keys.len()));
        assert!(keys.iter().all(|key| copy.count(key) >= 1));
        let saturated_by_inserts = copy.saturated_counters() != saturated;
        let full = copy.clone();
        persists(&full, "insert_many");
        assert_eq!(
            copy.remove_many(keys.iter().copied()),
            keys.len(),
            "removing inserted keys"
        );
        persists(&copy, "insert_many and remove_many");
        if !saturated_by_inserts && self.len() < usize::MAX - keys.len() {
            assert!(&copy == self, "insert then remove changed the filter");
        }
        // Last: the conversion, of this filter and of one that took the keys.
        L::check_to_bloom(self, keys);
        L::check_to_bloom(&full, keys);
    }
}

/// Bytes of a cuckoo table of `buckets` buckets of f-bit fingerprints, as
/// the crate allocates it (four slots a bucket, 16 bytes of padding).
fn cuckoo_table_bytes(buckets: u64, fingerprint_bits: u32) -> Option<u64> {
    buckets
        .checked_mul(4 * u64::from(fingerprint_bits))
        .map(|bits| bits.div_ceil(8) + 16)
}

impl Exercise for CuckooFilter {
    const MULTISET: bool = true;

    fn try_remove(&mut self, hash: u64) -> Option<Result<bool, Error>> {
        remove_with(self, hash)
    }

    fn insert_keys(&mut self, keys: &[u64]) -> Result<Option<usize>, Error> {
        self.insert_many(keys.iter().copied()).map(Some)
    }

    /// Each insert may walk the kick limit and back.
    fn insert_steps(&self, inserts: u64) -> u64 {
        inserts.saturating_mul(2 * u64::from(self.max_kicks()))
    }

    /// Layout 1 had ten header parameters (bytes 14 and 15 count them).
    fn current_layout(read: &[u8]) -> bool {
        read.get(14..16) != Some(&10u16.to_le_bytes()[..])
    }

    /// At most what `inserts` more keys may allocate: the sub-tables they
    /// may add (each insert may add one), each at the widest fingerprints
    /// (a sub-table's width follows the filter's schedule, at most 32
    /// bits), and never more than the memory limit leaves (which also caps
    /// the overflow of copies).
    fn growth_bytes(&self, inserts: u64) -> u64 {
        let Some(growth) = self.growth() else {
            return 0;
        };
        let mut bytes = 0u64;
        for tables in (self.tables() as u32..growth.max_tables).take(inserts as usize) {
            let next = u64::from(growth.expansion)
                .checked_pow(tables)
                .and_then(|factor| factor.checked_mul(self.buckets()))
                .and_then(|buckets| cuckoo_table_bytes(buckets, 32));
            match next {
                Some(table) => bytes = bytes.saturating_add(table),
                None => break,
            }
        }
        let left = self.max_memory().saturating_sub(self.memory_usage() as u64);
        bytes.min(left)
    }

    fn exercise_more(&self, keys: &[u64]) {
        assert_eq!(Persist::config(self), self.config());
        assert_eq!(self.slots_per_bucket(), 4);
        let occupancy = self.occupancy();
        assert_eq!(occupancy.len(), self.tables());
        let held: u64 = occupancy
            .iter()
            .flat_map(|table| table.iter().enumerate().map(|(k, &n)| k as u64 * n))
            .sum();
        let overflow = self.overflow_copies();
        assert_eq!(
            held + overflow,
            self.len() as u64,
            "len is not the occupied slots and the overflow's copies"
        );
        assert!(
            self.growth().is_some() || overflow == 0,
            "overflow without growth"
        );
        let widths = self.table_fingerprint_bits();
        assert_eq!(widths.len(), self.tables());
        assert_eq!(widths[0], self.fingerprint_bits());
        assert!(widths.windows(2).all(|w| w[0] <= w[1]), "widths {widths:?}");
        let capacities = self.table_capacities();
        assert_eq!(capacities.len(), self.tables());
        assert_eq!(capacities[0], self.initial_capacity());
        let buckets: u64 = occupancy.iter().flatten().sum();
        assert_eq!(buckets * 4, self.slots());
        let load = self.load_factor();
        assert!((0.0..=1.0).contains(&load), "load {load}");
        for key in keys {
            assert_eq!(
                self.count(key) > 0,
                self.contains(key),
                "count and contains differ"
            );
        }
        // insert_unique adds only absent keys.
        let mut copy = self.clone();
        for key in keys {
            let present = copy.contains(key);
            let before = copy.clone();
            match copy.insert_unique(key) {
                Ok(added) => {
                    assert_eq!(added, !present, "insert_unique");
                    assert!(copy.contains(key));
                }
                Err(err) => {
                    assert_eq!(err.kind(), ErrorKind::Full, "{err}");
                    assert!(copy == before, "a refused insert_unique changed the filter");
                }
            }
        }
        grow_cuckoo(self, keys.first().copied().unwrap_or(0));
        copies_overflow(self, keys.first().copied().unwrap_or(0));
    }
}

/// Copies of one key [`copies_overflow`] inserts: two past the 2·4 its
/// buckets hold.
const COPIES: u64 = 10;
/// Copies times the kick limit up to which it does: a refused copy (or
/// one kept in the overflow) walks the whole limit and back (a file with
/// a limit of 64,780 kicks, whose copies were all refused, took 0.85 s in
/// the fuzz build when twelve were tried, each walking it).
const COPY_KICK_LIMIT: u64 = 1 << 18;

/// Bytes of the largest filter it does that for: on a 1 MiB table the
/// clones doubled the `build_cuckoo` target's time (50 to 111 ms for one
/// input, release build).
const COPY_MEMORY_LIMIT: usize = 1 << 16;

/// Copies of one key past the 2·4 its buckets hold: a filter that does not
/// grow refuses them as `Full`, unchanged; a growing one keeps them beside
/// its tables (refusing only at its memory limit, unchanged) and counts
/// them; removing them gives back the count and the key's presence.
fn copies_overflow(filter: &CuckooFilter, key: u64) {
    // Each copy past the buckets may walk the whole kick limit (and back),
    // and each is checked against a clone of the filter.
    let walks = COPIES * u64::from(filter.max_kicks());
    if walks > COPY_KICK_LIMIT || filter.memory_usage() > COPY_MEMORY_LIMIT {
        return;
    }
    let mut copy = filter.clone();
    // The key's first insert may be refused as a new key at the caps.
    if !copy.contains(&key) {
        if let Err(err) = copy.insert(&key) {
            assert_eq!(err.kind(), ErrorKind::Full, "{err}");
            assert!(&copy == filter, "a refused insert changed the filter");
            return;
        }
        assert!(copy.remove(&key).expect("removing the key"));
        assert_eq!(copy.len(), filter.len());
        copy = filter.clone();
    }
    let mut accepted = 0;
    for _ in 0..COPIES {
        let before = copy.clone();
        match copy.insert(&key) {
            Ok(_) => accepted += 1,
            Err(err) => {
                assert_eq!(err.kind(), ErrorKind::Full, "{err}");
                assert!(copy == before, "a refused copy changed the filter");
                let near_limit = copy.memory_usage() as u64 + 40 > copy.max_memory();
                assert!(
                    copy.growth().is_none() || near_limit,
                    "a growing filter refused a copy below its memory limit: {err}"
                );
                // The next copies would be refused the same way.
                break;
            }
        }
    }
    assert_eq!(copy.len() as u64, filter.len() as u64 + accepted);
    if accepted > 0 {
        assert!(copy.contains(&key) && copy.count(&key) as u64 >= accepted);
    }
    if copy.growth().is_some() && accepted == COPIES {
        // Its two buckets hold 8 slots at most: 2 or more copies overflow.
        assert!(copy.overflow_copies() >= filter.overflow_copies() + COPIES - 8);
    }
    for _ in 0..accepted {
        assert!(
            copy.remove(&key).expect("removing a copy"),
            "a copy was not there"
        );
    }
    assert_eq!(copy.len(), filter.len());
    assert_eq!(copy.overflow_copies(), filter.overflow_copies());
    assert_eq!(copy.contains(&key), filter.contains(&key));
}

/// Free slots up to which [`grow_cuckoo`] fills a filter.
const FILL_LIMIT: u64 = 2048;
/// Free slots times the kick limit up to which it does: the inserts'
/// worst case, in evictions, well within a second.
const KICK_LIMIT: u64 = 1 << 22;

/// Fills a small cuckoo filter with new keys until it adds a sub-table or
/// refuses one: a refusal is `Full` and leaves the filter exactly as the
/// inserts before it did (retraced by replaying them: the filter is a
/// function of its operations); no accepted key is lost; removing them all
/// gives back the original count and every key it held.
fn grow_cuckoo(filter: &CuckooFilter, seed: u64) {
    let occupied = filter.len() as u64 - filter.overflow_copies();
    let free = filter.slots().saturating_sub(occupied);
    // Near full, an insert may walk its whole kick limit (up to 65535).
    let walks = free.saturating_mul(u64::from(filter.max_kicks()));
    if free > FILL_LIMIT || walks > KICK_LIMIT || filter.growth_bytes(free) > GROW_LIMIT_BYTES {
        return;
    }
    let hasher = *filter.hasher();
    let tables = filter.tables();
    let mut grown = filter.clone();
    let mut inserted = Vec::new();
    for i in 0..free + 16 {
        let hash = hasher.hash(&(seed ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
        match grown.insert_hash(hash) {
            Ok(_) => inserted.push(hash),
            Err(err) => {
                assert_eq!(err.kind(), ErrorKind::Full, "{err}");
                let mut replay = filter.clone();
                for &hash in &inserted {
                    replay.insert_hash(hash).expect("the same inserts again");
                }
                assert!(replay == grown, "a refused insert changed the filter");
                break;
            }
        }
        if grown.tables() > tables {
            break;
        }
    }
    assert_eq!(grown.len(), filter.len() + inserted.len());
    assert!(
        inserted.iter().all(|&hash| grown.contains_hash(hash)),
        "an accepted key is absent"
    );
    if grown.tables() > tables {
        assert_eq!(grown.tables(), tables + 1);
        let fpp = grown.expected_fpp();
        assert!((0.0..=1.0).contains(&fpp));
        persists(&grown, "growth");
    }
    for &hash in &inserted {
        assert!(
            grown.remove_hash(hash).expect("removing an inserted key"),
            "an inserted key could not be removed"
        );
    }
    assert_eq!(grown.len(), filter.len());
    persists(&grown, "filling and emptying");
}

impl<L: Layer> Exercise for ScalableBloomFilter<L> {
    fn insert_keys(&mut self, keys: &[u64]) -> Result<Option<usize>, Error> {
        self.insert_many(keys.iter().copied()).map(Some)
    }

    /// The layers `inserts` more keys may add: as many as they fill (a
    /// layer of a small first capacity holds a few keys, and layers at
    /// tiny targets can be gigabytes), as far as the caps let the filter
    /// grow.
    fn growth_bytes(&self, inserts: u64) -> u64 {
        let config = self.config();
        let needed = (self.len() as u64).saturating_add(inserts);
        let mut capacity = self.current_capacity();
        let mut bytes = 0u64;
        let mut index = self.layers().len() as u32;
        while capacity < needed && !config.non_scaling && index < config.max_layers {
            let Some(layer) = config.layer_capacity(index) else {
                break;
            };
            let sizing = timed("Layer::sizing", &config, || {
                L::sizing(layer, config.layer_fpp(index), config.max_memory)
            });
            let Ok(sizing) = sizing else {
                break;
            };
            bytes = bytes.saturating_add(sizing.bytes());
            capacity = capacity.saturating_add(layer);
            index += 1;
        }
        bytes
    }

    fn exercise_more(&self, keys: &[u64]) {
        let config = self.config();
        assert_eq!(Persist::config(self), config);
        assert_eq!(self.target_fpp(), config.target_fpp);
        let layers = self.layers();
        let held: u64 = layers.iter().map(|layer| layer.len() as u64).sum();
        assert_eq!(held, self.len() as u64, "the layers do not hold len");
        for (index, layer) in (0u32..).zip(layers) {
            assert_eq!(layer.hasher(), self.hasher());
            assert_eq!(
                layer.capacity().map(|c| c as u64),
                config.layer_capacity(index)
            );
        }
        assert!(self.current_capacity() >= self.len() as u64);
        let bound = self.fpp_bound();
        assert!(bound <= config.target_fpp, "bound {bound} above the target");
        let info = timed("info", self, || self.info());
        assert_eq!(
            (info.filters, info.items, info.capacity),
            (layers.len(), self.len() as u64, self.current_capacity())
        );
        assert!((0.0..=1.0).contains(&info.fpp_now));
        let _ = info.to_string();
        let len = self.len() as u64;
        if let Ok(Some(sizing)) = timed("sizing_at", self, || self.sizing_at(len)) {
            assert_eq!(sizing.layers.len(), layers.len(), "{sizing:?}");
        }
        dump_and_restore(self, keys.first().copied().unwrap_or(0));
        grow_scalable(self, keys.first().copied().unwrap_or(0));
    }
}

/// A chunked dump restores to the same filter; without its last chunk, or
/// with two chunks swapped, it is a typed error.
fn dump_and_restore<L: Layer>(filter: &ScalableBloomFilter<L>, seed: u64) {
    let chunk_bytes = 64 + (seed % 2048) as usize;
    let mut chunks: Vec<(u64, Vec<u8>)> = Vec::new();
    let count = filter
        .dump_chunks(chunk_bytes, |cursor, chunk| {
            assert!(chunk.len() <= chunk_bytes);
            chunks.push((cursor, chunk.to_vec()));
            Ok(())
        })
        .expect("dump_chunks");
    assert_eq!(count, chunks.len() as u64);
    let restored = ScalableBloomFilter::<L>::restore_chunks(chunks.clone()).expect("restore");
    assert!(restored == *filter, "restore_chunks gave another filter");
    let mut dropped = chunks.clone();
    dropped.pop();
    assert!(ScalableBloomFilter::<L>::restore_chunks(dropped).is_err());
    if chunks.len() >= 2 {
        chunks.swap(0, 1);
        assert!(ScalableBloomFilter::<L>::restore_chunks(chunks).is_err());
    }
}

/// Fills a small scalable filter with new keys until it adds a layer or
/// refuses one (`Full`, unchanged): the new layer is the one the
/// configuration says, every key stays present, and the filter reads back.
fn grow_scalable<L: Layer>(filter: &ScalableBloomFilter<L>, seed: u64) {
    let room = filter
        .current_capacity()
        .saturating_sub(filter.len() as u64);
    if room > FILL_LIMIT || filter.growth_bytes(room + 1) > GROW_LIMIT_BYTES {
        return;
    }
    let hasher = *filter.hasher();
    let layers = filter.layers().len();
    let mut grown = filter.clone();
    let mut inserted = Vec::new();
    for i in 0..(room + 1) * 2 + 16 {
        let hash = hasher.hash(&(seed ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
        let before = (grown.len() as u64 >= grown.current_capacity()).then(|| grown.clone());
        match grown.insert_hash(hash) {
            Ok(_) => inserted.push(hash),
            Err(err) => {
                assert_eq!(err.kind(), ErrorKind::Full, "{err}");
                let before = before.expect("refused with room in the newest layer");
                assert!(before == grown, "a refused insert changed the filter");
                break;
            }
        }
        if grown.layers().len() > layers {
            break;
        }
    }
    assert!(
        inserted.iter().all(|&hash| grown.contains_hash(hash)),
        "an inserted key is absent"
    );
    if grown.layers().len() > layers {
        let config = grown.config();
        let index = layers as u32;
        let newest = &grown.layers()[layers];
        assert_eq!(
            newest.capacity().map(|c| c as u64),
            config.layer_capacity(index)
        );
        assert_eq!(newest.target_fpp(), Some(config.layer_fpp(index)));
        persists(&grown, "growth");
    }
}
