//! Stream de-duplication with the library: prints each line of standard
//! input the first time it is seen, as it streams, in memory fixed by the
//! number of distinct lines expected (10^6) and the rate of lines wrongly
//! dropped accepted (10^-6). What the `dedup` command does, in a program
//! of your own.
//!
//! `printf 'a\nb\na\nc\nb\n' | cargo run -p filterlab-dedup --example first_seen`

use std::io::{self, BufRead, Write};

use filterlab_dedup::{Deduplicator, Verdict};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut seen = Deduplicator::with_fpp(1e-6)
        .expected_items(1_000_000)
        .build()?;
    eprintln!(
        "{} KiB for up to 10^6 distinct lines",
        seen.sizing().bloom.num_bits / 8192
    );

    let mut out = io::stdout().lock();
    for line in io::stdin().lock().lines() {
        let line = line?;
        // No partitions here: `None`. (Partition by day to evict old keys.)
        if seen.check(line.as_bytes(), None)? == Verdict::Unique {
            writeln!(out, "{line}")?;
        }
    }
    let metrics = seen.metrics();
    eprintln!(
        "{} distinct, {} repeats dropped",
        metrics.unique, metrics.duplicate
    );
    Ok(())
}
