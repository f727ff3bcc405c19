//! Lookups through a view against the owned filter, for counting their
//! instructions under Valgrind: each of the three array filters, with
//! 100,000 keys at 1%, is asked 100,000 absent and 100,000 present keys one
//! by one and batched, owned, through a view of aligned bytes (read in
//! place) and through a view one byte off (decoded from little-endian
//! bytes). Each measured loop is its own function, so callgrind's inclusive
//! counts per function compare them:
//!
//! ```text
//! cargo build --release -p filterlab-bloom --example view_instructions
//! for filter in standard blocked split; do
//!     valgrind --tool=callgrind --callgrind-out-file=/tmp/views-$filter.out \
//!         target/release/examples/view_instructions $filter
//!     callgrind_annotate --inclusive=yes /tmp/views-$filter.out | grep 'view_instructions::'
//! done
//! ```
//!
//! Divide each count by the 200,000 lookups of a loop.

use std::hint::black_box;

use filterlab_bloom::{
    BlockedBloomFilter, BloomFilter, Checksum, Filter, Membership, SplitBlockBloomFilter, Viewable,
};

const KEYS: u64 = 100_000;

/// The keys asked: the inserted ones and as many others.
fn queries() -> Vec<u64> {
    (0..2 * KEYS)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect()
}

/// Hits of one-by-one lookups.
#[inline(never)]
fn one_by_one<M: Membership>(filter: &M, keys: &[u64]) -> usize {
    keys.iter().filter(|key| filter.contains(*key)).count()
}

/// Hits of batched lookups.
#[inline(never)]
fn batched<M: Membership>(filter: &M, keys: &[u64]) -> usize {
    filter
        .contains_many(keys)
        .into_iter()
        .filter(|&hit| hit)
        .count()
}

/// One measured function per (filter, storage, lookup), named for
/// callgrind's per-function counts.
/// callgrind's per-function counts. (Each adds its own tag, so that the
/// linker does not fold two of them into one.)
macro_rules! measured {
    ($($name:ident => $lookup:ident, $tag:literal),* $(,)?) => {
        $(
            #[inline(never)]
            fn $name<M: Membership>(filter: &M, keys: &[u64]) -> usize {
                $lookup(black_box(filter), black_box(keys)) + black_box($tag)
            }
        )*
    };
}

measured!(
    owned_single => one_by_one, 0, owned_batched => batched, 1,
    aligned_view_single => one_by_one, 2, aligned_view_batched => batched, 3,
    byte_view_single => one_by_one, 4, byte_view_batched => batched, 5,
);

/// Runs the six measured loops of `filter` and checks they agree.
fn measure<F: Viewable + Filter>(name: &str, mut filter: F) {
    let keys = queries();
    let hasher = *filter.hasher();
    let inserted: Vec<u64> = keys[..KEYS as usize]
        .iter()
        .map(|key| hasher.hash(key))
        .collect();
    filter.insert_hashes(&inserted).unwrap();
    let bytes = filter.to_bytes();
    // An 8-byte-aligned copy, then the same bytes one byte past it.
    let mut words = vec![0u64; bytes.len().div_ceil(8) + 1];
    let buffer: &mut [u8] = bytemuck::cast_slice_mut(&mut words);
    buffer[..bytes.len()].copy_from_slice(&bytes);
    let answers = {
        let aligned = F::view(&buffer[..bytes.len()], Checksum::Defer).unwrap();
        [
            owned_single(&filter, &keys),
            owned_batched(&filter, &keys) - 1,
            aligned_view_single(&aligned, &keys) - 2,
            aligned_view_batched(&aligned, &keys) - 3,
        ]
    };
    buffer.copy_within(..bytes.len(), 1);
    let shifted = F::view(&buffer[1..=bytes.len()], Checksum::Defer).unwrap();
    let shifted_answers = [
        byte_view_single(&shifted, &keys) - 4,
        byte_view_batched(&shifted, &keys) - 5,
    ];
    assert!(
        answers
            .iter()
            .chain(&shifted_answers)
            .all(|&hits| hits == answers[0])
    );
    println!(
        "{name}: {} hits of {} in each of six loops",
        answers[0],
        keys.len()
    );
}

/// The filter named by the first argument (`standard`, `blocked` or
/// `split`; all three when none), one run each for callgrind.
fn main() {
    let which = std::env::args().nth(1);
    let wanted = |name: &str| which.as_deref().is_none_or(|w| w == name);
    if wanted("standard") {
        let standard = BloomFilter::with_fpp(0.01).expected_items(KEYS).seed(1);
        measure("BloomFilter", standard.build().unwrap());
    }
    if wanted("blocked") {
        let blocked = BlockedBloomFilter::with_fpp(0.01)
            .expected_items(KEYS)
            .seed(1);
        measure("BlockedBloomFilter", blocked.build().unwrap());
    }
    if wanted("split") {
        let split = SplitBlockBloomFilter::with_fpp(0.01)
            .expected_items(KEYS)
            .seed(1);
        measure("SplitBlockBloomFilter", split.build().unwrap());
    }
}
