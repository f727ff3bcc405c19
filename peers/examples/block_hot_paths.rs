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

fn run<F: Filter>(mut f: F, phases: &str, n: u64) -> u64 {
    let hashes: Vec<u64> = (0..n).map(|i| mix64(i + 1)).collect();
    let queries: Vec<u64> = (0..n).map(|i| mix64(!i)).collect();
    let mut acc = 0u64;
    match phases {
        "build" => {}
        "fill" => {
            for &h in &hashes {
                acc += u64::from(f.insert_hash(h).unwrap());
            }
        }
        "batchfill" => acc += f.insert_hashes(&hashes).unwrap() as u64,
        "fill+lookup" => {
            for &h in &hashes {
                acc += u64::from(f.insert_hash(h).unwrap());
            }
            for &q in &queries {
                acc += u64::from(f.contains_hash(q));
            }
            for &h in &hashes {
                acc += u64::from(f.contains_hash(h));
            }
        }
        "fill+batch" => {
            for &h in &hashes {
                acc += u64::from(f.insert_hash(h).unwrap());
            }
            let mut found = vec![false; n as usize];
            f.contains_hashes(&queries, &mut found);
            acc += found.iter().filter(|&&b| b).count() as u64;
            f.contains_hashes(&hashes, &mut found);
            acc += found.iter().filter(|&&b| b).count() as u64;
        }
        _ => panic!("phases"),
    }
    black_box(acc)
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let kernel = if a[1] == "scalar" {
        Kernel::Scalar
    } else {
        Kernel::detect()
    };
    let n: u64 = a[3].parse().unwrap();
    let acc = match a[0].as_str() {
        "blocked" => run(
            BlockedBloomFilter::with_bits(10 * n)
                .expected_items(n)
                .seed(1)
                .kernel(kernel)
                .build()
                .unwrap(),
            &a[2],
            n,
        ),
        "split" => run(
            SplitBlockBloomFilter::with_bits(10 * n)
                .expected_items(n)
                .seed(1)
                .kernel(kernel)
                .build()
                .unwrap(),
            &a[2],
            n,
        ),
        _ => panic!("filter"),
    };
    println!("{acc}");
}
