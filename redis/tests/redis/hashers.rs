//! Both hasher ids of the format in Redis: a filter stored with id 1
//! (integer keys by width, every filter made before id 2) opens, answers
//! and exports as before; one of id 2 (the default: integers by value)
//! round-trips through export and import; and a client configured with the
//! other id is refused with `ConfigDrift`, never answered wrongly.

use filterlab_core::{HashAlgorithm, KeyHasher};
use filterlab_redis::{BloomFilter, ErrorKind, RedisBloomFilter};

use crate::{Server, assert_kind, unique};

#[test]
fn both_hasher_ids_store_open_and_transfer() {
    let server = server_or_skip!();
    let client = server.client();
    for algorithm in [HashAlgorithm::Xxh3, HashAlgorithm::Xxh3ByValue] {
        let hasher = KeyHasher::with_algorithm(algorithm, 11);
        let bloom = BloomFilter::with_fpp(1e-6)
            .expected_items(1000)
            .hasher(hasher);
        let name = unique("hasher");
        let (mut shared, created) = RedisBloomFilter::builder(bloom.clone())
            .try_init(&client, &name)
            .unwrap();
        assert!(created);
        let mut local = bloom.build().unwrap();
        for v in -500i32..500 {
            assert_eq!(shared.insert(&v).unwrap(), local.insert(&v));
        }
        // Another client adopts the stored hasher, whichever it is.
        let mut opened = RedisBloomFilter::open(&client, &name).unwrap();
        assert_eq!(*opened.hasher(), hasher);
        assert!(
            opened
                .contains_many(-500i32..500)
                .unwrap()
                .iter()
                .all(|&hit| hit)
        );
        // As i64: the same keys under id 2, other keys under id 1.
        let as_i64 = opened.contains_many(-500i64..500).unwrap();
        let by_value = algorithm == HashAlgorithm::Xxh3ByValue;
        assert_eq!(as_i64.iter().filter(|&&hit| hit).count() == 1000, by_value);
        let exported = opened.export().unwrap();
        assert_eq!(exported, local);
        let copy = unique("hasher-copy");
        let mut imported = RedisBloomFilter::import(&client, &copy, &exported).unwrap();
        assert_eq!(imported.export().unwrap(), local);
        // A client sized alike but with the other id: refused, not answered.
        let other = match algorithm {
            HashAlgorithm::Xxh3 => HashAlgorithm::Xxh3ByValue,
            _ => HashAlgorithm::Xxh3,
        };
        let drifted = bloom.hasher(KeyHasher::with_algorithm(other, 11));
        let refused = RedisBloomFilter::builder(drifted).try_init(&client, &name);
        assert_kind(refused, ErrorKind::ConfigDrift);
        for filter in [&mut opened, &mut imported] {
            filter.delete().unwrap();
        }
    }
}
