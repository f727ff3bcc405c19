//! One filter shared by every instance of a service, through a plain Redis
//! server: each instance runs this, the first creates the filter, and a
//! key any instance inserted is seen by all. Run it twice: the second run
//! finds the first run's events already there.
//!
//! ```text
//! cargo run -p filterlab-redis --example shared              # redis://127.0.0.1/
//! cargo run -p filterlab-redis --example shared -- redis://cache.internal:6379/
//! ```

use filterlab_redis::{BloomFilter, ErrorKind, RedisBloomFilter};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "redis://127.0.0.1/".into());
    let client = redis::Client::open(url.as_str())?;

    // Every instance asks for the same sizing; exactly one creates it.
    let sizing = BloomFilter::with_fpp(0.001)
        .expected_items(1_000_000)
        .seed(42);
    let (mut seen, created) =
        match RedisBloomFilter::builder(sizing).try_init(&client, "example-events") {
            Err(err) if err.kind() == ErrorKind::Connection => {
                eprintln!("no Redis server at {url}: {err}");
                std::process::exit(2);
            }
            other => other?,
        };
    println!("created by this run: {created}");

    // A batch is one round trip per 65,536 bit positions.
    let events: Vec<String> = (0..1000).map(|i| format!("evt-{i}")).collect();
    let new = seen.insert_many(&events)?;
    println!(
        "{new} of {} events new; {} counted in all",
        events.len(),
        seen.len()?
    );

    // One key at a time: BF.ADD's answer.
    if seen.insert("evt-late")? {
        println!("evt-late: first time any instance saw it");
    }
    assert!(seen.contains_many(&events)?.iter().all(|&found| found));

    // Another instance, later, opens it by name and reads the stored
    // configuration: it cannot disagree with the creator's.
    let mut other = RedisBloomFilter::open(&client, "example-events")?;
    assert!(other.contains("evt-7")?);
    Ok(())
}
