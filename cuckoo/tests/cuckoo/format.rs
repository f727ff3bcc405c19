//! Parameters, sizing, bad input and the on-disk format.

use filterlab_core::format::FrameReader;
use filterlab_core::testing::{check_config_drift, check_golden, check_invalid_fpps, reseal};
use filterlab_cuckoo::{CuckooFilter, ErrorKind, FingerprintChoice, HashAlgorithm, KeyHasher};

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
    // The header alone (140 bytes) is enough to refuse.
    check_config_drift(&filter, &builder().config().unwrap(), &others, 140);
}

/// Headers whose fields contradict each other, resealed with valid
/// checksums (header and trailer), are refused with the right error.
#[test]
fn contradicting_headers_are_refused() {
    let mut filter = CuckooFilter::with_buckets(10)
        .fingerprint_bits(12)
        .expansion(2)
        .max_tables(4)
        .build()
        .unwrap();
    filter.insert("x").unwrap();
    let bytes = filter.to_bytes();
    let param = |index: usize| 40 + 8 * index;
    // The error reading the file after `change`, with both checksums resealed.
    let refused = |change: &dyn Fn(&mut [u8])| {
        let mut edited = bytes.clone();
        change(&mut edited);
        reseal(&mut edited);
        CuckooFilter::from_bytes(&edited).unwrap_err().kind()
    };
    let set = |at: usize, value: u64| {
        move |bytes: &mut [u8]| bytes[at..at + 8].copy_from_slice(&value.to_le_bytes())
    };
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
    ] {
        assert_eq!(refused(&set(param(index), value)), header, "{why}");
    }
    // Possible parameters that the payload's length contradicts.
    for (index, value, why) in [(2, 11, "buckets vs payload"), (6, 2, "tables vs payload")] {
        let kind = refused(&set(param(index), value));
        assert_eq!(kind, ErrorKind::LengthMismatch, "{why}");
    }
    // The item counter must equal the fingerprints held.
    for items in [0u64, 2, 41, u64::MAX] {
        assert_eq!(refused(&set(24, items)), header, "counter {items}");
    }
    // A fingerprint in a slot of the payload, not counted.
    let payload = param(10) + 8;
    assert_eq!(refused(&|bytes| bytes[payload] ^= 0x01), header);
}

/// The format must not change by accident: a small filter's bytes are
/// fixed. Regenerate with `FILTERLAB_BLESS=1 cargo test -p filterlab-cuckoo
/// golden` only for a deliberate, versioned format change.
#[test]
fn golden_file() {
    let filter = CuckooFilter::with_buckets(7)
        .fingerprint_bits(13)
        .expansion(2)
        .max_tables(4)
        // Hasher id 1, as the file was written (keys by width; its keys are strings).
        .hasher(KeyHasher::with_algorithm(HashAlgorithm::Xxh3, 42))
        .build()
        .unwrap();
    let path = format!("{}/tests/golden/cuckoo-v1.bin", env!("CARGO_MANIFEST_DIR"));
    let golden = check_golden(filter, &["alpha", "beta", "gamma", "alpha"], path);
    let read = CuckooFilter::from_bytes(&golden).unwrap();
    assert_eq!(read.count("alpha"), 2);
    assert!(read.contains("beta") && read.contains("gamma"));
    assert_eq!(read.len(), 4);
    let header = FrameReader::open_any(&golden[..], 1 << 20)
        .unwrap()
        .header()
        .clone();
    assert_eq!(header.params, [4, 13, 7, 500, 2, 4, 1, 1 << 36, 26, 0]);
}

#[cfg(feature = "serde")]
#[test]
fn serde_round_trip_validates() {
    let mut filter = explicit(500, 12, 8);
    filter.insert_many(0..1000u64).unwrap();
    filterlab_core::testing::check_serde_round_trip(&filter);
}
