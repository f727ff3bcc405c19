#![doc = include_str!("../README.md")]
// `unsafe` only in `ffi`: the calls into the server's module API, each with
// its SAFETY comment. Everything else is safe Rust over the filter crates.
#![deny(unsafe_code)]

pub mod bloom;
pub mod cuckoo;
pub mod grammar;
pub mod options;
pub mod payload;
pub mod stored;

#[cfg(feature = "server")]
#[allow(unsafe_code)]
mod ffi;
#[cfg(feature = "server")]
mod server;

/// Every allocation of the module goes through the server's allocator
/// (the system's in a process that is not a Redis server).
#[cfg(feature = "server")]
#[global_allocator]
static ALLOCATOR: ffi::ServerAllocator = ffi::ServerAllocator;
