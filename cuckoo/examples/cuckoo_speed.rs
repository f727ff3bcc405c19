//! A quick single-threaded timing: 10^7 u64 keys into a cuckoo filter with
//! 12-bit fingerprints sized for 95% load (about 16 MiB, past the caches),
//! then lookups of inserted and never-inserted keys and removals, one key
//! at a time and batched (`insert_many`, `contains_many`). Not a
//! benchmark: a figure to quote beside the criterion benches. On Linux it
//! also prints the time the thread was on a CPU, for shared machines.
//!
//! `cargo run --release -p filterlab-cuckoo --example cuckoo_speed [-- items]`

use std::hint::black_box;
use std::time::Instant;

use filterlab_core::keys::{insert_key, query_key};
use filterlab_cuckoo::{CuckooFilter, Filter, RemovableFilter};

/// Nanoseconds this thread has run on a CPU (Linux), so that a figure
/// taken on a machine shared with other work is not inflated by the time
/// the thread waited for a core; `None` elsewhere.
fn cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

fn time(label: &str, items: u64, run: impl FnOnce() -> usize) {
    let (start, cpu_start) = (Instant::now(), cpu_ns());
    let answer = black_box(run());
    let wall = start.elapsed().as_nanos() as f64 / items as f64;
    let cpu = cpu_ns()
        .zip(cpu_start)
        .map_or(f64::NAN, |(end, start)| (end - start) as f64 / items as f64);
    println!("{label:<40} {wall:>7.1} ns/key wall {cpu:>7.1} on CPU   ({answer})");
}

fn main() -> Result<(), filterlab_cuckoo::Error> {
    let items: u64 = std::env::args()
        .nth(1)
        .and_then(|arg| arg.parse().ok())
        .unwrap_or(10_000_000);
    let build = || {
        CuckooFilter::with_fpp(0.002)
            .expected_items(items)
            .fingerprint_bits(12)
            .seed(1)
            .build()
    };
    let present: Vec<u64> = (0..items).map(|i| insert_key(1, i)).collect();
    let absent: Vec<u64> = (0..items).map(|i| query_key(1, i)).collect();

    let mut filter = build()?;
    println!(
        "{items} keys, f = {}, {} buckets, {:.1} MiB",
        filter.fingerprint_bits(),
        filter.buckets(),
        filter.memory_usage() as f64 / f64::from(1 << 20)
    );
    time("insert, one by one (to 95% load)", items, || {
        present
            .iter()
            .map(|key| usize::from(filter.insert(key).unwrap()))
            .sum()
    });
    println!("load {:.4}", filter.load_factor());
    let mut batched = build()?;
    time("insert, batched (insert_many)", items, || {
        batched.insert_many(&present).unwrap()
    });
    assert!(batched == filter);
    for (which, keys) in [("present", &present), ("absent", &absent)] {
        time(&format!("lookup {which}, one by one"), items, || {
            keys.iter().filter(|key| filter.contains(*key)).count()
        });
        time(
            &format!("lookup {which}, batched (contains_many)"),
            items,
            || {
                filter
                    .contains_many(keys)
                    .iter()
                    .filter(|&&hit| hit)
                    .count()
            },
        );
    }
    time("remove, one by one", items, || {
        present
            .iter()
            .map(|key| usize::from(filter.remove(key).unwrap()))
            .sum()
    });
    assert!(filter.is_empty());
    Ok(())
}
