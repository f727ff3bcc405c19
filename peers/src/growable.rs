//! growable-bloom-filter 2.1.

use crate::peer::{Inserted, PeerFilter, to_usize};
use crate::subject::Workload;

/// growable-bloom-filter's default tightening ratio (not exported by the crate).
const TIGHTENING: f64 = 0.851_562_5;

/// growable-bloom-filter 2.1 with its defaults (growth 2, tightening 0.85):
/// a scalable Bloom filter of partitioned Bloom layers. No formula: its FPP
/// depends on its growth history.
pub struct Growable {
    filter: growable_bloom_filter::GrowableBloom,
    fpp: f64,
    initial: usize,
}

impl Growable {
    /// `GrowableBloom::new(fpp, items)`.
    pub fn new(workload: &Workload) -> Self {
        let initial = to_usize(workload.items);
        Self {
            filter: growable_bloom_filter::GrowableBloom::new(workload.fpp, initial),
            fpp: workload.fpp,
            initial,
        }
    }
}

impl PeerFilter for Growable {
    /// It answers whether the key was new (and skips a key it reports present).
    fn insert(&mut self, key: u64) -> Inserted {
        Inserted::unless_present(!self.filter.insert(key))
    }

    fn contains(&self, key: u64) -> bool {
        self.filter.contains(key)
    }

    fn clear(&mut self) -> bool {
        self.filter.clear();
        true
    }

    /// The crate has no accessor; this replays its sizing: layer i holds
    /// initial·2^i items at fpp·r^i, with ⌈log2(1/p_i)⌉ slices of
    /// ⌈cap_i / ln 2⌉ bits each.
    fn memory_usage(&self) -> usize {
        let mut remaining = self.filter.capacity();
        let mut bytes = 0;
        let mut layer: i32 = 0;
        while remaining > 0 {
            let capacity = self.initial << layer;
            let fpp = self.fpp * TIGHTENING.powi(layer);
            let slices = (1.0 / fpp).log2().ceil() as usize;
            let slice_bits = (capacity as f64 / std::f64::consts::LN_2).ceil() as usize;
            bytes += (slices * slice_bits).div_ceil(8);
            remaining = remaining.saturating_sub(capacity);
            layer += 1;
        }
        bytes
    }
}
