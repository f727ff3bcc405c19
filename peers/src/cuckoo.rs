//! cuckoofilter 0.5.

use std::collections::hash_map::DefaultHasher;

use crate::peer::{Inserted, PeerFilter, to_usize};
use crate::subject::{Theory, Workload};

/// Slots per cuckoofilter bucket (its constant).
const SLOTS: u64 = 4;

/// Non-zero values of its 8-bit fingerprints.
const FINGERPRINT_VALUES: f64 = 255.0;

/// cuckoofilter 0.5 (8-bit fingerprints, 4-slot buckets, SipHash-1-3 through
/// std's `DefaultHasher`).
///
/// When full it evicts a random *other* item and returns an error: the
/// refused key is counted as refused, and the evicted one shows up as a false
/// negative. Its eviction uses `rand::thread_rng`, so its measurements do not
/// repeat run to run.
pub struct Cuckoo {
    filter: cuckoofilter::CuckooFilter<DefaultHasher>,
    items: usize,
    slots: u64,
}

impl Cuckoo {
    /// `with_capacity(items)`: the crate rounds slots up to a power of two.
    pub fn new(workload: &Workload) -> Self {
        let items = to_usize(workload.items);
        Self {
            filter: cuckoofilter::CuckooFilter::with_capacity(items),
            items,
            slots: items.next_power_of_two().max(SLOTS as usize) as u64,
        }
    }
}

impl PeerFilter for Cuckoo {
    const REMOVABLE: bool = true;

    /// It does not say whether a key was new: every key taken counts as new.
    fn insert(&mut self, key: u64) -> Inserted {
        if self.filter.add(&key).is_ok() {
            Inserted::New
        } else {
            Inserted::Refused
        }
    }

    fn contains(&self, key: u64) -> bool {
        self.filter.contains(&key)
    }

    fn remove(&mut self, key: u64) -> bool {
        self.filter.delete(&key)
    }

    /// It has no `clear`: a new filter of the same capacity.
    fn clear(&mut self) -> bool {
        self.filter = cuckoofilter::CuckooFilter::with_capacity(self.items);
        true
    }

    fn memory_usage(&self) -> usize {
        self.filter.memory_usage()
    }

    /// A query compares its fingerprint with the 2·b slots of two buckets,
    /// `items` of them occupied: 1 − (1 − 1/255)^(2·b·load) (Fan et al. 2014).
    fn theory(&self, items: u64) -> Option<Theory> {
        let occupancy = (items as f64 / self.slots as f64).min(1.0);
        let compared = 2.0 * SLOTS as f64 * occupancy;
        Some(Theory::Approximate(
            1.0 - (1.0 - 1.0 / FINGERPRINT_VALUES).powf(compared),
        ))
    }
}
