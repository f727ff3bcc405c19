//! Format kind 1 as `BloomFilter` and as `AtomicBloomFilter` (the same
//! format): whole bytes, chunked streams, resealed mutations; see `decode`.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: &[u8]| {
    filterlab_fuzz::decode::bloom_target(input);
});
