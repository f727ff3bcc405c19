//! core's framing alone, any kind: `FrameReader::open_any`, `read_words`,
//! `read_bytes_into`, `finish`, and `FrameWriter` re-encoding what was read.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: &[u8]| {
    filterlab_fuzz::decode::frame_target(input);
});
