#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod chunks;
mod config;
mod filter;
mod format;
mod info;
mod layer;

pub use chunks::{
    CHUNK_MAGIC, CHUNK_OVERHEAD, CHUNK_VERSION, ChunkHeader, DEFAULT_CHUNK_BYTES, MAX_CHUNK_BYTES,
    MIN_CHUNK_BYTES, dump_chunks_of, dump_stream_chunks, inspect_chunk, try_restore_chunks_of,
    try_restore_stream_chunks,
};
pub use config::{
    DEFAULT_GROWTH, DEFAULT_TIGHTENING, LayerSizing, MAX_GROWTH, MAX_LAYERS, MAX_MEMORY_CAP,
    ScalableBloomBuilder, ScalableConfig, ScalableSizing, first_share_layer_fpp,
};
pub use filter::ScalableBloomFilter;
pub use filterlab_bloom::{BlockedBloomFilter, BloomFilter, BloomSizing, human_bytes};
pub use filterlab_core::{
    Error, ErrorKind, Filter, FilterKind, Key, KeyHasher, Membership, Persist,
};
pub use info::{LayerInfo, ScalableInfo};
pub use layer::{DefaultLayer, Layer};
