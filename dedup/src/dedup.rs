//! The de-duplicator: partitions of Bloom filters, verdicts, counters and alarms.

use std::collections::BTreeMap;

use filterlab_bloom::{BloomBuilder, BloomFilter};
use filterlab_core::{BATCH, Filter, Key, KeyHasher, Membership, for_each_batch};

use crate::alarms::{AlarmEvent, Alarms};
use crate::error::{Error, ErrorKind};
use crate::hex::decode_hex_hash;
use crate::metrics::{Metrics, PartitionStatus, Status};
use crate::partition::PartitionKey;
use crate::settings::{DedupSizing, Settings};

/// What a check says of a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Not seen before: now stored.
    Unique,
    /// Seen before, or a false positive (at most the configured rate P
    /// while a partition holds at most N uniques).
    Duplicate,
    /// Not evaluated: the key's partition was evicted, or would be evicted
    /// at once (its key is below every live partition's and all
    /// `partition_count` are in use). Counted as dropped.
    Unknown,
}

impl Verdict {
    /// `unique`, `duplicate` or `unknown`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Unique => "unique",
            Self::Duplicate => "duplicate",
            Self::Unknown => "unknown",
        }
    }
}

/// The running counts a checkpoint carries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counters {
    checks: u64,
    unique: u64,
    duplicate: u64,
    dropped: u64,
    faults: u64,
    evicted: u64,
}

impl Counters {
    /// The counts in a checkpoint's order: checks, unique, duplicate,
    /// dropped, faults, evicted.
    pub(crate) fn to_array(&self) -> [u64; 6] {
        [
            self.checks,
            self.unique,
            self.duplicate,
            self.dropped,
            self.faults,
            self.evicted,
        ]
    }

    /// The counts of [`to_array`](Self::to_array)'s order; `None` unless
    /// the verdicts add up to the checks.
    pub(crate) fn from_array(counts: [u64; 6]) -> Option<Self> {
        let mut c = Self::default();
        [
            c.checks,
            c.unique,
            c.duplicate,
            c.dropped,
            c.faults,
            c.evicted,
        ] = counts;
        let verdicts = c.unique.checked_add(c.duplicate)?.checked_add(c.dropped)?;
        (verdicts == c.checks).then_some(c)
    }
}

/// Duplicate detection over a stream in bounded memory, as IBM Streams'
/// BloomFilter operator does it: see the [crate documentation](crate).
///
/// # Examples
///
/// ```
/// use filterlab_dedup::{Deduplicator, Verdict};
///
/// let mut dedup = Deduplicator::with_fpp(1e-6).expected_items(10_000).build()?;
/// assert_eq!(dedup.check("order-1", None)?, Verdict::Unique);
/// assert_eq!(dedup.check("order-1", None)?, Verdict::Duplicate);
/// assert_eq!(dedup.metrics().uniques_stored, 1);
/// # Ok::<(), filterlab_dedup::Error>(())
/// ```
pub struct Deduplicator {
    pub(crate) settings: Settings,
    pub(crate) sizing: DedupSizing,
    filter_builder: BloomBuilder,
    /// The live partitions by key; without partitioning, one filter under
    /// [`unpartitioned_key`](Self::unpartitioned_key).
    pub(crate) partitions: BTreeMap<PartitionKey, BloomFilter>,
    pub(crate) counters: Counters,
    alarms: Alarms,
    /// Scratch space of the batched checks.
    present: Vec<bool>,
    elsewhere: Vec<bool>,
    fresh: Vec<u64>,
    /// One other partition's answers for `fresh`.
    found: Vec<bool>,
}

impl Deduplicator {
    /// A de-duplicator with no key seen (its one filter allocated when
    /// unpartitioned; partitions are allocated as they appear).
    pub(crate) fn from_settings(settings: Settings) -> Result<Self, Error> {
        let sizing = settings.sizing()?;
        let filter_builder = settings.filter_builder()?;
        let mut dedup = Self::with_sizing(settings, sizing, filter_builder)?;
        if dedup.settings.partition_count.is_none() {
            let filter = dedup.filter_builder.build()?;
            dedup.partitions.insert(Self::unpartitioned_key(), filter);
        }
        Ok(dedup)
    }

    /// A de-duplicator of sized settings with no filter allocated and every
    /// counter at zero.
    fn with_sizing(
        settings: Settings,
        sizing: DedupSizing,
        filter_builder: BloomBuilder,
    ) -> Result<Self, Error> {
        let alarms = Alarms::new(&settings.alarms)?;
        Ok(Self {
            settings,
            sizing,
            filter_builder,
            partitions: BTreeMap::new(),
            counters: Counters::default(),
            alarms,
            present: Vec::new(),
            elsewhere: Vec::new(),
            fresh: Vec::new(),
            found: Vec::new(),
        })
    }

    /// The key the one filter of an unpartitioned de-duplicator is kept under.
    pub(crate) fn unpartitioned_key() -> PartitionKey {
        PartitionKey::text("")
    }

    /// A de-duplicator of the same configuration with no filter allocated
    /// (not even the unpartitioned one) and every counter at zero: what a
    /// restore fills, without sizing or allocating anything again.
    pub(crate) fn empty_like(&self) -> Result<Self, Error> {
        Self::with_sizing(
            self.settings.clone(),
            self.sizing.clone(),
            self.filter_builder.clone(),
        )
    }

    /// The sizing of each partition's filter (the startup report).
    pub fn sizing(&self) -> &DedupSizing {
        &self.sizing
    }

    /// N: the uniques each partition is sized for.
    pub fn expected_items(&self) -> u64 {
        self.sizing.bloom.expected_items
    }

    /// P: the target false-positive probability.
    pub fn fpp(&self) -> f64 {
        self.settings.fpp
    }

    /// The partition count, if partitioned.
    pub fn partition_count(&self) -> Option<u64> {
        self.settings.partition_count
    }

    /// Whether a key unique in its own partition is looked up in the others too.
    pub fn search_all(&self) -> bool {
        self.settings.search_all
    }

    /// The hasher keys are hashed with (XXH3 with the configured seed).
    pub fn hasher(&self) -> KeyHasher {
        self.settings.hasher()
    }

    /// The live partitions' keys, lowest first (none without partitioning).
    pub fn partition_keys(&self) -> impl Iterator<Item = &PartitionKey> {
        let partitioned = self.settings.partition_count.is_some();
        self.partitions.keys().filter(move |_| partitioned)
    }

    /// Checks `key` in `partition` (`None` without partitioning), storing it
    /// when it is new to its partition.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::PartitionMismatch`] when `partition` is given without
    /// partitioning or missing with it.
    pub fn check<K: Key + ?Sized>(
        &mut self,
        key: &K,
        partition: Option<&PartitionKey>,
    ) -> Result<Verdict, Error> {
        let hash = self.settings.hasher().hash(key);
        self.check_hash(hash, partition)
    }

    /// Checks a key by its hash (made by [`hasher`](Self::hasher), or any
    /// uniform 64-bit hash used consistently).
    ///
    /// # Errors
    ///
    /// As [`check`](Self::check).
    pub fn check_hash(
        &mut self,
        hash: u64,
        partition: Option<&PartitionKey>,
    ) -> Result<Verdict, Error> {
        let mut verdict = Verdict::Unknown;
        self.check_batch(&[hash], partition, |answer| verdict = answer)?;
        Ok(verdict)
    }

    /// Checks a caller-supplied hexadecimal hash of at least
    /// [`DedupSizing::hex_digits_required`] digits. A hash that is too short
    /// or not hexadecimal is a fault: counted in
    /// [`Metrics::faults`], and returned as an error the caller may stop on
    /// (strict) or log and skip (permissive).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::HashTooShort`], [`ErrorKind::MalformedHash`]; as
    /// [`check`](Self::check).
    pub fn check_hex(
        &mut self,
        hex: &[u8],
        partition: Option<&PartitionKey>,
    ) -> Result<Verdict, Error> {
        let hash = self.decode_hex(hex).inspect_err(|_| self.record_fault())?;
        self.check_hash(hash, partition)
    }

    /// The probe hash of a caller-supplied hexadecimal hash, without
    /// checking it (nor counting a fault).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::HashTooShort`] or [`ErrorKind::MalformedHash`].
    pub fn decode_hex(&self, hex: &[u8]) -> Result<u64, Error> {
        decode_hex_hash(hex, self.sizing.hex_digits_required)
    }

    /// Checks many keys of one partition, in order, with the filters'
    /// batched lookups (their memory accesses overlap): the same verdicts
    /// as checking them one by one.
    ///
    /// # Errors
    ///
    /// As [`check`](Self::check), before any key is checked.
    pub fn check_many<I>(
        &mut self,
        keys: I,
        partition: Option<&PartitionKey>,
    ) -> Result<Vec<Verdict>, Error>
    where
        I: IntoIterator,
        I::Item: Key,
    {
        let mut verdicts = Vec::new();
        let hasher = self.settings.hasher();
        for_each_batch(keys, &hasher, |hashes| {
            self.check_hashes(hashes, partition, &mut verdicts)
                .map(|()| hashes.len())
        })?;
        Ok(verdicts)
    }

    /// Checks a batch of hashes of one partition, in order, appending one
    /// verdict each to `verdicts`: the same verdicts as one by one.
    ///
    /// # Errors
    ///
    /// As [`check`](Self::check), before any hash is checked.
    pub fn check_hashes(
        &mut self,
        hashes: &[u64],
        partition: Option<&PartitionKey>,
        verdicts: &mut Vec<Verdict>,
    ) -> Result<(), Error> {
        verdicts.reserve(hashes.len());
        self.check_batch(hashes, partition, |verdict| verdicts.push(verdict))
    }

    /// Counts an input the caller could not check (a line without its key
    /// field, say) in [`Metrics::faults`].
    pub fn record_fault(&mut self) {
        self.counters.faults += 1;
    }

    /// Makes sure the partition a check names is live; `false` when its
    /// key is below every live partition's and all `partition_count` are in
    /// use (it would be evicted at once). A new partition beyond the count
    /// takes the place, and the cleared filter, of the lowest.
    fn open_partition(&mut self, partition: Option<&PartitionKey>) -> Result<bool, Error> {
        let (count, key) = match (self.settings.partition_count, partition) {
            (None, None) => return Ok(true),
            (Some(count), Some(key)) => (count, key),
            (None, Some(key)) => {
                return Err(Error::new(
                    ErrorKind::PartitionMismatch,
                    format!("partition {key} given, but this de-duplicator has no partitions"),
                ));
            }
            (Some(_), None) => {
                return Err(Error::new(
                    ErrorKind::PartitionMismatch,
                    "this de-duplicator is partitioned: every check needs a partition key",
                ));
            }
        };
        if self.partitions.contains_key(key) {
            return Ok(true);
        }
        if (self.partitions.len() as u64) < count {
            self.partitions
                .insert(key.clone(), self.filter_builder.build()?);
            return Ok(true);
        }
        match self.partitions.first_key_value() {
            Some((lowest, _)) if key < lowest => Ok(false),
            _ => {
                if let Some((_, mut reused)) = self.partitions.pop_first() {
                    reused.clear();
                    self.counters.evicted += 1;
                    self.partitions.insert(key.clone(), reused);
                }
                Ok(true)
            }
        }
    }

    /// The batched check behind every other: `answer` gets one verdict per
    /// hash, in order.
    fn check_batch(
        &mut self,
        hashes: &[u64],
        partition: Option<&PartitionKey>,
        mut answer: impl FnMut(Verdict),
    ) -> Result<(), Error> {
        if hashes.is_empty() {
            return Ok(());
        }
        let count = hashes.len() as u64;
        if !self.open_partition(partition)? {
            for _ in hashes {
                answer(Verdict::Unknown);
            }
            self.counters.checks += count;
            self.counters.dropped += count;
            return Ok(());
        }
        let unpartitioned = Self::unpartitioned_key();
        let own_key = partition.unwrap_or(&unpartitioned);
        let mut present = std::mem::take(&mut self.present);
        present.clear();
        present.resize(hashes.len(), false);
        self.store_in(own_key, hashes, &mut present)?;
        let mut elsewhere = std::mem::take(&mut self.elsewhere);
        self.look_elsewhere(own_key, hashes, &present, &mut elsewhere);
        let mut fresh = elsewhere.iter();
        let mut unique = 0;
        for &seen in &present {
            let duplicate = seen || fresh.next().copied().unwrap_or(false);
            unique += u64::from(!duplicate);
            answer(if duplicate {
                Verdict::Duplicate
            } else {
                Verdict::Unique
            });
        }
        self.present = present;
        self.elsewhere = elsewhere;
        self.counters.checks += count;
        self.counters.unique += unique;
        self.counters.duplicate += count - unique;
        self.refresh_alarms();
        Ok(())
    }

    /// Inserts the hashes into the partition `key`, setting `present[i]`
    /// when hash i was already there. For each run of [`BATCH`] hashes a
    /// batched lookup first overlaps their memory accesses; a key it finds
    /// needs no insert (its bits are set), the others are inserted one by
    /// one, in order, from cache lines the lookup brought in (a run's lines
    /// fit in a core's cache: 256 keys of 20 probes are 320 KiB at most).
    fn store_in(
        &mut self,
        key: &PartitionKey,
        hashes: &[u64],
        present: &mut [bool],
    ) -> Result<(), Error> {
        let own = self.partitions.get_mut(key).ok_or_else(|| {
            Error::new(
                ErrorKind::PartitionMismatch,
                format!("partition {key} is not live"),
            )
        })?;
        for (hashes, present) in hashes.chunks(BATCH).zip(present.chunks_mut(BATCH)) {
            own.contains_hashes(hashes, present);
            for (seen, &hash) in present.iter_mut().zip(hashes) {
                if !*seen {
                    *seen = !own.insert_hash(hash)?;
                }
            }
        }
        Ok(())
    }

    /// With search-all, whether each hash new to its own partition is in
    /// another: `elsewhere` gets one answer per `false` in `present`.
    fn look_elsewhere(
        &mut self,
        own_key: &PartitionKey,
        hashes: &[u64],
        present: &[bool],
        elsewhere: &mut Vec<bool>,
    ) {
        elsewhere.clear();
        if !self.settings.search_all || self.partitions.len() < 2 {
            return;
        }
        self.fresh.clear();
        self.fresh.extend(
            hashes
                .iter()
                .zip(present)
                .filter(|(_, seen)| !**seen)
                .map(|(&hash, _)| hash),
        );
        elsewhere.resize(self.fresh.len(), false);
        self.found.clear();
        self.found.resize(self.fresh.len(), false);
        for (key, filter) in &self.partitions {
            if key != own_key {
                filter.contains_hashes(&self.fresh, &mut self.found);
                for (any, &here) in elsewhere.iter_mut().zip(&self.found) {
                    *any |= here;
                }
            }
        }
    }

    /// Uniques stored over N of the highest partition, in percent.
    pub fn fill_level(&self) -> f64 {
        self.partitions
            .last_key_value()
            .map_or(0.0, |(_, filter)| self.fill_of(filter))
    }

    fn fill_of(&self, filter: &BloomFilter) -> f64 {
        filter.len() as f64 * 100.0 / self.expected_items() as f64
    }

    /// Moves the alarms to the current fill level.
    pub(crate) fn refresh_alarms(&mut self) {
        let fill = self.fill_level();
        self.alarms.update(fill, self.counters.checks);
    }

    /// The alarm events raised and not yet taken.
    pub fn pending_events(&self) -> &[AlarmEvent] {
        self.alarms.pending()
    }

    /// Takes the alarm events raised since the last call, oldest first.
    pub fn take_events(&mut self) -> Vec<AlarmEvent> {
        self.alarms.take()
    }

    /// Forgets every key: drops every partition (empties the one filter
    /// without partitioning). The verdict counters go on; the fill level
    /// falls to 0, which raises the 0% alarm event.
    pub fn clear(&mut self) {
        if self.settings.partition_count.is_some() {
            self.partitions.clear();
        } else {
            self.partitions.values_mut().for_each(Filter::clear);
        }
        self.refresh_alarms();
    }

    /// The metrics.
    pub fn metrics(&self) -> Metrics {
        let counters = &self.counters;
        Metrics {
            memory_bytes: self
                .partitions
                .values()
                .map(|filter| filter.memory_usage() as u64)
                .sum(),
            uniques_configured: self.expected_items(),
            uniques_stored: self.partitions.values().map(|f| f.len() as u64).sum(),
            fill_level: self.fill_level(),
            checks: counters.checks,
            unique: counters.unique,
            duplicate: counters.duplicate,
            dropped: counters.dropped,
            faults: counters.faults,
            partitions: self.partitions.len() as u64,
            evicted: counters.evicted,
        }
    }

    /// The status command's answer: metrics, alarms, and each partition.
    pub fn status(&self) -> Status {
        let partitioned = self.settings.partition_count.is_some();
        Status {
            metrics: self.metrics(),
            alarm_level: self.alarms.level(),
            alarm_thresholds: self.alarms.thresholds().to_vec(),
            partitions: self
                .partitions
                .iter()
                .map(|(key, filter)| PartitionStatus {
                    key: partitioned.then(|| key.clone()),
                    uniques_stored: filter.len() as u64,
                    fill_level: self.fill_of(filter),
                    fpp_now: filter.expected_fpp(),
                })
                .collect(),
        }
    }

    /// Takes over the stored keys and counters of `restored` (a checkpoint
    /// read into a new value); the alarms move to the new fill level.
    pub(crate) fn adopt(&mut self, restored: Self) {
        self.partitions = restored.partitions;
        self.counters = restored.counters;
        self.refresh_alarms();
    }
}

impl std::fmt::Debug for Deduplicator {
    /// A summary: the filters themselves can be gigabytes.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deduplicator")
            .field("settings", &self.settings)
            .field("config", &self.sizing.config)
            .field("partitions", &self.partitions.keys().collect::<Vec<_>>())
            .field("counters", &self.counters)
            .finish_non_exhaustive()
    }
}
