//! The first layer's share f against the tightening ratio r: the
//! measurement behind filterlab-redis-module's `bf-first-share`.
//!
//! A scalable filter with a first-layer share sizes layer 0 for f·P and
//! layer i ≥ 1 for (1 − f)·P·(1 − r)·r^(i−1); f = 1 − r is the geometric
//! schedule. For each (P, f, r) this sizes, with the layers' exact
//! formulas and without allocating, blocked layers (the module's default)
//! and prints:
//!
//! - the first layer's bits per key against RedisBloom's at the same
//!   capacity and error rate (its first layer takes P/2 at −ln(P/2)/ln²2
//!   bits per key, `deps/bloom/bloom.c`), at 3·10^5 and 10^7 keys;
//! - bits per key after growing 1000× from 1,000 keys with growth 2, the
//!   mean over every doubling, and the highest exact compound FPP at any
//!   doubling (never above P: the targets sum to less than P).
//!
//! ```text
//! cargo run --release -p filterlab-peers --example first_share
//! ```

use filterlab_scalable::{BlockedBloomFilter, BloomFilter, Layer, ScalableBloomBuilder};

const INITIAL: u64 = 1000;
const GROWTH: u64 = 1000;

/// RedisBloom's array for `capacity` keys at error rate `error`: bits =
/// capacity·bpe, bpe = −ln(error)/ln²2, rounded up to whole 64-bit words.
fn redisbloom_bytes(capacity: u64, error: f64) -> u64 {
    let bpe = -error.ln() / (std::f64::consts::LN_2 * std::f64::consts::LN_2);
    let bits = (capacity as f64 * bpe) as u64;
    bits.div_ceil(64) * 8
}

/// RedisBloom's scaling filter grown to `items` keys from `INITIAL` with
/// EXPANSION 2: layer i holds INITIAL·2^i keys at P/2^(i+1).
fn redisbloom_grown_bytes(fpp: f64, items: u64) -> u64 {
    let (mut bytes, mut held, mut capacity, mut error) = (0, 0, INITIAL, fpp / 2.0);
    while held < items {
        bytes += redisbloom_bytes(capacity, error);
        held += capacity;
        capacity *= 2;
        error /= 2.0;
    }
    bytes
}

fn builder<L: Layer>(fpp: f64, share: Option<f64>, tightening: f64) -> ScalableBloomBuilder<L> {
    let builder = ScalableBloomBuilder::<L>::new(fpp)
        .initial_capacity(INITIAL)
        .tightening(tightening);
    match share {
        Some(share) => builder.first_layer_share(share),
        None => builder,
    }
}

/// The first layer's bytes for `capacity` keys over RedisBloom's.
fn reserve_ratio<L: Layer>(fpp: f64, share: Option<f64>, tightening: f64, capacity: u64) -> f64 {
    let ours = builder::<L>(fpp, share, tightening)
        .initial_capacity(capacity)
        .sizing()
        .map_or(f64::NAN, |sizing| sizing.bytes as f64);
    ours / redisbloom_bytes(capacity, fpp / 2.0) as f64
}

fn row<L: Layer>(fpp: f64, share: Option<f64>, tightening: f64) -> Option<String> {
    let builder = builder::<L>(fpp, share, tightening);
    let doublings: Vec<u64> = (0..=10)
        .map(|j| (INITIAL << j).min(INITIAL * GROWTH))
        .collect();
    let mut bits = Vec::new();
    let mut worst: f64 = 0.0;
    for &items in &doublings {
        let sizing = builder.sizing_for(items).ok()?;
        bits.push(sizing.bits_per_item());
        worst = worst.max(sizing.fpp_at_items);
    }
    let thousand = builder.sizing_for(INITIAL * GROWTH).ok()?;
    let mean = bits.iter().sum::<f64>() / bits.len() as f64;
    let share_text = share.map_or("1-r".to_owned(), |share| format!("{share:.2}"));
    Some(format!(
        "{:>18} {fpp:>7.0e} {share_text:>5} {tightening:>5.2} {:>9.3} {:>9.3} {:>7.2} {:>7.2} {:>11.3e} {:>3}",
        L::NAME,
        reserve_ratio::<L>(fpp, share, tightening, 300_000),
        reserve_ratio::<L>(fpp, share, tightening, 10_000_000),
        thousand.bits_per_item(),
        mean,
        worst,
        thousand.layers.len(),
    ))
}

fn main() {
    println!(
        "first layer over RedisBloom's at 3e5 / 1e7 keys; bits per item after growing 1000x from {INITIAL} keys, mean over every doubling; highest exact FPP at any doubling"
    );
    for fpp in [1e-2, 1e-3, 1e-4] {
        let redisbloom =
            redisbloom_grown_bytes(fpp, INITIAL * GROWTH) as f64 * 8.0 / (INITIAL * GROWTH) as f64;
        println!("\nP = {fpp:e}: RedisBloom grown 1000x, {redisbloom:.2} bits per item");
        println!(
            "{:>18} {:>7} {:>5} {:>5} {:>9} {:>9} {:>7} {:>7} {:>11} {:>3}",
            "layers", "P", "f", "r", "res 3e5", "res 1e7", "1000x", "mean", "worst FPP", "L"
        );
        for share in [
            None,
            Some(0.5),
            Some(0.55),
            Some(0.6),
            Some(0.65),
            Some(0.7),
        ] {
            for tightening in [0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9] {
                for line in [
                    row::<BlockedBloomFilter>(fpp, share, tightening),
                    row::<BloomFilter>(fpp, share, tightening),
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
