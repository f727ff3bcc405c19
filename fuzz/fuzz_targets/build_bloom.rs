//! Arbitrary `BloomFilter` builder settings: every call returns within a
//! second and keeps the sizing's promises; see `build`.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: &[u8]| {
    filterlab_fuzz::build_bloom::bloom_target(input);
});
