//! Fuzz targets for filterlab's decoders and builders (run with
//! `cargo +nightly fuzz run <target>`; see README.md). The targets in
//! `fuzz_targets/` are one line each; the checks live here so the corpus
//! generator and the unit tests share them.
//!
//! - `exercise`: what a caller does with any filter, once for all of them;
//!   `filters`: what each filter adds to it.
//! - `decode`, `frame`: the decoder targets and their byte-level helpers;
//!   `chunks`: the scalable filter's chunked dumps; `module_value`: the
//!   redis module's data types as their RDB load reads them.
//! - `build`: the builder targets' driver and settings; `build_*`: each
//!   family's settings and promises.
//! - `static_sets`: the decoder and builder targets of the filters built
//!   from a key set (filterlab-static).

pub mod build;
pub mod build_bloom;
pub mod build_counting;
pub mod build_cuckoo;
pub mod build_scalable;
pub mod chunks;
pub mod decode;
pub mod exercise;
pub mod filters;
pub mod frame;
pub mod module_value;
pub mod static_sets;

use std::path::{Path, PathBuf};

/// Declares [`TARGETS`] from `name: function` pairs.
macro_rules! targets {
    ($($name:ident: $function:path),* $(,)?) => {
        /// Every target by name: what `fuzz_targets/<name>.rs` runs.
        pub const TARGETS: &[(&str, fn(&[u8]))] = &[$((stringify!($name), $function)),*];
    };
}

targets! {
    decode_bloom: decode::bloom_target, decode_blocked: decode::blocked_target,
    decode_split_block: decode::split_block_target,
    decode_counting: decode::counting_target, decode_cuckoo: decode::cuckoo_target,
    decode_scalable: decode::scalable_target, decode_frame: decode::frame_target,
    restore_chunks: chunks::restore_target,
    decode_module_value: module_value::module_target, build_bloom: build_bloom::bloom_target,
    build_blocked: build_bloom::blocked_target, build_counting: build_counting::counting_target,
    build_cuckoo: build_cuckoo::cuckoo_target, build_scalable: build_scalable::scalable_target,
    decode_ribbon: static_sets::ribbon_target, decode_binary_fuse: static_sets::binary_fuse_target,
    build_ribbon: static_sets::build_ribbon_target,
    build_binary_fuse: static_sets::build_binary_fuse_target,
}

/// The committed seeds in a corpus folder (its `seed-*` files), sorted;
/// none when the folder does not exist.
pub fn seed_paths(dir: &Path) -> Vec<PathBuf> {
    let is_seed = |path: &PathBuf| {
        let name = path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned());
        name.is_some_and(|name| name.starts_with("seed-"))
    };
    let entries = std::fs::read_dir(dir).into_iter().flatten().flatten();
    let mut seeds: Vec<PathBuf> = entries.map(|entry| entry.path()).filter(is_seed).collect();
    seeds.sort();
    seeds
}
