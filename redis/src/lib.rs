#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod builder;
mod endpoint;
mod error;
mod filter;
mod info;
mod layout;
mod link;
mod local;
#[cfg(feature = "testing")]
mod reference;
mod scripts;
mod sharded;
mod shards;
mod target;
#[cfg(feature = "testing")]
pub mod testing;
mod transfer;

pub use builder::RedisBloomBuilder;
pub use endpoint::{DEFAULT_TIMEOUT, Endpoint};
pub use error::{Error, ErrorKind};
pub use filter::{DEFAULT_BITS_PER_CALL, RedisBloomFilter};
pub use filterlab_bloom::{BloomBuilder, BloomConfig, BloomFilter, BloomSizing};
pub use filterlab_core::{Filter, Key, KeyHasher, Membership, Persist, ViaHash};
pub use info::{Fill, Info};
pub use layout::{DEFAULT_PART_BITS, LAYOUT_VERSION, MAX_PARTS, SHARD_LAYOUT_VERSION};
pub use local::ShardedBloomFilter;
pub use sharded::{
    DEFAULT_CREATION_LEASE, Durability, RedisShardedBloomBuilder, RedisShardedBloomFilter,
    ShardedSizing,
};
pub use shards::{DEFAULT_SHARDS, MAX_SHARDS, SHARDED_LAYOUT_VERSION};
pub use transfer::TRANSFER_CHUNK_BYTES;
