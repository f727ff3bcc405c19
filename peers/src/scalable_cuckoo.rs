//! scalable_cuckoo_filter 0.5.

use std::hash::{BuildHasher, Hasher};

use foldhash::fast::{FixedState, FoldHasher};
use rand_09::SeedableRng;
use rand_09::rngs::SmallRng;
use scalable_cuckoo_filter::{ScalableCuckooFilter, ScalableCuckooFilterBuilder};

use crate::peer::{Inserted, PeerFilter, to_usize};
use crate::subject::{Theory, Workload};

/// Slots per bucket (its default).
const SLOTS: u64 = 4;

/// A sub-filter fills to about this share of its slots before its kicks
/// fail and the filter grows (as for any 4-slot cuckoo table).
const LOAD: f64 = 0.95;

type Inner = ScalableCuckooFilter<u64, NonZeroTop, SmallRng>;

/// Seeded foldhash whose hashes never start with `bits` zero bits.
///
/// The crate takes an f-bit fingerprint from the top bits of the hash and
/// marks an empty slot with 0, without ruling out a zero fingerprint: a
/// key whose hash starts with f zero bits (1 in 2^f) trips its debug
/// assertion, and in a release build is stored as nothing (found only
/// while its buckets have an empty slot) while any query with that
/// fingerprint matches an empty slot. Every sub-filter's f is at least the
/// first one's, so moving such a hash's top bit to 1 (what filterlab's cuckoo
/// filter does with a zero fingerprint) avoids it in every sub-filter.
#[derive(Clone)]
struct NonZeroTop {
    inner: FoldHasher<'static>,
    bits: u32,
}

impl Hasher for NonZeroTop {
    fn finish(&self) -> u64 {
        let hash = self.inner.finish();
        if hash >> (64 - self.bits) == 0 {
            hash | 1 << 63
        } else {
            hash
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        self.inner.write(bytes);
    }

    fn write_u64(&mut self, value: u64) {
        self.inner.write_u64(value);
    }
}

/// scalable_cuckoo_filter 0.5: cuckoo sub-filters of doubling capacity and
/// halving FPP (fingerprints of ⌈log2(2b/p_i)⌉ bits, p_i = P/2^(i+1),
/// buckets rounded up to a power of two); a lookup checks every sub-filter.
/// Hashed here with foldhash seeded from the workload (its default is
/// SipHash-1-3), never giving a zero fingerprint (see `NonZeroTop`), and
/// kicking with a seeded `SmallRng` (its default is `thread_rng`), so runs
/// repeat.
pub struct ScalableCuckoo {
    filter: Inner,
    workload: Workload,
}

/// The crate's fingerprint width for a sub-filter of FPP `fpp`:
/// ⌈log2(2b/p_i)⌉ bits.
fn fingerprint_bits(fpp: f64) -> f64 {
    ((2.0 * SLOTS as f64) / fpp).log2().ceil()
}

fn build(workload: &Workload) -> Inner {
    // Its first sub-filter's (p_0 = P/2) fingerprint width, the narrowest.
    let bits = fingerprint_bits(workload.fpp / 2.0);
    ScalableCuckooFilterBuilder::new()
        .initial_capacity(to_usize(workload.items))
        .false_positive_probability(workload.fpp)
        .hasher(NonZeroTop {
            inner: FixedState::with_seed(workload.seed).build_hasher(),
            bits: (bits as u32).clamp(1, 63),
        })
        .rng(SmallRng::seed_from_u64(workload.seed))
        .finish()
}

impl ScalableCuckoo {
    /// Starting at the workload's capacity and FPP.
    pub fn new(workload: &Workload) -> Self {
        Self {
            filter: build(workload),
            workload: *workload,
        }
    }
}

impl PeerFilter for ScalableCuckoo {
    const REMOVABLE: bool = true;

    /// Every insert adds a copy (so removals never lose another key); it
    /// does not say whether the key was new.
    fn insert(&mut self, key: u64) -> Inserted {
        self.filter.insert(&key);
        Inserted::New
    }

    fn contains(&self, key: u64) -> bool {
        self.filter.contains(&key)
    }

    fn remove(&mut self, key: u64) -> bool {
        self.filter.remove(&key)
    }

    /// It has no `clear`: a new filter for the same workload.
    fn clear(&mut self) -> bool {
        self.filter = build(&self.workload);
        true
    }

    fn memory_usage(&self) -> usize {
        self.filter.bits().div_ceil(8) as usize
    }

    /// Approximate: its sub-filters filled in order to about 95% of their
    /// slots, each answering 1 − (1 − 2^−f_i)^(2b·load_i), compounded.
    fn theory(&self, items: u64) -> Option<Theory> {
        let mut left = items as f64;
        let mut pass = 1.0;
        for layer in 0..64 {
            if left <= 0.0 {
                break;
            }
            let capacity = self.workload.items.saturating_mul(1 << layer).max(1);
            let slots = (capacity.div_ceil(SLOTS).next_power_of_two() * SLOTS) as f64;
            let fpp = self.workload.fpp / 2f64.powi(layer + 1);
            let bits = fingerprint_bits(fpp);
            let held = left.min(LOAD * slots);
            pass *= (1.0 - 0.5f64.powf(bits)).powf(2.0 * SLOTS as f64 * held / slots);
            left -= held;
        }
        Some(Theory::Approximate(1.0 - pass))
    }
}
