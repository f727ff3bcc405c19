#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod builder;
mod config;
mod filter;
mod growth;
mod overflow;
mod persist;
mod sizing;
mod table;

pub use builder::CuckooBuilder;
pub use config::{
    CuckooConfig, DEFAULT_MAX_KICKS, DEFAULT_MAX_TABLES, DEFAULT_TIGHTENING, Growth, LOAD_TARGET,
    MAX_EXPANSION, MAX_KICKS, MAX_MEMORY_LIMIT, MAX_TABLES,
};
pub use filter::CuckooFilter;
pub use filterlab_core::sizing::human_bytes;
pub use filterlab_core::{
    Error, ErrorKind, Filter, FilterKind, HashAlgorithm, Key, KeyHasher, Membership, Persist,
    RemovableFilter, ViaHash,
};
pub use sizing::{CuckooSizing, FingerprintChoice};

// The common operations without a trait import (see filterlab-core).
filterlab_core::inherent_methods!(CuckooFilter: filter, remove, write, read);
