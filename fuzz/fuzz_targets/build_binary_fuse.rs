//! Arbitrary `BinaryFuseFilter` builds (width, arity, seed, retry bound,
//! memory cap, key sets with repeats): every call returns within a second
//! and keeps the build's promises; see `static_sets`.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: &[u8]| {
    filterlab_fuzz::static_sets::build_binary_fuse_target(input);
});
