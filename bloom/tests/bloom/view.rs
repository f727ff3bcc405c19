//! Views of the three array filters: the same answers as the owned filter
//! read from the same bytes, at any address, for every layout the reader
//! accepts; and a damaged file refused with a typed error exactly where
//! the reader refuses it, never a panic.

use std::fmt::Debug;

use filterlab_bloom::{
    BlockProbes, BlockedBloomFilter, BloomFilter, Checksum, ErrorKind, Filter, Membership, Persist,
    SplitBlockBloomFilter, Viewable,
};
use filterlab_core::format::Header;
use filterlab_core::keys::{insert_key, query_key};
use proptest::prelude::*;

use crate::{with_counter, with_header};

/// `bytes` copied to `shift` bytes past an 8-byte boundary: a view there
/// reads aligned words (shift 0) or little-endian bytes (any other).
fn at_offset(bytes: &[u8], shift: usize) -> (Vec<u64>, std::ops::Range<usize>) {
    let mut buffer = vec![0u64; (bytes.len() + shift).div_ceil(8)];
    let range = shift..shift + bytes.len();
    bytemuck::cast_slice_mut::<u64, u8>(&mut buffer)[range.clone()].copy_from_slice(bytes);
    (buffer, range)
}

/// A view of `filter`'s file, at every offset 0..8 and with the checksum
/// verified or deferred, answers every key (`inserted` of the build
/// seed, then others) as the filter does, one by one and batched, and
/// reports its length, capacity and FPPs; the aligned offset reads in
/// place, the others through bytes.
fn check_view_answers_as_the_filter<F>(filter: &F, seed: u64, inserted: u64)
where
    F: Viewable + Debug,
{
    let bytes = filter.to_bytes();
    let read = F::from_bytes(&bytes).unwrap();
    let keys: Vec<u64> = (0..inserted)
        .map(|i| insert_key(seed, i))
        .chain((0..2000).map(|i| query_key(seed, i)))
        .collect();
    let expected: Vec<bool> = keys.iter().map(|key| read.contains(key)).collect();
    assert!(expected[..inserted as usize].iter().all(|&hit| hit));
    for shift in 0..8 {
        let (buffer, range) = at_offset(&bytes, shift);
        let held = &bytemuck::cast_slice::<u64, u8>(&buffer)[range];
        for checksum in [Checksum::Verify, Checksum::Defer] {
            let view = F::view(held, checksum).unwrap();
            let one_by_one: Vec<bool> = keys.iter().map(|key| view.contains(key)).collect();
            assert_eq!(one_by_one, expected, "shift {shift}, {checksum:?}");
            assert_eq!(view.contains_many(&keys), expected, "shift {shift}");
            assert_eq!(view.len(), read.len());
            assert_eq!(view.capacity(), read.capacity());
            assert_eq!(view.expected_fpp(), read.expected_fpp());
            assert_eq!(view.theoretical_fpp(1000), read.theoretical_fpp(1000));
            assert_eq!(view.hasher(), read.hasher());
            assert_eq!(view.memory_usage() as u64, read.header().payload_len);
            F::verify_checksum(&view).unwrap();
            let debug = format!("{view:?}");
            if debug.contains("payload") {
                // The blocked views say how they read their payload.
                let in_place = debug.contains("aligned words");
                assert_eq!(in_place, shift == 0 && cfg!(target_endian = "little"));
            }
        }
    }
}

/// `filter` with `items` keys of `seed` inserted.
fn filled<F: Filter>(mut filter: F, seed: u64, items: u64) -> F {
    let hasher = *filter.hasher();
    let hashes: Vec<u64> = (0..items)
        .map(|i| hasher.hash(&insert_key(seed, i)))
        .collect();
    filter.insert_hashes(&hashes).unwrap();
    filter
}

/// The filters a view is checked against, one of each type and layout:
/// `items` keys of `seed` into filters sized for `capacity` at `fpp`
/// (with `bits`, a size that is not a whole number of words or blocks for
/// the standard filter, and k set).
fn check_every_layout(seed: u64, capacity: u64, items: u64, fpp: f64, bits: u64, k: u32) {
    let standard = BloomFilter::with_fpp(fpp)
        .expected_items(capacity)
        .seed(seed);
    check_view_answers_as_the_filter(&filled(standard.build().unwrap(), seed, items), seed, items);
    let odd = BloomFilter::with_bits(bits).hashes(k).seed(seed);
    check_view_answers_as_the_filter(&filled(odd.build().unwrap(), seed, items), seed, items);
    for probes in [BlockProbes::Independent, BlockProbes::Striped] {
        let blocked = BlockedBloomFilter::with_fpp(fpp)
            .expected_items(capacity)
            .seed(seed)
            .probes(probes);
        let filter = filled(blocked.build().unwrap(), seed, items);
        check_view_answers_as_the_filter(&filter, seed, items);
        let by_size = BlockedBloomFilter::with_bits(bits)
            .hashes(k.min(16))
            .seed(seed);
        let filter = filled(by_size.probes(probes).build().unwrap(), seed, items);
        check_view_answers_as_the_filter(&filter, seed, items);
    }
    // Above 16 probes, where only independent probes go.
    let many = BlockedBloomFilter::with_bits(bits)
        .hashes(16 + k)
        .seed(seed);
    check_view_answers_as_the_filter(&filled(many.build().unwrap(), seed, items), seed, items);
    let split = SplitBlockBloomFilter::with_fpp(fpp)
        .expected_items(capacity)
        .seed(seed);
    check_view_answers_as_the_filter(&filled(split.build().unwrap(), seed, items), seed, items);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Views answer as their filters for random sizes, fills, FPPs and k.
    #[test]
    fn views_answer_as_the_filters(
        seed in any::<u64>(),
        capacity in 1u64..3000,
        fill in 0.0f64..1.5,
        fpp in prop::sample::select(vec![0.1, 0.01, 0.001]),
        bits in 1u64..40_000,
        k in 1u32..12,
    ) {
        let items = (capacity as f64 * fill) as u64;
        check_every_layout(seed, capacity, items, fpp, bits, k);
    }
}

/// The golden files of every layout open as views holding their keys.
#[test]
fn golden_files_open_as_views() {
    let golden = |name: &str| {
        std::fs::read(format!(
            "{}/tests/golden/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    };
    let bytes = golden("bloom-v1.bin");
    let view = BloomFilter::view(&bytes, Checksum::Verify).unwrap();
    assert!(crate::GOLDEN_KEYS.iter().all(|key| view.contains(*key)));
    for name in ["blocked-bloom-v1.bin", "blocked-bloom-striped-v1.bin"] {
        let bytes = golden(name);
        let view = BlockedBloomFilter::view(&bytes, Checksum::Verify).unwrap();
        assert!(crate::GOLDEN_KEYS.iter().all(|key| view.contains(*key)));
    }
    let bytes = golden("split-block-bloom-v1.bin");
    let view = SplitBlockBloomFilter::view(&bytes, Checksum::Verify).unwrap();
    assert!(crate::GOLDEN_KEYS.iter().all(|key| view.contains(*key)));
}

/// Opening `bytes` as a verified view succeeds exactly when reading them
/// does, and a deferred view either is
/// refused too or is opened and then fails its checksum, or the file was
/// sound; never a panic. Returns the verified view's error kind.
fn check_open_as_read<F: Viewable>(bytes: &[u8], what: &str) -> Option<ErrorKind> {
    let read = F::from_bytes(bytes).map(drop).map_err(|e| e.kind());
    let viewed = F::view(bytes, Checksum::Verify)
        .map(drop)
        .map_err(|e| e.kind());
    // Refused alike (the kind may differ where a file has two flaws and
    // the two check them in another order).
    assert_eq!(
        viewed.is_ok(),
        read.is_ok(),
        "{what}: {viewed:?} vs {read:?}"
    );
    if let Ok(view) = F::view(bytes, Checksum::Defer)
        && read.is_err()
    {
        // Only what a pass over the payload finds is left for later.
        let later = F::verify_checksum(&view).map_err(|e| e.kind());
        let counter = read == Err(ErrorKind::InvalidHeader);
        assert!(later.is_err() || counter, "{what}: deferred view opened");
    }
    viewed.err()
}

/// Every byte flip and every truncation of `filter`'s file, and a byte
/// past its end, are refused by the view as by the reader.
fn check_damage_refused<F: Viewable>(filter: &F) {
    let bytes = filter.to_bytes();
    for at in 0..bytes.len() {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x41;
        assert!(check_open_as_read::<F>(&damaged, &format!("flip at {at}")).is_some());
    }
    for len in 0..bytes.len() {
        let kind = check_open_as_read::<F>(&bytes[..len], &format!("{len} bytes"));
        assert_eq!(kind, Some(ErrorKind::Truncated));
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(
        check_open_as_read::<F>(&longer, "a byte past the end"),
        Some(ErrorKind::LengthMismatch)
    );
}

/// A named edit of a header.
type Edit<'a> = (&'a str, fn(&mut Header));

/// Headers whose checksums are sound but whose parameters are not, each
/// with `filter`'s payload: `edit(params)` changes them, and the view
/// refuses each as the reader does.
fn check_crafted_params_refused<F: Viewable>(filter: &F, edits: &[Edit<'_>]) {
    for (what, edit) in edits {
        let mut header = filter.header();
        edit(&mut header);
        let kind = check_open_as_read::<F>(&with_header(filter, &header), what);
        assert!(kind.is_some(), "{what} opened");
    }
}

/// A counter above the bits set: refused by a verified view as by the
/// reader; a deferred view trusts it (only `len` reports it).
fn check_counter_refused<F: Viewable>(filter: &F, set_bits: u64) {
    let bytes = with_counter(filter, set_bits + 1);
    let kind = check_open_as_read::<F>(&bytes, "counter above the bits set");
    assert_eq!(kind, Some(ErrorKind::InvalidHeader));
    let deferred = F::view(&bytes, Checksum::Defer).unwrap();
    assert_eq!(deferred.len() as u64, set_bits + 1);
}

#[test]
fn damaged_standard_files_are_refused() {
    let filter = filled(
        BloomFilter::with_bits(1000).hashes(5).build().unwrap(),
        3,
        60,
    );
    check_damage_refused(&filter);
    check_counter_refused(&filter, filter.set_bits());
    check_crafted_params_refused(
        &filter,
        &[
            ("zero bits", |h| h.params[0] = 0),
            ("more bits than the payload", |h| h.params[0] = 1025),
            ("fewer bits than the payload", |h| h.params[0] = 960),
            ("zero hashes", |h| h.params[1] = 0),
            ("65 hashes", |h| h.params[1] = 65),
            ("a parameter missing", |h| {
                h.params.pop();
            }),
            ("a parameter too many", |h| h.params.push(0)),
        ],
    );
    // Bits set past the end of the array: its last word's top bits.
    let mut header = filter.header();
    header.params[0] = 999;
    let mut frame = filterlab_core::format::FrameWriter::new(Vec::new(), &header).unwrap();
    frame.write_words(&[u64::MAX; 16]).unwrap();
    let bytes = frame.finish().unwrap();
    let kind = check_open_as_read::<BloomFilter>(&bytes, "bits past the end");
    assert_eq!(kind, Some(ErrorKind::InvalidHeader));
    assert!(BloomFilter::view(&bytes, Checksum::Defer).is_err());
}

#[test]
fn damaged_blocked_files_are_refused() {
    for probes in [BlockProbes::Independent, BlockProbes::Striped] {
        let builder = BlockedBloomFilter::with_bits(2048).hashes(6).probes(probes);
        let filter = filled(builder.build().unwrap(), 4, 60);
        check_damage_refused(&filter);
        check_counter_refused(&filter, filter.set_bits());
        check_crafted_params_refused(
            &filter,
            &[
                ("zero blocks", |h| h.params[0] = 0),
                ("more blocks than the payload", |h| h.params[0] = 5),
                ("blocks overflowing the bits", |h| {
                    h.params[0] = u64::MAX / 8;
                }),
                ("256-bit blocks", |h| h.params[1] = 256),
                ("zero hashes", |h| h.params[2] = 0),
                ("65 hashes", |h| h.params[2] = 65),
                ("unknown probes", |h| h.params.push(7)),
                ("two probe parameters", |h| h.params.extend([2, 2])),
            ],
        );
    }
    // Striped probes take at most 16 per key.
    let striped = BlockedBloomFilter::with_bits(2048)
        .hashes(6)
        .build()
        .unwrap();
    let mut header = striped.header();
    header.params[2] = 17;
    check_open_as_read::<BlockedBloomFilter>(&with_header(&striped, &header), "k 17");
}

#[test]
fn damaged_split_block_files_are_refused() {
    let filter = filled(
        SplitBlockBloomFilter::with_bits(2048).build().unwrap(),
        5,
        60,
    );
    check_damage_refused(&filter);
    check_counter_refused(&filter, filter.set_bits());
    check_crafted_params_refused(
        &filter,
        &[
            ("zero blocks", |h| h.params[0] = 0),
            ("more blocks than the payload", |h| h.params[0] = 9),
            ("512-bit blocks", |h| h.params[1] = 512),
            ("a parameter too many", |h| h.params.push(2)),
        ],
    );
}

/// A view of another type's file is refused as the wrong kind.
#[test]
fn other_kinds_are_refused() {
    let standard = BloomFilter::with_bits(1024).hashes(3).build().unwrap();
    let bytes = standard.to_bytes();
    let err = BlockedBloomFilter::view(&bytes, Checksum::Defer).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::WrongKind);
    let err = SplitBlockBloomFilter::view(&bytes, Checksum::Defer).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::WrongKind);
    let blocked = BlockedBloomFilter::with_bits(1024)
        .hashes(3)
        .build()
        .unwrap();
    let err = BloomFilter::view(&blocked.to_bytes(), Checksum::Defer).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::WrongKind);
}
