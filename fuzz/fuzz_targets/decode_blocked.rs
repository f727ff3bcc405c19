//! Format kind 2 as `BlockedBloomFilter`: whole bytes, chunked streams,
//! resealed mutations; see `decode`.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: &[u8]| {
    filterlab_fuzz::decode::blocked_target(input);
});
