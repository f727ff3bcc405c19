//! The Redis experiment: against a real server (the one
//! `FILTERLAB_REDIS_URL` names or a private redis-server), every answer of
//! the shared filter is the local filter's and a batch takes the round
//! trips its chunking allows; without a server the report says it skipped
//! the experiment, and writes no redis.csv.

use std::fs;
use std::process::Command;

use filterlab_harness::config::{Experiment, Preset, RunConfig};
use filterlab_harness::experiments::redis::{self, Shape};
use filterlab_harness::experiments::speed::Operation;
use filterlab_harness::progress::Tracker;
use filterlab_harness::registry;
use filterlab_redis::testing::{Server, URL_VARIABLE};

use crate::{assert_contains, scratch};

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
    assert_eq!(results.rows.len(), 9, "{:?}", results.notes);
    assert!(redis::gate(&results.rows).is_empty());
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
    for shape in [Shape::RedisBatched, Shape::RedisPerKey] {
        let keys = if shape == Shape::RedisBatched {
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
                (keys, Some(0))
            );
            if !private {
                continue;
            }
            // k = 7 at p = 0.01: 9,362 keys per call of 65,536 positions.
            let per_call = if shape == Shape::RedisBatched {
                results.bits_per_call as u64 / 7
            } else {
                1
            };
            assert_eq!(
                measured.outcome.round_trips,
                Some(keys.div_ceil(per_call)),
                "{shape:?} {op:?}"
            );
        }
        let present = row(shape, Operation::LookupPositive);
        assert_eq!(present.outcome.positives, keys);
    }
    // The same keys, the same hashing: the same false positives.
    assert_eq!(
        row(Shape::RedisBatched, Operation::LookupNegative)
            .outcome
            .positives,
        local_absent
    );
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
