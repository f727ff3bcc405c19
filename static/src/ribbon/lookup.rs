//! A Ribbon filter's lookup over its payload, owned or borrowed: the
//! partition and band of a key, its coefficients moved to the band's
//! place, and the parity of each column's three words.

use filterlab_core::{KeyHasher, prefetch};

use super::kernel::{Counting, Popcnt};
use super::shape::{Row, Widths, partition_of, start_of};
use crate::storage::{Payload, le_bytes};

/// What a lookup needs beside the payload, computed once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Query {
    pub(super) log_partitions: u32,
    /// Columns of the narrow partitions.
    pub(super) columns: u64,
    /// Columns a lookup computes: one more than `columns` when any
    /// partition is wide (a narrow partition's lookup ignores it).
    pub(super) max_columns: u64,
    /// Partitions with `columns + 1` columns: the first ones.
    pub(super) wide: u64,
    /// Groups of 64 slots of the wide partitions.
    pub(super) wide_groups: u64,
    /// Where the words start in the payload (after the partition offsets).
    pub(super) words_at: usize,
    /// Whether lookups run compiled with POPCNT.
    pub(super) popcnt: Option<Popcnt>,
}

impl Query {
    pub(super) fn new(widths: Widths, wide_groups: u64, words_at: usize) -> Self {
        Self {
            log_partitions: widths.log_partitions,
            columns: u64::from(widths.columns),
            max_columns: u64::from(widths.max_columns()),
            wide: widths.wide,
            wide_groups,
            words_at,
            popcnt: Popcnt::detect(),
        }
    }
}

/// Where a key's band lies: the first of its three words in each column,
/// the distance between the groups' words, how far the band is into its
/// first group, and the columns its partition keeps.
#[derive(Clone, Copy, Default)]
pub(super) struct Band {
    word: usize,
    stride: usize,
    shift: u32,
    columns: u64,
}

/// Runs `$body` with the const `$R` equal to `$columns` (1 to 32): the
/// lookup loop is then unrolled for the filter's width, chosen once per
/// call (a branch every lookup of a filter takes the same way).
macro_rules! with_columns {
    ($columns:expr, |$R:ident| $body:expr) => {
        seq_columns!($columns, $R, $body, 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32)
    };
}

/// The arms of [`with_columns!`].
macro_rules! seq_columns {
    ($columns:expr, $R:ident, $body:expr, $($n:literal)*) => {
        match $columns {
            $($n => { const $R: usize = $n; $body })*
            _ => unreachable!("a Ribbon lookup computes 1 to 32 columns"),
        }
    };
}

/// The first slot of `partition` and the first after it (one range check
/// for both; the readers validated every offset).
#[inline]
fn offsets(bytes: &[u8], partition: usize) -> (u64, u64) {
    let pair: [u8; 8] = le_bytes(bytes.get(4 * partition..).unwrap_or_default(), 0);
    let (first, end) = pair.split_at(4);
    let word = |half: &[u8]| u64::from(u32::from_le_bytes(half.try_into().unwrap_or_default()));
    (word(first), word(end))
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
    pub(super) fn band(&self, bytes: &[u8], hash: u64) -> Band {
        let query = &self.query;
        let partition = partition_of(hash, query.log_partitions);
        let (first, end) = offsets(bytes, partition as usize);
        let slots = end.wrapping_sub(first);
        let slot = first + start_of(hash, query.log_partitions, slots);
        let wide = partition < query.wide;
        let columns = query.columns + u64::from(wide);
        let narrow_offset = if wide { 0 } else { query.wide_groups };
        Band {
            word: ((slot / 64) * columns + narrow_offset) as usize,
            stride: columns as usize,
            shift: (slot % 64) as u32,
            columns,
        }
    }

    #[inline]
    pub(super) fn contains_hash(&self, hash: u64) -> bool {
        let bytes = self.payload.bytes();
        match self.query.popcnt {
            Some(popcnt) => with_columns!(self.query.max_columns, |R| {
                popcnt.run(Test::<'_, S, R> {
                    ribbon: self,
                    bytes,
                    hash,
                })
            }),
            None => with_columns!(self.query.max_columns, |R| self.test::<R>(bytes, hash)),
        }
    }

    pub(super) fn contains_hashes(&self, hashes: &[u64], found: &mut [bool]) {
        match self.query.popcnt {
            Some(popcnt) => with_columns!(self.query.max_columns, |R| {
                popcnt.run(TestBatch::<'_, '_, S, R> {
                    ribbon: self,
                    hashes,
                    found,
                });
            }),
            None => with_columns!(self.query.max_columns, |R| {
                self.test_batch::<R>(hashes, found);
            }),
        }
    }

    /// Whether the key of `hash` may be present, for a filter whose
    /// lookups compute `R` columns: the three words of each column that
    /// the band spans, ANDed with the coefficients moved to the band's
    /// place, XORed together; the parity of each is that column's bit.
    // Always inlined: into the POPCNT kernel, where it is then compiled
    // with the instruction, and into each arm of `with_columns!`.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(super) fn test<const R: usize>(&self, bytes: &[u8], hash: u64) -> bool {
        self.test_band::<R>(bytes, hash, self.band(bytes, hash))
    }

    /// [`test`](Self::test) with the key's band already found.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn test_band<const R: usize>(&self, bytes: &[u8], hash: u64, band: Band) -> bool {
        let row = Row::of(hash);
        let shift = band.shift;
        let c0 = row.low << shift;
        let c1 = (row.high << shift) | ((row.low >> 1) >> (63 - shift));
        let c2 = (row.high >> 1) >> (63 - shift);
        // One range check for every word read (the reader validated it).
        let stride = band.stride.min(R);
        let at = self.query.words_at + 8 * band.word;
        let Some(span) = bytes.get(at..at + 8 * (2 * stride + R)) else {
            return true;
        };
        let (words, _) = span.as_chunks::<8>();
        let mut result = 0;
        for column in 0..R {
            let word = |index: usize| u64::from_le_bytes(words[index]);
            let selected = (c0 & word(column))
                ^ (c1 & word(stride + column))
                ^ (c2 & word(2 * stride + column));
            result |= u64::from(selected.count_ones() & 1) << column;
        }
        let mask = (1 << band.columns) - 1;
        (result ^ row.fingerprint) & mask == 0
    }

    /// [`test`](Self::test) of a batch: the band of the key
    /// [`PREFETCH_AHEAD`] places ahead is found and prefetched, and kept
    /// in a ring until that key's turn.
    pub(super) fn test_batch<const R: usize>(&self, hashes: &[u64], found: &mut [bool]) {
        let bytes = self.payload.bytes();
        if bytes.len() < PREFETCH_MIN_BYTES {
            for (answer, &hash) in found.iter_mut().zip(hashes) {
                *answer = self.test::<R>(bytes, hash);
            }
            return;
        }
        let prefetched = |hash: u64| {
            let band = self.band(bytes, hash);
            let at = self.query.words_at + 8 * band.word;
            for group in 0..3 {
                if let Some(byte) = bytes.get(at + 8 * group * band.stride) {
                    prefetch(byte);
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
            let band = *slot;
            if let Some(&ahead) = hashes.get(i + PREFETCH_AHEAD) {
                *slot = prefetched(ahead);
            }
            *answer = self.test_band::<R>(bytes, hash, band);
        }
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

/// One lookup, compiled with POPCNT by [`Popcnt::run`].
pub(super) struct Test<'a, S, const R: usize> {
    pub(super) ribbon: &'a Ribbon<S>,
    pub(super) bytes: &'a [u8],
    pub(super) hash: u64,
}

impl<S: Payload, const R: usize> Counting for Test<'_, S, R> {
    type Output = bool;

    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn run(self) -> bool {
        self.ribbon.test::<R>(self.bytes, self.hash)
    }
}

/// A batch of lookups, compiled with POPCNT by [`Popcnt::run`].
pub(super) struct TestBatch<'a, 'b, S, const R: usize> {
    pub(super) ribbon: &'a Ribbon<S>,
    pub(super) hashes: &'a [u64],
    pub(super) found: &'b mut [bool],
}

impl<S: Payload, const R: usize> Counting for TestBatch<'_, '_, S, R> {
    type Output = ();

    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn run(self) {
        self.ribbon.test_batch::<R>(self.hashes, self.found);
    }
}
