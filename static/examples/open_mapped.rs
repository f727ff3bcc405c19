//! Ship a filter as a file, then answer from a memory map of it without
//! copying: the view reads only the pages its lookups touch.
//!
//! Builds a Ribbon filter of N keys (10^8 by default, about 85 MB at
//! p = 1%), writes it to a file, drops it, then maps the file and opens a
//! view with the checksum deferred. It prints the process's resident memory
//! (RSS, from /proc/self/statm) at each step: opening costs only the header
//! and the partition offsets, lookups only the pages they land on (1,000
//! lookups a few MiB; 100,000 nearly every page), and the checksum,
//! verified last, reads every page once.
//!
//! ```text
//! cargo run --release -p filterlab-static --example open_mapped -- [N] [FILE]
//! ```

use std::fs::File;
use std::io::BufWriter;
use std::time::Instant;

use filterlab_static::{Checksum, RibbonFilter};
use memmap2::{Advice, Mmap};

/// Resident memory of this process from /proc/self/status (Linux; zeros
/// elsewhere), in MiB: `RssAnon`, its own memory (where a copy of the
/// filter would land), and `RssFile`, the pages of mapped files (the page
/// cache's, shared, read on demand).
fn resident() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let mib = |field: &str| {
        let kib: f64 = status
            .lines()
            .find(|line| line.starts_with(field))
            .and_then(|line| line.split_whitespace().nth(1))
            .and_then(|kib| kib.parse().ok())
            .unwrap_or(0.0);
        kib / 1024.0
    };
    format!(
        "RssAnon {:.1} MiB, RssFile {:.1} MiB",
        mib("RssAnon:"),
        mib("RssFile:")
    )
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

    println!("before the map: {}", resident());
    let file = File::open(&path)?;
    // SAFETY: the file is not modified or truncated while mapped (this
    // program wrote it and only reads it).
    let map = unsafe { Mmap::map(&file)? };
    // Lookups land anywhere: no read-ahead, and on Linux a fault maps its
    // own page only, not the 16 around it.
    map.advise(Advice::Random)?;
    let start = Instant::now();
    let view = RibbonFilter::view(&map, Checksum::Defer)?;
    println!(
        "opened a view of {} MiB in {:.3} ms: {}",
        map.len() >> 20,
        start.elapsed().as_secs_f64() * 1e3,
        resident()
    );

    // A few lookups touch a few pages; many touch them all.
    for (from, lookups) in [(0, 1_000u64), (1_000, 100_000)] {
        let start = Instant::now();
        let found = (from..from + lookups)
            .filter(|i| view.contains(&(i * 7_919 % items)))
            .count();
        let looked = start.elapsed();
        assert_eq!(found as u64, lookups, "every key of the set is found");
        println!(
            "{lookups} lookups of keys in the set, {:.0} ns each (first touches of the pages \
             included): {}",
            looked.as_secs_f64() * 1e9 / lookups as f64,
            resident()
        );
    }

    let start = Instant::now();
    view.verify_checksum()?;
    let took = start.elapsed().as_secs_f64();
    println!(
        "checksum verified in {took:.3} s ({:.1} GB/s, every page read): {}",
        map.len() as f64 / took / 1e9,
        resident()
    );
    Ok(())
}
