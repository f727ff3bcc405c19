//! Memory against FPP over 1000× growth, for tightening ratios r and growth
//! factors s: the measurement behind `DEFAULT_TIGHTENING`.
//!
//! For each (P, s, r) it sizes the layers a filter starting at 1,000 keys
//! needs at every doubling up to 1,000,000 keys (with the layers' exact
//! formulas, without allocating) and prints the memory per item at 10×,
//! 100× and 1000×, the mean over all doublings, and the exact compound FPP
//! at 1000×. The FPPs themselves are checked against measurement by the
//! growth tests (`tests/scalable/growth.rs`).
//!
//! ```text
//! cargo run --release -p filterlab-peers --example tightening
//! ```

use filterlab_scalable::{BlockedBloomFilter, BloomFilter, Layer, ScalableBloomBuilder};

const INITIAL: u64 = 1000;
const GROWTH: u64 = 1000;

fn row<L: Layer>(fpp: f64, growth: u64, tightening: f64) -> Option<String> {
    let builder = ScalableBloomBuilder::<L>::new(fpp)
        .initial_capacity(INITIAL)
        .growth(growth)
        .tightening(tightening);
    let doublings: Vec<u64> = (0..=10)
        .map(|j| (INITIAL << j).min(INITIAL * GROWTH))
        .collect();
    let mut bits = Vec::new();
    for &items in &doublings {
        bits.push(builder.sizing_for(items).ok()?.bits_per_item());
    }
    let at = |items: u64| builder.sizing_for(items).ok();
    let (ten, hundred, thousand) = (at(INITIAL * 10)?, at(INITIAL * 100)?, at(INITIAL * GROWTH)?);
    let mean = bits.iter().sum::<f64>() / bits.len() as f64;
    Some(format!(
        "{:>11} {fpp:>7.0e} {growth:>2} {tightening:>5.2} {:>7.2} {:>7.2} {:>7.2} {mean:>7.2} {:>11.3e} {:>11.3e} {:>3}",
        L::NAME,
        ten.bits_per_item(),
        hundred.bits_per_item(),
        thousand.bits_per_item(),
        thousand.fpp_at_items,
        thousand.fpp_bound,
        thousand.layers.len(),
    ))
}

fn main() {
    println!(
        "bits per item after growing from {INITIAL} keys (10x, 100x, 1000x, mean over every doubling), exact FPP at 1000x"
    );
    println!(
        "{:>11} {:>7} {:>2} {:>5} {:>7} {:>7} {:>7} {:>7} {:>11} {:>11} {:>3}",
        "layers", "P", "s", "r", "10x", "100x", "1000x", "mean", "FPP 1000x", "bound", "L"
    );
    for fpp in [1e-2, 1e-4] {
        for growth in [2, 4] {
            for tightening in [0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95] {
                for line in [
                    row::<BloomFilter>(fpp, growth, tightening),
                    row::<BlockedBloomFilter>(fpp, growth, tightening),
                ]
                .into_iter()
                .flatten()
                {
                    println!("{line}");
                }
            }
        }
    }
}
