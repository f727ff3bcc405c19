//! The binary format: golden files, configuration drift, the other layout
//! or width, and crafted files whose checksums are valid but whose counters
//! contradict their header.

use filterlab_core::format::{FrameReader, FrameWriter, Header};
use filterlab_core::keys::{insert_key, query_key};
use filterlab_core::testing::{check_config_drift, check_golden_hashers};
use filterlab_counting_bloom::{
    Blocked, BlockedCountingBloomFilter, BloomFilter, CountingBloom, CountingBloomFilter,
    ErrorKind, KeyHasher, Layout, Merge, Persist, Standard,
};

use crate::conformance::sized;

/// Keys the golden files hold ("alpha" twice).
const GOLDEN_KEYS: [&str; 4] = ["alpha", "beta", "gamma", "alpha"];

/// Core's golden-file check under both hasher ids
/// ([`filterlab_core::testing::check_golden_hashers`]) with
/// [`GOLDEN_KEYS`], seed 42, and the files `{stem}-v1.bin` (id 1) and
/// `{stem}-v1-hasher2.bin` (id 2) in `tests/golden/`; a second copy of
/// "alpha" is counted. The id-1 bytes.
fn check_golden<L: Layout>(
    build: impl Fn(KeyHasher) -> CountingBloom<L, 4>,
    stem: &str,
) -> Vec<u8> {
    let path = |name: String| format!("{}/tests/golden/{name}", env!("CARGO_MANIFEST_DIR"));
    let (v1, v2) = (
        path(format!("{stem}-v1.bin")),
        path(format!("{stem}-v1-hasher2.bin")),
    );
    let golden = check_golden_hashers(build, 42, &GOLDEN_KEYS, v1, v2);
    let read = CountingBloom::<L, 4>::from_bytes(&golden).unwrap();
    assert!(read.count("alpha") >= 2);
    assert_eq!(read.len(), 4);
    golden
}

/// The format must not change by accident: small filters' bytes are fixed.
/// Regenerate with `FILTERLAB_BLESS=1 cargo test -p filterlab-counting-bloom golden`
/// only for a deliberate, versioned format change.
#[test]
fn golden_files() {
    let standard = |hasher| {
        let builder = CountingBloomFilter::with_counters(256).hashes(3);
        builder.hasher(hasher).build().unwrap()
    };
    let bytes = check_golden(standard, "counting-bloom");
    // 48-byte fixed header, 7 parameters, header checksum, 2 blocks, checksum.
    assert_eq!(bytes.len(), 48 + 7 * 8 + 2 * 64 + 8);
    assert_eq!(u16::from_le_bytes([bytes[10], bytes[11]]), 3, "kind id");
    let blocked = |hasher| {
        let builder = BlockedCountingBloomFilter::with_counters(256).hashes(4);
        builder.hasher(hasher).build().unwrap()
    };
    check_golden(blocked, "blocked-counting-bloom");
}

#[test]
fn config_drift_is_rejected_before_the_payload() {
    let builder = CountingBloomFilter::with_fpp(0.01)
        .expected_items(1000)
        .seed(5);
    let filter = builder.build().unwrap();
    let same = builder.config().unwrap();
    let others = [
        builder.clone().seed(6).config().unwrap(),
        builder.clone().hashes(6).config().unwrap(),
        builder.clone().expected_items(1001).config().unwrap(),
    ];
    check_config_drift(&filter, &same, &others, 120);
}

fn kind<T>(result: Result<T, filterlab_counting_bloom::Error>) -> Option<ErrorKind> {
    result.err().map(|e| e.kind())
}

/// One kind id holds both layouts and every width; reading one as another
/// says so.
#[test]
fn other_layouts_and_widths_are_the_wrong_kind() {
    let standard = sized::<Standard, 4>(1000, 0.01, 1).to_bytes();
    let blocked = sized::<Blocked, 4>(1000, 0.01, 1).to_bytes();
    let wide = sized::<Standard, 8>(1000, 0.01, 1).to_bytes();
    let bloom = BloomFilter::with_bits(1024)
        .hashes(3)
        .build()
        .unwrap()
        .to_bytes();
    for (case, result) in [
        kind(BlockedCountingBloomFilter::from_bytes(&standard)),
        kind(CountingBloomFilter::from_bytes(&blocked)),
        kind(CountingBloomFilter::from_bytes(&wide)),
        kind(CountingBloom::<Standard, 16>::from_bytes(&standard)),
        kind(CountingBloomFilter::from_bytes(&bloom)),
        kind(BloomFilter::from_bytes(&standard)),
    ]
    .into_iter()
    .enumerate()
    {
        assert_eq!(result, Some(ErrorKind::WrongKind), "case {case}");
    }
    assert!(CountingBloom::<Standard, 8>::from_bytes(&wide).is_ok());
}

/// The header and payload of a valid file.
fn parts(bytes: &[u8]) -> (Header, Vec<u64>) {
    let mut frame = FrameReader::open_any(bytes, u64::MAX).unwrap();
    let header = frame.header().clone();
    let words = frame.read_words(header.payload_len as usize / 8).unwrap();
    frame.finish().unwrap();
    (header, words)
}

/// A file with valid checksums around whatever header and words it is given.
fn framed(header: &Header, words: &[u64]) -> Vec<u8> {
    let mut frame = FrameWriter::new(Vec::new(), header).unwrap();
    frame.write_words(words).unwrap();
    frame.finish().unwrap()
}

/// Files whose checksums are valid but whose contents are impossible: each
/// is a typed error, never a filter that could misbehave later.
#[test]
fn crafted_files_are_typed_errors() {
    let mut filter = CountingBloomFilter::with_counters(1000)
        .hashes(3)
        .seed(8)
        .build()
        .unwrap();
    filter.extend(0..50u64);
    let bytes = filter.to_bytes();
    let (header, words) = parts(&bytes);
    assert_eq!(
        CountingBloomFilter::from_bytes(&framed(&header, &words)).unwrap(),
        filter
    );
    let expect = |header: &Header, words: &[u64], kind: ErrorKind, what: &str| {
        let err = CountingBloomFilter::from_bytes(&framed(header, words)).unwrap_err();
        assert_eq!(err.kind(), kind, "{what}: {err}");
    };

    // More items than the counters can hold (no counter saturated).
    let mut more = header.clone();
    more.items = 51;
    expect(
        &more,
        &words,
        ErrorKind::InvalidHeader,
        "items beyond the counters",
    );
    more.items = u64::MAX;
    expect(&more, &words, ErrorKind::InvalidHeader, "u64::MAX items");
    // Fewer is possible (after an intersection).
    let mut fewer = header.clone();
    fewer.items = 10;
    assert_eq!(
        CountingBloomFilter::from_bytes(&framed(&fewer, &words))
            .unwrap()
            .len(),
        10
    );

    // A saturated-counter count that is not the payload's.
    let mut saturated = header.clone();
    saturated.params[6] = 1;
    expect(
        &saturated,
        &words,
        ErrorKind::InvalidHeader,
        "saturated count",
    );
    saturated.params[6] = 1001;
    expect(
        &saturated,
        &words,
        ErrorKind::InvalidHeader,
        "more saturated than counters",
    );

    // A counter past the end of the 1000 (the last block holds 1024).
    let mut tail = words.clone();
    *tail.last_mut().unwrap() |= 1 << 60;
    expect(
        &header,
        &tail,
        ErrorKind::InvalidHeader,
        "counter beyond the array",
    );

    // Parameters that contradict each other.
    for (index, value, kind) in [
        (0, 0, ErrorKind::InvalidHeader),
        (0, 1025, ErrorKind::LengthMismatch),
        (1, 5, ErrorKind::InvalidHeader),
        (1, 8, ErrorKind::WrongKind),
        (2, 64, ErrorKind::InvalidHeader),
        (2, 128, ErrorKind::WrongKind),
        (3, 0, ErrorKind::InvalidHeader),
        (3, 65, ErrorKind::InvalidHeader),
        (4, 0, ErrorKind::InvalidHeader),
        (5, 1.5f64.to_bits(), ErrorKind::InvalidHeader),
    ] {
        let mut crafted = header.clone();
        crafted.params[index] = value;
        expect(&crafted, &words, kind, &format!("param {index} = {value}"));
    }

    // A saturated counter with its count in the header: valid, and then len
    // is not bounded by the counters; a crafted len at the top saturates
    // instead of overflowing.
    let mut full = words.clone();
    full[0] |= 0xf;
    let mut stuck = header.clone();
    stuck.params[6] = 1;
    stuck.items = u64::MAX;
    let mut read = CountingBloomFilter::from_bytes(&framed(&stuck, &full)).unwrap();
    assert_eq!(read.saturated_counters(), 1);
    read.insert(&7u64);
    assert_eq!(read.len(), usize::MAX);
    assert!(read.remove(&7u64));

    // A blocked filter's counters must be whole blocks.
    let blocked = sized::<Blocked, 4>(1000, 0.01, 3).to_bytes();
    let (mut header, words) = parts(&blocked);
    header.params[0] -= 1;
    let err = BlockedCountingBloomFilter::from_bytes(&framed(&header, &words)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidHeader, "{err}");
}

#[test]
fn streams_and_round_trips_every_width() {
    fn check<L: Layout, const BITS: u32>() {
        let mut filter = sized::<L, BITS>(5_000, 0.001, 9);
        filter.extend(0..5_000u64);
        filter.extend(0..100u64);
        assert_eq!(filter.remove_many(0..50u64), 50);
        let mut written = Vec::new();
        filter.write_to(&mut written).unwrap();
        assert_eq!(written, filter.to_bytes());
        let read = CountingBloom::<L, BITS>::read_from(&written[..]).unwrap();
        assert_eq!(read, filter);
        assert_eq!(read.len(), 5_050);
        assert!(read.contains_many(0..5_000u64).iter().all(|&hit| hit));
        let limited = CountingBloom::<L, BITS>::read_from_with_limit(&written[..], 100);
        assert_eq!(limited.unwrap_err().kind(), ErrorKind::PayloadTooLarge);
    }
    check::<Standard, 4>();
    check::<Standard, 8>();
    check::<Standard, 16>();
    check::<Blocked, 4>();
    check::<Blocked, 8>();
    check::<Blocked, 16>();
}

#[cfg(feature = "serde")]
#[test]
fn serde_round_trip_validates() {
    let mut filter = sized::<Blocked, 8>(1000, 0.01, 8);
    filter.extend(0..500u64);
    filterlab_core::testing::check_serde_round_trip(&filter);
}

/// `filter`'s bytes read back as an equal filter (`context` says which
/// state failed).
fn assert_reads_back<L: Layout>(filter: &CountingBloom<L, 4>, context: &str) {
    let read = CountingBloom::<L, 4>::from_bytes(&filter.to_bytes());
    assert_eq!(read.as_ref().ok(), Some(filter), "{context}: {read:?}");
}

/// Issue 23, item 1: every state the documented calls reach writes bytes
/// its own reader accepts and that read back equal. The recipe of the
/// report: two filters of one configuration, 1,000 keys each plus a shared
/// key, an intersection, then the shared key removed (the blocked layout's
/// reader refused 50 files of 50 with "41 items need 41 counts, the
/// counters hold 36").
fn intersect_then_remove_reads_back_in<L: Layout>() {
    for trial in 0..8 {
        let mut a = sized::<L, 4>(100_000, 0.01, 1);
        let mut b = sized::<L, 4>(100_000, 0.01, 1);
        a.extend((0..1_000).map(|i| insert_key(2 * trial, i)));
        b.extend((0..1_000).map(|i| insert_key(2 * trial + 1, i)));
        let shared = query_key(trial, 0);
        a.insert(&shared);
        b.insert(&shared);
        a.intersect(&b).unwrap();
        assert!(a.remove(&shared));
        assert_reads_back(&a, &format!("trial {trial}"));
    }
}

#[test]
fn intersect_then_remove_reads_back() {
    intersect_then_remove_reads_back_in::<Standard>();
    intersect_then_remove_reads_back_in::<Blocked>();
}

/// Issue 23, item 1, the reader's side: a file the reader accepts (here
/// one whose item counter was raised as far as the reader allows) is a
/// state like any other, and removing its inserted keys must again write
/// bytes the reader accepts.
fn raised_counter_then_removals_read_back_in<L: Layout>() {
    let mut filter = sized::<L, 4>(1_000, 0.01, 5);
    let keys: Vec<u64> = (0..50).map(|i| insert_key(5, i)).collect();
    filter.extend(&keys);
    let (header, words) = parts(&filter.to_bytes());
    // The most items the counters can account for: one per count in the
    // blocked layout, k per item in the standard one.
    let counts: u64 = words
        .iter()
        .map(|word| {
            (0..16)
                .map(|nibble| (word >> (4 * nibble)) & 0xf)
                .sum::<u64>()
        })
        .sum();
    let blocked = filter.config().block_counters.is_some();
    let per_item = if blocked { 1 } else { filter.num_hashes() };
    let mut raised = header.clone();
    raised.items = counts / u64::from(per_item);
    let mut read = CountingBloom::<L, 4>::from_bytes(&framed(&raised, &words))
        .expect("a counter the counts account for is accepted");
    for key in &keys[..10] {
        assert!(read.remove(key));
        assert_reads_back(&read, &format!("{key} removed"));
    }
}

#[test]
fn raised_counter_then_removals_read_back() {
    raised_counter_then_removals_read_back_in::<Standard>();
    raised_counter_then_removals_read_back_in::<Blocked>();
}
