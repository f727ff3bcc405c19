//! Arbitrary counting Bloom builder settings (both layouts, every counter
//! width, every entry point): every call returns within a second and keeps
//! the sizing's promises; see `build_counting`.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: &[u8]| {
    filterlab_fuzz::build_counting::counting_target(input);
});
