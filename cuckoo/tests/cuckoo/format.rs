//! Parameters, sizing, bad input and the on-disk format.

use filterlab_core::format::FrameReader;
use filterlab_core::testing::{check_config_drift, check_golden, check_invalid_fpps, reseal};
use filterlab_cuckoo::{
    CuckooFilter, DEFAULT_TIGHTENING, ErrorKind, FingerprintChoice, HashAlgorithm, KeyHasher,
};

use crate::explicit;

#[test]
fn bad_parameters_are_typed_errors() {
    let invalid = ErrorKind::InvalidParameter;
    check_invalid_fpps(|fpp| CuckooFilter::params(1000, fpp));
    let kind = |builder: filterlab_cuckoo::CuckooBuilder| builder.build().unwrap_err().kind();
    assert_eq!(CuckooFilter::params(0, 0.01).unwrap_err().kind(), invalid);
    assert_eq!(kind(CuckooFilter::with_fpp(0.01)), invalid);
    assert_eq!(
        kind(CuckooFilter::with_buckets(0).fingerprint_bits(8)),
        invalid
    );
    assert_eq!(kind(CuckooFilter::with_buckets(100)), invalid);
    for bits in [0, 1, 3, 33, 64, u32::MAX] {
        assert_eq!(
            kind(CuckooFilter::with_buckets(100).fingerprint_bits(bits)),
            invalid
        );
        assert_eq!(
            kind(
                CuckooFilter::with_fpp(0.01)
                    .expected_items(100)
                    .fingerprint_bits(bits)
            ),
            invalid
        );
    }
    let ok = || CuckooFilter::with_buckets(100).fingerprint_bits(8);
    assert_eq!(kind(ok().expected_items(0)), invalid);
    assert_eq!(
        kind(ok().expected_items(401)),
        invalid,
        "more items than slots"
    );
    assert_eq!(kind(ok().max_kicks(0)), invalid);
    assert_eq!(kind(ok().max_kicks(65_536)), invalid);
    assert_eq!(kind(ok().expansion(0)), invalid);
    assert_eq!(kind(ok().expansion(32_769)), invalid);
    assert_eq!(kind(ok().expansion(2).max_tables(1)), invalid);
    assert_eq!(kind(ok().expansion(2).max_tables(257)), invalid);
    assert_eq!(kind(ok().max_memory(u64::MAX)), invalid);
    assert!(ok().expected_items(400).max_kicks(1).build().is_ok());

    let too_large = ErrorKind::TooLarge;
    assert_eq!(
        CuckooFilter::params(u64::MAX, 0.01).unwrap_err().kind(),
        too_large
    );
    assert_eq!(
        CuckooFilter::params(u64::MAX, 1e-300).unwrap_err().kind(),
        too_large
    );
    assert_eq!(
        CuckooFilter::params(1 << 40, 1e-6).unwrap_err().kind(),
        too_large
    );
    assert_eq!(
        kind(CuckooFilter::with_buckets(u64::MAX).fingerprint_bits(32)),
        too_large
    );
    assert_eq!(
        kind(CuckooFilter::with_buckets(1 << 62).fingerprint_bits(4)),
        too_large
    );
    let capped = CuckooFilter::with_fpp(0.01)
        .expected_items(10_000_000)
        .max_memory(1 << 20);
    assert_eq!(kind(capped), too_large);
    // Sizing never allocates: a 40 TiB table is sized, not built.
    let sizing = CuckooFilter::with_fpp(1e-6)
        .expected_items(1 << 44)
        .max_memory(1 << 48)
        .sizing()
        .unwrap();
    assert!(sizing.bytes > 1 << 40);
}

#[test]
fn remove_from_empty_and_absent_keys() {
    let mut filter = explicit(1000, 16, 3);
    let before = filter.to_bytes();
    assert!(!filter.remove("nothing").unwrap());
    assert_eq!(filter.to_bytes(), before);
    filter.insert("something").unwrap();
    let before = filter.to_bytes();
    assert!(!filter.remove("nothing").unwrap());
    assert_eq!(filter.to_bytes(), before);
    assert_eq!(filter.count("nothing"), 0);
}

#[test]
fn sizing_picks_the_fewest_bits() {
    for (fpp, bits) in [(1e-2, 10), (1e-3, 13), (1e-4, 17), (1e-6, 23)] {
        let sizing = CuckooFilter::params(1_000_000, fpp).unwrap();
        assert_eq!(sizing.fingerprint_bits, bits, "{sizing}");
        assert_eq!(sizing.fingerprint_choice, FingerprintChoice::FewestBits);
        assert!(sizing.fpp_at_capacity <= fpp);
        assert!(sizing.load <= 0.95 && sizing.load > 0.9499);
        // Not a power of two: 1e6 / (4 · 0.95) rounded up.
        assert_eq!(sizing.buckets, 263_158);
        println!("{sizing}");
    }
    let report = CuckooFilter::params(10_000_000, 0.001).unwrap().to_string();
    for needle in [
        "expected items",
        "target FPP",
        "fingerprint bits",
        "buckets",
        "load at capacity",
        "memory",
        "bits per item",
        "FPP at capacity",
        "hash bits",
    ] {
        assert!(report.contains(needle), "missing {needle:?} in\n{report}");
    }
    // Below what 32-bit fingerprints give at 95%, the load is lowered instead.
    let tiny = CuckooFilter::params(1000, 1e-10).unwrap();
    assert_eq!(tiny.fingerprint_bits, 32);
    assert!(tiny.fpp_at_capacity <= 1e-10 && tiny.load < 0.95);
    let explicit = CuckooFilter::with_fpp(0.01)
        .expected_items(1000)
        .fingerprint_bits(16)
        .sizing()
        .unwrap();
    assert_eq!(explicit.fingerprint_choice, FingerprintChoice::Explicit);
    assert_eq!(explicit.buckets, 264);
}

#[test]
fn config_drift_is_rejected_before_the_payload() {
    let builder = || CuckooFilter::with_fpp(0.01).expected_items(1000).seed(5);
    let filter = builder().build().unwrap();
    let others = [
        builder().seed(6).config().unwrap(),
        builder().fingerprint_bits(12).config().unwrap(),
        builder().max_kicks(100).config().unwrap(),
        builder().expansion(2).config().unwrap(),
    ];
    // The header alone (152 bytes) is enough to refuse.
    check_config_drift(&filter, &builder().config().unwrap(), &others, 152);
    let growing = || builder().expansion(2);
    let grown = growing().build().unwrap();
    let others = [
        growing().tightening(0.5).config().unwrap(),
        growing().max_tables(9).config().unwrap(),
        builder().config().unwrap(),
    ];
    check_config_drift(&grown, &growing().config().unwrap(), &others, 152);
}

/// Offset of header parameter `index`.
fn param(index: usize) -> usize {
    40 + 8 * index
}

/// Where the payload starts: after 13 parameters and the header's checksum.
const PAYLOAD: usize = 40 + 8 * 13 + 8;

/// A growing filter of one table (10 buckets, 12-bit fingerprints) whose
/// two keys "x" and "y" have 10 copies each, two of each beyond their
/// buckets, in two overflow classes; and "z" once.
fn with_overflow() -> CuckooFilter {
    let mut filter = CuckooFilter::with_buckets(10)
        .fingerprint_bits(12)
        .expansion(2)
        .max_tables(4)
        .build()
        .unwrap();
    for key in ["x", "y"] {
        for _ in 0..10 {
            filter.insert(key).unwrap();
        }
    }
    filter.insert("z").unwrap();
    assert_eq!(
        (filter.tables(), filter.len(), filter.count("x")),
        (1, 21, 10)
    );
    assert_eq!(filter.overflow_copies(), 4);
    filter
}

/// The error reading `bytes` after `change`, with both checksums resealed.
fn refused(bytes: &[u8], change: &dyn Fn(&mut [u8])) -> ErrorKind {
    let mut edited = bytes.to_vec();
    change(&mut edited);
    reseal(&mut edited);
    match CuckooFilter::from_bytes(&edited) {
        Ok(read) => panic!("an edited file was read: {read:?}"),
        Err(err) => err.kind(),
    }
}

/// Writes `value` at `at`.
fn set(at: usize, value: u64) -> impl Fn(&mut [u8]) {
    move |bytes: &mut [u8]| bytes[at..at + 8].copy_from_slice(&value.to_le_bytes())
}

/// Headers whose fields contradict each other, resealed with valid
/// checksums (header and trailer), are refused with the right error.
#[test]
fn contradicting_headers_are_refused() {
    let filter = with_overflow();
    let bytes = filter.to_bytes();
    let header = ErrorKind::InvalidHeader;
    // Parameters impossible on their own or against each other.
    for (index, value, why) in [
        (0, 8, "slots per bucket"),
        (1, 33, "fingerprint bits"),
        (2, 0, "buckets"),
        (3, 0, "max kicks"),
        (4, 0, "no growth but 4 tables allowed"),
        (5, 1, "growth with at most 1 table"),
        (6, 0, "zero tables"),
        (6, 5, "more tables than allowed"),
        (7, 10, "memory limit below the tables"),
        (8, 41, "capacity over the slots"),
        (9, 2f64.to_bits(), "target FPP"),
        (11, 0, "no tightening ratio in a growing filter"),
        (11, 1f64.to_bits(), "tightening ratio 1"),
        (11, f64::NAN.to_bits(), "tightening ratio NaN"),
    ] {
        assert_eq!(refused(&bytes, &set(param(index), value)), header, "{why}");
    }
    for layout in [0, 1, 3] {
        let kind = refused(&bytes, &set(param(10), layout));
        assert_eq!(kind, ErrorKind::UnsupportedVersion, "layout {layout}");
    }
    // Possible parameters that the payload's length contradicts.
    for (index, value, why) in [
        (2, 11, "buckets vs payload"),
        (6, 2, "tables vs payload"),
        (12, 0, "fewer overflow classes than the payload holds"),
        (12, 3, "more overflow classes than the payload holds"),
    ] {
        let kind = refused(&bytes, &set(param(index), value));
        assert_eq!(kind, ErrorKind::LengthMismatch, "{why}");
    }
    // The item counter must equal the fingerprints and overflow copies held.
    for items in [0u64, 20, 22, 40, u64::MAX] {
        assert_eq!(refused(&bytes, &set(24, items)), header, "counter {items}");
    }
    // Fingerprints in the payload that the counter does not count: all
    // of them gone, or one more in an empty slot (12 bits from a byte
    // that starts a slot, k ≡ 0 mod 3, and the next one).
    let data = PAYLOAD + 16..PAYLOAD + 16 + 60;
    assert_eq!(
        refused(&bytes, &|bytes| bytes[data.clone()].fill(0)),
        header
    );
    let empty = data
        .clone()
        .step_by(3)
        .find(|&at| bytes[at] == 0 && bytes[at + 1].trailing_zeros() >= 4)
        .expect("an empty slot");
    assert_eq!(refused(&bytes, &|bytes| bytes[empty] = 1), header);
}

/// The directory (each sub-table's width and capacity) and the overflow's
/// classes, edited and resealed, are refused when they contradict the
/// header or the tables.
#[test]
fn contradicting_directories_and_overflows_are_refused() {
    let filter = with_overflow();
    let bytes = filter.to_bytes();
    let header = ErrorKind::InvalidHeader;
    let (width, capacity) = (PAYLOAD, PAYLOAD + 8);
    for (at, value, why) in [
        (width, 11, "first width unlike the header's"),
        (width, 33, "width over 32"),
        (capacity, 0, "zero capacity"),
        (capacity, 37, "first capacity unlike the header's"),
        (capacity, 41, "capacity over the slots"),
    ] {
        assert_eq!(refused(&bytes, &set(at, value)), header, "{why}");
    }
    // The two classes: (sub-table, bucket, fingerprint, copies) each.
    let overflow = bytes.len() - 8 - 64;
    let word = |class: usize, field: usize| overflow + 32 * class + 8 * field;
    let first_class: Vec<u64> = (0..4)
        .map(|field| {
            u64::from_le_bytes(
                bytes[word(0, field)..word(0, field) + 8]
                    .try_into()
                    .unwrap(),
            )
        })
        .collect();
    assert_eq!((first_class[0], first_class[3]), (0, 2), "{first_class:?}");
    let (bucket, fingerprint) = (first_class[1], first_class[2]);
    for (field, value, why) in [
        (0, 1, "a sub-table that is not there"),
        (1, 10, "a bucket that is not there"),
        (
            1,
            (bucket + 1) % 10,
            "a bucket without the fingerprint, or not the lower one",
        ),
        (2, 0, "fingerprint 0"),
        (2, 1 << 12, "a fingerprint over 12 bits"),
        (2, fingerprint ^ 1, "a fingerprint the table does not hold"),
        (3, 0, "no copies"),
        (3, 3, "copies the counter does not count"),
    ] {
        let kind = refused(&bytes, &set(word(0, field), value));
        assert_eq!(kind, header, "{why}: {first_class:?}");
    }
    // The classes in the wrong order.
    let swapped = |bytes: &mut [u8]| {
        let (first, second) = bytes[overflow..overflow + 64].split_at_mut(32);
        first.swap_with_slice(second);
    };
    assert_eq!(refused(&bytes, &swapped), header, "classes out of order");
    // A non-growing filter has no overflow.
    let fixed = |bytes: &mut [u8]| {
        set(param(4), 0)(bytes);
        set(param(5), 1)(bytes);
        set(param(11), 0)(bytes);
    };
    assert_eq!(refused(&bytes, &fixed), header, "overflow without growth");
}

/// A key with `copies` copies, and the keys `key-0`, `key-1`, ... up to
/// `keys`: enough to grow the golden filter.
fn golden_keys(copies: usize, keys: usize) -> Vec<String> {
    let repeated = std::iter::repeat_n("alpha".to_owned(), copies);
    repeated
        .chain((0..keys).map(|i| format!("key-{i}")))
        .collect()
}

/// The format must not change by accident: a small grown filter's bytes
/// are fixed, with three sub-tables of 13, 14 and 15-bit fingerprints and
/// two copies of "alpha" in the overflow. Regenerate with
/// `FILTERLAB_BLESS=1 cargo test -p filterlab-cuckoo golden` only for a
/// deliberate, versioned format change.
#[test]
fn golden_file() {
    let filter = CuckooFilter::with_buckets(7)
        .fingerprint_bits(13)
        .expansion(2)
        .max_tables(4)
        .tightening(0.5)
        // Hasher id 1, as the file was written (keys by width; its keys are strings).
        .hasher(KeyHasher::with_algorithm(HashAlgorithm::Xxh3, 42))
        .build()
        .unwrap();
    let path = format!("{}/tests/golden/cuckoo-v2.bin", env!("CARGO_MANIFEST_DIR"));
    let keys = golden_keys(10, 80);
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    let golden = check_golden(filter, &keys, path);
    let read = CuckooFilter::from_bytes(&golden).unwrap();
    assert_eq!(read.count("alpha"), 10);
    assert_eq!(read.len(), 90);
    assert_eq!(read.table_fingerprint_bits(), [13, 15, 16]);
    assert_eq!(read.table_capacities(), [26, 52, 104]);
    assert_eq!(read.overflow_copies(), 2);
    let header = FrameReader::open_any(&golden[..], 1 << 20)
        .unwrap()
        .header()
        .clone();
    let half = 0.5f64.to_bits();
    assert_eq!(
        header.params,
        [4, 13, 7, 500, 2, 4, 3, 1 << 36, 26, 0, 2, half, 1]
    );
}

/// Files of layout 1 (every sub-table at the first one's width, no
/// overflow) still read: the golden file written before layout 2 reads as
/// the filter it was, writes back as layout 2 and grows from there with
/// the default tightening.
#[test]
fn layout_1_files_still_read() {
    let path = format!("{}/tests/golden/cuckoo-v1.bin", env!("CARGO_MANIFEST_DIR"));
    let golden = std::fs::read(path).unwrap();
    let header = FrameReader::open_any(&golden[..], 1 << 20)
        .unwrap()
        .header()
        .clone();
    assert_eq!(header.params, [4, 13, 7, 500, 2, 4, 1, 1 << 36, 26, 0]);
    let mut read = CuckooFilter::from_bytes(&golden).unwrap();
    assert_eq!(read.count("alpha"), 2);
    assert!(read.contains("beta") && read.contains("gamma"));
    assert_eq!(read.len(), 4);
    assert_eq!(read.growth().unwrap().tightening, DEFAULT_TIGHTENING);
    assert_eq!(CuckooFilter::from_bytes(&read.to_bytes()).unwrap(), read);
    for i in 0..100 {
        read.insert(&format!("more-{i}")).unwrap();
    }
    assert!(read.tables() >= 2 && read.contains("beta"));
    let widths = read.table_fingerprint_bits();
    assert!(widths[0] == 13 && widths[1] > 13, "{widths:?}");
    // Truncated layout-1 headers and payloads are still refused.
    for len in [100, 140, golden.len() - 1] {
        assert!(CuckooFilter::from_bytes(&golden[..len]).is_err());
    }
}

#[cfg(feature = "serde")]
#[test]
fn serde_round_trip_validates() {
    let mut filter = explicit(500, 12, 8);
    filter.insert_many(0..1000u64).unwrap();
    filterlab_core::testing::check_serde_round_trip(&filter);
}
