#![doc = include_str!("../README.md")]
// `unsafe` only in `ribbon::kernel`: calling the Ribbon lookup compiled
// with POPCNT or AVX2 where runtime detection found them, and its AVX2
// loads. Each block with its SAFETY comment, run under Miri by `.ci/run`.
#![deny(unsafe_code)]

mod builder;
mod fuse;
mod hashes;
mod ribbon;
mod storage;

pub use builder::DEFAULT_MAX_RETRIES;
pub use filterlab_core::view::{Checksum, Viewable};
pub use filterlab_core::{
    BuildFromKeys, BuildReport, Built, Error, ErrorKind, FilterKind, HashAlgorithm, Key, KeyHasher,
    Membership, Persist, ViaHash,
};
pub use fuse::{
    BinaryFuseBuilder, BinaryFuseConfig, BinaryFuseFilter, BinaryFuseView, Fingerprint,
};
pub use ribbon::{RibbonBuilder, RibbonConfig, RibbonFilter, RibbonSizing, RibbonView};

// The common operations without a trait import (see filterlab-core).
filterlab_core::inherent_methods!([F: Fingerprint, const ARITY: usize] BinaryFuseFilter<F, ARITY>: filter, write, read);
filterlab_core::inherent_methods!(['a, F: Fingerprint, const ARITY: usize] BinaryFuseView<'a, F, ARITY>: filter);
filterlab_core::inherent_methods!(RibbonFilter: filter, write, read);
filterlab_core::inherent_methods!(['a] RibbonView<'a>: filter);
