//! Arbitrary `ScalableBloomFilter` builder settings (either layer type):
//! every call returns within a second and keeps the sizing's promises; see
//! `build_scalable`.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: &[u8]| {
    filterlab_fuzz::build_scalable::scalable_target(input);
});
