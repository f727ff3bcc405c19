//! Writes the benchmark's input: `LINES` log-like lines holding `UNIQUES`
//! distinct ones, each repeated `LINES / UNIQUES` times or once more, in a
//! seeded pseudo-random order (see `bench/run.sh`).
//!
//! ```sh
//! cargo run --release -p filterlab-peers --example dedup_input -- 30000000 15000000 > /tmp/lines
//! ```

use std::io::{BufWriter, Write};

use filterlab_core::mix64;

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1).map(|arg| arg.parse::<u64>());
    let (Some(Ok(lines)), Some(Ok(uniques))) = (args.next(), args.next()) else {
        eprintln!("usage: dedup_input LINES UNIQUES (UNIQUES <= LINES, both at least 1)");
        std::process::exit(2);
    };
    if uniques == 0 || uniques > lines {
        eprintln!("dedup_input: need 1 <= UNIQUES <= LINES");
        std::process::exit(2);
    }
    // Line i shows value shuffle(i) mod UNIQUES of a seeded permutation of
    // 0..LINES: every one of the UNIQUES lines appears, in an order no cache
    // can predict.
    let shuffle = Shuffle::new(lines);
    let mut out = BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    for i in 0..lines {
        let id = shuffle.at(i) % uniques;
        let user = mix64(id) % 1_000_000;
        let item = mix64(id ^ 0x5eed) % 100_000;
        writeln!(out, "evt-{id:010} user-{user:06} GET /items/{item}")?;
    }
    out.flush()
}

/// A permutation of 0..len: rounds of bijections on the smallest power of
/// two holding len (odd multiplications and xor-shifts), walked until the
/// value falls below len.
struct Shuffle {
    len: u64,
    mask: u64,
    shift: u32,
}

impl Shuffle {
    fn new(len: u64) -> Self {
        let bits = 64 - (len - 1).max(1).leading_zeros();
        Self {
            len,
            mask: u64::MAX >> (64 - bits),
            shift: bits.div_ceil(2),
        }
    }

    fn at(&self, index: u64) -> u64 {
        let mut value = index;
        loop {
            for multiplier in [
                0x9e37_79b9_7f4a_7c15_u64,
                0xbf58_476d_1ce4_e5b9,
                0x94d0_49bb_1331_11eb,
            ] {
                value = value.wrapping_mul(multiplier) & self.mask;
                value ^= value >> self.shift;
            }
            if value < self.len {
                return value;
            }
        }
    }
}
