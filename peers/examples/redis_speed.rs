//! Keys per second of a shared filter over loopback, beside the limit for
//! a filter on plain Redis: the same bit positions written and read with
//! pipelined BITFIELD commands and no script (`BitfieldReference`). Batched
//! (one script call, or one pipeline, per `bits_per_call` bit positions)
//! and one key at a time (one round trip per key, Redisson's shape), on the
//! same keys, in alternating rounds.
//!
//! ```text
//! cargo run --release -p filterlab-peers --example redis_speed -- [--keys N] [--per-key N] [--rounds R] [--bits-per-call B]
//! ```
//!
//! Starts its own `redis-server` on a free loopback port (or uses the server
//! `FILTERLAB_REDIS_URL` names), and counts the script calls the server ran
//! (INFO commandstats: exact on a private server).

use std::error::Error;
use std::time::Instant;

use filterlab_core::keys::{insert_key, query_key};
use filterlab_redis::testing::{BitfieldReference, Server, URL_VARIABLE, unique};
use filterlab_redis::{BloomFilter, DEFAULT_BITS_PER_CALL, RedisBloomFilter};

/// The operations measured, in the order they run on a fresh filter.
const OPERATIONS: [&str; 3] = ["insert", "contains (present)", "contains (absent)"];

/// The keys, as hashes under the filter's hasher.
struct Keys {
    inserted: Vec<u64>,
    absent: Vec<u64>,
}

/// One way of driving the bits: the scripts or the raw reference.
trait Driver {
    fn insert(&mut self, hashes: &[u64], batched: bool) -> Result<usize, Box<dyn Error>>;
    fn contains(&mut self, hashes: &[u64], batched: bool) -> Result<Vec<bool>, Box<dyn Error>>;
    fn delete(&mut self) -> Result<(), Box<dyn Error>>;
}

impl Driver for RedisBloomFilter {
    fn insert(&mut self, hashes: &[u64], batched: bool) -> Result<usize, Box<dyn Error>> {
        Ok(if batched {
            self.insert_hashes(hashes.iter().copied())?
        } else {
            let mut new = 0;
            for &hash in hashes {
                new += self.insert_hashes([hash])?;
            }
            new
        })
    }

    fn contains(&mut self, hashes: &[u64], batched: bool) -> Result<Vec<bool>, Box<dyn Error>> {
        Ok(if batched {
            self.contains_hashes(hashes.iter().copied())?
        } else {
            let mut found = Vec::with_capacity(hashes.len());
            for &hash in hashes {
                found.extend(self.contains_hashes([hash])?);
            }
            found
        })
    }

    fn delete(&mut self) -> Result<(), Box<dyn Error>> {
        RedisBloomFilter::delete(self)?;
        Ok(())
    }
}

impl Driver for BitfieldReference {
    fn insert(&mut self, hashes: &[u64], batched: bool) -> Result<usize, Box<dyn Error>> {
        Ok(if batched {
            self.insert_hashes(hashes)?
        } else {
            let mut new = 0;
            for hash in hashes.chunks(1) {
                new += self.insert_hashes(hash)?;
            }
            new
        })
    }

    fn contains(&mut self, hashes: &[u64], batched: bool) -> Result<Vec<bool>, Box<dyn Error>> {
        Ok(if batched {
            self.contains_hashes(hashes)?
        } else {
            let mut found = Vec::with_capacity(hashes.len());
            for hash in hashes.chunks(1) {
                found.extend(self.contains_hashes(hash)?);
            }
            found
        })
    }

    fn delete(&mut self) -> Result<(), Box<dyn Error>> {
        BitfieldReference::delete(self)?;
        Ok(())
    }
}

/// Wall-clock and server CPU seconds of each operation on a fresh driver;
/// checks the answers.
fn run(
    server: &Server,
    driver: &mut dyn Driver,
    keys: &Keys,
    count: usize,
    batched: bool,
) -> Result<[(f64, f64); 3], Box<dyn Error>> {
    let (inserted, absent) = (&keys.inserted[..count], &keys.absent[..count]);
    let mut times = [(0.0, 0.0); 3];
    for (operation, time) in times.iter_mut().enumerate() {
        let cpu = server.cpu_seconds()?;
        let start = Instant::now();
        match operation {
            0 => drop(driver.insert(inserted, batched)?),
            1 => {
                let found = driver.contains(inserted, batched)?;
                assert!(found.iter().all(|&hit| hit), "a false negative");
            }
            _ => drop(driver.contains(absent, batched)?),
        }
        *time = (start.elapsed().as_secs_f64(), server.cpu_seconds()? - cpu);
    }
    driver.delete()?;
    Ok(times)
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() -> Result<(), Box<dyn Error>> {
    let (mut count, mut per_key, mut rounds, mut bits_per_call) =
        (1_000_000usize, 100_000usize, 3usize, DEFAULT_BITS_PER_CALL);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().ok_or(format!("{arg} needs a value"))?;
        match arg.as_str() {
            "--keys" => count = value.parse()?,
            "--per-key" => per_key = value.parse()?,
            "--rounds" => rounds = value.parse::<usize>()?.max(1),
            "--bits-per-call" => bits_per_call = value.parse()?,
            other => return Err(format!("unknown option {other}").into()),
        }
    }
    let per_key = per_key.min(count);
    let server = Server::discover()?;
    let client = server.client();
    let sizing = BloomFilter::with_fpp(0.01).expected_items(count as u64);
    let config = sizing.config()?;
    let keys = Keys {
        inserted: (0..count as u64)
            .map(|i| config.hasher.hash(&insert_key(1, i)))
            .collect(),
        absent: (0..count as u64)
            .map(|i| config.hasher.hash(&query_key(1, i)))
            .collect(),
    };
    // [shape][driver][operation] -> keys/s of each round.
    let mut speeds = vec![vec![vec![Vec::new(); 3]; 2]; 2];
    // The same, server CPU microseconds per key.
    let mut server_us = speeds.clone();
    let mut calls = [[0u64; 2]; 2];
    for round in 0..rounds {
        for (shape, batched, n) in [(0, true, count), (1, false, per_key)] {
            // Alternate which driver goes first.
            for turn in 0..2 {
                let driver = (turn + round) % 2;
                let name = unique("speed");
                let before = server.command_calls("evalsha")?;
                let seconds = if driver == 0 {
                    let (mut filter, _) =
                        RedisBloomFilter::builder(sizing.clone()).try_init(&client, &name)?;
                    filter.set_bits_per_call(bits_per_call)?;
                    // Loads the scripts: the measured calls are the steady state.
                    filter.insert(&u64::MAX)?;
                    filter.contains(&u64::MAX)?;
                    let before = server.command_calls("evalsha")?;
                    let seconds = run(&server, &mut filter, &keys, n, batched)?;
                    calls[shape][0] = server.command_calls("evalsha")? - before;
                    seconds
                } else {
                    let mut reference =
                        BitfieldReference::create(&client, &name, config, bits_per_call)?;
                    let seconds = run(&server, &mut reference, &keys, n, batched)?;
                    calls[shape][1] = server.command_calls("evalsha")? - before;
                    seconds
                };
                for (operation, (wall, cpu)) in seconds.iter().enumerate() {
                    speeds[shape][driver][operation].push(n as f64 / wall);
                    server_us[shape][driver][operation].push(cpu * 1e6 / n as f64);
                }
            }
        }
    }

    println!(
        "filterlab-redis over loopback: {count} keys batched, {per_key} one at a time, p = 0.01, k = {}, \
         {rounds} alternating rounds (median keys/s), server {} {} ({})",
        config.num_hashes,
        server.url(),
        server.version().unwrap_or_default(),
        std::env::var(URL_VARIABLE).map_or("private, started by this example", |_| {
            "yours, from FILTERLAB_REDIS_URL: script calls counted include other clients'"
        })
    );
    println!(
        "| operation | shape | scripts keys/s | BITFIELD reference keys/s | scripts / reference \
         | server µs/key, scripts | server µs/key, reference |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (shape, label) in [
        format!("batched, {bits_per_call} bit positions per call"),
        "one key per call".to_owned(),
    ]
    .iter()
    .enumerate()
    {
        for (operation, name) in OPERATIONS.iter().enumerate() {
            let script = median(&mut speeds[shape][0][operation]);
            let reference = median(&mut speeds[shape][1][operation]);
            let script_us = median(&mut server_us[shape][0][operation]);
            let reference_us = median(&mut server_us[shape][1][operation]);
            println!(
                "| {name} | {label} | {script:.0} | {reference:.0} | {:.2} | {script_us:.2} | {reference_us:.2} |",
                script / reference
            );
        }
    }
    println!(
        "script calls in the last round: {} batched, {} one key per call (the reference ran {} and {})",
        calls[0][0], calls[1][0], calls[0][1], calls[1][1]
    );
    Ok(())
}
