//! Keys per second of a shared filter over loopback, in one run: batched
//! inserts and lookups (one script call per `bits_per_call` bit positions)
//! against Redisson's shape, one script call per key, on the same keys.
//!
//! ```text
//! cargo run --release -p filterlab-peers --example redis_speed -- [--keys N] [--per-key N] [--bits-per-call B]
//! ```
//!
//! Starts its own `redis-server` on a free loopback port (or uses the server
//! `FILTERLAB_REDIS_URL` names), and counts the script calls the server ran
//! (INFO commandstats: exact on a private server).

use std::error::Error;
use std::time::Instant;

use filterlab_core::keys::{insert_key, query_key};
use filterlab_redis::{DEFAULT_BITS_PER_CALL, RedisBloomFilter};

use filterlab_redis::testing::{Server, URL_VARIABLE, unique};

/// One measured operation.
struct Row {
    operation: &'static str,
    shape: String,
    keys: u64,
    seconds: f64,
    calls: u64,
}

fn measure(
    server: &Server,
    operation: &'static str,
    shape: String,
    keys: u64,
    step: impl FnOnce() -> Result<(), filterlab_redis::Error>,
) -> Result<Row, Box<dyn Error>> {
    let before = server.command_calls("evalsha")?;
    let start = Instant::now();
    step()?;
    let seconds = start.elapsed().as_secs_f64();
    let calls = server.command_calls("evalsha")? - before;
    Ok(Row {
        operation,
        shape,
        keys,
        seconds,
        calls,
    })
}

/// The three operations on a fresh filter, batched (the whole key set in
/// one `insert_many` / `contains_many` call, chunked by `bits_per_call`) or
/// one script call per key; the number of false positives among `absent`.
fn measure_shape(
    server: &Server,
    sizing: u64,
    bits_per_call: Option<usize>,
    inserted: &[u64],
    absent: &[u64],
) -> Result<(Vec<Row>, usize), Box<dyn Error>> {
    let (mut filter, _) =
        RedisBloomFilter::try_init(&server.client(), &unique("speed"), sizing, 0.01)?;
    // Loads the scripts, so that the measured calls are the steady state.
    filter.insert(&u64::MAX)?;
    filter.contains(&u64::MAX)?;
    let shape = match bits_per_call {
        Some(bits) => {
            filter.set_bits_per_call(bits)?;
            format!("batched, {bits} bits per call")
        }
        None => "one script call per key".to_owned(),
    };
    let keys = inserted.len() as u64;
    let mut hits = Vec::new();
    let mut rows = vec![measure(
        server,
        "insert",
        shape.clone(),
        keys,
        || match bits_per_call {
            Some(_) => filter.insert_many(inserted).map(drop),
            None => inserted
                .iter()
                .try_for_each(|key| filter.insert(key).map(drop)),
        },
    )?];
    rows.push(measure(
        server,
        "contains (present)",
        shape.clone(),
        keys,
        || {
            hits = lookup(&mut filter, bits_per_call.is_some(), inserted)?;
            Ok(())
        },
    )?);
    assert!(hits.iter().all(|&hit| hit), "a false negative");
    rows.push(measure(server, "contains (absent)", shape, keys, || {
        hits = lookup(&mut filter, bits_per_call.is_some(), absent)?;
        Ok(())
    })?);
    let false_positives = hits.iter().filter(|&&hit| hit).count();
    filter.delete()?;
    Ok((rows, false_positives))
}

/// Looks `keys` up in one batch or one call per key.
fn lookup(
    filter: &mut RedisBloomFilter,
    batched: bool,
    keys: &[u64],
) -> Result<Vec<bool>, filterlab_redis::Error> {
    if batched {
        filter.contains_many(keys)
    } else {
        keys.iter().map(|key| filter.contains(key)).collect()
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let (mut keys, mut per_key, mut bits_per_call) = (1_000_000u64, None, DEFAULT_BITS_PER_CALL);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().ok_or(format!("{arg} needs a value"))?;
        match arg.as_str() {
            "--keys" => keys = value.parse()?,
            "--per-key" => per_key = Some(value.parse()?),
            "--bits-per-call" => bits_per_call = value.parse()?,
            other => return Err(format!("unknown option {other}").into()),
        }
    }
    let per_key = per_key.unwrap_or(keys).min(keys) as usize;
    let server = Server::discover()?;
    let inserted: Vec<u64> = (0..keys).map(|i| insert_key(1, i)).collect();
    let absent: Vec<u64> = (0..keys).map(|i| query_key(1, i)).collect();
    let (mut rows, false_positives) =
        measure_shape(&server, keys, Some(bits_per_call), &inserted, &absent)?;
    // Redisson's shape, on the same keys (the first `per_key` of them).
    let (single, _) = measure_shape(
        &server,
        keys,
        None,
        &inserted[..per_key],
        &absent[..per_key],
    )?;
    rows.extend(single);

    println!(
        "filterlab-redis over loopback: {keys} keys, p = 0.01, server {} ({})",
        server.url(),
        std::env::var(URL_VARIABLE).map_or("private, started by this example", |_| {
            "yours, from FILTERLAB_REDIS_URL: script calls counted include other clients'"
        })
    );
    println!("| operation | shape | keys | seconds | keys/s | script calls | keys per call |");
    println!("|---|---|---|---|---|---|---|");
    for row in &rows {
        println!(
            "| {} | {} | {} | {:.2} | {:.0} | {} | {:.0} |",
            row.operation,
            row.shape,
            row.keys,
            row.seconds,
            row.keys as f64 / row.seconds,
            row.calls,
            row.keys as f64 / row.calls.max(1) as f64
        );
    }
    println!(
        "false positives among {keys} absent keys (batched): {false_positives} ({:.3}%)",
        100.0 * false_positives as f64 / keys as f64
    );
    Ok(())
}
