//! `CuckooFilter`: the sub-tables, where each key's copies go, removal,
//! growth with tightening fingerprints, and the `Filter` traits.

use std::fmt;

use filterlab_core::sizing::{SizedFor, Target};
use filterlab_core::theory::{cuckoo_compound_fpp, cuckoo_fpp_given_occupancy, cuckoo_grown_fpp};
use filterlab_core::{
    Error, ErrorKind, Filter, Key, KeyHasher, Membership, RemovableFilter, insert_in_batches,
};

use crate::builder::CuckooBuilder;
use crate::config::{CuckooConfig, Growth};
use crate::growth::{Schedule, Shape};
use crate::overflow::{CLASS_BYTES, Class, Overflow};
use crate::sizing::CuckooSizing;
use crate::table::{Lanes, Place, SLOTS, Table, Word, table_bytes, with_lanes};

/// A cuckoo filter: each key stores an f-bit fingerprint in one of two
/// buckets of four slots; it deletes, counts, optionally grows by
/// sub-tables with longer fingerprints (keeping the FPP it was sized
/// for), and never loses an item when full.
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
    /// Copies a growing filter's tables had no slot for.
    overflow: Overflow,
    /// As given, so that `config()` and the format hand it back unchanged.
    config: CuckooConfig,
    max_memory: u64,
    /// Accepted inserts minus removals: the occupied slots plus the
    /// overflow's copies.
    len: u64,
    sized_for: SizedFor,
}

/// Keys ahead of the one being processed whose buckets a batched operation
/// prefetches.
const PREFETCH_AHEAD: usize = 8;

/// Tables smaller than this (1 MiB) stay in cache: prefetching only adds
/// instructions.
const PREFETCH_MIN_BYTES: usize = 1 << 20;

/// What one sub-table did with a key an insert offered it.
enum Offer {
    /// The table holds the key's fingerprint; `true` when it took the copy.
    Copy(bool),
    /// The key is new to the filter and this, the newest table, took it.
    Stored,
    /// The key does not match here, and this table takes no new key.
    Pass,
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
        overflow: Overflow,
    ) -> Self {
        let len = tables.iter().map(Table::occupied).sum::<u64>() + overflow.total();
        Self {
            tables,
            overflow,
            config: *config,
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
        self.check_counter()?;
        self.add_new(hash)?;
        self.len += 1;
        Ok(true)
    }

    /// How many copies of `key` the filter may hold: the slots of its two
    /// buckets holding its fingerprint, and the copies that did not fit
    /// there, summed over the sub-tables. An upper bound on the copies
    /// inserted and not removed (other keys may share the fingerprint),
    /// like RedisBloom's CF.COUNT.
    pub fn count<K: Key + ?Sized>(&self, key: &K) -> usize {
        let hash = self.config.hasher.hash(key);
        let copies: u64 = self
            .tables
            .iter()
            .enumerate()
            .map(|(index, table)| {
                let place = table.wide_place(hash);
                table.count(place) + self.overflow.get(Class::of(index, place))
            })
            .sum();
        usize::try_from(copies).unwrap_or(usize::MAX)
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
        self.occupied() as f64 / self.slots() as f64
    }

    /// Slots in all sub-tables.
    pub fn slots(&self) -> u64 {
        self.tables.iter().map(Table::slots).sum()
    }

    /// Buckets of the first table.
    pub fn buckets(&self) -> u64 {
        self.config.buckets
    }

    /// Bits per fingerprint of the first table (each sub-table a growing
    /// filter adds has at least as many: see
    /// [`table_fingerprint_bits`](Self::table_fingerprint_bits)).
    pub fn fingerprint_bits(&self) -> u32 {
        self.config.fingerprint_bits
    }

    /// Bits per fingerprint of each sub-table, oldest first.
    pub fn table_fingerprint_bits(&self) -> Vec<u32> {
        self.tables.iter().map(Table::bits).collect()
    }

    /// Fingerprints each sub-table takes before a key new to the filter
    /// goes to the next one, oldest first (the last one's is where a
    /// growing filter adds a sub-table).
    pub fn table_capacities(&self) -> Vec<u64> {
        self.tables.iter().map(Table::capacity).collect()
    }

    /// Copies that a growing filter holds beside its sub-tables, because
    /// their sub-table had no slot for them (see the crate docs); always 0
    /// for a filter that does not grow.
    pub fn overflow_copies(&self) -> u64 {
        self.overflow.total()
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

    /// The FPP target the filter was sized for, if any (for a growing
    /// filter, the compound target of all its sub-tables).
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

    pub(crate) fn overflow(&self) -> &Overflow {
        &self.overflow
    }

    /// `histogram[k]`: buckets holding k fingerprints, per sub-table.
    pub fn occupancy(&self) -> Vec<[u64; SLOTS as usize + 1]> {
        self.tables.iter().map(Table::occupancy).collect()
    }

    /// Nonzero slots over all sub-tables.
    fn occupied(&self) -> u64 {
        self.tables.iter().map(Table::occupied).sum()
    }

    /// The first table's shape.
    fn first_shape(&self) -> Shape {
        Shape {
            bits: self.config.fingerprint_bits,
            buckets: self.config.buckets,
            capacity: self.sized_for.items,
        }
    }

    /// The growth schedule, for a filter that grows.
    pub(crate) fn schedule(&self) -> Option<Schedule> {
        let growth = self.config.growth?;
        Some(Schedule::new(
            growth,
            self.first_shape(),
            self.sized_for.fpp,
        ))
    }

    /// What table `index` does with the key: takes a copy when it holds
    /// its fingerprint; else, when it is the newest (and, in a growing
    /// filter, below its capacity: past it the FPP would pass the
    /// table's share), stores it as a key new to the filter.
    ///
    /// Always inlined, with [`Table::store`]'s fast path, while the rare
    /// paths (a full pair of buckets, growth, the overflow) stay out of
    /// line: an insert into a table with room then costs 244 instructions,
    /// hashing included, where it cost 305 as calls (callgrind, 16-byte
    /// keys, 10,000 into a table for 20,000; 343 against 399 filling it to
    /// its capacity).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn offer<W: Word>(&mut self, lanes: Lanes<W>, index: usize, hash: u64) -> Offer {
        let max_kicks = self.config.max_kicks;
        let newest = index + 1 == self.tables.len();
        let grows = self.config.growth.is_some();
        let table = &mut self.tables[index];
        // Each table's two buckets are read once: to test for the key, and
        // to store it when this is the table it goes to.
        let (place, slots, found) = table.probe(lanes, hash);
        if found {
            Offer::Copy(table.store(lanes, hash, (place, slots), max_kicks))
        } else if newest
            && (!grows || table.occupied() < table.capacity())
            && table.store(lanes, hash, (place, slots), max_kicks)
        {
            Offer::Stored
        } else {
            Offer::Pass
        }
    }

    /// Refuses an insert when the item counter cannot count it (only a
    /// file can bring it there: 2^64 − 1 copies in the overflow).
    fn check_counter(&self) -> Result<(), Error> {
        if self.len == u64::MAX {
            return Err(Error::new(
                ErrorKind::Full,
                "the item counter is at 2^64 - 1",
            ));
        }
        Ok(())
    }

    /// Adds a key no table matches: to the newest table when it is below
    /// its capacity and has a slot within the kicks, else to a new
    /// sub-table.
    fn add_new(&mut self, hash: u64) -> Result<(), Error> {
        let newest = self.tables.len() - 1;
        let offered = with_lanes!(self.tables[newest], |lanes| self.offer(lanes, newest, hash));
        if matches!(offered, Offer::Stored) {
            return Ok(());
        }
        self.store_in_new_table(hash)
    }

    /// Grows and stores a key new to the filter in the new sub-table. Out
    /// of line: once per sub-table, and inlined it made every insert set up
    /// its frame.
    #[cold]
    #[inline(never)]
    fn store_in_new_table(&mut self, hash: u64) -> Result<(), Error> {
        self.grow()?;
        let index = self.tables.len() - 1;
        // A new table is empty, below its capacity (at least 1): the key's
        // first bucket has a free slot.
        let offered = with_lanes!(self.tables[index], |lanes| self.offer(lanes, index, hash));
        debug_assert!(matches!(offered, Offer::Stored));
        Ok(())
    }

    /// Keeps a copy of a key present in table `index`, which has no slot
    /// for it: beside the tables when the filter grows. Out of line: rare.
    #[cold]
    #[inline(never)]
    fn overflow_copy(&mut self, index: usize, hash: u64) -> Result<(), Error> {
        if self.config.growth.is_none() {
            return Err(Error::new(
                ErrorKind::Full,
                format!(
                    "the key is present, and its buckets have no slot for another copy within {} kicks; the filter does not grow",
                    self.config.max_kicks
                ),
            ));
        }
        let over = (self.memory_usage() as u64).saturating_add(CLASS_BYTES) > self.max_memory;
        let class = Class::of(index, self.tables[index].wide_place(hash));
        if over && self.overflow.get(class) == 0 {
            return Err(Error::new(
                ErrorKind::Full,
                format!(
                    "the key is present in sub-table {index}, which has no slot for another copy, and keeping it beside would take the filter over its memory limit of {} bytes",
                    self.max_memory
                ),
            ));
        }
        self.overflow.add(class);
        Ok(())
    }

    /// Whether any of `tables` holds the key, newest (largest, where most
    /// keys live) first. Not inlined: inlined into a caller's loop of
    /// one-key lookups, its loop took registers from the single-table
    /// path and made it spill.
    #[inline(never)]
    fn held_in_any(tables: &[Table], hash: u64) -> bool {
        tables.iter().rev().any(|table| table.contains(hash))
    }

    /// [`Membership::contains_hashes`] for one table, with buckets read as `W`
    /// words: both buckets of the keys ahead prefetched, skipping keys
    /// already found.
    fn contains_batch<W: Word>(
        table: &Table,
        lanes: Lanes<W>,
        prefetching: bool,
        hashes: &[u64],
        found: &mut [bool],
    ) {
        let place_ahead = |hash: u64| {
            let place = table.place(lanes, hash);
            if prefetching {
                filterlab_core::prefetch(table.bucket_byte(lanes, place.first));
                filterlab_core::prefetch(table.bucket_byte(lanes, place.second));
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

    /// Removes one copy of the key from table `index` when the table
    /// matches it (`false`, and no change, when it does not): from the
    /// overflow first, so that the table keeps a fingerprint of the class
    /// while any copy of it is left.
    fn remove_from<W: Word>(&mut self, lanes: Lanes<W>, index: usize, hash: u64) -> bool {
        let table = &mut self.tables[index];
        let (place, slots, found) = table.probe(lanes, hash);
        if !found {
            return false;
        }
        self.overflow.take(Class::of(index, place)) || table.remove(lanes, place, slots)
    }

    /// The next sub-table's shape, or why the filter cannot add one.
    fn next_shape(&self) -> Result<Shape, Error> {
        let full = |detail: String| Error::new(ErrorKind::Full, detail);
        let (Some(growth), Some(schedule)) = (self.config.growth, self.schedule()) else {
            return Err(full(format!(
                "no free slot within {} kicks at load {:.4}; the filter does not grow",
                self.config.max_kicks,
                self.load_factor()
            )));
        };
        if self.tables.len() >= growth.max_tables as usize {
            return Err(full(format!(
                "all {} sub-tables hold their capacity",
                growth.max_tables
            )));
        }
        let index = self.tables.len() as u32;
        let previous = self.tables.last().map_or(0, Table::bits);
        let shape = schedule.shape(index, previous).ok_or_else(|| {
            full(format!(
                "sub-table {index} would need more than 32-bit fingerprints or more than 2^64 buckets"
            ))
        })?;
        let fits = table_bytes(shape.buckets, shape.bits)
            .and_then(|bytes| bytes.checked_add(self.memory_usage() as u64))
            .is_some_and(|total| total <= self.max_memory);
        if !fits {
            return Err(full(format!(
                "the next sub-table would take the filter over its memory limit of {} bytes",
                self.max_memory
            )));
        }
        Ok(shape)
    }

    /// Adds a sub-table, or says why it cannot.
    fn grow(&mut self) -> Result<(), Error> {
        let shape = self.next_shape()?;
        let table = Table::new(shape.buckets, shape.bits, shape.capacity)
            .map_err(|err| Error::new(ErrorKind::Full, err.detail().to_owned()))?;
        self.tables.push(table);
        Ok(())
    }

    fn prefetching(&self) -> bool {
        self.memory_usage() >= PREFETCH_MIN_BYTES
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
        let table = Table::new(
            sizing.buckets,
            sizing.fingerprint_bits,
            sizing.expected_items,
        )?;
        let sized_for = SizedFor::new(sizing.expected_items, sizing.target_fpp);
        Ok(CuckooFilter::from_parts(
            &config,
            sized_for,
            self.base.max_memory,
            vec![table],
            Overflow::default(),
        ))
    }
}

impl Membership for CuckooFilter {
    fn hasher(&self) -> &KeyHasher {
        &self.config.hasher
    }

    #[inline]
    fn contains_hash(&self, hash: u64) -> bool {
        // A filter that has not grown answers with its buckets' test alone:
        // no branch on what they hold (a run of lookups never stalls on a
        // mispredicted answer) and nothing else between the loads and the
        // answer. Each operation there waits out the loads' cache misses;
        // with fewer of them more lookups overlap (measured with the
        // `cuckoo_speed` example: the old newest-then-older form, inlined,
        // kept a flag and a branch there and made the caller's loop spill).
        match self.tables.as_slice() {
            [table] => table.contains(hash),
            tables => Self::held_in_any(tables, hash),
        }
    }

    /// Looks up with both buckets of the keys ahead prefetched, table by
    /// table (newest first, skipping keys already found).
    fn contains_hashes(&self, hashes: &[u64], found: &mut [bool]) {
        let count = hashes.len().min(found.len());
        let (hashes, found) = (&hashes[..count], &mut found[..count]);
        found.fill(false);
        let prefetching = self.prefetching();
        for table in self.tables.iter().rev() {
            with_lanes!(table, |lanes| Self::contains_batch(
                table,
                lanes,
                prefetching,
                hashes,
                found
            ));
        }
    }

    /// Accepted inserts, copies included, minus removals.
    fn len(&self) -> usize {
        usize::try_from(self.len).unwrap_or(usize::MAX)
    }

    /// The tables' bytes, and the overflow's (an estimate of its B-tree's
    /// allocations, 40 bytes a class).
    fn memory_usage(&self) -> usize {
        let tables: usize = self.tables.iter().map(Table::memory).sum();
        tables.saturating_add(usize::try_from(self.overflow.memory()).unwrap_or(usize::MAX))
    }

    /// The items the filter was sized for; `None` for a growing filter.
    fn capacity(&self) -> Option<usize> {
        match self.config.growth {
            Some(_) => None,
            None => usize::try_from(self.sized_for.items).ok(),
        }
    }

    /// The FPP given each table's bucket occupancy and fingerprint width
    /// ([`cuckoo_fpp_given_occupancy`]), compounded over the sub-tables:
    /// 1 − Π(1 − pᵢ).
    fn expected_fpp(&self) -> f64 {
        cuckoo_compound_fpp(
            self.tables
                .iter()
                .map(|table| cuckoo_fpp_given_occupancy(table.bits(), &table.occupancy())),
        )
    }

    /// The a-priori FPP ([`cuckoo_grown_fpp`]) after `items` inserts: the
    /// sub-tables there are and those the filter would add, each at its
    /// fingerprint width, filled in order to their capacities, compounded
    /// as 1 − Π(1 − pᵢ). For a growing filter sized for P this is at most
    /// P at every `items` below its caps.
    fn theoretical_fpp(&self, items: u64) -> Option<f64> {
        let present = self.tables.iter().map(|table| Shape {
            bits: table.bits(),
            buckets: table.buckets(),
            capacity: table.capacity(),
        });
        let last_bits = self.tables.last().map_or(0, Table::bits);
        let added = self
            .schedule()
            .into_iter()
            .flat_map(|schedule| schedule.shapes_from(self.tables.len() as u32, last_bits));
        Some(cuckoo_grown_fpp(
            items,
            present.chain(added).map(Shape::theory),
        ))
    }
}

impl Filter for CuckooFilter {
    /// Adds a pre-hashed key; `Ok(true)` when no table matched it.
    ///
    /// A key that matches (inserted before, or a false positive) gets its
    /// new copy in the first table, oldest first, that matches it (or, in
    /// a growing filter whose table has no slot left for it, beside the
    /// tables, counted against that table); any other key goes into the
    /// newest table, or into a new sub-table when the newest holds its
    /// capacity or has no slot within `max_kicks` evictions. Removal takes
    /// copies from the first matching table too, and these rules keep
    /// every key's copies where its removal will look for them (see the
    /// crate docs), so that removing inserted keys never removes another
    /// key's last copy, even across sub-tables.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Full`] for a filter that does not grow, when no free
    /// slot is found within `max_kicks` evictions (the kicks are then
    /// undone) for a new key or a copy (more than 2·4 copies of a key in
    /// its two buckets, or its table full); for a growing filter only at
    /// its caps: a new key when the newest sub-table holds its capacity
    /// and no sub-table can be added (the sub-table or memory cap), a copy
    /// when keeping it would pass the memory cap. The filter is exactly as
    /// before: nothing is ever dropped.
    fn insert_hash(&mut self, hash: u64) -> Result<bool, Error> {
        self.check_counter()?;
        let newest = self.tables.len() - 1;
        for index in 0..=newest {
            let offered = with_lanes!(self.tables[index], |lanes| self.offer(lanes, index, hash));
            match offered {
                Offer::Copy(stored) => {
                    if !stored {
                        self.overflow_copy(index, hash)?;
                    }
                    self.len += 1;
                    return Ok(false);
                }
                Offer::Stored => break,
                Offer::Pass if index == newest => self.store_in_new_table(hash)?,
                Offer::Pass => {}
            }
        }
        self.len += 1;
        Ok(true)
    }

    /// Inserts with the buckets of the keys ahead prefetched.
    fn insert_hashes(&mut self, hashes: &[u64]) -> Result<usize, Error> {
        let prefetching = self.prefetching();
        let mut new = 0;
        for (i, &hash) in hashes.iter().enumerate() {
            if let Some(&ahead) = hashes.get(i + PREFETCH_AHEAD).filter(|_| prefetching) {
                for table in &self.tables {
                    table.prefetch(ahead);
                }
            }
            new += usize::from(self.insert_hash(hash)?);
        }
        Ok(new)
    }

    /// Empties the filter and drops its added sub-tables.
    fn clear(&mut self) {
        self.tables.truncate(1);
        self.tables[0].clear();
        self.overflow.clear();
        self.len = 0;
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
        // One probe per table: `remove_from` tests and removes in one pass
        // (a separate `contains` first probed every matching table twice,
        // +37% instructions per remove under `filterlab bench`).
        for index in 0..self.tables.len() {
            let removed = with_lanes!(self.tables[index], |lanes| self
                .remove_from(lanes, index, hash));
            if removed {
                self.len -= 1;
                return Ok(true);
            }
        }
        Ok(false)
    }
}

impl PartialEq for CuckooFilter {
    fn eq(&self, other: &Self) -> bool {
        self.config == other.config
            && self.len == other.len
            && self.sized_for == other.sized_for
            && self.max_memory == other.max_memory
            && self.tables == other.tables
            && self.overflow == other.overflow
    }
}

impl Eq for CuckooFilter {}

impl fmt::Debug for CuckooFilter {
    /// A summary; the tables themselves can be gigabytes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CuckooFilter")
            .field("buckets", &self.config.buckets)
            .field("fingerprint_bits", &self.table_fingerprint_bits())
            .field("max_kicks", &self.config.max_kicks)
            .field("growth", &self.config.growth)
            .field("tables", &self.tables.len())
            .field("overflow_copies", &self.overflow.total())
            .field("hasher", &self.config.hasher)
            .field("len", &self.len)
            .field("sized_for", &self.sized_for)
            .finish_non_exhaustive()
    }
}
