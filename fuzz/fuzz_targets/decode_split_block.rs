//! Format kind 7 as `SplitBlockBloomFilter`: whole bytes, chunked streams,
//! resealed mutations; see `decode`.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: &[u8]| {
    filterlab_fuzz::decode::split_block_target(input);
});
