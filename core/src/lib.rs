#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod error;
mod filter;
pub mod format;
mod hash;
pub mod memory;
#[cfg(feature = "serde")]
pub mod serde_bytes;
#[cfg(feature = "testing")]
pub mod testing;
pub mod theory;

pub use error::{Error, ErrorKind};
pub use filter::{Filter, Merge, RemovableFilter};
pub use format::{FilterKind, Persist};
pub use hash::{HashAlgorithm, Key, KeyHasher, Probes, ViaHash, mix64, reduce};
