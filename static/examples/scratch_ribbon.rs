//! Scratch (not committed).
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args[1].parse().unwrap();
    let keys: Vec<u64> = (0..n)
        .map(|i| filterlab_core::keys::insert_key(1, i))
        .collect();
    let mut total = 0;
    for _ in 0..args[2].parse::<u32>().unwrap() {
        total += filterlab_static::RibbonFilter::with_fpp(0.01)
            .build(&keys)
            .unwrap()
            .num_slots();
    }
    println!("{total}");
}
