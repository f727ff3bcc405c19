//! A Ribbon filter's lookup over its payload, owned or borrowed: the
//! partition and band of a key, its coefficients moved to the band's
//! place, and the parity of each column's three words.

use filterlab_core::{KeyHasher, prefetch};

#[cfg(test)]
use super::kernel::Scalar;
use super::kernel::{Level, Lookup, Lookups, Parities};
use super::shape::{Row, Widths, partition_of, start_of};
use crate::storage::Payload;

/// What a lookup needs beside the payload, computed once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Query {
    pub(super) log_partitions: u32,
    /// Columns of the narrow partitions.
    pub(super) columns: u64,
    /// Partitions with `columns + 1` columns: the first ones.
    pub(super) wide: u64,
    /// Groups of 64 slots of the wide partitions.
    pub(super) wide_groups: u64,
    /// The payload's word (8 bytes) where the wide partitions' words
    /// start, after the partition offsets, and where the narrow ones' start
    /// (that plus `wide_groups`): a band's first word is one of them plus
    /// its group times its columns.
    wide_start: usize,
    narrow_start: usize,
    /// The lookups compiled for this CPU and the widest partitions.
    lookups: Lookups<Query>,
}

impl Query {
    pub(super) fn new(widths: Widths, wide_groups: u64, words_at: usize) -> Self {
        Self::with_level(widths, wide_groups, words_at, Level::detect())
    }

    /// As [`new`](Self::new), with the lookups of `level` (which this CPU
    /// must run: `Level::detect` found it, or a lower one).
    pub(super) fn with_level(
        widths: Widths,
        wide_groups: u64,
        words_at: usize,
        level: Level,
    ) -> Self {
        Self {
            log_partitions: widths.log_partitions,
            columns: u64::from(widths.columns),
            wide: widths.wide,
            wide_groups,
            wide_start: words_at / 8,
            narrow_start: words_at / 8 + wide_groups as usize,
            lookups: Lookups::new(level, widths.max_columns() as usize),
        }
    }
}

/// Where a key's band lies: the first of its three words in each column
/// (counted in the payload's 8-byte words), how far the band is into its first group, and the columns its partition
/// keeps (also the distance between the groups' words).
#[derive(Clone, Copy, Default)]
pub(super) struct Band {
    word: usize,
    shift: u32,
    columns: usize,
}

impl Band {
    /// The coefficients of `row` moved to the band's place in its three
    /// groups: the 128 bits shifted left by the start's offset in its group.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn coefficients(&self, row: Row) -> [u64; 3] {
        let shift = self.shift;
        [
            row.low << shift,
            (row.high << shift) | ((row.low >> 1) >> (63 - shift)),
            (row.high >> 1) >> (63 - shift),
        ]
    }

    /// Whether the column `parities` computed for `row` are its
    /// fingerprint, in the columns the band's partition keeps.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn matches(&self, row: Row, parities: u64) -> bool {
        (parities ^ row.fingerprint) & ((1 << self.columns) - 1) == 0
    }
}

/// The first slot of `partition` and the first after it (one range check
/// for both; the readers validated every offset).
#[inline]
fn offsets(bytes: &[u8], partition: usize) -> (u64, u64) {
    let pair = bytes
        .get(4 * partition..)
        .and_then(<[u8]>::first_chunk::<8>)
        .map_or(0, |pair| u64::from_le_bytes(*pair));
    (pair & u64::from(u32::MAX), pair >> 32)
}

/// The filter over its payload, owned or borrowed: one query code for both.
///
/// Payload: the P + 1 partition offsets (in slots, `u32`, little-endian,
/// padded to 8 bytes), then the words (`u64`, little-endian).
#[derive(Clone)]
pub(super) struct Ribbon<S> {
    pub(super) hasher: KeyHasher,
    pub(super) widths: Widths,
    /// Slots of all partitions.
    pub(super) slots: u64,
    /// Distinct key hashes held.
    pub(super) len: u64,
    pub(super) query: Query,
    pub(super) payload: S,
}

/// Arrays at least this large are prefetched by batched lookups.
const PREFETCH_MIN_BYTES: usize = 1 << 16;
/// Batched lookups prefetch the band of the key this many places ahead.
const PREFETCH_AHEAD: usize = 8;

impl<S: Payload> Ribbon<S> {
    #[inline]
    pub(super) fn contains_hash(&self, hash: u64) -> bool {
        let query = &self.query;
        query.lookups.test(query, self.payload.bytes(), hash)
    }

    pub(super) fn contains_hashes(&self, hashes: &[u64], found: &mut [bool]) {
        let query = &self.query;
        query
            .lookups
            .test_batch(query, self.payload.bytes(), hashes, found);
    }

    pub(super) fn borrow(&self) -> Ribbon<&[u8]> {
        Ribbon {
            hasher: self.hasher,
            widths: self.widths,
            slots: self.slots,
            len: self.len,
            query: self.query,
            payload: self.payload.bytes(),
        }
    }
}

impl Query {
    /// Where the band of `hash` lies in `bytes`.
    #[inline]
    fn band(&self, bytes: &[u8], hash: u64) -> Band {
        let partition = partition_of(hash, self.log_partitions);
        let (first, end) = offsets(bytes, partition as usize);
        let slots = end.wrapping_sub(first);
        let slot = first + start_of(hash, self.log_partitions, slots);
        let wide = partition < self.wide;
        let columns = self.columns + u64::from(wide);
        let start = if wide {
            self.wide_start
        } else {
            self.narrow_start
        };
        Band {
            word: ((slot / 64) * columns) as usize + start,
            shift: (slot % 64) as u32,
            columns: columns as usize,
        }
    }

    /// [`Lookup::test`] with the key's band already found: the three words
    /// of each of `L` columns that the band spans, ANDed with the
    /// coefficients moved to the band's place, XORed together; the parity
    /// of each is that column's bit. Columns past the partition's are
    /// computed from the words after its own (the layout pads the end) and
    /// masked off.
    // Always inlined into the entry points of `kernel`, which compile it
    // for the CPU's level (with AVX2 the column loop becomes vectors).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn test_band<P: Parities, const L: usize>(
        &self,
        parities: P,
        bytes: &[u8],
        hash: u64,
        band: Band,
    ) -> bool {
        let row = Row::of(hash);
        let coefficients = band.coefficients(row);
        // The words of the band's three groups: one range check for all
        // (the reader validated every index; the payload's words start at
        // a multiple of 8). A stride is at most `L`, which tells the
        // compiler that the three groups lie inside the span.
        let (words, _) = bytes.as_chunks::<8>();
        let stride = band.columns.min(L);
        let tail = || self.test_tail::<P, L>(parities, bytes, hash);
        let Some(span) = words.get(band.word..band.word + 2 * stride + L) else {
            return tail();
        };
        let second = span.split_at(stride).1;
        let third = second.split_at(stride).1;
        let (Some(first), Some(second), Some(third)) = (
            span.first_chunk::<L>(),
            second.first_chunk::<L>(),
            third.first_chunk::<L>(),
        ) else {
            return tail();
        };
        let groups = [first, second, third];
        band.matches(row, parities.parities::<L>(coefficients, groups))
    }

    /// [`test_band`](Self::test_band) of a band whose `L` words a group
    /// would run past the payload's end (`L` is the widest partition's
    /// columns rounded up to the level's lanes, more than the layout keeps
    /// after the last group: its columns and one word). The words past the
    /// end are read as zero: they fall in the columns masked off. Only a
    /// band at the very end can get here (the last bands start two groups
    /// before the last, which leaves room), so it is out of line.
    #[cold]
    #[inline(never)]
    fn test_tail<P: Parities, const L: usize>(&self, parities: P, bytes: &[u8], hash: u64) -> bool {
        let band = self.band(bytes, hash);
        let row = Row::of(hash);
        let (words, _) = bytes.as_chunks::<8>();
        let group = |index: usize| {
            let mut padded = [[0u8; 8]; L];
            let start = band.word.saturating_add(index * band.columns);
            let available = words.get(start..).unwrap_or_default();
            let kept = available.len().min(L);
            padded[..kept].copy_from_slice(&available[..kept]);
            padded
        };
        let groups = [group(0), group(1), group(2)];
        let groups = [&groups[0], &groups[1], &groups[2]];
        band.matches(row, parities.parities::<L>(band.coefficients(row), groups))
    }
}

impl Lookup for Query {
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn test<P: Parities, const L: usize>(&self, parities: P, bytes: &[u8], hash: u64) -> bool {
        self.test_band::<P, L>(parities, bytes, hash, self.band(bytes, hash))
    }

    /// The band of the key [`PREFETCH_AHEAD`] places ahead is found and
    /// prefetched, and kept in a ring until that key's turn.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn test_batch<P: Parities, const L: usize>(
        &self,
        parities: P,
        bytes: &[u8],
        hashes: &[u64],
        found: &mut [bool],
    ) {
        if bytes.len() < PREFETCH_MIN_BYTES {
            for (answer, &hash) in found.iter_mut().zip(hashes) {
                *answer = self.test::<P, L>(parities, bytes, hash);
            }
            return;
        }
        let prefetched = |hash: u64| {
            let band = self.band(bytes, hash);
            // The first byte of each group's words, with one range check.
            let (at, stride) = (8 * band.word, 8 * band.columns);
            if let Some(span) = bytes.get(at..).and_then(|rest| rest.get(..=2 * stride)) {
                for group in 0..3 {
                    prefetch(&span[group * stride]);
                }
            }
            band
        };
        let mut ring = [Band::default(); PREFETCH_AHEAD];
        for (slot, &hash) in ring.iter_mut().zip(hashes) {
            *slot = prefetched(hash);
        }
        for (i, (answer, &hash)) in found.iter_mut().zip(hashes).enumerate() {
            let slot = &mut ring[i % PREFETCH_AHEAD];
            *answer = self.test_band::<P, L>(parities, bytes, hash, *slot);
            if let Some(&ahead) = hashes.get(i + PREFETCH_AHEAD) {
                *slot = prefetched(ahead);
            }
        }
    }
}

#[cfg(test)]
impl Query {
    /// For the tests: the answers of the inline lookup of `hash`, of the
    /// out-of-line one of the payload's end on the whole payload, and of
    /// that on the payload cut right after the last word the key's band
    /// keeps (the words past it then read as zero).
    pub(super) fn tail_answers<const L: usize>(&self, bytes: &[u8], hash: u64) -> [bool; 3] {
        let band = self.band(bytes, hash);
        let cut = &bytes[..8 * (band.word + 3 * band.columns)];
        [
            self.test::<Scalar, L>(Scalar, bytes, hash),
            self.test_tail::<Scalar, L>(Scalar, bytes, hash),
            self.test_tail::<Scalar, L>(Scalar, cut, hash),
        ]
    }
}
