//! Arbitrary `CuckooFilter` builder settings: every call returns within a
//! second and keeps the sizing's promises; see `build_cuckoo`.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: &[u8]| {
    filterlab_fuzz::build_cuckoo::cuckoo_target(input);
});
