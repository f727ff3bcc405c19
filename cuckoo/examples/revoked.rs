//! Revoked tokens in a cuckoo filter: revocations insert, expiries remove,
//! a multiset counts tokens revoked twice, and a full filter refuses the
//! next token instead of silently dropping one it holds. Below an FPP of
//! about 0.4% it takes fewer bits than a Bloom filter.
//!
//! `cargo run --release -p filterlab-cuckoo --example revoked`

use filterlab_cuckoo::{CuckooFilter, Error, ErrorKind};

fn main() -> Result<(), Error> {
    let mut revoked = CuckooFilter::with_fpp(0.001)
        .expected_items(100_000)
        .build()?;
    println!(
        "{} bits per token",
        revoked.memory_usage() as f64 * 8.0 / 100_000.0
    );

    for token in 0..100_000u64 {
        revoked.insert(&format!("tok-{token}"))?;
    }
    revoked.insert("tok-7")?; // revoked again: a second copy
    assert_eq!(revoked.count("tok-7"), 2);

    // Tokens expire: their revocation is no longer needed.
    for token in 0..50_000u64 {
        assert!(revoked.remove(&format!("tok-{token}"))?);
    }
    assert!(revoked.contains("tok-7"), "one copy of tok-7 is left");
    assert!((50_000..100_000u64).all(|token| revoked.contains(&format!("tok-{token}"))));

    // Past its capacity it says so, and keeps every token it holds.
    let mut small = CuckooFilter::with_fpp(0.01).expected_items(1_000).build()?;
    let mut held = 0u64;
    let refused = loop {
        match small.insert(&held) {
            Ok(_) => held += 1,
            Err(err) => break err,
        }
    };
    assert_eq!(refused.kind(), ErrorKind::Full);
    assert!((0..held).all(|token| small.contains(&token)));
    println!("a filter sized for 1,000 held {held} before refusing: {refused}");
    Ok(())
}
