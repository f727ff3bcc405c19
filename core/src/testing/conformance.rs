//! The conformance suite: the contract every filter keeps, as proptest
//! properties against a `HashSet` oracle.

use std::collections::{HashMap, HashSet};
use std::fmt::Debug;
use std::rc::Rc;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

use crate::format::{FilterKind, MAX_PARAMS, Persist};
use crate::testing::checks::reseal_header;
use crate::testing::states::{Capabilities, Run};
use crate::{ErrorKind, Filter, Merge, RemovableFilter};

/// The conformance suite for one filter type.
///
/// `make` builds a small, empty filter (a capacity of a few hundred to a few
/// thousand keys keeps the suite fast); every call must return an equal filter.
pub struct Conformance<F, M> {
    name: &'static str,
    make: M,
    variant: Option<Box<dyn Fn() -> F>>,
    cases: u32,
    multiset: bool,
    capabilities: Capabilities<F>,
}

impl<F> Conformance<F, Box<dyn Fn() -> F>>
where
    F: Filter + Persist + Clone + PartialEq + Debug + 'static,
{
    /// A suite for `make(config)`, with `make(variant)` as its
    /// [variant](Self::with_variant): the usual case, where one parameter
    /// (a seed, a size, an FPP) tells the two configurations apart, in one
    /// call, so that a test can run the suite over a table of them (see the
    /// [module example](crate::testing)).
    pub fn varying<P>(
        name: &'static str,
        make: impl Fn(P) -> F + 'static,
        config: P,
        variant: P,
    ) -> Self
    where
        P: Clone + 'static,
    {
        let make = Rc::new(make);
        let make_variant = Rc::clone(&make);
        Self::new(name, Box::new(move || make(config.clone())))
            .with_variant(move || make_variant(variant.clone()))
    }
}

/// Keys a case inserts: random, or drawn from a small range to force duplicates.
pub(crate) fn key_sets(max: usize) -> impl Strategy<Value = Vec<u64>> {
    prop_oneof![vec(any::<u64>(), 0..=max), vec(0..64u64, 0..=max.min(256))]
}

pub(crate) fn fail(name: &str, property: &str, err: impl std::fmt::Display) -> ! {
    panic!("{name}: conformance property `{property}` failed: {err}")
}

impl<F, M> Conformance<F, M>
where
    F: Filter + Persist + Clone + PartialEq + Debug,
    M: Fn() -> F,
{
    /// A suite for the filters `make` builds, reported under `name`.
    pub fn new(name: &'static str, make: M) -> Self {
        Self {
            name,
            make,
            variant: None,
            cases: Config::default().cases.max(32),
            multiset: false,
            capabilities: Capabilities::default(),
        }
    }

    /// The filter is a multiset (counting Bloom, cuckoo): inserting a key
    /// again adds a copy (still answering `Ok(false)`, as it was present),
    /// and `len` counts every accepted insert minus every removal, as
    /// [`Membership::len`](crate::Membership::len) documents.
    #[must_use]
    pub fn multiset(mut self) -> Self {
        self.multiset = true;
        self
    }

    /// A differently configured filter (other size, hash count or seed): it
    /// must be rejected by `read_from_expecting` and by merges.
    #[must_use]
    pub fn with_variant(mut self, variant: impl Fn() -> F + 'static) -> Self {
        self.variant = Some(Box::new(variant));
        self
    }

    /// The filter removes keys: [`check_states`](Self::check_states) then
    /// mixes removals into its sequences.
    #[must_use]
    pub fn removable(mut self) -> Self
    where
        F: RemovableFilter,
    {
        self.capabilities.remove = Some(F::remove_hash);
        self
    }

    /// The filter merges: [`check_states`](Self::check_states) then mixes
    /// unions and intersections into its sequences.
    #[must_use]
    pub fn mergeable(mut self) -> Self
    where
        F: Merge,
    {
        self.capabilities.merge = Some([F::union, F::intersect]);
        self
    }

    /// Proptest cases per property (default: proptest's, at least 32).
    #[must_use]
    pub fn cases(mut self, cases: u32) -> Self {
        self.cases = cases;
        self
    }

    fn runner(&self) -> TestRunner {
        TestRunner::new(Config {
            cases: self.cases,
            failure_persistence: None,
            ..Config::default()
        })
    }

    fn max_keys(&self) -> usize {
        (self.make)().capacity().unwrap_or(2000).clamp(16, 4000)
    }

    /// Inserts `keys`; returns the filter and the keys it holds. Checks the
    /// return values against the oracle and that a refused key leaves the
    /// filter unchanged.
    fn fill(&self, keys: &[u64]) -> Result<(F, HashSet<u64>), TestCaseError> {
        let mut filter = (self.make)();
        let hasher = *filter.hasher();
        let mut oracle = HashSet::new();
        let mut new_inserts = 0usize;
        let mut accepted = 0usize;
        for &key in keys {
            let before = filter.clone();
            match filter.insert_hash(hasher.hash(&key)) {
                Ok(new) => {
                    prop_assert!(
                        !(new && oracle.contains(&key)),
                        "re-inserting {key} was reported new"
                    );
                    new_inserts += usize::from(new);
                    accepted += 1;
                    oracle.insert(key);
                }
                Err(err) => {
                    prop_assert_eq!(err.kind(), ErrorKind::Full, "insert error: {}", err);
                    prop_assert_eq!(&filter, &before, "a refused insert changed the filter");
                }
            }
        }
        if self.multiset {
            prop_assert_eq!(filter.len(), accepted, "len is not the count of inserts");
        } else {
            prop_assert_eq!(
                filter.len(),
                new_inserts,
                "len is not the count of new inserts"
            );
            prop_assert!(filter.len() <= oracle.len(), "len exceeds distinct keys");
        }
        prop_assert_eq!(filter.is_empty(), filter.len() == 0);
        Ok((filter, oracle))
    }

    fn assert_holds(filter: &F, keys: &HashSet<u64>, when: &str) -> Result<(), TestCaseError> {
        let hasher = *filter.hasher();
        for &key in keys {
            prop_assert!(filter.contains(&key), "false negative for {key} {when}");
            prop_assert!(filter.contains_hash(hasher.hash(&key)));
        }
        let listed: Vec<u64> = keys.iter().copied().collect();
        prop_assert!(
            filter.contains_many(&listed).iter().all(|&hit| hit),
            "contains_many gave a false negative {}",
            when
        );
        Ok(())
    }

    /// The core contract: no false negatives, `len` semantics, batches agree
    /// with single operations, `clear`, serialization round trips, and typed
    /// errors for every corruption of a small file.
    pub fn check(&self) {
        let name = self.name;
        let max = self.max_keys();
        self.runner()
            .run(&key_sets(max), |keys| {
                let (mut filter, oracle) = self.fill(&keys)?;
                Self::assert_holds(&filter, &oracle, "after inserts")?;

                // Re-inserting is never new; it leaves len alone, or for a
                // multiset adds a copy (unless refused as full, unchanged).
                let len = filter.len();
                let hasher = *filter.hasher();
                let mut copies = 0;
                for &key in &oracle {
                    let before = self.multiset.then(|| filter.clone());
                    match filter.insert_hash(hasher.hash(&key)) {
                        Ok(new) => {
                            prop_assert!(!new, "re-inserting {} was reported new", key);
                            copies += 1;
                        }
                        Err(err) => {
                            prop_assert!(self.multiset, "re-inserting {} failed: {}", key, err);
                            prop_assert_eq!(err.kind(), ErrorKind::Full);
                            prop_assert_eq!(Some(&filter), before.as_ref());
                        }
                    }
                }
                let expected_len = if self.multiset { len + copies } else { len };
                prop_assert_eq!(filter.len(), expected_len);

                // A batched insert is the single inserts in order, stopping at
                // the first refusal: the same count, and the same filter. A
                // refusal must be `Full` and leave the keys before it inserted
                // and the filter otherwise unchanged.
                let hashes: Vec<u64> = keys.iter().map(|k| hasher.hash(k)).collect();
                let mut one_by_one = (self.make)();
                let mut new_one_by_one = 0;
                let mut refused_at = None;
                for (position, &hash) in hashes.iter().enumerate() {
                    if let Ok(new) = one_by_one.insert_hash(hash) {
                        new_one_by_one += usize::from(new);
                    } else {
                        refused_at = Some(position);
                        break;
                    }
                }
                let mut batched = (self.make)();
                match (batched.insert_hashes(&hashes), refused_at) {
                    (Ok(new), None) => {
                        prop_assert_eq!(new, new_one_by_one);
                        // A multiset counts every accepted insert, duplicates included.
                        let accepted = if self.multiset { hashes.len() } else { new };
                        prop_assert_eq!(batched.len(), accepted);
                        Self::assert_holds(&batched, &oracle, "after insert_hashes")?;
                    }
                    (Err(err), Some(_)) => {
                        prop_assert_eq!(err.kind(), ErrorKind::Full, "batch error: {}", err);
                    }
                    (result, refused_at) => {
                        return Err(TestCaseError::fail(format!(
                            "insert_hashes gave {result:?}, single inserts were refused at {refused_at:?}"
                        )));
                    }
                }
                prop_assert_eq!(
                    &batched,
                    &one_by_one,
                    "insert_hashes left another filter than single inserts"
                );

                // Serialization round trip: equal filter, identical bytes.
                let bytes = filter.to_bytes();
                let decoded =
                    F::from_bytes(&bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(&decoded, &filter);
                prop_assert_eq!(decoded.to_bytes(), bytes.clone());
                let streamed =
                    F::read_from(&bytes[..]).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(&streamed, &filter);
                let expected = F::read_from_expecting(&bytes[..], &filter.config())
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                Self::assert_holds(&expected, &oracle, "after a round trip")?;
                check_payload_round_trip(&filter, &bytes)?;

                // Clear gives back a fresh filter that works again.
                filter.clear();
                prop_assert!(filter.is_empty());
                prop_assert_eq!(
                    &filter,
                    &(self.make)(),
                    "clear did not restore a fresh filter"
                );
                let (refilled, oracle) = self.fill(&keys)?;
                Self::assert_holds(&refilled, &oracle, "after clear")?;

                let fpp = refilled.expected_fpp();
                prop_assert!(
                    (0.0..=1.0).contains(&fpp),
                    "expected_fpp {} out of [0, 1]",
                    fpp
                );
                prop_assert!(refilled.memory_usage() > 0);
                Ok(())
            })
            .unwrap_or_else(|err| fail(name, "filter contract", err));
        self.check_bad_bytes();
        self.check_config_drift();
    }

    /// Every way a small file can be damaged must give a typed error.
    fn check_bad_bytes(&self) {
        let mut filter = (self.make)();
        let hasher = *filter.hasher();
        for key in 0..20u64 {
            let _ = filter.insert_hash(hasher.hash(&key));
        }
        check_damaged_files::<F>(self.name, &filter.to_bytes());
    }

    fn check_config_drift(&self) {
        let Some(variant) = &self.variant else { return };
        let other = variant();
        let filter = (self.make)();
        assert_ne!(
            filter.config(),
            other.config(),
            "{}: the variant must differ in configuration",
            self.name
        );
        match F::read_from_expecting(&filter.to_bytes()[..], &other.config()) {
            Err(err) if err.kind() == ErrorKind::ConfigMismatch => {}
            other => fail(
                self.name,
                "configuration drift is an error",
                format!("gave {other:?}"),
            ),
        }
    }

    /// The persistence rule: every state the filter reaches through its
    /// public API, or that its reader accepts, writes bytes the reader
    /// accepts and that read back equal (and write the same bytes).
    ///
    /// Random sequences on two filters of this configuration: inserts
    /// (repeated keys, up to 20 copies, and fills of fresh keys), removals
    /// of held and of never-inserted keys (with [`removable`](Self::removable)),
    /// unions and intersections either way (with [`mergeable`](Self::mergeable)),
    /// `clear`, copies, round trips, and files whose item counter was
    /// changed, continued from wherever the reader accepts them. After every
    /// step the filter it changed must round-trip, and hold every key a
    /// caller knows is there (unless a never-inserted key was removed).
    pub fn check_states(&self) {
        let run = Run {
            make: &self.make,
            capabilities: &self.capabilities,
            multiset: self.multiset,
            // Enough to fill a small filter, or to cross several layers
            // of a growing one, in a few steps.
            max_fill: self.max_keys().min(256),
        };
        run.check(self.runner())
            .unwrap_or_else(|err| fail(self.name, "reachable states persist", err));
    }

    /// The core contract plus removal: removing only inserted keys (as a
    /// multiset) never causes a false negative for the keys still held.
    pub fn check_removable(&self)
    where
        F: RemovableFilter,
    {
        let name = self.name;
        let max = self.max_keys();
        let strategy = (key_sets(max), vec(any::<bool>(), 0..=max));
        self.runner()
            .run(&strategy, |(keys, removals)| {
                let mut filter = (self.make)();
                let hasher = *filter.hasher();
                let mut held: HashMap<u64, usize> = HashMap::new();
                // A multiset holds a copy per accepted insert; a set-like
                // filter holds a key once, however often it was inserted.
                for &key in &keys {
                    if let Ok(new) = filter.insert_hash(hasher.hash(&key))
                        && (new || self.multiset)
                    {
                        *held.entry(key).or_default() += 1;
                    }
                }
                for (&key, &remove) in keys.iter().zip(&removals) {
                    let Some(count) = held.get_mut(&key) else {
                        continue;
                    };
                    if remove && *count > 0 {
                        let removed = filter
                            .remove_hash(hasher.hash(&key))
                            .map_err(|e| TestCaseError::fail(e.to_string()))?;
                        prop_assert!(removed, "removing inserted key {} reported absent", key);
                        *count -= 1;
                    }
                }
                let still: HashSet<u64> = held
                    .iter()
                    .filter(|&(_, &c)| c > 0)
                    .map(|(&k, _)| k)
                    .collect();
                Self::assert_holds(&filter, &still, "after removals")?;
                if self.multiset {
                    prop_assert_eq!(
                        filter.len(),
                        held.values().sum::<usize>(),
                        "len is not inserts minus removals"
                    );
                }
                let bytes = filter.to_bytes();
                let decoded =
                    F::from_bytes(&bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(&decoded, &filter);
                Ok(())
            })
            .unwrap_or_else(|err| fail(name, "removal", err));
    }

    /// The core contract plus merges: a union holds both key sets, an
    /// intersection holds the common keys, both survive a round trip, and a
    /// differently configured filter is refused without changing `self`.
    pub fn check_mergeable(&self)
    where
        F: Merge,
    {
        let name = self.name;
        let max = self.max_keys() / 2;
        let strategy = (key_sets(max), key_sets(max), vec(any::<u64>(), 0..=max));
        self.runner()
            .run(&strategy, |(only_a, only_b, shared)| {
                let a_keys: Vec<u64> = only_a.iter().chain(&shared).copied().collect();
                let b_keys: Vec<u64> = only_b.iter().chain(&shared).copied().collect();
                let (a, a_set) = self.fill(&a_keys)?;
                let (b, b_set) = self.fill(&b_keys)?;

                let mut union = a.clone();
                union
                    .union(&b)
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                let all: HashSet<u64> = a_set.union(&b_set).copied().collect();
                Self::assert_holds(&union, &all, "after union")?;
                prop_assert!(
                    union.len() >= a.len().max(b.len()) && union.len() <= a.len() + b.len()
                );
                let decoded = F::from_bytes(&union.to_bytes())
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(&decoded, &union);
                Self::assert_holds(&decoded, &all, "after union and round trip")?;

                let mut both = a.clone();
                both.intersect(&b)
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                let common: HashSet<u64> = a_set.intersection(&b_set).copied().collect();
                Self::assert_holds(&both, &common, "after intersect")?;
                prop_assert!(both.len() <= a.len().min(b.len()));
                let decoded = F::from_bytes(&both.to_bytes())
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(&decoded, &both);

                if let Some(variant) = &self.variant {
                    let other = variant();
                    let mut target = a.clone();
                    let err = target.union(&other).err().map(|e| e.kind());
                    prop_assert_eq!(err, Some(ErrorKind::Incompatible));
                    let err = target.intersect(&other).err().map(|e| e.kind());
                    prop_assert_eq!(err, Some(ErrorKind::Incompatible));
                    prop_assert_eq!(&target, &a, "a refused merge changed the filter");
                }
                Ok(())
            })
            .unwrap_or_else(|err| fail(name, "merge", err));
    }
}

/// Every way the file `bytes` (of a small filter of type `F`) can be
/// damaged must give a typed error from its reader: every bit flip (every
/// byte, one bit each, past 4096 bytes), every truncation, trailing bytes,
/// another kind, a crafted payload length and crafted parameters (each
/// resealed so that they reach the checks behind the header checksum).
///
/// # Panics
///
/// With the first damage the reader accepts or reports otherwise.
pub(crate) fn check_damaged_files<F: Persist + Debug>(name: &str, bytes: &[u8]) {
    let bytes = bytes.to_vec();
    // Flip every bit of a small file (every byte, one bit each, for larger ones).
    let bits: &[u8] = if bytes.len() <= 4096 {
        &[0, 1, 2, 3, 4, 5, 6, 7]
    } else {
        &[0]
    };
    for at in 0..bytes.len() {
        for &bit in bits {
            let mut corrupt = bytes.clone();
            corrupt[at] ^= 1 << bit;
            if let Ok(decoded) = F::from_bytes(&corrupt) {
                fail(
                    name,
                    "bit flips are detected",
                    format!("flip at byte {at} bit {bit} gave {decoded:?}"),
                );
            }
        }
    }
    for len in 0..bytes.len() {
        match F::from_bytes(&bytes[..len]) {
            Err(err) if err.kind() == ErrorKind::Truncated => {}
            other => fail(
                name,
                "truncation is detected",
                format!("{len} bytes gave {other:?}"),
            ),
        }
    }
    let mut longer = bytes.clone();
    longer.push(0);
    expect_kind::<F>(name, &longer, ErrorKind::LengthMismatch, "trailing bytes");

    // A file of another kind.
    let other_kind = if F::KIND == FilterKind::Bloom {
        FilterKind::Cuckoo
    } else {
        FilterKind::Bloom
    };
    let mut wrong = bytes.clone();
    wrong[10..12].copy_from_slice(&other_kind.id().to_le_bytes());
    reseal_header(&mut wrong);
    expect_kind::<F>(name, &wrong, ErrorKind::WrongKind, "wrong kind");

    // A crafted payload length with a valid header checksum: refused by
    // the limit, and by the parameters when the limit is lifted, before
    // any allocation.
    let mut crafted = bytes.clone();
    crafted[32..40].copy_from_slice(&(1u64 << 50).to_le_bytes());
    reseal_header(&mut crafted);
    expect_kind::<F>(
        name,
        &crafted,
        ErrorKind::PayloadTooLarge,
        "crafted payload length",
    );
    match F::read_from_with_limit(&crafted[..], u64::MAX) {
        Err(err) if err.kind() == ErrorKind::LengthMismatch => {}
        other => fail(
            name,
            "crafted payload length",
            format!("without a limit gave {other:?}"),
        ),
    }

    // Crafted parameters: each set to absurd values in turn.
    let params = usize::from(u16::from_le_bytes([bytes[14], bytes[15]]));
    assert!(params <= MAX_PARAMS);
    for index in 0..params {
        for value in [0, u64::MAX, 1 << 62] {
            let mut crafted = bytes.clone();
            let at = 40 + 8 * index;
            crafted[at..at + 8].copy_from_slice(&value.to_le_bytes());
            reseal_header(&mut crafted);
            if crafted != bytes
                && let Ok(decoded) = F::read_from_with_limit(&crafted[..], u64::MAX)
            {
                fail(
                    name,
                    "crafted parameters",
                    format!("param {index} = {value} gave {decoded:?}"),
                );
            }
        }
    }
}

fn expect_kind<F: Persist + Debug>(name: &str, bytes: &[u8], kind: ErrorKind, what: &str) {
    match F::from_bytes(bytes) {
        Err(err) if err.kind() == kind => {}
        other => fail(name, what, format!("expected {kind:?}, got {other:?}")),
    }
}

/// The payload alone round-trips: [`Persist::write_payload_to`] writes the
/// bytes of `bytes` (the filter's file) between header and checksum, and
/// [`Persist::read_payload_from`] reads them back, with the header, into
/// an equal filter.
pub(crate) fn check_payload_round_trip<F>(filter: &F, bytes: &[u8]) -> Result<(), TestCaseError>
where
    F: Persist + PartialEq + Debug,
{
    let mut payload = Vec::new();
    filter
        .write_payload_to(&mut payload)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let header_len = bytes.len() - payload.len() - 8;
    prop_assert_eq!(&payload[..], &bytes[header_len..bytes.len() - 8]);
    let from_payload = F::read_payload_from(filter.header(), &payload[..])
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&from_payload, filter);
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use crate::format::{FilterKind, FrameReader, FrameWriter, Header};
    use crate::testing::Conformance;
    use crate::{Error, ErrorKind, Filter, KeyHasher, Membership, Persist};

    /// Answers yes to every key and counts its inserts, but its reader
    /// refuses a count above three: a reader stricter than its writer.
    #[derive(Clone, Debug, PartialEq)]
    struct Strict {
        len: u64,
        hasher: KeyHasher,
    }

    impl Membership for Strict {
        fn hasher(&self) -> &KeyHasher {
            &self.hasher
        }
        fn contains_hash(&self, _: u64) -> bool {
            true
        }
        fn len(&self) -> usize {
            self.len as usize
        }
        fn memory_usage(&self) -> usize {
            8
        }
        fn capacity(&self) -> Option<usize> {
            Some(16)
        }
        fn expected_fpp(&self) -> f64 {
            1.0
        }
        fn theoretical_fpp(&self, _: u64) -> Option<f64> {
            Some(1.0)
        }
    }

    impl Filter for Strict {
        fn insert_hash(&mut self, _: u64) -> Result<bool, Error> {
            self.len += 1;
            Ok(false)
        }
        fn clear(&mut self) {
            self.len = 0;
        }
    }

    impl Persist for Strict {
        type Config = KeyHasher;
        const KIND: FilterKind = FilterKind::Bloom;
        fn config(&self) -> KeyHasher {
            self.hasher
        }
        fn header(&self) -> Header {
            let (kind, hasher, items) = (Self::KIND, self.hasher, self.len);
            let (params, payload_len) = (vec![], 0);
            Header {
                kind,
                hasher,
                items,
                params,
                payload_len,
            }
        }
        fn write_payload<W: Write>(&self, _: &mut FrameWriter<W>) -> Result<(), Error> {
            Ok(())
        }
        fn config_from_header(header: &Header) -> Result<KeyHasher, Error> {
            header.expect_params(0)?;
            header.expect_payload_len(0)?;
            Ok(header.hasher)
        }
        fn read_payload<R: Read>(
            hasher: KeyHasher,
            header: &Header,
            _: &mut FrameReader<R>,
        ) -> Result<Self, Error> {
            if header.items > 3 {
                return Err(Error::new(ErrorKind::InvalidHeader, "more than three"));
            }
            Ok(Self {
                len: header.items,
                hasher,
            })
        }
    }

    /// The property fails where the rule is broken.
    #[test]
    #[should_panic(expected = "reachable states persist")]
    fn a_reader_stricter_than_its_writer_is_found() {
        let make = || Strict {
            len: 0,
            hasher: KeyHasher::new(1),
        };
        Conformance::new("Strict", make).cases(16).check_states();
    }
}
