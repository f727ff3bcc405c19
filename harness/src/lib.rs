//! The filterlab harness: measures every registered filter (filterlab's and
//! the peer crates') against its theory, on the same seeded keys in one
//! process.
//!
//! One code path measures every filter: experiments hold `Box<dyn`
//! [`Subject`](subject::Subject)`>`, built from the [`registry`]. A new
//! filter is one registry entry.

#![forbid(unsafe_code)]

mod error;
pub mod peers;
pub mod registry;
pub mod subject;

pub use error::{Error, ErrorKind};
