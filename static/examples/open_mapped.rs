//! Ship a filter as a file, then answer from a memory map of it without
//! copying: the view reads only the pages its lookups touch.
//!
//! Builds a Ribbon filter of N keys (10^8 by default, about 85 MB at
//! p = 1%), writes it to a file, drops it, then maps the file and opens a
//! view with the checksum deferred. It prints the process's resident memory
//! (RSS, from /proc/self/statm) at each step: opening costs only the header
//! and the partition offsets, 100,000 lookups only the pages they land on,
//! and the checksum, verified last, reads every page once.
//!
//! ```text
//! cargo run --release -p filterlab-static --example open_mapped -- [N] [FILE]
//! ```

use std::fs::File;
use std::io::BufWriter;
use std::time::Instant;

use filterlab_static::{Checksum, RibbonFilter};
use memmap2::Mmap;

/// Resident memory of this process, in MiB (Linux; 0 elsewhere).
fn rss_mib() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: f64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0.0);
    pages * 4096.0 / f64::from(1 << 20)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let items = args
        .next()
        .map_or(Ok(100_000_000), |n| n.parse::<f64>().map(|n| n as u64))?;
    let path = args.next().unwrap_or_else(|| {
        std::env::temp_dir()
            .join("filterlab-ribbon.bin")
            .display()
            .to_string()
    });

    // Build and ship: the keys and the filter are gone before the map.
    {
        let start = Instant::now();
        let filter = RibbonFilter::with_fpp(0.01).seed(7).build(0..items)?;
        let built = start.elapsed();
        filter.write_to(BufWriter::new(File::create(&path)?))?;
        println!(
            "built {items} keys in {:.1} s: {} bytes, {:.3} bits a key, written to {path}",
            built.as_secs_f64(),
            filter.memory_usage(),
            filter.bits_per_item()
        );
    }

    let before = rss_mib();
    let file = File::open(&path)?;
    // SAFETY: the file is not modified or truncated while mapped (this
    // program wrote it and only reads it).
    let map = unsafe { Mmap::map(&file)? };
    let start = Instant::now();
    let view = RibbonFilter::view(&map, Checksum::Defer)?;
    let opened = start.elapsed();
    let after_open = rss_mib();
    println!(
        "opened a view of {} MiB in {:.3} ms; RSS {before:.1} MiB before, {after_open:.1} MiB after",
        map.len() >> 20,
        opened.as_secs_f64() * 1e3
    );

    let lookups = 100_000u64;
    let start = Instant::now();
    let found = (0..lookups)
        .filter(|i| view.contains(&(i * 7_919 % items)))
        .count();
    let looked = start.elapsed();
    assert_eq!(found as u64, lookups, "every key of the set is found");
    println!(
        "{lookups} lookups of keys in the set, {:.0} ns each: RSS {:.1} MiB",
        looked.as_secs_f64() * 1e9 / lookups as f64,
        rss_mib()
    );

    let start = Instant::now();
    view.verify_checksum()?;
    println!(
        "checksum verified in {:.3} s ({:.1} GB/s): RSS {:.1} MiB (every page read)",
        start.elapsed().as_secs_f64(),
        map.len() as f64 / start.elapsed().as_secs_f64() / 1e9,
        rss_mib()
    );
    Ok(())
}
