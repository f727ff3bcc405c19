//! `filterlab`: sizes a Bloom filter for a default workload, builds it, and
//! measures its false-positive rate on the spot against the exact theory.

use std::process::ExitCode;
use std::time::Instant;

use filterlab_bloom::{BloomFilter, Filter};
use filterlab_core::testing::{count_false_positives, insert_key};
use filterlab_core::theory::{queries_for, wilson_interval};

const ITEMS: u64 = 1_000_000;
const FPP: f64 = 0.01;
const SEED: u64 = 0x5eed;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("filterlab: {err}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), filterlab_bloom::Error> {
    let sizing = BloomFilter::params(ITEMS, FPP)?;
    println!("{sizing}\n");

    let mut filter = BloomFilter::with_fpp(FPP)
        .expected_items(ITEMS)
        .seed(SEED)
        .build()?;
    let start = Instant::now();
    filter.extend((0..ITEMS).map(|i| insert_key(SEED, i)));
    let insert_ns = start.elapsed().as_nanos() as f64 / ITEMS as f64;
    let false_negatives = (0..ITEMS)
        .filter(|&i| !filter.contains(&insert_key(SEED, i)))
        .count();

    let queries = queries_for(FPP, 2000.0);
    let start = Instant::now();
    let false_positives = count_false_positives(&filter, SEED, queries);
    let query_ns = start.elapsed().as_nanos() as f64 / queries as f64;
    let (low, high) = wilson_interval(false_positives, queries, 0.999);
    let empirical = false_positives as f64 / queries as f64;
    let exact = filter.theoretical_fpp(ITEMS);
    let verdict = if low <= exact && exact <= high {
        "inside"
    } else {
        "OUTSIDE"
    };

    println!(
        "Measured with {ITEMS} inserted keys and {queries} never-inserted queries (seed {SEED:#x}):"
    );
    println!("  false negatives     {false_negatives}");
    println!(
        "  empirical FPP       {empirical:.4e}  (99.9% Wilson interval [{low:.4e}, {high:.4e}])"
    );
    println!("  exact theory        {exact:.4e}  ({verdict} the interval)");
    println!("  FPP given the fill  {:.4e}", filter.expected_fpp());
    println!(
        "  insert              {insert_ns:.1} ns/key, lookup {query_ns:.1} ns/key (single run, indicative)"
    );
    Ok(())
}
