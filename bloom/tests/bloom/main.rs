//! Integration tests of filterlab-bloom, one module per filter type, and the
//! checks they share: statistical, format, merge and parameter checks written
//! once over the filter type.

/// Checks the parameter errors every Bloom filter type shares: an FPP
/// outside (0, 1), zero items, zero bits, or k missing or outside 1..=64 are
/// `InvalidParameter`; sizes beyond any memory, or over a memory cap, are
/// `TooLarge`. (Defined before the modules that use it.)
macro_rules! check_bad_parameters {
    ($filter:ident) => {{
        use filterlab_bloom::ErrorKind::{InvalidParameter, TooLarge};
        for fpp in [
            0.0,
            -0.1,
            1.0,
            1.5,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            let err = $filter::params(1000, fpp).unwrap_err();
            assert_eq!(err.kind(), InvalidParameter, "fpp {fpp}");
        }
        assert_eq!(
            $filter::params(0, 0.01).unwrap_err().kind(),
            InvalidParameter
        );
        for builder in [
            $filter::with_fpp(0.01),
            $filter::with_bits(0).hashes(3),
            $filter::with_bits(100).hashes(0),
            $filter::with_bits(100).hashes(65),
            $filter::with_bits(100),
            $filter::with_fpp(0.01).expected_items(1000).hashes(0),
        ] {
            let kind = builder.build().unwrap_err().kind();
            assert_eq!(kind, InvalidParameter, "{builder:?}");
        }
        for builder in [
            $filter::with_fpp(1e-300).expected_items(u64::MAX),
            $filter::with_fpp(0.5).expected_items(u64::MAX),
            $filter::with_bits(u64::MAX).hashes(3),
            $filter::with_fpp(0.01)
                .expected_items(10_000_000)
                .max_memory(1 << 20),
        ] {
            assert_eq!(builder.build().unwrap_err().kind(), TooLarge, "{builder:?}");
        }
    }};
}

mod atomic;
mod blocked;
mod sizing_claims;
mod standard;

use std::fmt::Debug;

use filterlab_bloom::{BlockedBloomFilter, BloomFilter, ErrorKind, Filter, Merge, Persist};
use filterlab_core::format::FrameWriter;
use filterlab_core::keys::{insert_key, query_key};
use filterlab_core::testing::count_false_positives;
use filterlab_core::theory::wilson_interval;

/// Clears `filter` and inserts the `seed`-th stream of `items` keys.
pub(crate) fn fill<F: Filter>(filter: &mut F, seed: u64, items: u64) {
    filter.clear();
    let hasher = *filter.hasher();
    for i in 0..items {
        filter
            .insert_hash(hasher.hash(&insert_key(seed, i)))
            .expect("a Bloom filter never refuses a key");
    }
}

/// The mean FPP of `instances` independently keyed filters of one
/// configuration at `items` items, `queries_each` queries apiece, and the
/// half-width of its 99.9% two-sided interval: for small filters, whose FPP
/// varies between instances more than one instance's queries can resolve.
pub(crate) fn mean_fpp_over_instances<F: Filter>(
    filter: &mut F,
    seed: u64,
    items: u64,
    instances: u64,
) -> (f64, f64) {
    let queries_each = 64;
    let (mut sum, mut sum_squares) = (0.0, 0.0);
    for instance in 0..instances {
        let instance_seed = seed + instance;
        fill(filter, instance_seed, items);
        let rate =
            count_false_positives(filter, instance_seed, queries_each) as f64 / queries_each as f64;
        sum += rate;
        sum_squares += rate * rate;
    }
    let n = instances as f64;
    let mean = sum / n;
    let standard_error = ((sum_squares / n - mean * mean) / (n - 1.0)).sqrt();
    (mean, 3.2905 * standard_error)
}

/// Measures the FPP of independently keyed instances of one configuration
/// at `items` items and checks it against the filter's exact theory.
///
/// The Wilson interval covers query sampling only, so the number of
/// instances is chosen to make the variation between filters negligible
/// beside it (about 4e5 inserted keys in all); the mean FPP conditional on
/// each instance's fill ([`Filter::expected_fpp`], exact for an instance)
/// is checked against the same interval. With a `target`, the sizing must
/// meet it and the measurement must not exceed it beyond the interval.
pub(crate) fn check_fpp_against_theory<F: Filter + Debug>(
    filter: &mut F,
    items: u64,
    target: Option<f64>,
    seed: u64,
) {
    let exact = filter
        .theoretical_fpp(items)
        .expect("a Bloom filter has an exact formula");
    let instances = (400_000 / items).max(1);
    let queries_each = ((1000.0 / exact) as u64).div_ceil(instances);
    let (mut false_positives, mut conditional) = (0, 0.0);
    for instance in 0..instances {
        let instance_seed = seed ^ (instance << 32);
        fill(filter, instance_seed, items);
        conditional += filter.expected_fpp();
        false_positives += count_false_positives(filter, instance_seed, queries_each);
    }
    let queries = instances * queries_each;
    let conditional = conditional / instances as f64;
    let empirical = false_positives as f64 / queries as f64;
    let (low, high) = wilson_interval(false_positives, queries, 0.999);
    let context = format!(
        "n={items} p={target:?} {filter:?} instances={instances}: empirical {empirical:.4e} \
         in [{low:.4e}, {high:.4e}], exact {exact:.4e}, conditional {conditional:.4e}"
    );
    println!("{context}");
    assert!(
        low <= exact && exact <= high,
        "exact theory outside the interval: {context}"
    );
    assert!(
        low <= conditional && conditional <= high,
        "fill-conditional FPP outside the interval: {context}"
    );
    if let Some(target) = target {
        assert!(
            low <= target,
            "empirical FPP above the target beyond the interval: {context}"
        );
        assert!(
            exact <= target,
            "sizing does not meet the target: {context}"
        );
    }
}

/// Keys the golden files hold.
pub(crate) const GOLDEN_KEYS: [&str; 3] = ["alpha", "beta", "gamma"];

/// Fills `filter` with [`GOLDEN_KEYS`] and checks its bytes against the file
/// `name` in `tests/golden/` (rewritten first under `FILTERLAB_BLESS`, only
/// for a deliberate, versioned format change), and that the file reads back
/// holding those keys; returns the file's bytes.
pub(crate) fn check_golden<F: Filter + Persist>(mut filter: F, name: &str) -> Vec<u8> {
    let hasher = *filter.hasher();
    for key in GOLDEN_KEYS {
        filter.insert_hash(hasher.hash(key)).unwrap();
    }
    let path = format!("{}/tests/golden/{name}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("FILTERLAB_BLESS").is_some() {
        std::fs::write(&path, filter.to_bytes()).unwrap();
    }
    let golden = std::fs::read(&path).unwrap();
    assert_eq!(filter.to_bytes(), golden, "the format of {name} changed");
    let read = F::from_bytes(&golden).unwrap();
    assert!(GOLDEN_KEYS.iter().all(|key| read.contains(*key)));
    assert_eq!(read.len(), GOLDEN_KEYS.len());
    golden
}

/// `read_from_expecting` returns `filter` from its bytes when told its own
/// configuration, `same`, and refuses it as `ConfigMismatch` when told
/// `other`, from the header alone: `header_len` bytes suffice to refuse.
pub(crate) fn check_config_drift<F: Persist + PartialEq + Debug>(
    filter: &F,
    same: &F::Config,
    other: &F::Config,
    header_len: usize,
) {
    let bytes = filter.to_bytes();
    assert_eq!(&F::read_from_expecting(&bytes[..], same).unwrap(), filter);
    let err = F::read_from_expecting(&bytes[..], other)
        .map(|_| ())
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ConfigMismatch);
    // Truncating the payload still says ConfigMismatch.
    let err = F::read_from_expecting(&bytes[..header_len], other)
        .map(|_| ())
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ConfigMismatch);
}

/// Merges with filters of other configurations are refused as
/// `Incompatible`, leaving `filter` exactly as it was.
pub(crate) fn check_merges_refuse<F: Merge + Clone + PartialEq + Debug>(filter: &F, others: &[F]) {
    let mut merged = filter.clone();
    for other in others {
        let err = merged.union(other).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Incompatible);
        let err = merged.intersect(other).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Incompatible);
    }
    assert_eq!(&merged, filter);
}

/// Through serde (JSON here) a filter round-trips as its binary format, and
/// a damaged payload is refused by the same checks.
#[cfg(feature = "serde")]
pub(crate) fn check_serde_round_trip<F>(mut filter: F)
where
    F: Filter + Persist + PartialEq + Debug + serde::Serialize + serde::de::DeserializeOwned,
{
    let hasher = *filter.hasher();
    for key in 0..500u64 {
        filter.insert_hash(hasher.hash(&key)).unwrap();
    }
    let json = serde_json::to_string(&filter).unwrap();
    let back: F = serde_json::from_str(&json).unwrap();
    assert_eq!(back, filter);
    let mut bytes = filter.to_bytes();
    let last = bytes.len() - 20;
    bytes[last] ^= 1;
    let damaged = serde_json::to_string(&bytes).unwrap();
    let err = serde_json::from_str::<F>(&damaged).map(|_| ()).unwrap_err();
    assert!(err.to_string().contains("checksum"), "{err}");
}

/// The bytes of `filter` with its item counter replaced by `items`, and the
/// checksums recomputed: a file that passes every check but the counter's.
pub(crate) fn with_counter<F: Persist>(filter: &F, items: u64) -> Vec<u8> {
    let mut header = filter.header();
    header.items = items;
    let mut frame = FrameWriter::new(Vec::new(), &header).unwrap();
    filter.write_payload(&mut frame).unwrap();
    frame.finish().unwrap()
}

/// Every insert a Bloom filter counts sets a clear bit, so a valid counter
/// never exceeds the bits set: a file claiming more (up to `u64::MAX`, whose
/// next insert would overflow) is refused; one at the bound is read, and
/// later inserts keep the counter within the bits set.
pub(crate) fn check_counter_bound<F: Filter + Persist>(
    mut filter: F,
    set_bits: impl Fn(&F) -> u64,
) {
    fill(&mut filter, 12, 200);
    let bits = set_bits(&filter);
    assert!(filter.len() as u64 <= bits);
    for items in [bits + 1, u64::MAX / 2, u64::MAX] {
        let bytes = with_counter(&filter, items);
        let err = F::from_bytes(&bytes).map(|_| ()).unwrap_err();
        assert_eq!(
            err.kind(),
            ErrorKind::InvalidHeader,
            "counter {items}: {err}"
        );
    }
    let mut read = F::from_bytes(&with_counter(&filter, bits)).unwrap();
    assert_eq!(read.len() as u64, bits);
    let hasher = *read.hasher();
    for i in 0..2000 {
        read.insert_hash(hasher.hash(&query_key(12, i))).unwrap();
        assert!(read.len() as u64 <= set_bits(&read), "after {i} inserts");
    }
}

/// After a merge `len` is an estimate, clamped to what the inputs allow and
/// to the bits set: with one probe per key the estimate from the bits,
/// -m ln(1 - X/m), exceeds the X bits set, so without the second clamp a
/// merged filter would hold a counter its own file could not be read with.
/// `make` gives empty filters of one configuration with one hash per key.
pub(crate) fn check_merges_keep_len_within_the_bits_set<F: Merge + Persist>(
    make: impl Fn() -> F,
    set_bits: impl Fn(&F) -> u64,
    keys: u64,
) {
    let (mut a, mut b) = (make(), make());
    fill(&mut a, 21, keys);
    fill(&mut b, 22, keys);
    let mut union = make();
    fill(&mut union, 21, keys);
    union.union(&b).unwrap();
    let mut intersection = make();
    fill(&mut intersection, 21, keys);
    intersection.intersect(&b).unwrap();
    for (what, merged) in [("union", &union), ("intersection", &intersection)] {
        let bits = set_bits(merged);
        assert!(
            merged.len() as u64 <= bits,
            "{what}: len {} > {bits} bits set",
            merged.len()
        );
        let read = F::from_bytes(&merged.to_bytes()).unwrap();
        assert_eq!(read.len(), merged.len());
    }
    // The union still counts at least what either side did.
    assert!(union.len() >= a.len().max(b.len()));
}

/// Batched operations (prefetching on arrays of a few MiB) answer exactly
/// as one-by-one ones: the same new-key counts, the same lookups.
pub(crate) fn check_batches_agree<F: Filter + Clone>(mut filter: F) {
    let keys: Vec<u64> = (0..200_000).map(|i| insert_key(77, i)).collect();
    let mut one_by_one = filter.clone();
    let hasher = *filter.hasher();
    let hashes: Vec<u64> = keys.iter().map(|key| hasher.hash(key)).collect();
    let new = filter.insert_hashes(&hashes).unwrap();
    let single: usize = hashes
        .iter()
        .map(|&hash| usize::from(one_by_one.insert_hash(hash).unwrap()))
        .sum();
    assert_eq!(new, single);
    assert_eq!(filter.len(), one_by_one.len());
    assert!(filter.contains_many(&keys).iter().all(|&hit| hit));
    let probes: Vec<u64> = (0..200_000).map(|i| query_key(77, i)).collect();
    let batched = filter.contains_many(&probes);
    let single: Vec<bool> = probes.iter().map(|key| one_by_one.contains(key)).collect();
    assert_eq!(batched, single);
}

#[test]
fn batches_agree_with_single_operations() {
    // 16 Mbit = 2 MiB: above the size where batches start prefetching.
    let bits = 1 << 24;
    let standard = BloomFilter::with_bits(bits).hashes(7).build().unwrap();
    check_batches_agree(standard.clone());
    check_batches_agree(standard.into_atomic());
    for kernel in [
        filterlab_bloom::Kernel::Scalar,
        filterlab_bloom::Kernel::detect(),
    ] {
        check_batches_agree(
            BlockedBloomFilter::with_bits(bits)
                .hashes(6)
                .kernel(kernel)
                .build()
                .unwrap(),
        );
    }
}
