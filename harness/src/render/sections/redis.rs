//! The Redis section: the shared filter's batched and per-key throughput
//! over loopback beside the local `BloomFilter`'s, with the round trips
//! each operation took and whether every answer matched the local one's;
//! or the note saying why it was not measured.

use std::fmt::Write as _;

use crate::config::RunConfig;
use crate::experiments::measurements::Measurements;
use crate::experiments::redis::{RedisResults, RedisRow, Shape};
use crate::experiments::speed::Operation;
use crate::render::table::{bullets, header, table};
use crate::text::format_count;

/// The Redis section of the README.
pub fn redis_section(measured: &Measurements, redis: &RedisResults) -> String {
    let mut out = String::from("## Shared through Redis (filterlab-redis)\n\n");
    out.push_str(&introduction(&measured.config, redis.bits_per_call));
    if let Some(server) = &redis.server {
        let _ = writeln!(out, "Server: {server}.\n");
    }
    if !redis.rows.is_empty() {
        let local = |op| {
            redis
                .rows
                .iter()
                .find(|row| row.at.shape == Shape::Local && row.at.op == op)
                .map(RedisRow::keys_per_second)
        };
        let body: Vec<Vec<String>> = redis
            .rows
            .iter()
            .map(|row| cells(row, local(row.at.op)))
            .collect();
        out.push_str(&table(
            &header(&[
                "shape",
                "operation",
                "keys",
                "keys/s",
                "local / this",
                "round trips",
                "keys per round trip",
                "answers unlike the local filter's",
            ]),
            &body,
        ));
        out.push('\n');
    }
    out.push_str(&bullets(&redis.notes));
    out
}

/// What was measured, and how, as a paragraph.
fn introduction(config: &RunConfig, bits_per_call: usize) -> String {
    format!(
        "`RedisBloomFilter` keeps a `BloomFilter` in a Redis server for many processes to share: \
         it hashes and probes on the client exactly as the local filter does and sends the bit \
         positions to one Lua script per call. Here {} keys at p = {} are inserted, then looked up \
         present and absent, each in one batch (one script call, so one round trip, per {} bit \
         positions) over loopback, beside the local `BloomFilter` doing the same on the same \
         keys; and the first {} keys one script call per key, Redisson's shape. Round trips are \
         the script calls the server counted. The gate holds every answer of the shared filter to \
         the local filter's on the same keys.\n\n",
        format_count(config.redis_items),
        config.redis_fpp,
        format_count(bits_per_call as u64),
        format_count(config.redis_per_key.min(config.redis_items))
    )
}

/// One table line: `row`, and the local filter's keys/s for its operation.
fn cells(row: &RedisRow, local: Option<f64>) -> Vec<String> {
    let (at, outcome) = (&row.at, &row.outcome);
    let operation = match at.op {
        Operation::Insert => "insert",
        Operation::LookupPositive => "contains, present keys",
        Operation::LookupNegative => "contains, absent keys",
        _ => "other",
    };
    let or_dash = |value: Option<String>| value.unwrap_or_else(|| "-".to_owned());
    vec![
        at.shape.describe().to_owned(),
        operation.to_owned(),
        format_count(at.keys),
        format!("{:.0}", row.keys_per_second()),
        or_dash(local.map(|local| format!("{:.1}×", local / row.keys_per_second()))),
        or_dash(outcome.round_trips.map(|trips| trips.to_string())),
        or_dash(row.keys_per_round_trip().map(|keys| format!("{keys:.0}"))),
        or_dash(outcome.disagreements.map(|wrong| wrong.to_string())),
    ]
}
