#![doc = include_str!("../README.md")]
// `unsafe` only in two modules, allowed below: `kernel` (the AVX2 block
// tests behind runtime detection) and `blocks` (the lazily zeroed,
// aligned block allocation); and in the two functions of `words` that read
// a standard filter's probed word without a bounds check (allowed there).
// Each unsafe block states why it is sound, and their unit tests run
// under Miri. (The prefetch hint of batched operations is core's
// `filterlab_core::prefetch`.)
#![deny(unsafe_code)]

mod atomic;
mod blocked;
#[allow(unsafe_code)]
mod blocks;
mod common;
#[allow(unsafe_code)]
mod kernel;
mod layout;
mod sizing;
mod split_block;
mod standard;
mod view;
mod words;

pub use atomic::AtomicBloomFilter;
pub use blocked::{BLOCK_BITS, BlockedBloomBuilder, BlockedBloomConfig, BlockedBloomFilter};
pub use filterlab_core::sizing::{HashChoice, MAX_HASHES, human_bytes};
pub use filterlab_core::view::{Checksum, Viewable};
pub use filterlab_core::{
    Error, ErrorKind, Filter, FilterKind, HashAlgorithm, Key, KeyHasher, Membership, Merge,
    Persist, ViaHash,
};
pub use kernel::{BlockProbes, Kernel};
pub use sizing::BloomSizing;
pub use split_block::{
    SPLIT_BLOCK_BITS, SplitBlockBloomBuilder, SplitBlockBloomConfig, SplitBlockBloomFilter,
};
pub use standard::{BloomBuilder, BloomFilter};
pub use view::{BlockedBloomView, BloomView, SplitBlockBloomView};
pub use words::BloomConfig;
