//! A cache-penetration guard: a Bloom filter of the ids that exist sits in
//! front of the database, so requests for ids that do not exist (a typo,
//! a scraper, an attack) are answered without a query. Nothing that exists
//! is ever turned away; of the missing ids, about 1% still reach the
//! database.
//!
//! `cargo run --release -p filterlab-bloom --example cache_guard`

use std::collections::HashMap;

use filterlab_bloom::{BloomFilter, Error};

/// Stands in for the database: one row per existing user id, and a count
/// of the queries it answered.
struct Database {
    rows: HashMap<u64, String>,
    queries: u64,
}

impl Database {
    fn get(&mut self, id: u64) -> Option<&String> {
        self.queries += 1;
        self.rows.get(&id)
    }
}

fn main() -> Result<(), Error> {
    // 100,000 users, with ids 0, 7, 14, ...
    let rows: HashMap<u64, String> = (0..100_000u64)
        .map(|n| (n * 7, format!("user {n}")))
        .collect();

    // Sized for the rows that exist, at 1% false positives: 117 KiB.
    let mut exists = BloomFilter::with_fpp(0.01)
        .expected_items(rows.len() as u64)
        .build()?;
    exists.extend(rows.keys());
    let mut database = Database { rows, queries: 0 };

    // Requests for every id up to 700,000: one in seven exists.
    let (mut found, mut turned_away) = (0, 0);
    for id in 0..700_000u64 {
        if !exists.contains(&id) {
            turned_away += 1; // certainly not in the database: no query
            continue;
        }
        if database.get(id).is_some() {
            found += 1;
        }
    }
    let wasted = database.queries - found;
    assert_eq!(found, 100_000, "every existing id is found");
    println!(
        "{found} found, {turned_away} turned away without a query, {wasted} queries for missing ids \
         ({:.2}% of them; the filter takes {} KiB)",
        100.0 * wasted as f64 / 600_000.0,
        exists.memory_usage() / 1024,
    );
    Ok(())
}
