//! Instruction counts of the blocked and split-block hot paths, for
//! callgrind: builds a filter of 10 bits/key for N keys with one kernel and
//! runs one set of phases, so that a phase's count per key is the
//! difference of two whole-program counts (callgrind's counts repeat
//! exactly from run to run).
//!
//! ```text
//! cargo build --release -p filterlab-peers --example block_hot_paths
//! ir() { valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/block_hot_paths "$@" 2>&1 | grep -o 'Collected : [0-9]*' | grep -o '[0-9]*$'; }
//! # insert per key: (fill - build) / N; lookups per key: (fill+lookup - fill) / 2N
//! echo $(( ($(ir blocked detect fill 200000) - $(ir blocked detect build 200000)) / 200000 ))
//! ```
//!
//! Arguments: FILTER (`blocked` or `split`), KERNEL (`scalar` or `detect`),
//! PHASES (`build`, `fill`, `batchfill`, `fill+lookup`, `fill+batch`), N.
//! Valgrind has no AVX-512: under it `detect` picks AVX2.

use filterlab_bloom::{BlockedBloomFilter, Filter, Kernel, SplitBlockBloomFilter};
use filterlab_core::mix64;
use std::hint::black_box;

fn run<F: Filter>(mut filter: F, phases: &str, n: u64) -> u64 {
    let hashes: Vec<u64> = (0..n).map(|i| mix64(i + 1)).collect();
    let queries: Vec<u64> = (0..n).map(|i| mix64(!i)).collect();
    let mut acc = 0u64;
    if phases == "batchfill" {
        acc += filter.insert_hashes(&hashes).unwrap() as u64;
    } else if phases.starts_with("fill") {
        for &h in &hashes {
            acc += u64::from(filter.insert_hash(h).unwrap());
        }
    }
    // Never-inserted keys, then inserted ones.
    for keys in [&queries, &hashes] {
        if phases == "fill+lookup" {
            acc += keys.iter().filter(|&&h| filter.contains_hash(h)).count() as u64;
        } else if phases == "fill+batch" {
            let mut found = vec![false; keys.len()];
            filter.contains_hashes(keys, &mut found);
            acc += found.iter().filter(|&&hit| hit).count() as u64;
        }
    }
    black_box(acc)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [filter, kernel, phases, n] = &args[..] else {
        panic!("usage: block_hot_paths blocked|split scalar|detect PHASES N");
    };
    let kernel = if kernel == "scalar" {
        Kernel::Scalar
    } else {
        Kernel::detect()
    };
    let n: u64 = n.parse().expect("N");
    let acc = match filter.as_str() {
        "blocked" => {
            let builder = BlockedBloomFilter::with_bits(10 * n).expected_items(n);
            run(builder.seed(1).kernel(kernel).build().unwrap(), phases, n)
        }
        "split" => {
            let builder = SplitBlockBloomFilter::with_bits(10 * n).expected_items(n);
            run(builder.seed(1).kernel(kernel).build().unwrap(), phases, n)
        }
        _ => panic!("FILTER is blocked or split"),
    };
    println!("{acc}");
}
