//! The conformance suite every filter runs, and helpers for statistical tests.
//!
//! Enabled by the `testing` feature. A filter crate checks the whole contract
//! in one line from its integration tests, e.g.
//! `Conformance::varying("BloomFilter", small, 1, 2).check()`: the suite on
//! `small(1)`, with `small(2)` as the differently configured variant.
//! Here it is run on a toy filter that stores its key hashes exactly:
//!
//! ```
//! use filterlab_core::format::{FrameReader, FrameWriter, Header};
//! use filterlab_core::testing::Conformance;
//! use filterlab_core::{Error, ErrorKind, Filter, FilterKind, KeyHasher, Membership, Persist};
//! use std::collections::BTreeSet;
//!
//! /// Remembers every key hash: no false positives, no capacity.
//! #[derive(Clone, Debug, PartialEq)]
//! struct ExactSet { hashes: BTreeSet<u64>, hasher: KeyHasher }
//!
//! impl Membership for ExactSet {
//!     fn hasher(&self) -> &KeyHasher { &self.hasher }
//!     fn contains_hash(&self, hash: u64) -> bool { self.hashes.contains(&hash) }
//!     fn len(&self) -> usize { self.hashes.len() }
//!     fn memory_usage(&self) -> usize { 8 * self.hashes.len().max(1) }
//!     fn capacity(&self) -> Option<usize> { None }
//!     fn expected_fpp(&self) -> f64 { 0.0 }
//!     fn theoretical_fpp(&self, _items: u64) -> Option<f64> { Some(0.0) }
//! }
//!
//! impl Filter for ExactSet {
//!     fn insert_hash(&mut self, hash: u64) -> Result<bool, Error> { Ok(self.hashes.insert(hash)) }
//!     fn clear(&mut self) { self.hashes.clear() }
//! }
//!
//! impl Persist for ExactSet {
//!     type Config = KeyHasher;
//!     const KIND: FilterKind = FilterKind::Bloom; // a real filter has a kind of its own
//!     fn config(&self) -> KeyHasher { self.hasher }
//!     fn header(&self) -> Header {
//!         let items = self.hashes.len() as u64;
//!         Header { kind: Self::KIND, hasher: self.hasher, items, params: vec![], payload_len: 8 * items }
//!     }
//!     fn write_payload<W: std::io::Write>(&self, out: &mut FrameWriter<W>) -> Result<(), Error> {
//!         out.write_words(&self.hashes.iter().copied().collect::<Vec<_>>())
//!     }
//!     fn config_from_header(header: &Header) -> Result<KeyHasher, Error> {
//!         header.expect_params(0)?;
//!         header.expect_payload_len(header.items.checked_mul(8).ok_or_else(|| {
//!             Error::new(ErrorKind::InvalidHeader, "too many items")
//!         })?)?;
//!         Ok(header.hasher)
//!     }
//!     fn read_payload<R: std::io::Read>(
//!         hasher: KeyHasher, header: &Header, input: &mut FrameReader<R>,
//!     ) -> Result<Self, Error> {
//!         let words = input.read_words(header.items as usize)?;
//!         let hashes: BTreeSet<u64> = words.iter().copied().collect();
//!         if hashes.len() != words.len() || !words.is_sorted() {
//!             return Err(Error::new(ErrorKind::InvalidHeader, "hashes not strictly increasing"));
//!         }
//!         Ok(Self { hashes, hasher })
//!     }
//! }
//!
//! let make = |seed| ExactSet { hashes: BTreeSet::new(), hasher: KeyHasher::new(seed) };
//! let suite = Conformance::varying("ExactSet", make, 1, 2).cases(8);
//! suite.check();
//! suite.check_states();
//! ```
//!
//! The properties are proptest properties against a `HashSet` oracle:
//! no false negatives (ever: after inserts, clear, a serialization round
//! trip, a merge, removals of inserted keys only), exact `len` semantics,
//! typed errors for corrupted, truncated and crafted bytes; and the
//! persistence rule ([`Conformance::check_states`]): every state a
//! sequence of the filter's operations reaches, or its reader accepts,
//! writes bytes the reader accepts and that read back equal.
//!
//! Filters built once from a key set have their own suite,
//! [`StaticConformance`], run through their builder: the query side of the
//! contract, duplicates, the format and the views.
//!
//! Beside the suite, the checks every filter's own tests make, written once:
//! statistical ones against the filter's exact theory
//! ([`check_fpp_against_theory`], [`mean_fpp_over_instances`], [`fill`]),
//! and checks of parameters, the golden file, configuration drift, merges
//! and serde ([`check_invalid_fpps`], [`check_golden`],
//! [`check_config_drift`], [`check_merges_refuse`], `check_serde_round_trip`
//! with the `serde` feature, [`reseal`]).

mod checks;
mod conformance;
mod measure;
mod states;
mod static_set;

#[cfg(feature = "serde")]
pub use checks::check_serde_round_trip;
pub use checks::{
    INVALID_FPPS, check_config_drift, check_golden, check_golden_by_value, check_golden_file,
    check_golden_hashers, check_invalid_fpps, check_merges_refuse, expect_error, reseal,
};
pub use conformance::Conformance;
pub use measure::{
    check_fpp_against_theory, check_fpp_against_theory_after, count_false_positives, fill,
    mean_fpp_over_instances,
};
pub use static_set::StaticConformance;
