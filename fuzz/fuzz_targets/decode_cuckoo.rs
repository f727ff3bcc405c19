//! Format kind 5 as `CuckooFilter`: whole bytes, chunked streams, resealed
//! mutations; see `decode`.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: &[u8]| {
    filterlab_fuzz::decode::cuckoo_target(input);
});
