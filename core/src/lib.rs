#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod error;
mod filter;
pub mod format;
mod hash;
pub mod keys;
pub mod memory;
#[cfg(feature = "serde")]
pub mod serde_bytes;
pub mod sizing;
#[cfg(feature = "testing")]
pub mod testing;
pub mod theory;

pub use error::{Error, ErrorKind};
pub use filter::{BATCH, Filter, Merge, RemovableFilter, for_each_batch};
pub use format::{FilterKind, Persist};
pub use hash::{HashAlgorithm, Key, KeyHasher, Probes, ViaHash, mix64, reduce};
