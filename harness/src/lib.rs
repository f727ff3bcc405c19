//! The filterlab harness: measures every registered filter (filterlab's and
//! the peer crates') against its theory, on the same seeded keys in one
//! process, and writes the report `filterlab report` produces; sizes filters
//! for `filterlab recommend`.
//!
//! Data flows one way: [`cli`] → [`commands`] → [`experiments`] (over
//! [`registry`] entries, each measured through `filterlab_peers::Subject`)
//! → [`experiments::measurements::Measurements`] → [`render`]. A new filter
//! is one registry entry.

// No `unsafe`: the counting global allocator is filterlab-counting-alloc.
#![deny(unsafe_code)]

pub mod bench;
pub mod cli;
pub mod commands;
pub mod config;
pub mod error;
pub mod experiments;
pub mod machine;
pub mod output;
pub mod parallel;
pub mod progress;
pub mod registry;
pub mod render;
pub mod text;

pub use error::{Error, ErrorKind};

/// The `Membership` methods that take no key (`hasher`, `len`,
/// `memory_usage`, `capacity`, `expected_fpp`, `theoretical_fpp`),
/// forwarded to the field `$field`: for the wrappers that change only how
/// keys go in (an injected regression, a filter under another name), inside
/// their `impl Membership`.
#[macro_export]
macro_rules! forward_keyless_methods {
    ($field:tt) => {
        fn hasher(&self) -> &::filterlab_core::KeyHasher {
            self.$field.hasher()
        }
        fn len(&self) -> usize {
            self.$field.len()
        }
        fn memory_usage(&self) -> usize {
            self.$field.memory_usage()
        }
        fn capacity(&self) -> Option<usize> {
            self.$field.capacity()
        }
        fn expected_fpp(&self) -> f64 {
            self.$field.expected_fpp()
        }
        fn theoretical_fpp(&self, items: u64) -> Option<f64> {
            self.$field.theoretical_fpp(items)
        }
    };
}
