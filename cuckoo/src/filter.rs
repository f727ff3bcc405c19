//! `CuckooFilter`: the tables, inserts with bounded kicks rolled back when
//! they fail, removal, growth by sub-tables, and the `Filter` traits.

use std::fmt;

use filterlab_core::sizing::{SizedFor, Target};
use filterlab_core::theory::{cuckoo_compound_fpp, cuckoo_fpp, cuckoo_fpp_given_occupancy};
use filterlab_core::{
    Error, ErrorKind, Filter, Key, KeyHasher, RemovableFilter, insert_in_batches, mix64, prefetch,
};

use crate::builder::CuckooBuilder;
use crate::config::{CuckooConfig, Growth, LOAD_TARGET};
use crate::sizing::CuckooSizing;
use crate::table::{Lanes, Place, SLOTS, Table, Word, table_bytes};

/// A cuckoo filter: each key stores an f-bit fingerprint in one of two
/// buckets of four slots; it deletes, counts, optionally grows by
/// sub-tables, and never loses an item when full.
///
/// Built by [`with_fpp`](Self::with_fpp) (sized for a load and a target
/// FPP) or [`with_buckets`](Self::with_buckets) (explicit size). A multiset
/// like RedisBloom's CF.*: inserting a key again adds a copy and answers
/// `false` (it was present); [`insert_unique`](Self::insert_unique) adds a
/// key only when it is absent.
///
/// # Examples
///
/// ```
/// use filterlab_cuckoo::{CuckooFilter, Filter, RemovableFilter};
///
/// let mut filter = CuckooFilter::with_fpp(0.001).expected_items(10_000).seed(7).build()?;
/// assert!(filter.insert("session-1")?);      // new
/// assert!(!filter.insert("session-1")?);     // present: a second copy
/// assert_eq!(filter.count("session-1"), 2);
/// assert!(filter.remove("session-1")?);
/// assert!(filter.contains("session-1"));     // one copy left
/// assert!(filter.remove("session-1")?);
/// assert!(!filter.contains("session-1"));
/// # Ok::<(), filterlab_cuckoo::Error>(())
/// ```
#[derive(Clone)]
pub struct CuckooFilter {
    /// Oldest first; the last is the one new keys go to.
    tables: Vec<Table>,
    /// As given, so that `config()` and the format hand it back unchanged.
    config: CuckooConfig,
    /// The fingerprint width of `config`, in the form the tables use.
    lanes: Lanes,
    /// The same in a `u64`, when a bucket fits one (f ≤ 16): the hot paths
    /// (lookups, inserts, removals) then use it.
    narrow: Option<Lanes<u64>>,
    max_memory: u64,
    /// Accepted inserts minus removals: the occupied slots.
    len: u64,
    sized_for: SizedFor,
}

/// Binds `$lanes` to the filter's `u64` lanes when its buckets fit a `u64`,
/// else to its `u128` ones, and evaluates `$body`: the hot paths are each
/// one generic function, instantiated for both words.
macro_rules! with_lanes {
    ($filter:expr, |$lanes:ident| $body:expr) => {
        match $filter.narrow {
            Some($lanes) => $body,
            None => {
                let $lanes = $filter.lanes;
                $body
            }
        }
    };
}

/// Keys ahead of the one being processed whose buckets a batched operation
/// prefetches.
const PREFETCH_AHEAD: usize = 8;

/// Tables smaller than this (1 MiB) stay in cache: prefetching only adds
/// instructions.
const PREFETCH_MIN_BYTES: usize = 1 << 20;

/// 2^64 / φ: steps the kick stream.
const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// The random choices of one key's kicks: which bucket to start from, and
/// the slot to evict at each step, as a function of the key's hash and the
/// step, so that a failed walk can be retraced backwards without storing it
/// and the same operations always give the same filter.
#[derive(Clone, Copy)]
struct Kicks(u64);

impl Kicks {
    fn start_from_second(self) -> bool {
        mix64(self.0) & 1 == 1
    }

    fn slot(self, step: u32) -> u32 {
        let state = self.0 ^ u64::from(step + 1).wrapping_mul(GOLDEN_GAMMA);
        (mix64(state) >> 62) as u32
    }
}

impl CuckooFilter {
    /// A builder that sizes the filter for a target FPP at
    /// [`expected_items`](CuckooBuilder::expected_items) items.
    pub fn with_fpp(fpp: f64) -> CuckooBuilder {
        CuckooBuilder::new(Target::Fpp(fpp))
    }

    /// A builder for an explicit number of buckets (any positive number);
    /// give it [`fingerprint_bits`](CuckooBuilder::fingerprint_bits).
    pub fn with_buckets(buckets: u64) -> CuckooBuilder {
        CuckooBuilder::new(Target::Size(buckets))
    }

    /// The sizing for `expected_items` items at `fpp`, without allocating.
    ///
    /// # Errors
    ///
    /// As [`CuckooBuilder::sizing`].
    pub fn params(expected_items: u64, fpp: f64) -> Result<CuckooSizing, Error> {
        Self::with_fpp(fpp).expected_items(expected_items).sizing()
    }

    pub(crate) fn from_parts(
        config: &CuckooConfig,
        sized_for: SizedFor,
        max_memory: u64,
        tables: Vec<Table>,
        len: u64,
    ) -> Self {
        Self {
            tables,
            config: *config,
            lanes: Lanes::new(config.fingerprint_bits),
            narrow: Lanes::narrow(config.fingerprint_bits),
            max_memory,
            len,
            sized_for,
        }
    }

    /// Adds `key`, as a copy when it is already present.
    ///
    /// Returns `Ok(true)` when the key was not already reported present
    /// (`Ok(false)` adds another copy, as RedisBloom's CF.ADD does). Once it
    /// returns `Ok`, the key is contained until a copy is removed for every
    /// accepted insert.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Full`] when the key cannot be placed (see
    /// [`Filter::insert_hash`]); the filter is then exactly as before.
    #[inline]
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> Result<bool, Error> {
        self.insert_hash(self.config.hasher.hash(key))
    }

    /// Adds `key` only when it is not already reported present
    /// (RedisBloom's CF.ADDNX); returns whether it was added.
    ///
    /// # Errors
    ///
    /// As [`insert`](Self::insert).
    pub fn insert_unique<K: Key + ?Sized>(&mut self, key: &K) -> Result<bool, Error> {
        let hash = self.config.hasher.hash(key);
        if self.contains_hash(hash) {
            return Ok(false);
        }
        with_lanes!(self, |lanes| self.add_new(lanes, hash))?;
        self.len += 1;
        Ok(true)
    }

    /// Adds a key no table matches.
    fn add_new<W: Word>(&mut self, lanes: Lanes<W>, hash: u64) -> Result<(), Error> {
        let (place, slots, _) = self.probe(lanes, self.tables.len() - 1, hash);
        self.add_absent(lanes, hash, place, slots)
    }

    /// How many copies of `key` the filter may hold: the slots of its two
    /// buckets holding its fingerprint, summed over the sub-tables. An upper
    /// bound on the copies inserted and not removed (other keys may share
    /// the fingerprint), like RedisBloom's CF.COUNT.
    pub fn count<K: Key + ?Sized>(&self, key: &K) -> usize {
        let hash = self.config.hasher.hash(key);
        self.tables
            .iter()
            .map(|table| table.count(self.lanes, table.place(self.lanes, hash)) as usize)
            .sum()
    }

    /// Inserts every key, hashing them in batches and prefetching the
    /// buckets of the keys ahead; returns how many were new.
    ///
    /// # Errors
    ///
    /// At the first key refused ([`ErrorKind::Full`]): the keys before it
    /// stay inserted, it and the keys after it are not.
    pub fn insert_many<I>(&mut self, keys: I) -> Result<usize, Error>
    where
        I: IntoIterator,
        I::Item: Key,
    {
        insert_in_batches(self, keys)
    }

    /// The fraction of slots occupied, over all sub-tables.
    pub fn load_factor(&self) -> f64 {
        self.len as f64 / self.slots() as f64
    }

    /// Slots in all sub-tables.
    pub fn slots(&self) -> u64 {
        self.tables
            .iter()
            .map(|table| table.buckets() * u64::from(SLOTS))
            .sum()
    }

    /// Buckets of the first table.
    pub fn buckets(&self) -> u64 {
        self.config.buckets
    }

    /// Bits per fingerprint.
    pub fn fingerprint_bits(&self) -> u32 {
        self.lanes.bits()
    }

    /// Slots per bucket (4).
    pub fn slots_per_bucket(&self) -> u32 {
        SLOTS
    }

    /// The most kicks an insert tries before it is refused.
    pub fn max_kicks(&self) -> u32 {
        self.config.max_kicks
    }

    /// The growth policy, if the filter grows.
    pub fn growth(&self) -> Option<Growth> {
        self.config.growth
    }

    /// Sub-tables in use (1 until the filter grows).
    pub fn tables(&self) -> usize {
        self.tables.len()
    }

    /// The items the first table was sized for: the capacity of a filter
    /// that does not grow.
    pub fn initial_capacity(&self) -> u64 {
        self.sized_for.items
    }

    /// The FPP target the filter was sized for, if any.
    pub fn target_fpp(&self) -> Option<f64> {
        self.sized_for.fpp
    }

    /// The most bytes the filter may grow to.
    pub fn max_memory(&self) -> u64 {
        self.max_memory
    }

    /// This filter's configuration.
    pub fn config(&self) -> CuckooConfig {
        self.config
    }

    pub(crate) fn sized_for(&self) -> SizedFor {
        self.sized_for
    }

    pub(crate) fn table_list(&self) -> &[Table] {
        &self.tables
    }

    /// `histogram[k]`: buckets holding k fingerprints, per sub-table.
    pub fn occupancy(&self) -> Vec<[u64; SLOTS as usize + 1]> {
        self.tables
            .iter()
            .map(|table| table.occupancy(self.lanes))
            .collect()
    }

    /// Reads the key's two buckets in table `index`: its place, the two
    /// buckets' slots, and whether its fingerprint is in either.
    #[inline]
    fn probe<W: Word>(&self, lanes: Lanes<W>, index: usize, hash: u64) -> (Place, [W; 2], bool) {
        let table = &self.tables[index];
        let place = table.place(lanes, hash);
        let slots = table.pair(lanes, place);
        (place, slots, lanes.holds_either(slots, place.fingerprint))
    }

    /// Stores the key's fingerprint in table `index`, whose two buckets
    /// were just read as `slots`: in a free slot of either; else after a
    /// breadth-first search two moves deep ([`Table::make_room`]: the 8 and
    /// then 32 buckets are read independently, so their cache misses
    /// overlap); else by a random walk of at most `max_kicks` evictions.
    /// When that fails, the walk is retraced so the table is exactly as
    /// before, and `false` returned.
    fn store<W: Word>(
        &mut self,
        lanes: Lanes<W>,
        index: usize,
        hash: u64,
        place: Place,
        slots: [W; 2],
    ) -> bool {
        let max_kicks = self.config.max_kicks;
        let table = &mut self.tables[index];
        if let Some((bucket, slot)) = lanes.free_slot(place, slots) {
            table.swap(lanes, bucket, slot, place.fingerprint);
            return true;
        }
        if table.make_room(lanes, place, slots) {
            return true;
        }
        let kicks = Kicks(hash);
        let mut bucket = if kicks.start_from_second() {
            place.second
        } else {
            place.first
        };
        let mut hand = place.fingerprint;
        for step in 0..max_kicks {
            hand = table.swap(lanes, bucket, kicks.slot(step), hand);
            bucket = table.alternate(bucket, hand);
            if table.put(lanes, bucket, hand) {
                return true;
            }
        }
        // Undo the swaps last to first: each fingerprint in hand goes back
        // to the slot it was evicted from, in the bucket it came from.
        for step in (0..max_kicks).rev() {
            bucket = table.alternate(bucket, hand);
            hand = table.swap(lanes, bucket, kicks.slot(step), hand);
        }
        debug_assert_eq!(hand, place.fingerprint);
        false
    }

    /// Inserts a key no table matches, whose buckets in the newest table
    /// were read as `slots`: there, or in a new sub-table.
    fn add_absent<W: Word>(
        &mut self,
        lanes: Lanes<W>,
        hash: u64,
        place: Place,
        slots: [W; 2],
    ) -> Result<(), Error> {
        let newest = self.tables.len() - 1;
        if self.store(lanes, newest, hash, place, slots) {
            return Ok(());
        }
        self.grow()?;
        // A new table is empty: the key's first bucket has a free slot.
        let (place, slots, _) = self.probe(lanes, newest + 1, hash);
        let stored = self.store(lanes, newest + 1, hash, place, slots);
        debug_assert!(stored);
        Ok(())
    }

    /// [`Filter::insert_hash`] with buckets read as `W` words.
    #[inline]
    fn insert_with<W: Word>(&mut self, lanes: Lanes<W>, hash: u64) -> Result<bool, Error> {
        let newest = self.tables.len() - 1;
        // Each table's two buckets are read once: to test for the key, and
        // to store it when this is the table it goes to.
        for index in 0..=newest {
            let (place, slots, found) = self.probe(lanes, index, hash);
            if found {
                if !self.store(lanes, index, hash, place, slots) {
                    return Err(Error::new(
                        ErrorKind::Full,
                        format!(
                            "the key is present in sub-table {index}, which has no slot for another copy within {} kicks",
                            self.config.max_kicks
                        ),
                    ));
                }
                self.len += 1;
                return Ok(false);
            }
            if index == newest {
                self.add_absent(lanes, hash, place, slots)?;
            }
        }
        self.len += 1;
        Ok(true)
    }

    /// [`Filter::contains_hash`] with buckets read as `W` words.
    #[inline]
    fn contains_with<W: Word>(&self, lanes: Lanes<W>, hash: u64) -> bool {
        // A filter that has not grown answers with its buckets' test alone:
        // no branch on what they hold (a run of lookups never stalls on a
        // mispredicted answer) and nothing else between the loads and the
        // answer. Each operation there waits out the loads' cache misses;
        // with fewer of them more lookups overlap (measured with the
        // `cuckoo_speed` example: the old newest-then-older form, inlined,
        // kept a flag and a branch there and made the caller's loop spill).
        match self.tables.as_slice() {
            [table] => table.holds(lanes, table.place(lanes, hash)),
            tables => Self::held_in_any(tables, lanes, hash),
        }
    }

    /// Whether any of `tables` holds the key, newest (largest, where most
    /// keys live) first. Not inlined: inlined into a caller's loop of
    /// one-key lookups, its loop took registers from the single-table
    /// path and made it spill.
    #[inline(never)]
    fn held_in_any<W: Word>(tables: &[Table], lanes: Lanes<W>, hash: u64) -> bool {
        tables
            .iter()
            .rev()
            .any(|table| table.holds(lanes, table.place(lanes, hash)))
    }

    /// [`Filter::contains_hashes`] with buckets read as `W` words: both
    /// buckets of the keys ahead prefetched, table by table (newest first,
    /// skipping keys already found).
    fn contains_batch<W: Word>(&self, lanes: Lanes<W>, hashes: &[u64], found: &mut [bool]) {
        let count = hashes.len().min(found.len());
        let (hashes, found) = (&hashes[..count], &mut found[..count]);
        found.fill(false);
        let prefetching = self.prefetching();
        for table in self.tables.iter().rev() {
            let place_ahead = |hash: u64| {
                let place = table.place(lanes, hash);
                if prefetching {
                    prefetch(table.bucket_byte(lanes, place.first));
                    prefetch(table.bucket_byte(lanes, place.second));
                }
                place
            };
            // Key i's place, computed once when its buckets are prefetched,
            // waits in slot i % PREFETCH_AHEAD until key i is looked up.
            let mut ahead = [Place::default(); PREFETCH_AHEAD];
            for (slot, &hash) in ahead.iter_mut().zip(hashes) {
                *slot = place_ahead(hash);
            }
            for (i, answer) in found.iter_mut().enumerate() {
                let slot = &mut ahead[i % PREFETCH_AHEAD];
                let place = *slot;
                if let Some(&hash) = hashes.get(i + PREFETCH_AHEAD) {
                    *slot = place_ahead(hash);
                }
                if !*answer {
                    *answer = table.holds(lanes, place);
                }
            }
        }
    }

    /// [`RemovableFilter::remove_hash`] with buckets read as `W` words.
    fn remove_with<W: Word>(&mut self, lanes: Lanes<W>, hash: u64) -> bool {
        for index in 0..self.tables.len() {
            let (place, slots, found) = self.probe(lanes, index, hash);
            if found {
                let table = &mut self.tables[index];
                for (bucket, slots) in [(place.first, slots[0]), (place.second, slots[1])] {
                    if let Some(slot) = lanes.find(slots, place.fingerprint) {
                        table.swap(lanes, bucket, slot, 0);
                        break;
                    }
                }
                self.len -= 1;
                return true;
            }
        }
        false
    }

    /// Buckets of the next sub-table: the first table's times expansion^i.
    fn next_buckets(&self, growth: Growth) -> Option<u64> {
        let last = self.tables.last()?.buckets();
        last.checked_mul(u64::from(growth.expansion))
    }

    /// Adds a sub-table, or says why it cannot.
    fn grow(&mut self) -> Result<(), Error> {
        let Some(growth) = self.config.growth else {
            return Err(Error::new(
                ErrorKind::Full,
                format!(
                    "no free slot within {} kicks at load {:.4}; the filter does not grow",
                    self.config.max_kicks,
                    self.load_factor()
                ),
            ));
        };
        if self.tables.len() >= growth.max_tables as usize {
            return Err(Error::new(
                ErrorKind::Full,
                format!("all {} sub-tables are full", growth.max_tables),
            ));
        }
        let memory = self.next_buckets(growth).and_then(|buckets| {
            let bytes = table_bytes(buckets, self.lanes.bits())?;
            let total = bytes.checked_add(self.memory_usage() as u64)?;
            (total <= self.max_memory).then_some(buckets)
        });
        let table = memory
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::Full,
                    format!(
                        "the next sub-table would take the filter over its memory limit of {} bytes",
                        self.max_memory
                    ),
                )
            })
            .and_then(|buckets| {
                Table::new(buckets, self.lanes)
                    .map_err(|err| Error::new(ErrorKind::Full, err.detail().to_owned()))
            })?;
        self.tables.push(table);
        Ok(())
    }

    /// Prefetches the key's two buckets in every table.
    #[inline]
    fn prefetch(&self, hash: u64) {
        for table in &self.tables {
            let place = table.place(self.lanes, hash);
            prefetch(table.bucket_byte(self.lanes, place.first));
            prefetch(table.bucket_byte(self.lanes, place.second));
        }
    }

    fn prefetching(&self) -> bool {
        self.memory_usage() >= PREFETCH_MIN_BYTES
    }

    /// The a-priori FPP of each table after `items` inserts, the tables
    /// filled in order, each to its share of [`LOAD_TARGET`] (the last one
    /// present or allowed takes the rest).
    fn table_loads(&self, items: u64) -> Vec<f64> {
        let max_tables = self
            .config
            .growth
            .map_or(1, |growth| growth.max_tables as usize);
        let mut loads = Vec::new();
        let mut left = items as f64;
        let mut buckets = self.config.buckets as f64;
        let expansion = self
            .config
            .growth
            .map_or(1.0, |growth| f64::from(growth.expansion));
        while loads.len() < max_tables {
            let slots = buckets * f64::from(SLOTS);
            let last = loads.len() + 1 == max_tables;
            let take = if last {
                left
            } else {
                left.min(slots * LOAD_TARGET)
            };
            loads.push(take / slots);
            left -= take;
            if left <= 0.0 {
                break;
            }
            buckets *= expansion;
        }
        loads
    }
}

impl CuckooBuilder {
    /// Allocates the filter.
    ///
    /// # Errors
    ///
    /// As [`sizing`](Self::sizing); [`ErrorKind::TooLarge`] when the
    /// allocator refuses the memory.
    pub fn build(&self) -> Result<CuckooFilter, Error> {
        let sizing = self.sizing()?;
        let config = self.config_of(&sizing);
        let table = Table::new(sizing.buckets, Lanes::new(sizing.fingerprint_bits))?;
        let sized_for = SizedFor::new(sizing.expected_items, sizing.target_fpp);
        Ok(CuckooFilter::from_parts(
            &config,
            sized_for,
            self.base.max_memory,
            vec![table],
            0,
        ))
    }
}

impl Filter for CuckooFilter {
    fn hasher(&self) -> &KeyHasher {
        &self.config.hasher
    }

    /// Adds a pre-hashed key; `Ok(true)` when no table matched it.
    ///
    /// A key that matches (inserted before, or a false positive) gets its
    /// new copy in the first table, oldest first, that matches it; any other
    /// key goes into the newest table. Removal takes copies from the first
    /// matching table too, and these two rules keep every key's copies
    /// where its removal will look for them (see the crate docs), so that
    /// removing inserted keys never removes another key's last copy, even
    /// across sub-tables.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Full`] when no free slot is found within `max_kicks`
    /// evictions (the kicks are then undone) and no sub-table can be added
    /// (the filter does not grow, or its sub-table or memory cap is
    /// reached), or when a present key's table cannot take another copy
    /// (more than 2·4 copies of a key in its two buckets, or its table
    /// full). The filter is exactly as before: nothing is ever dropped.
    fn insert_hash(&mut self, hash: u64) -> Result<bool, Error> {
        with_lanes!(self, |lanes| self.insert_with(lanes, hash))
    }

    #[inline]
    fn contains_hash(&self, hash: u64) -> bool {
        with_lanes!(self, |lanes| self.contains_with(lanes, hash))
    }

    /// Inserts with the buckets of the keys ahead prefetched.
    fn insert_hashes(&mut self, hashes: &[u64]) -> Result<usize, Error> {
        let prefetching = self.prefetching();
        let mut new = 0;
        for (i, &hash) in hashes.iter().enumerate() {
            if let Some(&ahead) = hashes.get(i + PREFETCH_AHEAD).filter(|_| prefetching) {
                self.prefetch(ahead);
            }
            new += usize::from(self.insert_hash(hash)?);
        }
        Ok(new)
    }

    /// Looks up with both buckets of the keys ahead prefetched, table by
    /// table (newest first, skipping keys already found).
    fn contains_hashes(&self, hashes: &[u64], found: &mut [bool]) {
        with_lanes!(self, |lanes| self.contains_batch(lanes, hashes, found));
    }

    /// Accepted inserts, copies included, minus removals: the slots in use.
    fn len(&self) -> usize {
        usize::try_from(self.len).unwrap_or(usize::MAX)
    }

    /// Empties the filter and drops its added sub-tables.
    fn clear(&mut self) {
        self.tables.truncate(1);
        self.tables[0].clear();
        self.len = 0;
    }

    fn memory_usage(&self) -> usize {
        self.tables.iter().map(Table::memory).sum()
    }

    /// The items the filter was sized for; `None` for a growing filter.
    fn capacity(&self) -> Option<usize> {
        match self.config.growth {
            Some(_) => None,
            None => usize::try_from(self.sized_for.items).ok(),
        }
    }

    /// The FPP given each table's bucket occupancy
    /// ([`cuckoo_fpp_given_occupancy`]), compounded over the sub-tables:
    /// 1 − Π(1 − pᵢ).
    fn expected_fpp(&self) -> f64 {
        cuckoo_compound_fpp(self.tables.iter().map(|table| {
            cuckoo_fpp_given_occupancy(self.lanes.bits(), &table.occupancy(self.lanes))
        }))
    }

    /// The a-priori FPP ([`cuckoo_fpp`]) at the load `items` inserts give:
    /// for a growing filter, the sub-tables filled in order to 95% each,
    /// compounded as 1 − Π(1 − pᵢ) (at most Σ pᵢ).
    fn theoretical_fpp(&self, items: u64) -> Option<f64> {
        let bits = self.lanes.bits();
        Some(cuckoo_compound_fpp(
            self.table_loads(items)
                .into_iter()
                .map(|load| cuckoo_fpp(bits, SLOTS, load)),
        ))
    }
}

impl RemovableFilter for CuckooFilter {
    /// Removes one copy of a pre-hashed key from the first table, oldest
    /// first, that matches it; `Ok(false)` (and no change) when none does.
    ///
    /// Only remove keys that were inserted (and not removed as often as
    /// inserted): removing a key that merely tests positive removes another
    /// key's fingerprint, which can then be reported absent.
    fn remove_hash(&mut self, hash: u64) -> Result<bool, Error> {
        Ok(with_lanes!(self, |lanes| self.remove_with(lanes, hash)))
    }
}

impl PartialEq for CuckooFilter {
    fn eq(&self, other: &Self) -> bool {
        self.config == other.config
            && self.len == other.len
            && self.sized_for == other.sized_for
            && self.max_memory == other.max_memory
            && self.tables == other.tables
    }
}

impl Eq for CuckooFilter {}

impl fmt::Debug for CuckooFilter {
    /// A summary; the tables themselves can be gigabytes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CuckooFilter")
            .field("buckets", &self.config.buckets)
            .field("fingerprint_bits", &self.lanes.bits())
            .field("max_kicks", &self.config.max_kicks)
            .field("growth", &self.config.growth)
            .field("tables", &self.tables.len())
            .field("hasher", &self.config.hasher)
            .field("len", &self.len)
            .field("sized_for", &self.sized_for)
            .finish_non_exhaustive()
    }
}
