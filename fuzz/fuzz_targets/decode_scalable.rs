//! Format kind 4 as `ScalableBloomFilter` with either layer type (at most
//! one accepts a file), layers resealed too; see `decode`.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: &[u8]| {
    filterlab_fuzz::decode::scalable_target(input);
});
