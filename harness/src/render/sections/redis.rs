//! The Redis section: the shared filter's batched and per-key throughput
//! over loopback on one server and on a 3-master cluster, beside the local
//! `BloomFilter`'s and the raw BITFIELD reference's, with the round trips
//! each operation took and whether every answer matched the local one's;
//! the cluster's false positives against the exact sharded theory; or the
//! note saying why it was not measured.

use std::fmt::Write as _;

use crate::config::RunConfig;
use crate::experiments::measurements::Measurements;
use crate::experiments::redis::{
    CLUSTER_MASTERS, ClusterFpp, FPP_CONFIDENCE, MODULE_BATCH, MODULE_CLUSTER_FILTERS,
    RedisResults, RedisRow, Shape,
};
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
    if let Some(cluster) = &redis.cluster {
        let _ = writeln!(out, "Cluster: {cluster}.\n");
    }
    if let Some(module) = &redis.module {
        let _ = writeln!(out, "Module: {module}.\n");
    }
    if !redis.rows.is_empty() {
        let speed = |shape, op| {
            redis
                .rows
                .iter()
                .find(|row| row.at.shape == shape && row.at.op == op)
                .map(RedisRow::keys_per_second)
        };
        let body: Vec<Vec<String>> = redis
            .rows
            .iter()
            .map(|row| {
                let reference = row
                    .at
                    .shape
                    .reference()
                    .and_then(|raw| speed(raw, row.at.op));
                cells(row, speed(Shape::Local, row.at.op), reference)
            })
            .collect();
        out.push_str(&table(
            &header(&[
                "shape",
                "operation",
                "keys",
                "keys/s",
                "local / this",
                "this / raw reference",
                "round trips",
                "keys per round trip",
                "answers unlike the local filter's",
            ]),
            &body,
        ));
        out.push('\n');
    }
    if let Some(fpp) = &redis.cluster_fpp {
        out.push_str(&cluster_fpp(fpp));
    }
    out.push_str(&bullets(&redis.notes));
    out
}

/// What was measured, and how, as a paragraph.
fn introduction(config: &RunConfig, bits_per_call: usize) -> String {
    format!(
        "`RedisBloomFilter` keeps a `BloomFilter` in a Redis server for many processes to share: \
         it hashes and probes on the client exactly as the local filter does and sends the bit \
         positions to one Lua script per call, which checks the stored configuration and keeps \
         an exact counter. Here {} keys at p = {} are inserted, then looked up present and \
         absent, each in one batch (one script call, so one round trip, per {} bit positions) \
         over loopback, beside the local `BloomFilter` doing the same on the same keys; and the \
         first {} keys one script call per key, Redisson's shape. Right after each, the raw \
         BITFIELD reference (`filterlab_redis::testing::BitfieldReference`: the same bits \
         through pipelined BITFIELD commands, no script, no checks, no counter) does the same \
         on the same server: the speed limit of a filter on plain Redis, so \"this / raw \
         reference\" is the scripts' share of it. `RedisShardedBloomFilter` then does the same \
         on a {CLUSTER_MASTERS}-master Redis Cluster (its shards spread over the masters, one \
         script call per shard a batch touches); its \"this / raw reference\" compares with the \
         one server's reference. Every step runs once on a fresh filter, so the ratios carry \
         the shared machine's noise. Round trips are the script calls (BITFIELD commands for \
         the reference) the servers counted. The gate holds every answer to the local filter's \
         on the same keys (a local `ShardedBloomFilter` for the cluster), and the cluster's \
         false positives to the exact sharded theory.\n\n\
         The module rows are filterlab-redis-module, when it is built: BF.* inside the server, \
         on a `ScalableBloomFilter` reserved for the same n and p ({} keys a BF.MADD or \
         BF.MEXISTS; one BF.ADD or BF.EXISTS a key), in a server of its own and on the same \
         cluster (the keys spread over {} filters, so every master serves some). Their answers \
         are held to local `ScalableBloomFilter`s of the same configuration, and their round \
         trips are the module's commands the servers counted.\n\n",
        format_count(config.redis_items),
        config.redis_fpp,
        format_count(bits_per_call as u64),
        format_count(config.redis_per_key.min(config.redis_items)),
        format_count(MODULE_BATCH as u64),
        MODULE_CLUSTER_FILTERS
    )
}

/// The cluster's false positives against the exact sharded theory.
fn cluster_fpp(fpp: &ClusterFpp) -> String {
    format!(
        "On the cluster ({} shards of {} bits, k = {}), {} of {} absent keys were answered \
         present after {} inserts: {:.3e}, {:.1}% interval [{:.3e}, {:.3e}]; the exact sharded \
         FPP (the binomial mixture of the shards' loads) is {:.3e}, {} the interval.\n\n",
        format_count(fpp.shards),
        format_count(fpp.shard_bits),
        fpp.hashes,
        format_count(fpp.false_positives),
        format_count(fpp.keys),
        format_count(fpp.keys),
        fpp.measured(),
        FPP_CONFIDENCE * 100.0,
        fpp.interval.0,
        fpp.interval.1,
        fpp.theory,
        if fpp.holds() { "inside" } else { "outside" },
    )
}

/// One table line: `row`, and the local filter's and the raw reference's
/// keys/s for its operation.
fn cells(row: &RedisRow, local: Option<f64>, reference: Option<f64>) -> Vec<String> {
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
        or_dash(reference.map(|raw| format!("{:.2}", row.keys_per_second() / raw))),
        or_dash(outcome.round_trips.map(|trips| trips.to_string())),
        or_dash(row.keys_per_round_trip().map(|keys| format!("{keys:.0}"))),
        or_dash(outcome.disagreements.map(|wrong| wrong.to_string())),
    ]
}
