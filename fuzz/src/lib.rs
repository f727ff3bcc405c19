//! Fuzz targets for filterlab's decoders and builders (run with
//! `cargo +nightly fuzz run <target>`; see README.md). The targets in
//! `fuzz_targets/` are one line each; the checks live here so the corpus
//! generator and the unit tests share them.

pub mod build;
pub mod decode;
pub mod frame;
