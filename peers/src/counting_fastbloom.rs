//! fastbloom-rs 0.5's `CountingBloomFilter`.

use fastbloom_rs::{Deletable, FilterBuilder, Hashes, Membership};

use crate::peer::{Inserted, PeerFilter, bloom_theory};
use crate::subject::{Theory, Workload};

/// fastbloom-rs 0.5's counting Bloom filter: 4-bit counters, k probes by
/// double hashing (h1 + i·h2) mod m over two unseeded XXH3 hashes of the
/// key's bytes, sized by its own formula. Repeat inserts count (its
/// default), so it is a multiset like filterlab's. It has no seed: runs
/// repeat because the keys do.
pub struct FastBloomRsCounting {
    filter: fastbloom_rs::CountingBloomFilter,
    counters: u64,
    hashes: u32,
}

impl FastBloomRsCounting {
    /// Sized with fastbloom-rs's own formula for `workload`.
    pub fn new(workload: &Workload) -> Self {
        let filter = FilterBuilder::new(workload.items, workload.fpp).build_counting_bloom_filter();
        Self {
            counters: filter.config().size,
            hashes: filter.hashes(),
            filter,
        }
    }
}

impl PeerFilter for FastBloomRsCounting {
    const REMOVABLE: bool = true;

    /// It does not say whether a key was new: every key counts as new.
    fn insert(&mut self, key: u64) -> Inserted {
        self.filter.add(&key.to_le_bytes());
        Inserted::New
    }

    fn contains(&self, key: u64) -> bool {
        self.filter.contains(&key.to_le_bytes())
    }

    /// It answers nothing, so every removal counts as found. The crate
    /// tests the key's counters itself before it decrements; testing them
    /// here as well would time a second lookup into every removal.
    fn remove(&mut self, key: u64) -> bool {
        self.filter.remove(&key.to_le_bytes());
        true
    }

    fn clear(&mut self) -> bool {
        Membership::clear(&mut self.filter);
        true
    }

    /// Two 4-bit counters per byte.
    fn memory_usage(&self) -> usize {
        (self.counters / 2) as usize
    }

    /// The exact Bloom formula with its m counters and k, which assumes
    /// independent probes: its double hashing mod m only approximates them.
    fn theory(&self, items: u64) -> Option<Theory> {
        bloom_theory(self.counters, self.hashes, items).map(|t| Theory::Approximate(t.fpp()))
    }
}
