//! Format kind 9 as every `BinaryFuseFilter` width and arity: whole bytes,
//! chunked streams, views verified and deferred, resealed mutations; see
//! `static_sets`.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: &[u8]| {
    filterlab_fuzz::static_sets::binary_fuse_target(input);
});
