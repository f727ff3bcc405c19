//! Prints the sizing of a cuckoo filter for a workload, without allocating it.
//!
//! `cargo run --release -p filterlab-cuckoo --example sizing -- 10000000 0.001`

use filterlab_cuckoo::CuckooFilter;

fn main() -> Result<(), filterlab_cuckoo::Error> {
    let mut args = std::env::args().skip(1);
    let items = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000_000);
    let fpp = args.next().and_then(|a| a.parse().ok()).unwrap_or(0.001);
    println!("{}", CuckooFilter::params(items, fpp)?);
    Ok(())
}
