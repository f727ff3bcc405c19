//! Sizing, written once for every filter's builder, format reader and the
//! CLI: the parameter rules (one definition of a valid FPP, item count and
//! hash count), the exact-FPP size search, and what every builder and
//! sizing record shares.
//!
//! - [`rules`](check_fpp): [`check_fpp`], [`check_items`], [`check_hashes`]
//!   and the limits they enforce;
//! - [`SizeSearch`]: the smallest array, and the best k, whose exact FPP
//!   meets a target;
//! - [`BuilderBase`] and [`builder_setters!`](crate::builder_setters): the
//!   settings every builder has (target, load, k, hasher, memory limit),
//!   validated in one place, and their setters;
//! - [`SizedFor`], [`HashChoice`] and [`HashBits`]: what a sizing record
//!   says of the load and target, of k, and of the key hash, and the report
//!   lines that print them.

mod builder;
mod record;
mod rules;
mod search;

pub use builder::{BuilderBase, Target};
pub use record::{HashBits, HashChoice, SizedFor, memory_summary};
pub use rules::{
    MAX_HASHES, MIN_FPP, check_fpp, check_hashes, check_items, ensure, hashes_from_header,
    human_bytes,
};
pub use search::{FppOf, SizeSearch};
