//! The conformance suite of filters built once from a key set: the query
//! side of the contract, the build, the format and the views, as proptest
//! properties against a `HashSet` oracle.

use std::collections::HashSet;
use std::fmt::Debug;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

use crate::testing::conformance::{check_damaged_files, check_payload_round_trip, fail, key_sets};
use crate::view::{Checksum, Viewable};
use crate::{BuildFromKeys, ErrorKind, Membership, Persist};

/// Keys a case builds from, at most: the suite builds thousands of filters.
const MAX_KEYS: usize = 2000;

/// Never-inserted keys each case asks the filter and its views about.
const PROBES: u64 = 200;

/// The conformance suite of a filter built from a key set, through its
/// builder ([`BuildFromKeys`]).
///
/// # Examples
///
/// ```text
/// StaticConformance::new("RibbonFilter", RibbonFilter::with_fpp(0.01).seed(1))
///     .with_variant(RibbonFilter::with_fpp(0.001).seed(1))
///     .check();
/// ```
pub struct StaticConformance<B> {
    name: &'static str,
    builder: B,
    variant: Option<B>,
    cases: u32,
}

type Filter<B> = <B as BuildFromKeys>::Filter;

impl<B> StaticConformance<B>
where
    B: BuildFromKeys,
    B::Filter: Viewable + Clone + PartialEq + Debug,
{
    /// A suite for the filters `builder` builds, reported under `name`.
    pub fn new(name: &'static str, builder: B) -> Self {
        Self {
            name,
            builder,
            variant: None,
            cases: Config::default().cases.max(32),
        }
    }

    /// A differently configured builder (another seed or width): its
    /// filters must be refused by `read_from_expecting` of this one's.
    #[must_use]
    pub fn with_variant(mut self, variant: B) -> Self {
        self.variant = Some(variant);
        self
    }

    /// Proptest cases (default: proptest's, at least 32).
    #[must_use]
    pub fn cases(mut self, cases: u32) -> Self {
        self.cases = cases;
        self
    }

    /// The whole contract: [`check_builds`](Self::check_builds), then
    /// every damaged file refused, and configuration drift an error.
    ///
    /// # Panics
    ///
    /// With the first property that fails, naming the filter.
    pub fn check(&self) {
        self.check_builds();
        self.check_damaged();
        self.check_config_drift();
    }

    /// For random key sets (duplicates included): builds from a slice, an
    /// iterator and the hashes agree; every key is found (one at a time
    /// and batched); `len` is the distinct key hashes and the report counts
    /// the others as duplicates; the filter round-trips through its format;
    /// and its views, checksum verified or deferred, answer exactly as it
    /// does.
    pub fn check_builds(&self) {
        let runner = TestRunner::new(Config {
            cases: self.cases,
            failure_persistence: None,
            ..Config::default()
        });
        let mut runner = runner;
        runner
            .run(&key_sets(MAX_KEYS), |keys| self.check_build(&keys))
            .unwrap_or_else(|err| fail(self.name, "filter built from a key set", err));
    }

    fn check_build(&self, keys: &[u64]) -> Result<(), TestCaseError> {
        let error = |err: crate::Error| TestCaseError::fail(err.to_string());
        let hasher = self.builder.hasher();
        let hashes: Vec<u64> = keys.iter().map(|key| hasher.hash(key)).collect();
        let distinct: HashSet<u64> = hashes.iter().copied().collect();
        let built = self.builder.build_from_keys(keys).map_err(error)?;
        // An iterator that does not know its length, and the hashes.
        let from_iterator = self
            .builder
            .build_from_keys(keys.iter().filter(|_| true))
            .map_err(error)?;
        let from_hashes = self
            .builder
            .build_from_hashes(hashes.clone())
            .map_err(error)?;
        prop_assert_eq!(&from_iterator, &built, "built from an iterator");
        prop_assert_eq!(&from_hashes, &built, "built from the hashes");
        let filter = &built.filter;
        prop_assert_eq!(filter.hasher(), &hasher);
        prop_assert_eq!(filter.len(), distinct.len(), "len is not the distinct keys");
        prop_assert_eq!(
            built.report.duplicates,
            (keys.len() - distinct.len()) as u64,
            "duplicates miscounted"
        );
        prop_assert_eq!(filter.is_empty(), distinct.is_empty());
        prop_assert_eq!(filter.capacity(), Some(filter.len()));
        let fpp = filter.expected_fpp();
        prop_assert!(fpp > 0.0 && fpp < 1.0, "expected_fpp {}", fpp);
        prop_assert_eq!(filter.theoretical_fpp(0), Some(fpp));
        prop_assert!(filter.memory_usage() > 0);

        // Every key, one at a time and batched; batched answers for
        // never-inserted keys are the single ones.
        for &key in keys {
            prop_assert!(filter.contains(&key), "false negative for {}", key);
        }
        prop_assert!(filter.contains_many(keys).iter().all(|&hit| hit));
        let mut probes = hashes.clone();
        probes.extend((0..PROBES).map(|i| hasher.hash(&crate::keys::query_key(7, i))));
        let singles: Vec<bool> = probes
            .iter()
            .map(|&hash| filter.contains_hash(hash))
            .collect();
        let mut batched = vec![false; probes.len()];
        filter.contains_hashes(&probes, &mut batched);
        prop_assert_eq!(
            &batched,
            &singles,
            "batched lookups differ from single ones"
        );

        // The format.
        let bytes = filter.to_bytes();
        let decoded = Filter::<B>::from_bytes(&bytes).map_err(error)?;
        prop_assert_eq!(&decoded, filter);
        prop_assert_eq!(decoded.to_bytes(), bytes.clone());
        let streamed = Filter::<B>::read_from(&bytes[..]).map_err(error)?;
        prop_assert_eq!(&streamed, filter);
        Filter::<B>::read_from_expecting(&bytes[..], &filter.config()).map_err(error)?;
        check_payload_round_trip(filter, &bytes)?;

        // The views answer as the filter, with its numbers.
        for checksum in [Checksum::Verify, Checksum::Defer] {
            let view = Filter::<B>::view(&bytes, checksum).map_err(error)?;
            let answers: Vec<bool> = probes
                .iter()
                .map(|&hash| view.contains_hash(hash))
                .collect();
            prop_assert_eq!(&answers, &singles, "the view answers otherwise");
            let mut batched = vec![false; probes.len()];
            view.contains_hashes(&probes, &mut batched);
            prop_assert_eq!(&batched, &singles, "the view's batched lookups differ");
            prop_assert_eq!(
                (view.len(), view.memory_usage(), view.expected_fpp()),
                (filter.len(), filter.memory_usage(), fpp)
            );
            Filter::<B>::verify_checksum(&view).map_err(error)?;
        }
        Ok(())
    }

    /// A small filter's file: every damage refused by the reader (see the
    /// conformance suite) and by a view verifying its checksum; a view
    /// deferring it refuses every damage to the header and the layout,
    /// answers without panicking after any other, and finds that one when
    /// asked to verify.
    pub fn check_damaged(&self) {
        let name = self.name;
        let hasher = self.builder.hasher();
        let built = self
            .builder
            .build_from_keys(0..20u64)
            .unwrap_or_else(|err| fail(name, "building 20 keys", err));
        let bytes = built.filter.to_bytes();
        check_damaged_files::<Filter<B>>(name, &bytes);
        let probes: Vec<u64> = (0..64u64).map(|key| hasher.hash(&key)).collect();
        for at in 0..bytes.len() {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x41;
            if let Ok(view) = Filter::<B>::view(&damaged, Checksum::Verify) {
                fail(
                    name,
                    "damaged views are refused",
                    format!("flip at {at} gave {view:?}"),
                );
            }
            if let Ok(view) = Filter::<B>::view(&damaged, Checksum::Defer) {
                let mut found = vec![false; probes.len()];
                view.contains_hashes(&probes, &mut found);
                match Filter::<B>::verify_checksum(&view) {
                    Err(err) if err.kind() == ErrorKind::ChecksumMismatch => {}
                    other => fail(
                        name,
                        "a deferred checksum finds the damage",
                        format!("flip at {at} gave {other:?}"),
                    ),
                }
            }
        }
        for len in 0..bytes.len() {
            match Filter::<B>::view(&bytes[..len], Checksum::Defer) {
                Err(err) if err.kind() == ErrorKind::Truncated => {}
                other => fail(
                    name,
                    "truncated views are refused",
                    format!("{len} bytes gave {other:?}"),
                ),
            }
        }
    }

    /// `read_from_expecting` with the variant's configuration refuses this
    /// builder's filter.
    ///
    /// # Panics
    ///
    /// When it does not, or the two builders' configurations are equal.
    pub fn check_config_drift(&self) {
        let Some(variant) = &self.variant else { return };
        let name = self.name;
        let build = |builder: &B| {
            builder
                .build_from_keys(0..100u64)
                .unwrap_or_else(|err| fail(name, "building 100 keys", err))
                .filter
        };
        let (filter, other) = (build(&self.builder), build(variant));
        assert_ne!(
            filter.config(),
            other.config(),
            "{name}: the variant must differ in configuration"
        );
        match Filter::<B>::read_from_expecting(&filter.to_bytes()[..], &other.config()) {
            Err(err) if err.kind() == ErrorKind::ConfigMismatch => {}
            other => fail(
                name,
                "configuration drift is an error",
                format!("gave {other:?}"),
            ),
        }
    }
}
