//! The format: golden files, damaged and crafted files refused, files of
//! another width or arity refused as another kind, views at any address,
//! parameters and limits, serde.

use filterlab_core::testing::{check_golden_file, check_invalid_fpps, expect_error, reseal};
use filterlab_core::view::Checksum;
use filterlab_static::{BinaryFuseFilter, BuildFromKeys, ErrorKind, Fingerprint, RibbonFilter};

use crate::{fuse, keys, ribbon};

/// The keys of the golden files.
const GOLDEN_KEYS: [&str; 6] = ["apple", "banana", "cherry", "date", "elder", "fig"];

/// The golden file of the filter `builder` builds from the golden keys
/// (rewritten with `FILTERLAB_BLESS=1` only for a deliberate change). It
/// pins the construction as well as the format: a build that places keys
/// differently (another peel order, other slots) changes the file even
/// where the format does not, and every earlier file must still read.
fn check_golden<B>(builder: &B, stem: &str)
where
    B: BuildFromKeys,
    B::Filter: filterlab_static::Persist + PartialEq + std::fmt::Debug,
{
    let filter = builder.build_from_keys(GOLDEN_KEYS).unwrap().filter;
    let path = format!("{}/tests/golden/{stem}-v1.bin", env!("CARGO_MANIFEST_DIR"));
    check_golden_file(&filter, &GOLDEN_KEYS, path);
}

#[test]
fn golden_files() {
    check_golden(&RibbonFilter::with_fpp(0.01).seed(42), "ribbon");
    check_golden(&BinaryFuseFilter::<u8>::builder().seed(42), "binary-fuse-8");
    check_golden(
        &BinaryFuseFilter::<u16, 4>::builder().seed(42),
        "binary-fuse-16x4",
    );
    check_golden(
        &BinaryFuseFilter::<u32>::builder().seed(42),
        "binary-fuse-32",
    );
    // Four partitions, three of them wide: the layout of larger filters.
    let partitioned = RibbonFilter::with_fpp(0.01)
        .seed(42)
        .build(0..5000u64)
        .unwrap();
    assert_eq!(partitioned.partitions(), (4, 3));
    let path = format!(
        "{}/tests/golden/ribbon-partitions-v1.bin",
        env!("CARGO_MANIFEST_DIR")
    );
    check_golden_file(&partitioned, &[], path);
    assert!((0..5000u64).all(|key| partitioned.contains(&key)));
    // Built before partitions started with 1/150 spare slots (1/667):
    // the slots a partition has are in the file, so it reads and answers
    // as it did.
    let path = format!(
        "{}/tests/golden/ribbon-partitions-v1-fewer-spares.bin",
        env!("CARGO_MANIFEST_DIR")
    );
    let earlier = RibbonFilter::from_bytes(&std::fs::read(path).unwrap()).unwrap();
    assert_eq!(earlier.partitions(), (4, 3));
    assert!(earlier.num_slots() < partitioned.num_slots());
    assert!((0..5000u64).all(|key| earlier.contains(&key)));
}

#[test]
fn a_damaged_file_is_refused() {
    let filter = ribbon(0.01, 1, 5000);
    let bytes = filter.to_bytes();
    let mut damaged = bytes.clone();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 4;
    expect_error(
        RibbonFilter::from_bytes(&damaged),
        ErrorKind::ChecksumMismatch,
        "payload flip",
    );
    expect_error(
        RibbonFilter::view(&damaged, Checksum::Verify),
        ErrorKind::ChecksumMismatch,
        "payload flip, verified view",
    );
    let deferred = RibbonFilter::view(&damaged, Checksum::Defer).unwrap();
    expect_error(
        deferred.verify_checksum(),
        ErrorKind::ChecksumMismatch,
        "deferred",
    );

    // Crafted and resealed: a partition narrower than a band (offset 1 of
    // the payload, after the 88-byte header of five parameters), and the
    // offsets ending before the slots.
    let payload = 48 + 8 * 5;
    for (at, value) in [(payload + 4, 100u32), (payload + 4, 0), (payload, 1)] {
        let mut crafted = bytes.clone();
        crafted[at..at + 4].copy_from_slice(&value.to_le_bytes());
        reseal(&mut crafted);
        expect_error(
            RibbonFilter::from_bytes(&crafted),
            ErrorKind::InvalidHeader,
            (at, value),
        );
        expect_error(
            RibbonFilter::view(&crafted, Checksum::Defer),
            ErrorKind::InvalidHeader,
            (at, value),
        );
    }
}

/// A file of one width or arity read as another is another kind.
fn check_other_widths<F: Fingerprint, const ARITY: usize>(bytes: &[u8]) {
    expect_error(
        BinaryFuseFilter::<F, ARITY>::from_bytes(bytes),
        ErrorKind::WrongKind,
        (F::BITS, ARITY),
    );
}

#[test]
fn binary_fuse_widths_and_arities_are_told_apart() {
    let bytes = fuse::<u16, 3>(1, 1000).to_bytes();
    check_other_widths::<u8, 3>(&bytes);
    check_other_widths::<u32, 3>(&bytes);
    check_other_widths::<u16, 4>(&bytes);
    assert!(BinaryFuseFilter::<u16, 3>::from_bytes(&bytes).is_ok());
    expect_error(
        RibbonFilter::from_bytes(&bytes),
        ErrorKind::WrongKind,
        "a fuse file",
    );
}

#[test]
fn views_answer_from_any_address() {
    let filter = ribbon(0.001, 3, 10_000);
    let fused = fuse::<u16, 3>(3, 10_000);
    for shift in 0..8 {
        let mut buffer = vec![0u8; shift];
        buffer.extend(filter.to_bytes());
        let view = RibbonFilter::view(&buffer[shift..], Checksum::Verify).unwrap();
        let mut buffer = vec![0u8; shift];
        buffer.extend(fused.to_bytes());
        let fuse_view = BinaryFuseFilter::<u16>::view(&buffer[shift..], Checksum::Verify).unwrap();
        for key in keys(3, 10_000).into_iter().chain(keys(4, 1000)) {
            assert_eq!(view.contains(&key), filter.contains(&key));
            assert_eq!(fuse_view.contains(&key), fused.contains(&key));
        }
    }
    let own = filter.as_view();
    assert!(keys(3, 10_000).iter().all(|key| own.contains(key)));
    own.verify_checksum().unwrap();
}

#[test]
fn parameters_and_limits() {
    check_invalid_fpps(|fpp| RibbonFilter::params(1000, fpp));
    expect_error(
        RibbonFilter::params(1000, 2f64.powi(-33)),
        ErrorKind::InvalidParameter,
        "2^-33",
    );
    let many = keys(5, 20_000);
    expect_error(
        RibbonFilter::with_fpp(0.01).max_memory(1000).build(&many),
        ErrorKind::TooLarge,
        "Ribbon over the memory limit",
    );
    expect_error(
        BinaryFuseFilter::<u32>::builder()
            .max_memory(1000)
            .build(&many),
        ErrorKind::TooLarge,
        "binary fuse over the memory limit",
    );
}

/// The retry bound: a Ribbon build of 400,000 keys retries a few of its
/// 256 partitions (one fails at its first size about 2% of the time), so
/// with none allowed it fails; so does a binary fuse filter whose first
/// peeling fails (1,000 keys, seed 16). A binary fuse filter given every
/// key twice finds repeats in its first count, removes them and builds
/// the filter of the distinct keys, sized for them, with no retry.
#[test]
fn retries_are_bounded_and_reported() {
    let many = keys(6, 400_000);
    let built = RibbonFilter::with_fpp(0.01).build_from_keys(&many).unwrap();
    assert!(built.report.retries >= 2, "{:?}", built.report);
    expect_error(
        RibbonFilter::with_fpp(0.01).max_retries(0).build(&many),
        ErrorKind::ConstructionFailed,
        "Ribbon without retries",
    );
    let thousand: Vec<u64> = (0..1000).collect();
    let built = BinaryFuseFilter::<u8>::builder()
        .seed(16)
        .build_from_keys(&thousand)
        .unwrap();
    assert_eq!(built.report.retries, 1);
    expect_error(
        BinaryFuseFilter::<u8>::builder()
            .seed(16)
            .max_retries(0)
            .build(&thousand),
        ErrorKind::ConstructionFailed,
        "binary fuse without retries",
    );
    let distinct = keys(7, 10_000);
    let mut repeated = distinct.clone();
    repeated.extend(keys(7, 10_000));
    let built = BinaryFuseFilter::<u8>::builder()
        .max_retries(0)
        .build_from_keys(&repeated)
        .unwrap();
    assert_eq!((built.report.retries, built.report.duplicates), (0, 10_000));
    let alone = BinaryFuseFilter::<u8>::builder().build(&distinct).unwrap();
    assert_eq!(built.filter.to_bytes(), alone.to_bytes());
}

#[cfg(feature = "serde")]
#[test]
fn serde_round_trip_validates() {
    filterlab_core::testing::check_serde_round_trip(&ribbon(0.01, 8, 1000));
    filterlab_core::testing::check_serde_round_trip(&fuse::<u8, 3>(8, 1000));
}
