//! URLs seen by a crawler that cannot know how many it will meet: a
//! scalable Bloom filter starts small and adds layers as it fills, and its
//! compound false-positive probability stays below the target at every
//! size.
//!
//! `cargo run --release -p filterlab-scalable --example unknown_size`

use filterlab_scalable::{Error, ScalableBloomFilter};

fn main() -> Result<(), Error> {
    // Sized for 10,000 URLs at first; 1% false positives whatever the total.
    let mut seen = ScalableBloomFilter::with_fpp(0.01)
        .initial_capacity(10_000)
        .build()?;
    let mut crawled = 0u64;
    for total in [10_000u64, 100_000, 1_000_000] {
        while crawled < total {
            seen.insert(&format!("https://example.com/{crawled}"))?;
            crawled += 1;
        }
        let info = seen.info();
        println!(
            "{total:>9} URLs: {} layers, {:.1} bits per URL, FPP at most {:.4}",
            info.layers.len(),
            seen.memory_usage() as f64 * 8.0 / total as f64,
            seen.fpp_bound(),
        );
    }
    assert!(seen.contains("https://example.com/123456"));
    assert!(seen.fpp_bound() <= 0.01);
    Ok(())
}
