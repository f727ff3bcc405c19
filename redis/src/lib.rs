#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod builder;
mod error;
mod filter;
mod info;
mod layout;
mod link;
mod scripts;
#[cfg(feature = "testing")]
pub mod testing;
mod transfer;

pub use builder::RedisBloomBuilder;
pub use error::{Error, ErrorKind};
pub use filter::{DEFAULT_BITS_PER_CALL, RedisBloomFilter};
pub use filterlab_bloom::{BloomBuilder, BloomConfig, BloomFilter, BloomSizing};
pub use filterlab_core::{Filter, Key, KeyHasher, Persist, ViaHash};
pub use info::{Fill, Info};
pub use layout::{DEFAULT_PART_BITS, LAYOUT_VERSION, MAX_PARTS};
pub use link::DEFAULT_TIMEOUT;
pub use transfer::TRANSFER_CHUNK_BYTES;
