//! Format kind 1 as `BloomFilter` and as `AtomicBloomFilter` (the same
//! format): whole bytes, chunked streams, resealed mutations; see `decode`.
#![no_main]

use filterlab_bloom::{AtomicBloomFilter, BloomFilter};

libfuzzer_sys::fuzz_target!(|input: &[u8]| {
    filterlab_fuzz::decode::target::<BloomFilter>(input);
    filterlab_fuzz::decode::target::<AtomicBloomFilter>(input);
});
