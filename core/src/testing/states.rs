//! The persistence rule, as a property over random sequences of operations:
//! every state a filter reaches through its public API, or that its reader
//! accepts, writes bytes the reader accepts and that read back equal.
//!
//! A reader that checks an invariant the operations do not keep (a counter
//! bound that a removal after an intersection breaks, say) refuses files its
//! own writer made; one that accepts states the operations then break does
//! the same one step later. Single-operation round trips miss both, so the
//! sequences here mix every operation the filter offers, on two filters of
//! one configuration (so that merges meet), with edits of the item counter
//! of a written file that continue from whatever the reader accepts.

use std::collections::BTreeMap;
use std::fmt::Debug;

use proptest::prelude::*;
use proptest::strategy::{BoxedStrategy, Union};
use proptest::test_runner::{TestCaseError, TestRunner};

use crate::format::Persist;
use crate::keys::{insert_key, query_key};
use crate::testing::checks::reseal;
use crate::{Error, ErrorKind, Filter};

/// Where the item counter sits in every file (see [`crate::format`]).
const ITEMS_AT: usize = 24;
/// Keys of the small pool `Insert` draws from, so that keys repeat.
const POOL: u64 = 32;
/// Operations in one sequence, at most.
const MAX_OPS: usize = 24;

/// `RemovableFilter::remove_hash`.
pub(super) type RemoveFn<F> = fn(&mut F, u64) -> Result<bool, Error>;
/// `Merge::union` or `Merge::intersect`.
pub(super) type MergeFn<F> = fn(&mut F, &F) -> Result<(), Error>;

/// The operations a filter offers beyond [`Filter`] and [`Persist`].
pub(super) struct Capabilities<F> {
    pub(super) remove: Option<RemoveFn<F>>,
    /// Union, then intersect.
    pub(super) merge: Option<[MergeFn<F>; 2]>,
}

impl<F> Default for Capabilities<F> {
    fn default() -> Self {
        Self {
            remove: None,
            merge: None,
        }
    }
}

/// A change of the item counter in a written file.
#[derive(Clone, Copy, Debug)]
enum Count {
    Zero,
    Less,
    More,
    Double,
    Max,
}

/// One step of a sequence, on filter `a` or `b` (`second`).
#[derive(Clone, Debug)]
enum Op {
    /// `copies` inserts of one key of a small pool (repeats, saturation).
    Insert {
        second: bool,
        key: u64,
        copies: u8,
    },
    /// Inserts `count` fresh keys of stream `stream` (fills, growth).
    Fill {
        second: bool,
        stream: u64,
        count: usize,
    },
    /// Removes the `pick`-th key held (`held`), or a never-inserted key,
    /// if one of a few hundred is a false positive.
    Remove {
        second: bool,
        pick: usize,
        held: bool,
    },
    /// `union` (or with `intersect`, the intersection) into `a` or `b`.
    Merge {
        into_second: bool,
        intersect: bool,
    },
    Clear {
        second: bool,
    },
    /// One filter becomes a copy of the other, so merges meet common keys.
    Copy {
        to_second: bool,
    },
    /// The filter becomes what its own bytes read back as.
    RoundTrip {
        second: bool,
    },
    /// The item counter of the filter's file is changed; if the reader
    /// accepts the file, the filter continues as the file says.
    EditCount {
        second: bool,
        count: Count,
    },
}

impl Op {
    /// Whether the step changes the second filter (else the first).
    fn changes_second(&self) -> bool {
        match *self {
            Self::Insert { second, .. }
            | Self::Fill { second, .. }
            | Self::Remove { second, .. }
            | Self::Clear { second }
            | Self::RoundTrip { second }
            | Self::EditCount { second, .. } => second,
            Self::Merge { into_second, .. } => into_second,
            Self::Copy { to_second } => to_second,
        }
    }
}

fn ops<F>(capabilities: &Capabilities<F>, max_fill: usize) -> BoxedStrategy<Vec<Op>> {
    let second = any::<bool>;
    let mut choices: Vec<(u32, BoxedStrategy<Op>)> = vec![
        (
            6,
            (second(), 0..POOL, 1..=20u8)
                .prop_map(|(second, key, copies)| Op::Insert {
                    second,
                    key,
                    copies,
                })
                .boxed(),
        ),
        (
            3,
            (second(), any::<u64>(), 0..=max_fill)
                .prop_map(|(second, stream, count)| Op::Fill {
                    second,
                    stream,
                    count,
                })
                .boxed(),
        ),
        (1, second().prop_map(|second| Op::Clear { second }).boxed()),
        (
            1,
            second()
                .prop_map(|to_second| Op::Copy { to_second })
                .boxed(),
        ),
        (
            2,
            second().prop_map(|second| Op::RoundTrip { second }).boxed(),
        ),
        (
            2,
            (
                second(),
                prop_oneof![
                    Just(Count::Zero),
                    Just(Count::Less),
                    Just(Count::More),
                    Just(Count::Double),
                    Just(Count::Max)
                ],
            )
                .prop_map(|(second, count)| Op::EditCount { second, count })
                .boxed(),
        ),
    ];
    if capabilities.remove.is_some() {
        let remove = (second(), any::<usize>(), prop::bool::weighted(0.8))
            .prop_map(|(second, pick, held)| Op::Remove { second, pick, held });
        choices.push((8, remove.boxed()));
    }
    if capabilities.merge.is_some() {
        let merge = (second(), any::<bool>()).prop_map(|(into_second, intersect)| Op::Merge {
            into_second,
            intersect,
        });
        choices.push((3, merge.boxed()));
    }
    prop::collection::vec(Union::new_weighted(choices), 1..=MAX_OPS).boxed()
}

/// A filter and what a caller knows it holds.
#[derive(Clone)]
struct Tracked<F> {
    filter: F,
    /// Copies of each key held (at most one for a set-like filter).
    held: BTreeMap<u64, usize>,
    /// False once a never-inserted key was removed: the documented hazard
    /// that may take an inserted key's trace, so absences are no longer
    /// false negatives.
    trusted: bool,
}

/// What a sequence runs with.
pub(super) struct Run<'a, F> {
    pub(super) make: &'a dyn Fn() -> F,
    pub(super) capabilities: &'a Capabilities<F>,
    pub(super) multiset: bool,
    /// The most keys one `Fill` inserts.
    pub(super) max_fill: usize,
}

impl<F> Run<'_, F>
where
    F: Filter + Persist + Clone + PartialEq + Debug,
{
    /// Runs the property; the first failure, as proptest reports it.
    pub(super) fn check(&self, mut runner: TestRunner) -> Result<(), String> {
        runner
            .run(&ops(self.capabilities, self.max_fill), |ops| {
                self.sequence(&ops)
            })
            .map_err(|err| err.to_string())
    }

    fn sequence(&self, ops: &[Op]) -> Result<(), TestCaseError> {
        let fresh = || Tracked {
            filter: (self.make)(),
            held: BTreeMap::new(),
            trusted: true,
        };
        let mut pair = [fresh(), fresh()];
        for (step, op) in ops.iter().enumerate() {
            let side = &pair[usize::from(self.apply(&mut pair, op)?)];
            check_persists(&side.filter)
                .map_err(|err| fail_at(step, op, &format!("bytes: {err}")))?;
            if let Some(key) = missing(side) {
                return Err(fail_at(step, op, &format!("false negative for key {key}")));
            }
        }
        Ok(())
    }

    /// Applies `op`; whether it changed the second filter (else the first).
    fn apply(&self, pair: &mut [Tracked<F>; 2], op: &Op) -> Result<bool, TestCaseError> {
        let [a, b] = pair;
        match *op {
            Op::Insert {
                second,
                key,
                copies,
            } => {
                let side = if second { &mut *b } else { &mut *a };
                for _ in 0..copies {
                    self.insert(side, key)?;
                }
            }
            Op::Fill {
                second,
                stream,
                count,
            } => {
                let side = if second { &mut *b } else { &mut *a };
                for i in 0..count as u64 {
                    self.insert(side, insert_key(stream, i))?;
                }
            }
            Op::Remove {
                second,
                pick: at,
                held,
            } => {
                let remove = self
                    .capabilities
                    .remove
                    .expect("offered only where removable");
                let side = if second { &mut *b } else { &mut *a };
                let held_keys: Vec<u64> = side.held.keys().copied().collect();
                let hasher = *side.filter.hasher();
                let key = if held && !held_keys.is_empty() {
                    held_keys[at % held_keys.len()]
                } else {
                    // A false positive where one of a few hundred is.
                    let never = |i| query_key(u64::MAX, at as u64 % 1024 + i);
                    (0..256)
                        .map(never)
                        .find(|key| side.filter.contains_hash(hasher.hash(key)))
                        .unwrap_or_else(|| never(0))
                };
                let hash = hasher.hash(&key);
                if remove(&mut side.filter, hash).is_ok_and(|removed| removed) {
                    match side.held.get_mut(&key) {
                        Some(copies) => {
                            *copies -= 1;
                            if *copies == 0 {
                                side.held.remove(&key);
                            }
                        }
                        None => side.trusted = false,
                    }
                }
            }
            Op::Merge {
                into_second,
                intersect,
            } => {
                let [union, intersection] = self.capabilities.merge.expect("offered where merging");
                let (into, from) = if into_second { (b, a) } else { (a, b) };
                let merge = if intersect { intersection } else { union };
                merge(&mut into.filter, &from.filter)
                    .map_err(|err| TestCaseError::fail(format!("{op:?}: {err}")))?;
                into.held = combine(&into.held, &from.held, intersect, self.multiset);
                into.trusted &= from.trusted;
            }
            Op::Clear { second } => {
                let side = if second { &mut *b } else { &mut *a };
                side.filter.clear();
                side.held.clear();
                side.trusted = true;
            }
            Op::Copy { to_second } => {
                if to_second {
                    b.clone_from(a);
                } else {
                    a.clone_from(b);
                }
            }
            Op::RoundTrip { second } => {
                let side = if second { &mut *b } else { &mut *a };
                side.filter = F::from_bytes(&side.filter.to_bytes())
                    .map_err(|err| TestCaseError::fail(err.to_string()))?;
            }
            Op::EditCount { second, count } => {
                let side = if second { &mut *b } else { &mut *a };
                if let Some(read) = edit_count(&side.filter, count)? {
                    side.filter = read;
                }
            }
        }
        Ok(op.changes_second())
    }

    /// Inserts `key` into `side`: a refusal must be `Full`.
    fn insert(&self, side: &mut Tracked<F>, key: u64) -> Result<(), TestCaseError> {
        let hash = side.filter.hasher().hash(&key);
        match side.filter.insert_hash(hash) {
            Ok(_) => {
                let copies = side.held.entry(key).or_default();
                *copies = if self.multiset { *copies + 1 } else { 1 };
            }
            Err(err) => prop_assert_eq!(err.kind(), ErrorKind::Full, "insert: {}", err),
        }
        Ok(())
    }
}

/// The keys held after a union (the multiset sum, or the set union) or an
/// intersection (the smaller count).
fn combine(
    mine: &BTreeMap<u64, usize>,
    theirs: &BTreeMap<u64, usize>,
    intersect: bool,
    multiset: bool,
) -> BTreeMap<u64, usize> {
    let keys = mine.keys().chain(theirs.keys());
    keys.filter_map(|&key| {
        let (x, y) = (mine.get(&key).copied(), theirs.get(&key).copied());
        let copies = match (intersect, multiset) {
            (true, _) => x?.min(y?),
            (false, true) => x.unwrap_or(0) + y.unwrap_or(0),
            (false, false) => 1,
        };
        Some((key, copies))
    })
    .collect()
}

/// A held key the filter reports absent, while that is a false negative.
fn missing<F: Filter>(side: &Tracked<F>) -> Option<u64> {
    let hasher = *side.filter.hasher();
    side.trusted
        .then(|| side.held.keys().copied())?
        .find(|key| !side.filter.contains_hash(hasher.hash(key)))
}

/// The rule itself: the filter's bytes read back as an equal filter, which
/// writes the same bytes.
fn check_persists<F: Persist + PartialEq + Debug>(filter: &F) -> Result<(), String> {
    let bytes = filter.to_bytes();
    let read = F::from_bytes(&bytes)
        .map_err(|err| format!("the reader refuses what {filter:?} wrote: {err}"))?;
    if read != *filter {
        return Err(format!("{filter:?} reads back as {read:?}"));
    }
    if read.to_bytes() != bytes {
        return Err(format!("{filter:?} read back writes other bytes"));
    }
    Ok(())
}

/// `filter`'s file with its item counter changed as `count` says, read
/// back: `None` when the reader refuses it (with a typed error). A file
/// the reader accepts must write back its own bytes.
fn edit_count<F: Filter + Persist + Debug>(
    filter: &F,
    count: Count,
) -> Result<Option<F>, TestCaseError> {
    let mut bytes = filter.to_bytes();
    let len = u64::from_le_bytes(bytes[ITEMS_AT..ITEMS_AT + 8].try_into().expect("8 bytes"));
    let edited = match count {
        Count::Zero => 0,
        Count::Less => len.saturating_sub(1),
        Count::More => len.saturating_add(1),
        Count::Double => len.saturating_mul(2).saturating_add(1),
        Count::Max => u64::MAX,
    };
    bytes[ITEMS_AT..ITEMS_AT + 8].copy_from_slice(&edited.to_le_bytes());
    reseal(&mut bytes);
    match F::from_bytes(&bytes) {
        Ok(read) => {
            prop_assert!(
                read.to_bytes() == bytes,
                "a file with {} items read as {:?} writes other bytes",
                edited,
                read
            );
            Ok(Some(read))
        }
        // Any typed error: the reader checks the counter against the rest.
        Err(_) => Ok(None),
    }
}

fn fail_at(step: usize, op: &Op, what: &str) -> TestCaseError {
    TestCaseError::fail(format!("after step {step} ({op:?}): {what}"))
}
