#![doc = include_str!("../README.md")]
#![deny(unsafe_code)]

mod block;
mod builder;
mod convert;
mod counters;
mod filter;
mod format;
mod kernel;
mod layout;
mod sizing;

pub use builder::{CountingBloomBuilder, CountingBloomConfig};
pub use counters::BLOCK_BYTES;
pub use filter::{BlockedCountingBloomFilter, CountingBloom, CountingBloomFilter};
pub use filterlab_bloom::BloomFilter;
pub use filterlab_core::sizing::{HashChoice, MAX_HASHES, human_bytes};
pub use filterlab_core::{
    Error, ErrorKind, Filter, FilterKind, Key, KeyHasher, Membership, Merge, Persist,
    RemovableFilter, ViaHash,
};
pub use layout::{Blocked, Layout, Standard};
pub use sizing::CountingSizing;
