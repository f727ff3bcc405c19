//! Checks every filter's own tests make beside the conformance suite, each
//! written once: bad parameters, the golden file of the format, configuration
//! drift, refused merges and the serde round trip.

use std::fmt::Debug;
use std::path::Path;

use crate::format::MAX_PARAMS;
use crate::{Error, ErrorKind, Filter, HashAlgorithm, KeyHasher, Membership, Merge, Persist};

/// Every kind of FPP outside (0, 1): zero, negative, one, above one, NaN
/// and both infinities. Each must be refused as
/// [`ErrorKind::InvalidParameter`].
pub const INVALID_FPPS: [f64; 7] = [
    0.0,
    -0.1,
    1.0,
    1.5,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
];

/// Checks that `result` is an error of `kind`; `what` says which case
/// failed.
///
/// # Panics
///
/// When it is not.
pub fn expect_error<T: Debug>(result: Result<T, Error>, kind: ErrorKind, what: impl Debug) {
    match result {
        Err(err) => assert_eq!(err.kind(), kind, "{what:?}: {err}"),
        Ok(value) => panic!("{what:?}: expected {kind:?}, got {value:?}"),
    }
}

/// Checks that `sizing` refuses every FPP of [`INVALID_FPPS`] as
/// [`ErrorKind::InvalidParameter`].
///
/// # Panics
///
/// For the first it accepts or refuses otherwise.
pub fn check_invalid_fpps<T: Debug>(sizing: impl Fn(f64) -> Result<T, Error>) {
    for fpp in INVALID_FPPS {
        expect_error(sizing(fpp), ErrorKind::InvalidParameter, fpp);
    }
}

/// The golden-file check of a format: inserts `keys` into `filter`, checks
/// its bytes against the file at `path` (first rewritten from the filter
/// when the environment variable `FILTERLAB_BLESS` is set, only for a
/// deliberate, versioned format change), and that the file reads back as
/// an equal filter holding the keys. Returns the file's bytes.
///
/// # Panics
///
/// When a key is refused, the file cannot be read or written, its bytes
/// differ, or it reads back as another filter.
pub fn check_golden<F>(mut filter: F, keys: &[&str], path: impl AsRef<Path>) -> Vec<u8>
where
    F: Filter + Persist + PartialEq + Debug,
{
    let hasher = *filter.hasher();
    for key in keys {
        if let Err(err) = filter.insert_hash(hasher.hash(key)) {
            panic!("golden key {key}: {err}");
        }
    }
    check_golden_file(&filter, keys, path)
}

/// The golden-file check of a filter that holds `keys` (a filter built
/// from them, or filled with them by [`check_golden`]): its bytes against
/// the file at `path` (first rewritten from the filter when the environment
/// variable `FILTERLAB_BLESS` is set, only for a deliberate, versioned
/// format change), and the file read back as an equal filter holding the
/// keys. Returns the file's bytes.
///
/// # Panics
///
/// When the file cannot be read or written, its bytes differ, or it reads
/// back as another filter.
pub fn check_golden_file<F>(filter: &F, keys: &[&str], path: impl AsRef<Path>) -> Vec<u8>
where
    F: Membership + Persist + PartialEq + Debug,
{
    let path = path.as_ref();
    if std::env::var_os("FILTERLAB_BLESS").is_some() {
        std::fs::write(path, filter.to_bytes()).expect("writing the golden file");
    }
    let golden = std::fs::read(path).expect("reading the golden file");
    assert_eq!(
        filter.to_bytes(),
        golden,
        "the format of {} changed",
        path.display()
    );
    let read = F::from_bytes(&golden).expect("the golden file reads back");
    assert_eq!(&read, filter);
    assert!(keys.iter().all(|key| read.contains(*key)));
    golden
}

/// The golden files of one format under hasher ids 1 and 2, `build(hasher)`
/// giving the empty filter (see [`check_golden`] for each file):
///
/// - id 1 ([`HashAlgorithm::Xxh3`]), seeded `seed`, holding `keys`, in the
///   file at `path_v1`: what every file written before id 2 is, so it must
///   not change, and must read and answer as it did;
/// - id 2 ([`HashAlgorithm::Xxh3ByValue`]), in the file at `path_v2`, as
///   [`check_golden_by_value`] says.
///
/// Returns the id-1 file's bytes.
///
/// # Panics
///
/// As [`check_golden`]; when an integer key is refused or not found.
pub fn check_golden_hashers<F>(
    build: impl Fn(KeyHasher) -> F,
    seed: u64,
    keys: &[&str],
    path_v1: impl AsRef<Path>,
    path_v2: impl AsRef<Path>,
) -> Vec<u8>
where
    F: Filter + Persist + PartialEq + Debug,
{
    let v1 = check_golden(
        build(KeyHasher::with_algorithm(HashAlgorithm::Xxh3, seed)),
        keys,
        path_v1,
    );
    check_golden_by_value(&build, HashAlgorithm::Xxh3ByValue, seed, keys, path_v2);
    v1
}

/// The golden file of one format under a hasher `algorithm` that hashes
/// integer keys by value (id 2 or 3), seeded `seed`, at `path`: the filter
/// `build(hasher)` holding `keys` and the integer keys 5 (as `i32`), −7 (as
/// `i64`) and 2^64 (as `u128`) (see [`check_golden`]). Read back, it finds
/// them as other integer types (5 as `u8` and `u64`, −7 as `i8`, 2^64 as
/// `i128`), so the file pins the by-value rule and the algorithm's integer
/// hash too. Returns the file's bytes.
///
/// # Panics
///
/// As [`check_golden`]; when an integer key is refused or not found.
pub fn check_golden_by_value<F>(
    build: impl Fn(KeyHasher) -> F,
    algorithm: HashAlgorithm,
    seed: u64,
    keys: &[&str],
    path: impl AsRef<Path>,
) -> Vec<u8>
where
    F: Filter + Persist + PartialEq + Debug,
{
    let mut by_value = build(KeyHasher::with_algorithm(algorithm, seed));
    let hasher = *by_value.hasher();
    for hash in [
        hasher.hash(&5i32),
        hasher.hash(&-7i64),
        hasher.hash(&(1u128 << 64)),
    ] {
        by_value.insert_hash(hash).expect("an integer golden key");
    }
    let bytes = check_golden(by_value, keys, path);
    let read = F::from_bytes(&bytes).expect("the file reads back");
    assert_eq!(read.hasher().algorithm(), algorithm);
    assert!(read.contains(&5u8) && read.contains(&5u64) && read.contains(&-7i8));
    assert!(read.contains(&(1i128 << 64)));
    bytes
}

/// `filter`'s configuration is `same`; `read_from_expecting` returns
/// `filter` from its bytes when told `same`, and refuses it as [`ErrorKind::ConfigMismatch`]
/// when told any of `others`, from the header alone: its first `header_len`
/// bytes suffice to refuse.
///
/// # Panics
///
/// When it reads the filter differently or accepts another configuration.
pub fn check_config_drift<F: Persist + PartialEq + Debug>(
    filter: &F,
    same: &F::Config,
    others: &[F::Config],
    header_len: usize,
) {
    assert_eq!(&filter.config(), same, "the filter's configuration");
    let bytes = filter.to_bytes();
    let read = F::read_from_expecting(&bytes[..], same).expect("its own configuration");
    assert_eq!(&read, filter);
    for other in others {
        let mismatch = ErrorKind::ConfigMismatch;
        expect_error(F::read_from_expecting(&bytes[..], other), mismatch, other);
        expect_error(
            F::read_from_expecting(&bytes[..header_len], other),
            mismatch,
            ("header only", other),
        );
    }
}

/// Merges with filters of other configurations are refused as
/// [`ErrorKind::Incompatible`], leaving `filter` exactly as it was.
///
/// # Panics
///
/// When a merge is accepted or changes the filter.
pub fn check_merges_refuse<F: Merge + Clone + PartialEq + Debug>(filter: &F, others: &[F]) {
    let mut merged = filter.clone();
    for other in others {
        expect_error(merged.union(other), ErrorKind::Incompatible, "union");
        expect_error(
            merged.intersect(other),
            ErrorKind::Incompatible,
            "intersect",
        );
    }
    assert_eq!(&merged, filter);
}

/// Through serde (JSON here) `filter` round-trips as its binary format,
/// and a damaged payload is refused by the same checks (a checksum).
///
/// # Panics
///
/// When the round trip fails or changes the filter, or damage is accepted.
#[cfg(feature = "serde")]
pub fn check_serde_round_trip<F>(filter: &F)
where
    F: Persist + PartialEq + Debug + serde::Serialize + serde::de::DeserializeOwned,
{
    let json = serde_json::to_string(filter).expect("serializing");
    let back: F = serde_json::from_str(&json).expect("deserializing");
    assert_eq!(&back, filter);
    let mut bytes = filter.to_bytes();
    let last = bytes.len() - 20;
    bytes[last] ^= 1;
    let damaged = serde_json::to_string(&bytes).expect("serializing bytes");
    match serde_json::from_str::<F>(&damaged) {
        Err(err) => assert!(err.to_string().contains("checksum"), "{err}"),
        Ok(read) => panic!("damaged bytes read as {read:?}"),
    }
}

/// Recomputes both checksums of a file after a deliberate edit (the
/// header's, then the whole file's), so that the edit reaches the checks
/// behind them.
pub fn reseal(bytes: &mut [u8]) {
    reseal_header(bytes);
    if let Some(last) = bytes.len().checked_sub(8) {
        let checksum = xxhash_rust::xxh3::xxh3_64(&bytes[..last]);
        bytes[last..].copy_from_slice(&checksum.to_le_bytes());
    }
}

/// Recomputes the header checksum of a file after a deliberate edit, so the
/// edit reaches the checks behind the checksum.
pub(crate) fn reseal_header(bytes: &mut [u8]) {
    let params = usize::from(u16::from_le_bytes([bytes[14], bytes[15]])).min(MAX_PARAMS);
    let end = 40 + 8 * params;
    if bytes.len() >= end + 8 {
        let checksum = xxhash_rust::xxh3::xxh3_64(&bytes[..end]);
        bytes[end..end + 8].copy_from_slice(&checksum.to_le_bytes());
    }
}
