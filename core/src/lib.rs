#![doc = include_str!("../README.md")]
// `unsafe` only in `prefetch`, the cache hint of batched operations: one
// block, with its SAFETY comment, tested under Miri by `.ci/run`.
#![deny(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod build;
mod error;
mod filter;
pub mod format;
mod hash;
mod inherent;
pub mod keys;
pub mod memory;
#[allow(unsafe_code)]
mod prefetch;
#[cfg(feature = "serde")]
pub mod serde_bytes;
mod serde_impls;
pub mod sizing;
#[cfg(feature = "testing")]
pub mod testing;
pub mod theory;
pub mod view;

pub use build::{BuildFromKeys, BuildReport, Built};
pub use error::{Error, ErrorKind};
pub use filter::{
    BATCH, Filter, Membership, Merge, RemovableFilter, for_each_batch, insert_in_batches,
};
pub use format::{FilterKind, Persist};
pub use hash::{BLOCK_MULTIPLIERS, HashAlgorithm, Key, KeyHasher, Probes, ViaHash, mix64, reduce};
pub use prefetch::prefetch;
