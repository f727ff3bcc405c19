//! The redis module's data types as `rdb_load` reads them; see `module_value`.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: &[u8]| {
    filterlab_fuzz::module_value::module_target(input);
});
