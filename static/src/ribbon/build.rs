//! Building a Ribbon filter: the hashes grouped by partition and start in
//! place, each partition banded and solved in cache, its words written
//! straight into the payload.

use filterlab_core::{BuildReport, Error, ErrorKind};

use super::band::{Banding, Input};
use super::kernel::Level;
use super::lookup::{Query, Ribbon};
use super::shape::{BAND, PARTITION_KEYS, Widths, grown_slots, initial_slots, partition_of};
use super::words::{Words, word_count};
use crate::builder::StaticBase;
use crate::hashes::group_by_top_bits;
use crate::storage::padded;

/// Bits below the partition bits a partition's hashes are grouped by, so
/// that repeated hashes lie side by side (a group holds about half a key).
const START_BITS: u32 = 12;

/// Builds the filter of `hashes` (duplicates tolerated) with `widths`.
///
/// Memory: the hashes (grouped by partition in place), the filter's
/// payload, the banding of two partitions at a time and of one being
/// retried, and the grouping of one partition (about 400 KiB together).
pub(super) fn build(
    base: &StaticBase,
    widths: Widths,
    hashes: Vec<u64>,
) -> Result<(Ribbon<Vec<u8>>, BuildReport), Error> {
    build_with(base, widths, hashes, Level::detect())
}

/// [`build`] with the back-substitution and the lookups compiled for
/// `level` (one this CPU runs).
pub(super) fn build_with(
    base: &StaticBase,
    widths: Widths,
    mut hashes: Vec<u64>,
    level: Level,
) -> Result<(Ribbon<Vec<u8>>, BuildReport), Error> {
    let total = hashes.len() as u64;
    let log_partitions = widths.log_partitions;
    let partitions = widths.partitions();
    let offsets_len = padded(4 * (partitions as usize + 1));
    let columns = u64::from(widths.columns);
    let mut payload = reserve_payload(base, total, widths, offsets_len)?;

    // In place by partition, the one pass over all the hashes; then each
    // partition, in cache, by the bits below (see `take_partition`).
    group_by_top_bits(&mut hashes, log_partitions);
    let mut grouping = Grouping::default();
    let mut words = Words {
        payload: &mut payload,
        start: offsets_len,
        columns,
        wide_groups: if widths.wide > 0 { u64::MAX } else { 0 },
    };
    // Partitions are banded two at a time; one that fails is retried alone.
    let (mut banding, mut retry) = (Banding::default(), Banding::default());
    let (mut first, mut retries, mut distinct_total) = (0u64, 0u32, 0u64);
    let mut offsets = Vec::with_capacity(partitions as usize + 1);
    let mut rest = &mut hashes[..];
    let (mut jobs, mut inputs) = (Vec::with_capacity(2), Vec::with_capacity(2));
    let mut partition = 0;
    while partition < partitions {
        // Not the last wide partition with the one before it: its slots
        // depend on where it starts (it ends on a group boundary, where
        // the words change stride), so on the slots the one before took.
        let pair = partition + 1 < partitions && partition + 2 != widths.wide;
        let count = if pair { 2 } else { 1 };
        for index in partition..partition + count {
            let (keys, others) =
                grouping.take_partition(std::mem::take(&mut rest), index, log_partitions);
            rest = others;
            distinct_total += keys.len() as u64;
            let last_wide = index + 1 == widths.wide;
            jobs.push(Partition {
                index,
                input: Input {
                    hashes: keys,
                    slots: fitted(initial_slots(keys.len() as u64), first, last_wide),
                    columns: widths.columns_of(index),
                },
                last_wide,
            });
        }
        inputs.clear();
        inputs.extend(jobs.iter().map(|job: &Partition<'_>| job.input));
        let outcomes = banding.band(log_partitions, &inputs);
        for ((part, mut job), outcome) in jobs.drain(..).enumerate().zip(outcomes) {
            let (solved_by, part) = if outcome.is_ok() {
                (&banding, part)
            } else {
                let failures = retry_alone(base, &mut retry, log_partitions, &mut job, first)?;
                retries = retries.saturating_add(failures);
                (&retry, 0)
            };
            let slots = job.input.slots as u64;
            offsets.push(first);
            words.reserve_through((first + slots - 1) / 64)?;
            level.run(solved_by.solve(part, first, job.input.columns, &mut words));
            first += slots;
            if job.last_wide {
                words.wide_groups = first / 64;
            }
        }
        partition += count;
    }
    offsets.push(first);
    if u32::try_from(first).is_err() {
        return Err(Error::new(
            ErrorKind::TooLarge,
            format!("{first} slots: a Ribbon filter holds at most 2^32 slots"),
        ));
    }
    let wide_groups = words.wide_groups.min(first / 64);
    words.wide_groups = wide_groups;
    words.resize(word_count(first, columns, wide_groups))?;
    drop(hashes);
    for (index, &offset) in offsets.iter().enumerate() {
        payload[4 * index..4 * index + 4].copy_from_slice(&(offset as u32).to_le_bytes());
    }
    let duplicates = total - distinct_total;
    let query = Query::with_level(widths, wide_groups, offsets_len, level);
    let ribbon = Ribbon {
        hasher: base.hasher,
        widths,
        slots: first,
        len: distinct_total,
        query,
        payload,
    };
    debug_assert!(first >= BAND * partitions);
    Ok((ribbon, BuildReport::new(retries, duplicates)))
}

/// A partition being built.
struct Partition<'a> {
    index: u64,
    input: Input<'a>,
    /// The last of the wide partitions: it ends on a group boundary.
    last_wide: bool,
}

/// The slots of a partition given `slots` for its keys: the last wide
/// partition, which starts at slot `first`, ends on a group boundary
/// (where the words change stride).
fn fitted(slots: u64, first: u64, last_wide: bool) -> usize {
    let slots = if last_wide {
        (first + slots).next_multiple_of(64) - first
    } else {
        slots
    };
    slots as usize
}

/// Bands `job`, which could not be solved, alone until it is, each time
/// with more slots and a new draw of starts; how many times it failed, or
/// the error once it failed more often than the builder allows.
fn retry_alone(
    base: &StaticBase,
    retry: &mut Banding,
    log_partitions: u32,
    job: &mut Partition<'_>,
    first: u64,
) -> Result<u32, Error> {
    let mut failures = 1;
    loop {
        if failures > base.max_retries {
            return Err(base.gave_up("RibbonFilter", &format!("partition {}", job.index)));
        }
        let grown = grown_slots(job.input.slots as u64, job.input.hashes.len() as u64);
        job.input.slots = fitted(grown, first, job.last_wide);
        if retry.band(log_partitions, &[job.input])[0].is_ok() {
            return Ok(failures);
        }
        failures += 1;
    }
}

/// The most hashes a partition is grouped through the buffer with (eight
/// times the keys a partition holds on average).
const MAX_BUFFERED: usize = 8 * PARTITION_KEYS as usize;

/// The grouping of one partition's hashes, reused from partition to
/// partition.
#[derive(Default)]
struct Grouping {
    /// Hashes per group, then where each group's hashes go.
    heads: Vec<u32>,
    /// The partition's hashes in the order of their groups.
    grouped: Vec<u64>,
}

impl Grouping {
    /// Splits the hashes of `partition` (the hashes are grouped by
    /// partition) off the front of `hashes`, groups them by the
    /// [`START_BITS`] bits below the partition's and removes their
    /// repeats: the distinct ones, and the hashes after them.
    ///
    /// A counting sort through a buffer of the partition's size, in cache:
    /// grouping all the hashes in place by these bits too took two more
    /// radix passes over the whole array and an insertion sort of every
    /// group: 27 against 16 ns a key at 10^6 keys for the grouping and
    /// the splitting into partitions together.
    fn take_partition<'h>(
        &mut self,
        hashes: &'h mut [u64],
        partition: u64,
        log_partitions: u32,
    ) -> (&'h [u64], &'h mut [u64]) {
        let count = hashes
            .iter()
            .take_while(|&&hash| partition_of(hash, log_partitions) == partition)
            .count();
        let (mine, others) = hashes.split_at_mut(count);
        if mine.len() > MAX_BUFFERED {
            // Only many repeats of a few keys make a partition this large:
            // sorted in place, the buffer stays small. (`dedup` groups by
            // at least one bit; so many hashes make several partitions
            // anyway.)
            let distinct = dedup(mine, log_partitions.max(1));
            return (&mine[..distinct], others);
        }
        let group = |hash: u64| ((hash << log_partitions) >> (64 - START_BITS)) as usize;
        self.heads.clear();
        self.heads.resize((1 << START_BITS) + 1, 0);
        for &hash in mine.iter() {
            self.heads[group(hash) + 1] += 1;
        }
        for index in 1..self.heads.len() {
            self.heads[index] += self.heads[index - 1];
        }
        self.grouped.clear();
        self.grouped.resize(mine.len(), 0);
        for &hash in mine.iter() {
            let head = &mut self.heads[group(hash)];
            self.grouped[*head as usize] = hash;
            *head += 1;
        }
        mine.copy_from_slice(&self.grouped);
        let distinct = dedup(mine, log_partitions + START_BITS);
        (&mine[..distinct], others)
    }
}

/// The payload's buffer, its offsets zeroed, reserved for the slots
/// expected for `keys` keys and 1% more (so that retries rarely move it);
/// refused over the memory limit or past 2^32 slots.
fn reserve_payload(
    base: &StaticBase,
    keys: u64,
    widths: Widths,
    offsets_len: usize,
) -> Result<Vec<u8>, Error> {
    let partitions = widths.partitions();
    let slots = initial_slots(keys / partitions) * partitions;
    let reserved = slots.saturating_add(slots / 100);
    if reserved > u64::from(u32::MAX) {
        return Err(Error::new(
            ErrorKind::TooLarge,
            format!("{keys} keys: a Ribbon filter holds at most 2^32 slots"),
        ));
    }
    let bytes = offsets_len as u64 + 8 * word_count(reserved, u64::from(widths.columns) + 1, 0);
    base.check_memory(bytes, "the Ribbon filter")?;
    let mut payload = Vec::new();
    payload
        .try_reserve_exact(usize::try_from(bytes).unwrap_or(usize::MAX))
        .map_err(|_| {
            Error::new(
                ErrorKind::TooLarge,
                format!("cannot allocate {bytes} bytes"),
            )
        })?;
    payload.resize(offsets_len, 0);
    Ok(payload)
}

/// Sorts the runs of `hashes` whose top `bits` bits are equal and removes
/// repeated hashes, in place; returns how many distinct hashes lead the
/// slice.
fn dedup(hashes: &mut [u64], bits: u32) -> usize {
    let key = |hash: u64| hash >> (64 - bits);
    let mut start = 0;
    while start < hashes.len() {
        let run = hashes[start..]
            .iter()
            .take_while(|&&hash| key(hash) == key(hashes[start]))
            .count();
        if run > 1 {
            hashes[start..start + run].sort_unstable();
        }
        start += run;
    }
    let mut kept = 0;
    for index in 0..hashes.len() {
        if kept == 0 || hashes[index] != hashes[kept - 1] {
            hashes[kept] = hashes[index];
            kept += 1;
        }
    }
    kept
}
