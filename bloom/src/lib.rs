#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod sizing;
mod standard;

pub use filterlab_core::{
    Error, ErrorKind, Filter, FilterKind, Key, KeyHasher, Merge, Persist, ViaHash,
};
pub use sizing::{BloomSizing, HashChoice, MAX_HASHES, human_bytes};
pub use standard::{BloomBuilder, BloomConfig, BloomFilter};

/// The root README's examples, compiled and run as doctests.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct RootReadmeDoctests;
