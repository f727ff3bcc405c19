//! The one measurement abstraction: [`Subject`], what it is built for
//! ([`Workload`]), how a timed pass drives it ([`Mode`]) and what its
//! formula predicts ([`Theory`]).

/// How a pass over many keys drives a filter.
///
/// Every subject offers [`OneKey`](Self::OneKey); filterlab filters also
/// offer [`Batched`](Self::Batched), their batch API. Peers have no batch
/// API: asked for `Batched`, they run key by key (see
/// [`Subject::has_batch_api`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum Mode {
    /// One key at a time: each key hashed, then inserted or looked up, before
    /// the next (what every peer crate's API offers).
    OneKey,
    /// Through the filter's batch API: keys hashed [`BATCH`](filterlab_core::BATCH)
    /// at a time, then handed to `insert_hashes` / `contains_hashes`, which
    /// prefetch the memory of the keys ahead.
    Batched,
}

impl Mode {
    /// Both modes, one key at a time first.
    pub const ALL: [Self; 2] = [Self::OneKey, Self::Batched];
}

/// The FPP a formula predicts, and how far the formula can be trusted.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Theory {
    /// Exact for the design under ideal hashing (an accuracy gate may hold a
    /// filter to it).
    Exact(f64),
    /// An approximation or a bound.
    Approximate(f64),
}

impl Theory {
    /// The predicted FPP.
    pub fn fpp(self) -> f64 {
        match self {
            Self::Exact(fpp) | Self::Approximate(fpp) => fpp,
        }
    }

    /// Whether the formula is exact.
    pub fn is_exact(self) -> bool {
        matches!(self, Self::Exact(_))
    }
}

/// What a filter is built for: its capacity, its target FPP, and the seed
/// of its hasher (and of the keys it will see).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Workload {
    /// Distinct items the filter must hold at the target FPP.
    pub items: u64,
    /// The target false-positive probability.
    pub fpp: f64,
    /// The seed for the filter's hasher, where it has one.
    pub seed: u64,
}

/// A filter under measurement, over `u64` keys.
///
/// Object-safe: a harness holds `Box<dyn Subject>` and never knows which
/// filter is behind it. Every method that takes many keys runs its loop
/// inside the adapter, monomorphized for the filter, so a timed pass over a
/// million keys costs one dynamic call, not one per key. Each subject hashes
/// keys the way its crate does, so timings include hashing.
pub trait Subject {
    /// Whether [`Mode::Batched`] goes through a batch API of the filter's own
    /// (otherwise it runs key by key, like [`Mode::OneKey`]).
    fn has_batch_api(&self) -> bool;

    /// Inserts `keys` in order. The positions (in `keys`) of keys the filter
    /// refused, because it is full, are appended to `refused`. Returns how
    /// many keys the filter reported as new (each insert's answer is used, so
    /// every filter does the work of RedisBloom's BF.ADD; a filter that does
    /// not tell counts every accepted key).
    fn insert_keys(&mut self, keys: &[u64], mode: Mode, refused: &mut Vec<usize>) -> u64;

    /// How many of `keys` the filter reports as present.
    fn count_contained(&self, keys: &[u64], mode: Mode) -> u64;

    /// Removes `keys` (each inserted earlier) one at a time and returns how
    /// many removals succeeded; `None` when the filter cannot delete.
    fn remove_keys(&mut self, keys: &[u64]) -> Option<u64>;

    /// Inserts `keys` from `threads` threads at once into this one filter,
    /// each thread a contiguous share in `mode`; returns how many were new,
    /// or `None` when the filter does not take concurrent inserts.
    fn insert_keys_concurrently(&self, keys: &[u64], threads: usize, mode: Mode) -> Option<u64>;

    /// Empties the filter, keeping its configuration; `false` when it cannot
    /// be emptied (a static filter, built once from its keys).
    fn clear(&mut self) -> bool;

    /// Bytes of the filter's storage.
    fn memory_usage(&self) -> usize;

    /// The FPP the filter's design predicts after `items` distinct inserts
    /// into this configuration; `None` when no formula is known.
    fn theory(&self, items: u64) -> Option<Theory>;

    /// The FPP conditional on this instance's actual state (for a Bloom
    /// filter (X/m)^k with X bits set), where the filter can tell.
    fn fill_fpp(&self) -> Option<f64>;

    /// For a filter built once from its keys that reports it, the times
    /// its construction started again with a new seed.
    fn build_retries(&self) -> Option<u32> {
        None
    }
}
