//! The Redis experiment: `filterlab-redis`'s shared Bloom filter over
//! loopback against the local `BloomFilter` of the same configuration, on
//! the same keys: keys per second for a batched insert of n keys and
//! batched lookups of n present and n absent keys, the round trips (script
//! calls, counted by the server) each took, and the same operations in
//! Redisson's shape (one script call per key) on a prefix of the keys.
//! Every answer of the shared filter is compared with the local one's.
//!
//! It needs a server: the one `FILTERLAB_REDIS_URL` names, else a private
//! `redis-server` started from the PATH on a free loopback port (see
//! `filterlab_redis::testing`); without either it is skipped with a note.

use std::time::Instant;

use filterlab_bloom::{BloomBuilder, BloomFilter};
use filterlab_core::Filter;
use filterlab_core::keys::{insert_key, query_key};
use filterlab_redis::RedisBloomFilter;
use filterlab_redis::testing::{Server, URL_VARIABLE, unique};
use serde::Serialize;

use crate::config::RunConfig;
use crate::experiments::accuracy::derive_seed;
use crate::experiments::speed::Operation;
use crate::progress::{Stage, Tracker};
use crate::registry::Entry;

/// The local filter the shared one is compared with (a registry name).
pub const LOCAL: &str = "BloomFilter";

/// How the keys reach the filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// The local `BloomFilter`, batched (`insert_many`, `contains_many`).
    Local,
    /// The shared filter, batched: one script call per `bits_per_call` bit positions.
    RedisBatched,
    /// The shared filter, one script call per key (Redisson's shape).
    RedisPerKey,
}

impl Shape {
    /// How the report names it.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Local => "local BloomFilter, batched",
            Self::RedisBatched => "Redis, batched",
            Self::RedisPerKey => "Redis, one script call per key",
        }
    }
}

/// Where one Redis row was measured: the shape, the operation, the sizing.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RedisPoint {
    /// How the keys reached the filter.
    pub shape: Shape,
    /// Insert, lookup of inserted keys, or lookup of never-inserted keys.
    pub op: Operation,
    /// Keys sent: all n of the run batched (the filters are sized for n
    /// at `target_fpp`), a prefix of them one call per key.
    pub keys: u64,
    /// The target FPP.
    pub target_fpp: f64,
}

/// What one operation took and answered.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RedisOutcome {
    /// Wall time for all of the keys.
    pub seconds: f64,
    /// Script calls the server ran meanwhile (none for the local filter;
    /// every client's on a server this run did not start).
    pub round_trips: Option<u64>,
    /// Keys answered new (insert) or present (lookups).
    pub positives: u64,
    /// Answers that differ from the local filter's on the same keys (none
    /// for the local filter itself).
    pub disagreements: Option<u64>,
}

/// One row of `redis.csv`: one operation in one shape, written flat (the
/// point's columns, then the outcome's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedisRow {
    /// Where it was measured.
    pub at: RedisPoint,
    /// What it took and answered.
    pub outcome: RedisOutcome,
}

impl RedisRow {
    /// Keys per second.
    pub fn keys_per_second(&self) -> f64 {
        self.at.keys as f64 / self.outcome.seconds
    }

    /// Keys per round trip, when counted.
    pub fn keys_per_round_trip(&self) -> Option<f64> {
        self.outcome
            .round_trips
            .filter(|&trips| trips > 0)
            .map(|trips| self.at.keys as f64 / trips as f64)
    }
}

impl Serialize for RedisRow {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (&self.at, &self.outcome).serialize(serializer)
    }
}

/// What the Redis experiment measured.
pub struct RedisResults {
    /// The server: its URL and version, and whether this run started it;
    /// `None` when there was none.
    pub server: Option<String>,
    /// Bit positions per script call of the batched shape.
    pub bits_per_call: usize,
    /// One row per shape and operation.
    pub rows: Vec<RedisRow>,
    /// Why it was skipped or stopped, and what the counts include.
    pub notes: Vec<String>,
}

/// Why the Redis gate fails: any answer of the shared filter that differs
/// from the local filter's (it must hash and probe exactly alike, so this
/// includes every false negative); empty when it passes.
pub fn gate(rows: &[RedisRow]) -> Vec<String> {
    rows.iter()
        .filter_map(|row| {
            let at = &row.at;
            let wrong = row.outcome.disagreements.filter(|&wrong| wrong > 0)?;
            Some(format!(
                "{} ({:?}): {wrong} of {} answers differ from the local BloomFilter's",
                at.shape.describe(),
                at.op,
                at.keys
            ))
        })
        .collect()
}

/// Runs the Redis experiment when `LOCAL` is among `entries` and a server
/// can be found; otherwise returns the note saying why not.
pub fn run(entries: &[Entry], config: &RunConfig, progress: &Tracker) -> RedisResults {
    let mut results = RedisResults {
        server: None,
        bits_per_call: filterlab_redis::DEFAULT_BITS_PER_CALL,
        rows: Vec::new(),
        notes: Vec::new(),
    };
    if !entries.iter().any(|entry| entry.name == LOCAL) {
        results.notes.push(format!(
            "not run: it compares with {LOCAL}, which was not selected"
        ));
        return results;
    }
    let server = match Server::discover() {
        Ok(server) => server,
        Err(err) => {
            results.notes.push(format!(
                "skipped: no Redis server ({err}); put redis-server on the PATH or set \
                 {URL_VARIABLE} to measure the shared filter"
            ));
            return results;
        }
    };
    let version = server
        .version()
        .unwrap_or_else(|err| format!("unknown ({err})"));
    results.server = Some(if server.is_private() {
        format!("redis-server {version}, started by this run on a free loopback port")
    } else {
        format!("redis-server {version}, the one {URL_VARIABLE} names")
    });
    if !server.is_private() {
        results.notes.push(
            "round trips are the server's script calls from every client while each step ran"
                .to_owned(),
        );
    }
    let stage = progress.stage("redis", 3);
    if let Err(err) = compare(&server, config, &mut results.rows, &stage) {
        results.notes.push(format!(
            "stopped by a Redis error (the rows before it stand): {err}"
        ));
    }
    stage.finish(&format!("{} rows", results.rows.len()));
    results
}

/// The answers of one shape on one key set, for comparing shapes.
#[derive(Clone, Default)]
struct Answers {
    new: usize,
    present: Vec<bool>,
    absent: Vec<bool>,
}

/// Measures the three shapes into `rows`: the local filter on every key,
/// the shared one batched on every key and one call per key on a prefix.
fn compare(
    server: &Server,
    config: &RunConfig,
    rows: &mut Vec<RedisRow>,
    progress: &Stage<'_>,
) -> Result<(), filterlab_redis::Error> {
    let items = config.redis_items;
    let seed = derive_seed(config.seed, &[items, 0x7ed1_5000]);
    let sizing = BloomFilter::with_fpp(config.redis_fpp)
        .expected_items(items)
        .seed(seed);
    let inserted: Vec<u64> = (0..items).map(|i| insert_key(seed, i)).collect();
    let absent: Vec<u64> = (0..items).map(|i| query_key(seed, i)).collect();
    let row = |shape, op, keys: &[u64], seconds, round_trips, positives: usize| RedisRow {
        at: RedisPoint {
            shape,
            op,
            keys: keys.len() as u64,
            target_fpp: config.redis_fpp,
        },
        outcome: RedisOutcome {
            seconds,
            round_trips,
            positives: positives as u64,
            disagreements: None,
        },
    };

    let mut local = sizing.build()?;
    let (new, seconds) = timed(|| Ok(local.insert_many(&inserted)))?;
    let mut reference = Answers {
        new,
        ..Answers::default()
    };
    rows.push(row(
        Shape::Local,
        Operation::Insert,
        &inserted,
        seconds,
        None,
        new,
    ));
    for (op, keys) in [
        (Operation::LookupPositive, &inserted),
        (Operation::LookupNegative, &absent),
    ] {
        let (found, seconds) = timed(|| Ok(local.contains_many(keys)))?;
        rows.push(row(Shape::Local, op, keys, seconds, None, count(&found)));
        *reference.answers_mut(op) = found;
    }
    progress.step(LOCAL);

    warm_up(server, &sizing)?;
    let per_key = (config.redis_per_key.min(items)) as usize;
    for (shape, len) in [
        (Shape::RedisBatched, inserted.len()),
        (Shape::RedisPerKey, per_key),
    ] {
        let (mut shared, _) = RedisBloomFilter::builder(sizing.clone())
            .try_init(&server.client(), &unique("harness"))?;
        let batched = shape == Shape::RedisBatched;
        // The local filter's answers on the prefix: a filter of those keys only.
        let expected = if batched {
            reference.clone()
        } else {
            let mut prefix = sizing.build()?;
            Answers {
                new: prefix.insert_many(&inserted[..len]),
                present: prefix.contains_many(&inserted[..len]),
                absent: prefix.contains_many(&absent[..len]),
            }
        };
        let keys = &inserted[..len];
        let (new, seconds, trips) = counted(server, || {
            if batched {
                shared.insert_many(keys)
            } else {
                keys.iter()
                    .try_fold(0, |new, key| Ok(new + usize::from(shared.insert(key)?)))
            }
        })?;
        let mut insert = row(shape, Operation::Insert, keys, seconds, trips, new);
        insert.outcome.disagreements = Some(new.abs_diff(expected.new) as u64);
        rows.push(insert);
        for (op, keys) in [
            (Operation::LookupPositive, &inserted[..len]),
            (Operation::LookupNegative, &absent[..len]),
        ] {
            let (found, seconds, trips) = counted(server, || {
                if batched {
                    shared.contains_many(keys)
                } else {
                    keys.iter().map(|key| shared.contains(key)).collect()
                }
            })?;
            let mut lookup = row(shape, op, keys, seconds, trips, count(&found));
            lookup.outcome.disagreements = Some(differences(&found, expected.answers(op)));
            rows.push(lookup);
        }
        shared.delete()?;
        progress.step(shape.describe());
    }
    Ok(())
}

impl Answers {
    fn answers(&self, op: Operation) -> &[bool] {
        if op == Operation::LookupPositive {
            &self.present
        } else {
            &self.absent
        }
    }

    fn answers_mut(&mut self, op: Operation) -> &mut Vec<bool> {
        if op == Operation::LookupPositive {
            &mut self.present
        } else {
            &mut self.absent
        }
    }
}

/// Loads the insert and lookup scripts on the server through a throwaway
/// filter, so that the measured steps count only their own calls.
fn warm_up(server: &Server, sizing: &BloomBuilder) -> Result<(), filterlab_redis::Error> {
    let (mut warm, _) = RedisBloomFilter::builder(sizing.clone())
        .try_init(&server.client(), &unique("harness-warm-up"))?;
    warm.insert(&0u64)?;
    warm.contains(&0u64)?;
    warm.delete().map(drop)
}

/// `step`'s result and its wall time in seconds.
fn timed<T>(
    step: impl FnOnce() -> Result<T, filterlab_redis::Error>,
) -> Result<(T, f64), filterlab_redis::Error> {
    let start = Instant::now();
    let value = step()?;
    Ok((value, start.elapsed().as_secs_f64()))
}

/// [`timed`], and the script calls the server ran meanwhile (`None` when
/// INFO does not answer).
fn counted<T>(
    server: &Server,
    step: impl FnOnce() -> Result<T, filterlab_redis::Error>,
) -> Result<(T, f64, Option<u64>), filterlab_redis::Error> {
    let before = server.command_calls("evalsha").ok();
    let (value, seconds) = timed(step)?;
    let after = server.command_calls("evalsha").ok();
    let trips = before.zip(after).map(|(before, after)| after - before);
    Ok((value, seconds, trips))
}

/// Answers that are `true`.
fn count(answers: &[bool]) -> usize {
    answers.iter().filter(|&&hit| hit).count()
}

/// Positions where `a` and `b` differ (and any length difference).
pub fn differences(a: &[bool], b: &[bool]) -> u64 {
    let unequal = a.iter().zip(b).filter(|(x, y)| x != y).count();
    (unequal + a.len().abs_diff(b.len())) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_count_mismatches_and_missing_answers() {
        assert_eq!(differences(&[true, false], &[true, false]), 0);
        assert_eq!(differences(&[true, false, true], &[false, false]), 2);
        assert_eq!(differences(&[], &[true]), 1);
    }

    #[test]
    fn the_gate_fails_on_any_disagreement_only() {
        let row = |shape, disagreements| RedisRow {
            at: RedisPoint {
                shape,
                op: Operation::LookupNegative,
                keys: 10,
                target_fpp: 0.01,
            },
            outcome: RedisOutcome {
                seconds: 1.0,
                round_trips: Some(2),
                positives: 0,
                disagreements,
            },
        };
        let rows = [
            row(Shape::Local, None),
            row(Shape::RedisBatched, Some(0)),
            row(Shape::RedisPerKey, Some(0)),
        ];
        assert!(gate(&rows).is_empty());
        let failures = gate(&[row(Shape::RedisPerKey, Some(3))]);
        assert_eq!(failures.len(), 1);
        assert!(
            failures[0].contains("3 of 10 answers differ"),
            "{failures:?}"
        );
        assert_eq!(rows[1].keys_per_round_trip(), Some(5.0));
    }
}
