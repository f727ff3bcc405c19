//! Properties against a local `BloomFilter` of the same configuration:
//! every inserted key is contained; every answer (new or not on insert,
//! present or not on lookup) is the local filter's; the exported filter is
//! equal to the local one, bit for bit and counter included; and its bytes
//! round-trip through import and export, whatever the number of parts and
//! the keys per script call. And the layout itself: an array beyond 2^32
//! bits in two keys, and a golden file of the keys' contents.

use std::fmt::Write;

use filterlab_core::{HashAlgorithm, KeyHasher, Probes};
use filterlab_redis::{BloomFilter, DEFAULT_PART_BITS, RedisBloomFilter};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

use crate::{Server, assert_all_contained, keys_of, unique};

/// One case: a filter configuration, its layout in Redis, and the keys.
#[derive(Debug, Clone)]
struct Case {
    num_bits: u64,
    num_hashes: u32,
    seed: u64,
    /// Bits per string key, and for the re-import.
    part_bits: u64,
    reimport_part_bits: u64,
    bits_per_call: usize,
    keys: Vec<Vec<u8>>,
    /// Never-inserted keys (may collide with inserted ones, which is fine:
    /// both filters answer alike either way).
    probes: Vec<Vec<u8>>,
    /// How many keys go in one at a time before the batch.
    singles: usize,
}

fn part_bits() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(64u64),
        Just(128),
        Just(320),
        Just(4096),
        Just(DEFAULT_PART_BITS)
    ]
}

fn case() -> impl Strategy<Value = Case> {
    let key = vec(any::<u8>(), 0..12);
    (
        (1u64..3000, 1u32..9, any::<u64>()),
        // Few keys per call, and enough for the contains script's rounds
        // (32 keys or more per call).
        (
            part_bits(),
            part_bits(),
            prop_oneof![1usize..60, 256usize..2000],
        ),
        (vec(key.clone(), 0..200), vec(key, 0..200), 0usize..40),
    )
        .prop_map(
            |(
                (num_bits, num_hashes, seed),
                (part_bits, reimport_part_bits, bits_per_call),
                (keys, probes, singles),
            )| Case {
                num_bits,
                num_hashes,
                seed,
                part_bits,
                reimport_part_bits,
                bits_per_call,
                keys,
                probes,
                singles,
            },
        )
}

fn check(server: &Server, case: &Case) -> Result<(), TestCaseError> {
    let client = server.client();
    let name = unique("prop");
    let bloom = BloomFilter::with_bits(case.num_bits)
        .hashes(case.num_hashes)
        .seed(case.seed);
    let (mut shared, created) = RedisBloomFilter::builder(bloom.clone())
        .part_bits(case.part_bits)
        .try_init(&client, &name)
        .unwrap();
    prop_assert!(created);
    shared.set_bits_per_call(case.bits_per_call).unwrap();
    let mut local = bloom.build().unwrap();

    let singles = case.singles.min(case.keys.len());
    for key in &case.keys[..singles] {
        prop_assert_eq!(shared.insert(key).unwrap(), local.insert(key));
    }
    let rest = &case.keys[singles..];
    // One answer per key, as inserting them one by one locally gives.
    let each: Vec<bool> = rest.iter().map(|key| local.insert(key)).collect();
    prop_assert_eq!(shared.insert_each(rest).unwrap(), each);

    // No false negatives, and every answer is the local filter's.
    prop_assert!(
        shared
            .contains_many(&case.keys)
            .unwrap()
            .iter()
            .all(|&hit| hit)
    );
    prop_assert_eq!(
        shared.contains_many(&case.probes).unwrap(),
        local.contains_many(&case.probes)
    );
    if let Some(probe) = case.probes.first() {
        prop_assert_eq!(shared.contains(probe).unwrap(), local.contains(probe));
    }
    prop_assert_eq!(shared.len().unwrap(), local.len() as u64);

    // Export: the same filter, bit for bit.
    let exported = shared.export().unwrap();
    prop_assert_eq!(&exported, &local);
    prop_assert_eq!(exported.to_bytes(), local.to_bytes());

    // Import into another layout and export again: the same bytes.
    let copy_name = unique("prop-copy");
    let mut copy =
        RedisBloomFilter::import_in_parts(&client, &copy_name, &exported, case.reimport_part_bits)
            .unwrap();
    prop_assert_eq!(copy.export().unwrap().to_bytes(), local.to_bytes());
    prop_assert_eq!(
        copy.contains_many(&case.probes).unwrap(),
        local.contains_many(&case.probes)
    );

    prop_assert!(shared.delete().unwrap());
    prop_assert!(copy.delete().unwrap());
    let mut con = server.connection();
    prop_assert!(keys_of(&mut con, &name).is_empty());
    prop_assert!(keys_of(&mut con, &copy_name).is_empty());
    Ok(())
}

#[test]
fn shared_filter_answers_as_the_local_one() {
    let server = server_or_skip!();
    let mut runner = TestRunner::new(Config {
        cases: 48,
        ..Config::default()
    });
    runner.run(&case(), |case| check(&server, &case)).unwrap();
}

/// A filter sized by FPP exports equal to a local one built by the same
/// builder settings (its sizing target included), after 10,000 keys.
#[test]
fn filter_sized_by_fpp_exports_equal_to_the_local_one() {
    let server = server_or_skip!();
    let bloom = BloomFilter::with_fpp(0.001).expected_items(10_000).seed(42);
    let (mut shared, _) = RedisBloomFilter::builder(bloom.clone())
        .try_init(&server.client(), &unique("sized"))
        .unwrap();
    let mut local = bloom.build().unwrap();
    let keys: Vec<String> = (0..10_000).map(|i| format!("user:{i}")).collect();
    assert_eq!(shared.insert_many(&keys).unwrap(), local.insert_many(&keys));
    let exported = shared.export().unwrap();
    assert_eq!(exported, local);
    assert_eq!(exported.target_fpp(), Some(0.001));
    assert_eq!(shared.num_bits(), local.num_bits());
    shared.delete().unwrap();
}

/// An array of 2^32 + 4096 bits spans two keys at the default part size:
/// a bit at index i ≥ 2^32 is Redis bit (i XOR 7) − 2^32 of the second key,
/// one below is bit i XOR 7 of the first, and keys whose probes land on
/// either side are contained. (512 MiB on the server for a moment.)
#[test]
fn arrays_beyond_2_32_bits_span_parts() {
    let server = server_or_skip!();
    let num_bits = (1u64 << 32) + 4096;
    let bloom = BloomFilter::with_bits(num_bits).hashes(3).seed(5);
    let (mut shared, _) = RedisBloomFilter::builder(bloom)
        .try_init(&server.client(), &unique("big"))
        .unwrap();
    assert_eq!((shared.parts(), shared.part_bits()), (2, 1 << 32));
    // Keys with a probe in the second part (about 1 in 350,000 keys), and
    // keys with a probe in the last byte of the first part.
    let hasher = *shared.hasher();
    let probes =
        |key: u64| -> Vec<u64> { Probes::new(hasher.hash(&key), num_bits).take(3).collect() };
    let beyond: Vec<u64> = (0u64..)
        .filter(|&key| probes(key).iter().any(|&index| index >= 1 << 32))
        .take(3)
        .collect();
    let below: Vec<u64> = (0u64..)
        .filter(|&key| {
            probes(key)
                .iter()
                .any(|&index| ((1 << 32) - 8..1 << 32).contains(&index))
        })
        .take(1)
        .collect();
    let keys: Vec<u64> = beyond.iter().chain(&below).copied().collect();
    assert_eq!(shared.insert_many(&keys).unwrap(), 4);
    assert_all_contained(&mut shared, &keys);
    let mut con = server.connection();
    for &key in &keys {
        for index in probes(key) {
            let (part, offset) = if index >= 1 << 32 {
                (1, (index ^ 7) - (1 << 32))
            } else {
                (0, index ^ 7)
            };
            let key = format!("{{{}}}:bits:{part}", shared.name());
            let bit: u8 = redis::cmd("GETBIT")
                .arg(&key)
                .arg(offset)
                .query(&mut con)
                .unwrap();
            assert_eq!(bit, 1, "bit {index} at {key} offset {offset}");
        }
    }
    assert_eq!(
        shared.set_bits().unwrap(),
        keys.iter()
            .map(|&key| probes(key).len() as u64)
            .sum::<u64>()
    );
    shared.delete().unwrap();
}

/// The layout in Redis is part of the contract (other clients read it): the
/// configuration hash and the raw bytes of the parts are pinned by a golden
/// file (rewritten under `FILTERLAB_BLESS` only for a deliberate, versioned
/// change), and the parts, concatenated, are byte for byte the payload of
/// the local filter's binary format.
#[test]
fn layout_is_pinned_and_the_parts_are_the_payload() {
    let server = server_or_skip!();
    // Hasher id 1, as the file was written (its keys are strings).
    let hasher = KeyHasher::with_algorithm(HashAlgorithm::Xxh3, 7);
    let bloom = BloomFilter::with_bits(200).hashes(3).hasher(hasher);
    let (mut shared, _) = RedisBloomFilter::builder(bloom.clone())
        .part_bits(128)
        .try_init(&server.client(), &unique("golden"))
        .unwrap();
    let mut local = bloom.build().unwrap();
    for key in ["alpha", "beta", "gamma"] {
        assert_eq!(shared.insert(key).unwrap(), local.insert(key));
    }
    let mut con = server.connection();
    let config: std::collections::BTreeMap<String, String> = redis::cmd("HGETALL")
        .arg(format!("{{{}}}:config", shared.name()))
        .query(&mut con)
        .unwrap();
    let mut dump = String::new();
    for (field, value) in &config {
        writeln!(dump, "{field} = {value}").unwrap();
    }
    let mut parts = Vec::new();
    for part in 0..shared.parts() {
        let bytes: Vec<u8> = redis::cmd("GET")
            .arg(format!("{{{}}}:bits:{part}", shared.name()))
            .query(&mut con)
            .unwrap();
        write!(dump, "bits:{part} = ").unwrap();
        for byte in &bytes {
            write!(dump, "{byte:02x}").unwrap();
        }
        dump.push('\n');
        parts.extend(bytes);
    }
    let path = format!("{}/tests/golden/layout-v1.txt", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("FILTERLAB_BLESS").is_some() {
        std::fs::write(&path, &dump).unwrap();
    }
    assert_eq!(
        dump,
        std::fs::read_to_string(&path).unwrap(),
        "the Redis layout changed"
    );
    // Kind 1: a 48-byte header with 4 parameters, then the payload.
    let payload_start = 48 + 8 * 4;
    let bytes = local.to_bytes();
    assert_eq!(parts, bytes[payload_start..payload_start + parts.len()]);
    assert_eq!(payload_start + parts.len() + 8, bytes.len());
    shared.delete().unwrap();
}
