//! `ScalableBloomFilter::restore_chunks`/`try_restore_chunks` on chunked
//! dumps, edited (reordered, dropped, repeated, cut, failing) and mutated
//! (resealed at every level): a typed error or exactly the dumped filter;
//! see `chunks`.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: &[u8]| {
    filterlab_fuzz::chunks::restore_target(input);
});
