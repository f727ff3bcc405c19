#![doc = include_str!("../README.md")]
// `unsafe` only in `prefetch`, the prefetch hint of batched operations
// (measured: three to six times faster batches); its one block says why it
// is sound, and its tests run under Miri.
#![deny(unsafe_code)]

mod builder;
mod convert;
mod counters;
mod filter;
mod format;
mod kernel;
mod layout;
mod prefetch;
mod sizing;

pub use builder::CountingBloomBuilder;
pub use counters::BLOCK_BYTES;
pub use filter::{BlockedCountingBloomFilter, CountingBloom, CountingBloomFilter};
pub use filterlab_bloom::{BloomFilter, HashChoice};
pub use filterlab_core::sizing::{MAX_HASHES, human_bytes};
pub use filterlab_core::{
    Error, ErrorKind, Filter, FilterKind, Key, KeyHasher, Merge, Persist, RemovableFilter, ViaHash,
};
pub use format::CountingBloomConfig;
pub use layout::{Blocked, Layout, Standard};
pub use sizing::CountingSizing;
