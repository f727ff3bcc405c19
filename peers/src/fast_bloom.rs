//! fastbloom 0.17's standard Bloom filter.

use foldhash::fast::FixedState;

use crate::peer::{Inserted, PeerFilter, bloom_fill, bloom_theory, to_usize};
use crate::subject::{Theory, Workload};

/// fastbloom 0.17 with foldhash, its fastest hasher (its default is
/// SipHash-1-3), seeded from the workload so runs repeat.
pub struct FastBloom(fastbloom::BloomFilter<FixedState>);

impl FastBloom {
    /// Sized with fastbloom's own formula for `workload`.
    pub fn new(workload: &Workload) -> Self {
        Self(
            fastbloom::BloomFilter::with_false_pos(workload.fpp)
                .hasher(FixedState::with_seed(workload.seed))
                .expected_items(to_usize(workload.items)),
        )
    }

    /// `bits` bits for `items` items (fastbloom picks k).
    pub fn with_bits(bits: u64, items: u64, seed: u64) -> Self {
        Self(
            fastbloom::BloomFilter::with_num_bits(to_usize(bits))
                .hasher(FixedState::with_seed(seed))
                .expected_items(to_usize(items)),
        )
    }
}

impl PeerFilter for FastBloom {
    fn insert(&mut self, key: u64) -> Inserted {
        // fastbloom answers whether the key was (maybe) present already.
        Inserted::unless_present(self.0.insert(&key))
    }

    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }

    fn clear(&mut self) -> bool {
        self.0.clear();
        true
    }

    fn memory_usage(&self) -> usize {
        self.0.as_slice().len() * 8
    }

    /// The exact Bloom formula with its m and k.
    fn theory(&self, items: u64) -> Option<Theory> {
        bloom_theory(self.0.num_bits() as u64, self.0.num_hashes(), items)
    }

    fn fill_fpp(&self) -> Option<f64> {
        let (words, bits) = (self.0.as_slice(), self.0.num_bits() as u64);
        Some(bloom_fill(
            words,
            u64::count_ones,
            bits,
            self.0.num_hashes(),
        ))
    }
}
