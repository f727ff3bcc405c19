//! Ship a filter: build it where the data is, write it to a file, and read
//! it back elsewhere. The file is validated as it is read (a damaged one is
//! an error, never a wrong answer), and it answers the same on any machine:
//! the hash is XXH3 with the seed the file records.
//!
//! `cargo run --release -p filterlab-bloom --example ship_to_disk`

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};

use filterlab_bloom::{BloomFilter, ErrorKind};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::temp_dir().join(format!("crawled-{}.bloom", std::process::id()));

    // Where the crawl runs: every URL fetched so far.
    let sizing = BloomFilter::with_fpp(0.001)
        .expected_items(50_000)
        .seed(2024);
    let mut crawled = sizing.build()?;
    for page in 0..50_000 {
        crawled.insert(&format!("https://example.com/page/{page}"));
    }
    let mut file = BufWriter::new(File::create(&path)?);
    crawled.write_to(&mut file)?;
    file.flush()?;
    println!(
        "wrote {} bytes to {}",
        std::fs::metadata(&path)?.len(),
        path.display()
    );

    // Elsewhere: read it back, refusing a file made with another
    // configuration (size, k, hasher or seed) before reading its bits.
    let file = BufReader::new(File::open(&path)?);
    let read = BloomFilter::read_from_expecting(file, &sizing.config()?)?;
    assert_eq!(read, crawled);
    assert!(read.contains("https://example.com/page/7"));
    println!(
        "read back: {} URLs in {} bytes",
        read.len(),
        read.memory_usage()
    );

    // One flipped bit anywhere in the file: refused, with the reason.
    let mut bytes = std::fs::read(&path)?;
    bytes[100] ^= 1;
    let err = BloomFilter::from_bytes(&bytes).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ChecksumMismatch);
    println!("a damaged copy: {err}");

    std::fs::remove_file(&path)?;
    Ok(())
}
