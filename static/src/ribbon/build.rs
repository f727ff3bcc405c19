//! Building a Ribbon filter: the hashes grouped by partition and start in
//! place, each partition banded and solved in cache, its words written
//! straight into the payload.

use filterlab_core::{BuildReport, Error, ErrorKind};

use super::band::{Banding, Unsolvable};
use super::kernel::Level;
use super::lookup::{Query, Ribbon};
use super::shape::{BAND, Widths, grown_slots, initial_slots, partition_of};
use super::words::{Words, word_count};
use crate::builder::StaticBase;
use crate::hashes::group_by_top_bits;
use crate::storage::padded;

/// Bits below the partition bits the hashes are grouped by: about one
/// slot's worth of starts, so that a partition's keys are banded from its
/// first slot to its last and repeated hashes lie side by side.
const START_BITS: u32 = 12;

/// Builds the filter of `hashes` (duplicates tolerated) with `widths`.
///
/// Memory: the hashes (reordered in place), the filter's payload, and the
/// banding of one partition (about 120 KiB).
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

    let group_bits = log_partitions + START_BITS;
    group_by_top_bits(&mut hashes, group_bits);
    let mut words = Words {
        payload: &mut payload,
        start: offsets_len,
        columns,
        wide_groups: if widths.wide > 0 { u64::MAX } else { 0 },
    };
    let mut banding = Banding::default();
    let (mut first, mut retries, mut distinct_total) = (0u64, 0u32, 0u64);
    let mut offsets = Vec::with_capacity(partitions as usize + 1);
    let mut rest = &mut hashes[..];
    for partition in 0..partitions {
        let count = rest
            .iter()
            .take_while(|&&hash| partition_of(hash, log_partitions) == partition)
            .count();
        let (mine, others) = rest.split_at_mut(count);
        rest = others;
        let distinct = dedup(mine, group_bits);
        let keys = &mine[..distinct];
        distinct_total += distinct as u64;
        let columns = widths.columns_of(partition);
        let last_wide = partition + 1 == widths.wide;
        // The wide partitions end on a group boundary, where the words
        // change stride.
        let fit = |slots: u64| {
            if last_wide {
                (first + slots).next_multiple_of(64) - first
            } else {
                slots
            }
        };
        let mut slots = fit(initial_slots(distinct as u64));
        let mut failures = 0;
        while let Err(Unsolvable) = banding.band(keys, log_partitions, slots as usize, columns) {
            failures += 1;
            if failures > base.max_retries {
                return Err(base.gave_up("RibbonFilter", &format!("partition {partition}")));
            }
            slots = fit(grown_slots(slots, distinct as u64));
        }
        retries = retries.saturating_add(failures);
        offsets.push(first);
        words.reserve_through((first + slots - 1) / 64)?;
        level.run(banding.solve(first, columns, &mut words));
        first += slots;
        if last_wide {
            words.wide_groups = first / 64;
        }
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
