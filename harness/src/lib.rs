//! The filterlab harness: measures every registered filter (filterlab's and
//! the peer crates') against its theory, on the same seeded keys in one
//! process, and writes the report `filterlab report` produces; sizes filters
//! for `filterlab recommend`.
//!
//! Data flows one way: [`cli`] → [`commands`] → [`experiments`] (over
//! [`registry`] entries, each measured through `filterlab_peers::Subject`)
//! → [`experiments::measurements::Measurements`] → [`render`]. A new filter
//! is one registry entry.

#![forbid(unsafe_code)]

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
