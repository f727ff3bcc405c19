//! The filterlab harness: measures every registered filter (filterlab's and
//! the peer crates') against its theory, on the same seeded keys in one
//! process, and writes the report `filterlab report` produces; sizes filters
//! for `filterlab recommend`.
//!
//! One code path measures every filter: experiments hold `Box<dyn`
//! [`Subject`](subject::Subject)`>`, built from the [`registry`]. A new
//! filter is one registry entry.

#![forbid(unsafe_code)]

pub mod accuracy;
pub mod capacity;
pub mod cli;
pub mod compare;
pub mod config;
mod error;
pub mod guide;
pub mod machine;
pub mod output;
pub mod parallel;
pub mod peers;
pub mod plot;
pub mod progress;
pub mod recommend;
pub mod registry;
pub mod report;
pub mod space;
pub mod speed;
pub mod subject;

pub use error::{Error, ErrorKind};
