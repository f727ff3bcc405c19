//! Integer keys are hashed by value (hasher ids 2 and 3, the default 3):
//! `insert(&5)` (an `i32`) and `contains(&5u64)` are one key, whatever the
//! integer types, and a negative value is never an unsigned one. A filter
//! of hasher id 1 keeps hashing integers by width, as when it was written.

use filterlab_bloom::{BloomFilter, HashAlgorithm, KeyHasher};
use filterlab_core::Membership;

/// The integer types that hold `v`, each with whether `filter` contains
/// `v` as that type.
#[allow(irrefutable_let_patterns)] // `v` as its own type
fn lookups_as_every_type(filter: &BloomFilter, v: i64) -> Vec<(&'static str, bool)> {
    let mut found = Vec::new();
    macro_rules! each {
        ($($t:ty),*) => {$(
            if let Ok(value) = <$t>::try_from(v) {
                found.push((stringify!($t), filter.contains(&value)));
            }
        )*};
    }
    each!(
        i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize
    );
    found
}

#[test]
fn an_integer_is_one_key_whatever_its_type() {
    assert_eq!(
        BloomFilter::with_fpp(0.01)
            .expected_items(10)
            .build()
            .unwrap()
            .hasher()
            .algorithm(),
        HashAlgorithm::FoldedMultiply
    );
    for algorithm in [HashAlgorithm::Xxh3ByValue, HashAlgorithm::FoldedMultiply] {
        // At 10^-9 a right answer by chance is out of the question.
        let mut filter = BloomFilter::with_fpp(1e-9)
            .expected_items(3000)
            .hasher(KeyHasher::with_algorithm(algorithm, 0))
            .build()
            .unwrap();
        for v in -1000i32..1000 {
            filter.insert(&v);
        }
        filter.insert(&u128::MAX);
        for v in -1000i64..1000 {
            for (t, found) in lookups_as_every_type(&filter, v) {
                assert!(found, "{v} inserted as i32, looked up as {t}");
            }
        }
        // Negative values and the unsigned values of the same bits differ.
        for v in [-1i32, -2, -1000] {
            assert!(!filter.contains(&(v as u32)), "{v} as u32");
            assert!(!filter.contains(&(i64::from(v) as u64)), "{v} as u64");
        }
        assert!(filter.contains(&u128::MAX));
        // -2 (inserted) has the bits of u128::MAX - 1 (not inserted).
        assert!(
            !filter.contains(&(u128::MAX - 1)),
            "-2 is not u128::MAX - 1"
        );
        // A round trip keeps the hasher, so the answers.
        let read = BloomFilter::from_bytes(&filter.to_bytes()).unwrap();
        assert_eq!(read.hasher().algorithm(), algorithm);
        assert!(read.contains(&5u8) && read.contains(&-5i128));
    }
}

/// A filter of hasher id 1 (written before id 2 existed, or asked for)
/// answers as it always did: `5u32` and `5u64` are different keys there.
#[test]
fn hasher_id_1_keeps_hashing_integers_by_width() {
    let legacy = KeyHasher::with_algorithm(HashAlgorithm::Xxh3, 7);
    let mut filter = BloomFilter::with_fpp(1e-9)
        .expected_items(1000)
        .hasher(legacy)
        .build()
        .unwrap();
    for v in 0..1000u32 {
        filter.insert(&v);
    }
    let read = BloomFilter::from_bytes(&filter.to_bytes()).unwrap();
    assert_eq!(*read.hasher(), legacy);
    assert!((0..1000u32).all(|v| read.contains(&v)));
    assert!(
        (0..1000u64).all(|v| !read.contains(&v)),
        "u64 keys are other keys under id 1"
    );
}
