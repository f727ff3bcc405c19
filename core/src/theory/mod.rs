//! The formulas filters are sized by and measured against, one file per
//! family: standard Bloom filters (`bloom.rs`), blocked Bloom filters
//! (`blocked.rs`), counting Bloom filters' counter overflow (`counting.rs`),
//! cuckoo filters (`cuckoo.rs`), fingerprint filters built from a key set
//! (xor, binary fuse, Ribbon; `fingerprint.rs`), scalable Bloom filters
//! (`scalable.rs`), split-block Bloom filters (`split_block.rs`), blocked
//! Bloom filters whose probes are striped over the block's words
//! (`striped.rs`), Bloom filters split into shards (`sharded.rs`),
//! bounds that hold for any filter (`bounds.rs`), and the statistics the
//! tests and the harness judge measurements with (`stats.rs`).
//!
//! Everything here is a pure function of the parameters, cheap enough to call
//! while sizing a filter, bounded in time for any input, and shared by the
//! filter crates, their statistical tests and the harness. The exact formulas
//! return an error, never a wrong number, for parameters they cannot
//! evaluate exactly (see [`MAX_EXACT_HASHES`]).

mod blocked;
mod bloom;
mod bounds;
mod counting;
mod cuckoo;
mod fingerprint;
mod scalable;
mod sharded;
mod split_block;
mod stats;
mod striped;
mod support;

pub use blocked::{
    BlockFppTable, blocked_bloom_classic_best_hashes, blocked_bloom_fpp, blocked_bloom_fpp_classic,
    blocked_bloom_fpp_with, bloom_fpp_given_block_fills,
};
pub use bloom::{
    bloom_estimate_items, bloom_fpp_classic, bloom_fpp_exact, bloom_fpp_given_fill,
    bloom_optimal_bits, bloom_optimal_hashes,
};
pub use bounds::{hash_bits_needed, lower_bound_bits_per_item};
pub use counting::{
    MAX_COUNTER_THRESHOLD, blocked_counter_tail, counter_overflow_bound_fan, counter_tail,
    saturation_threshold,
};
pub use cuckoo::{
    cuckoo_compound_fpp, cuckoo_fingerprint_bits, cuckoo_fpp, cuckoo_fpp_given_occupancy,
    cuckoo_grown_fpp, cuckoo_usable_fingerprints,
};
pub use fingerprint::{
    MAX_FINGERPRINT_BITS, fingerprint_fpp, mixed_fingerprint_fpp, mixed_fingerprint_widths,
};
pub use scalable::{
    scalable_bloom_fpp, scalable_bloom_fpp_bound, scalable_bloom_loads, scalable_layer_fpp,
};
pub use sharded::sharded_bloom_fpp;
pub use split_block::{
    SPLIT_BLOCK_WORD_BITS, SPLIT_BLOCK_WORDS, split_block_bloom_fpp, split_block_estimate_items,
    split_block_fpp_given_word_fills,
};
pub use stats::{normal_quantile, queries_for, wilson_interval};
pub use striped::{
    MAX_STRIPED_HASHES, STRIPED_WORD_BITS, STRIPED_WORDS, StripedFppTable, striped_block_fpp,
    striped_block_fpp_with, striped_estimate_items, striped_fpp_given_word_fills,
};
pub use support::{MAX_EXACT_BLOCK_BITS, MAX_EXACT_HASHES};
