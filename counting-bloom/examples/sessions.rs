//! A set that deletes: the sessions open right now, in a counting Bloom
//! filter. Logins insert, logouts remove, and a session that is open is
//! never reported closed. When the set must be shipped read-only, it
//! becomes a plain Bloom filter a quarter of the size.
//!
//! `cargo run --release -p filterlab-counting-bloom --example sessions`

use filterlab_counting_bloom::{CountingBloomFilter, Error};

fn main() -> Result<(), Error> {
    // Up to 100,000 sessions open at once, 1% false positives.
    let mut open = CountingBloomFilter::with_fpp(0.01)
        .expected_items(100_000)
        .build()?;

    // A day of traffic: sessions 0..300,000 log in; each logs out 50,000
    // logins later, so at most 50,000 are open at a time.
    for session in 0..300_000u64 {
        open.insert(&session);
        if session >= 50_000 {
            assert!(
                open.remove(&(session - 50_000)),
                "a logged-in session is present"
            );
        }
    }
    assert_eq!(open.len(), 50_000);
    assert!((250_000..300_000u64).all(|session| open.contains(&session)));
    let closed_but_present = (0..250_000u64)
        .filter(|session| open.contains(session))
        .count();
    println!(
        "{} open; {closed_but_present} of 250,000 closed sessions test present ({:.2}%); \
         {} counters saturated",
        open.len(),
        100.0 * closed_but_present as f64 / 250_000.0,
        open.saturated_counters(),
    );

    // Only remove what was inserted: a session that never logged in is
    // refused when a counter is zero, and changes nothing.
    let before = open.len();
    let _ = open.remove(&u64::MAX);
    assert!(open.len() <= before);

    // Read-only copies for the edge servers: the same answers, 1/4 the bytes.
    let shipped = open.to_bloom()?;
    assert!((250_000..300_000u64).all(|session| shipped.contains(&session)));
    println!(
        "{} bytes counting, {} shipped",
        open.memory_usage(),
        shipped.memory_usage()
    );
    Ok(())
}
