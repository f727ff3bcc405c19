//! The Redis experiment: against a real server (the one
//! `FILTERLAB_REDIS_URL` names or a private redis-server) and a private
//! 3-master cluster, every answer of the shared filters and of the raw
//! BITFIELD reference is the local filter's, a batch takes the round trips
//! its chunking allows, and the cluster's false positives hold the exact
//! sharded theory; without a server the report says it skipped the
//! experiment, and writes no redis.csv.

use std::fs;
use std::process::Command;

use filterlab_harness::config::{Experiment, Preset, RunConfig};
use filterlab_harness::experiments::redis::{self, Shape};
use filterlab_harness::experiments::speed::Operation;
use filterlab_harness::progress::Tracker;
use filterlab_harness::registry;
use filterlab_redis::DEFAULT_SHARDS;
use filterlab_redis::testing::{Server, URL_VARIABLE};

use crate::{assert_contains, scratch};

/// The shapes of the scripts and the raw reference.
const SHAPES: [Shape; 6] = [
    Shape::RedisBatched,
    Shape::RedisPerKey,
    Shape::ReferenceBatched,
    Shape::ReferencePerKey,
    Shape::ClusterBatched,
    Shape::ClusterPerKey,
];

/// The module's shapes, measured when it is built.
const MODULE_SHAPES: [Shape; 4] = [
    Shape::ModuleBatched,
    Shape::ModulePerKey,
    Shape::ModuleClusterBatched,
    Shape::ModuleClusterPerKey,
];

/// The round trips `shape` takes for `keys` keys.
fn expected_trips(shape: Shape, keys: u64, bits_per_call: usize) -> u64 {
    match shape {
        // k = 7 at p = 0.01: 9,362 keys per call (or pipeline) of
        // 65,536 positions, the reference's one BITFIELD command
        // per part (here one) per pipeline.
        Shape::RedisBatched | Shape::ReferenceBatched => keys.div_ceil(bits_per_call as u64 / 7),
        // 10^4 keys reach every shard, each shard's ~156 keys one call.
        Shape::ClusterBatched => DEFAULT_SHARDS,
        // 1,000 keys a command; on the cluster each of the 12 filters'
        // ~833 keys one command.
        Shape::ModuleBatched => keys.div_ceil(redis::MODULE_BATCH as u64),
        Shape::ModuleClusterBatched => redis::MODULE_CLUSTER_FILTERS as u64,
        _ => keys,
    }
}

#[test]
fn shared_filter_answers_as_the_local_one_in_the_batches_it_should() {
    if let Err(err) = Server::discover() {
        eprintln!("skipped: no Redis server ({err})");
        return;
    }
    let private = std::env::var(URL_VARIABLE).map_or(true, |url| url.is_empty());
    let config = RunConfig::preset(Preset::Tiny, 3, 1);
    let results = redis::run(&registry::registry(), &config, &Tracker::hidden());
    assert!(results.server.is_some(), "{:?}", results.notes);
    assert!(results.cluster.is_some(), "{:?}", results.notes);
    // The module's 12 rows when it is built (a workspace test run builds it).
    let module = results.module.is_some();
    assert_eq!(
        module,
        redis::module_path().is_some(),
        "{:?}",
        results.notes
    );
    assert_eq!(
        results.rows.len(),
        if module { 33 } else { 21 },
        "{:?}",
        results.notes
    );
    assert!(redis::gate(&results.rows, results.cluster_fpp.as_ref()).is_empty());
    let row = |shape, op| {
        results
            .rows
            .iter()
            .find(|row| row.at.shape == shape && row.at.op == op)
            .unwrap()
    };
    let local_absent = row(Shape::Local, Operation::LookupNegative)
        .outcome
        .positives;
    assert!(local_absent > 0, "no false positive among 10^4 keys at 1%");
    let measured_shapes = SHAPES.iter().chain(MODULE_SHAPES.iter().filter(|_| module));
    for &shape in measured_shapes {
        let keys = if shape.batched() {
            config.redis_items
        } else {
            config.redis_per_key
        };
        for op in [
            Operation::Insert,
            Operation::LookupPositive,
            Operation::LookupNegative,
        ] {
            let measured = row(shape, op);
            assert_eq!(
                (measured.at.keys, measured.outcome.disagreements),
                (keys, Some(0)),
                "{shape:?} {op:?}"
            );
            // The cluster is private; the one server may be the user's.
            let clustered = matches!(shape, Shape::ClusterBatched | Shape::ClusterPerKey);
            if !private && !clustered {
                continue;
            }
            let trips = expected_trips(shape, keys, results.bits_per_call);
            assert_eq!(
                measured.outcome.round_trips,
                Some(trips),
                "{shape:?} {op:?}"
            );
        }
        let present = row(shape, Operation::LookupPositive);
        assert_eq!(present.outcome.positives, keys);
    }
    // The same keys, the same hashing: the same false positives.
    for shape in [Shape::RedisBatched, Shape::ReferenceBatched] {
        assert_eq!(
            row(shape, Operation::LookupNegative).outcome.positives,
            local_absent
        );
    }
    let fpp = results.cluster_fpp.expect("the cluster's FPP");
    assert_eq!(
        (fpp.shards, fpp.keys, fpp.false_positives),
        (
            DEFAULT_SHARDS,
            config.redis_items,
            row(Shape::ClusterBatched, Operation::LookupNegative)
                .outcome
                .positives
        )
    );
    assert!(fpp.holds(), "{fpp:?}");
    assert!(config.runs(Experiment::Redis));
}

#[test]
fn without_a_server_the_report_says_it_skipped() {
    let empty_path = scratch("no-redis-path");
    fs::create_dir_all(&empty_path).unwrap();
    for (filters, note) in [
        ("BloomFilter", "skipped: no Redis server"),
        ("fastbloom", "not run: it compares with BloomFilter"),
    ] {
        let out = scratch("no-redis");
        let status = Command::new(env!("CARGO_BIN_EXE_filterlab"))
            .args(["report", "--tiny", "--quiet", "--experiments", "redis"])
            .args(["--filters", filters, "--out"])
            .arg(&out)
            .env("PATH", &empty_path)
            .env_remove(URL_VARIABLE)
            .status()
            .unwrap();
        assert!(status.success());
        let readme = fs::read_to_string(out.join("README.md")).unwrap();
        assert_contains(
            &readme,
            &["## Shared through Redis (filterlab-redis)", note],
        );
        assert!(!readme.contains("Server: "), "{readme}");
        assert!(!out.join("redis.csv").exists());
        fs::remove_dir_all(&out).unwrap();
    }
    fs::remove_dir_all(&empty_path).unwrap();
}
