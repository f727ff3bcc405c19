#![doc = include_str!("../README.md")]
// `unsafe` only in `arch`, for CPU-specific instructions; each block there
// states why it is sound.
#![deny(unsafe_code)]

mod arch;
mod atomic;
mod blocked;
mod blocks;
mod common;
mod sizing;
mod standard;

pub use atomic::AtomicBloomFilter;
pub use blocked::{
    BLOCK_BITS, BlockedBloomBuilder, BlockedBloomConfig, BlockedBloomFilter, Kernel,
};
pub use filterlab_core::sizing::{MAX_HASHES, human_bytes};
pub use filterlab_core::{
    Error, ErrorKind, Filter, FilterKind, Key, KeyHasher, Merge, Persist, ViaHash,
};
pub use sizing::{BloomSizing, HashChoice};
pub use standard::{BloomBuilder, BloomConfig, BloomFilter};

/// The root README's examples, compiled and run as doctests.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct RootReadmeDoctests;
