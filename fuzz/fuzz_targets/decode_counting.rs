//! Format kind 3 as every counting Bloom filter type (both layouts, 4-, 8-
//! and 16-bit counters; at most one accepts a file): whole bytes, chunked
//! streams, resealed mutations; see `decode`.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: &[u8]| {
    filterlab_fuzz::decode::counting_target(input);
});
