//! What a caller does with a filter it loaded or built, written once for
//! every filter: lookups one by one and batched, merges where the filter
//! has them, new keys inserted one by one, batched and through `Extend` or
//! `insert_many` (`len` counting them as documented, never overflowing),
//! removals of inserted keys where the filter deletes (the other keys stay
//! present), `clear`, and the FPPs; after each, the filter writes bytes its
//! reader accepts and that read back equal ([`persists`]), so a fuzzed file
//! the reader accepted is held to that rule in every state it leads to.
//! What only one filter has (conversions,
//! growth past capacity, chunked dumps, kernels) is its
//! [`Exercise::exercise_more`], in `filters.rs`.

use std::fmt::Debug;
use std::time::{Duration, Instant};

use filterlab_core::{Error, ErrorKind, Filter, Merge, Persist, RemovableFilter};

/// The longest one call may take.
pub const CALL_LIMIT: Duration = Duration::from_secs(1);

/// Runs `call`, panicking (a fuzz finding) when it takes longer than
/// [`CALL_LIMIT`]. Under libFuzzer `-timeout=1` also catches calls that never
/// return; this names the call when replaying a slow input.
pub fn timed<T>(what: &str, input: &dyn Debug, call: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let value = call();
    let took = start.elapsed();
    assert!(took <= CALL_LIMIT, "{what} took {took:?} for {input:?}");
    value
}

/// Memory that inserting a few keys may allocate (a new sub-table or
/// layer) above which the inserts are skipped: a crafted file may ask its
/// next layer to be terabytes, which is the caller's choice, not a defect.
pub const GROW_LIMIT_BYTES: u64 = 16 << 20;

/// The most steps ([`Exercise::insert_steps`]) the inserts of one unit may
/// take: a full cuckoo filter with a kick limit of 65,534, whose 27
/// refused inserts each walked it and back (3.5 million evictions), took
/// 0.85 s in the fuzz build on the 2-core VM and timed out under load.
pub const INSERT_STEP_LIMIT: u64 = 1 << 20;

/// Keys inserted by [`exercise`] in each of its three ways.
const KEYS: usize = 8;

/// `Merge::union` or `Merge::intersect`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MergeOp {
    /// `Merge::union`.
    Union,
    /// `Merge::intersect`.
    Intersect,
}

/// What the generic checks need of a filter type, beside the traits every
/// filter implements. The optional capabilities (merging, removing) answer
/// `None` where the filter does not have them.
pub trait Exercise: Filter + Persist + Clone + PartialEq + Debug {
    /// Whether `len` counts every accepted insert, copies included (a
    /// multiset: counting Bloom, cuckoo), rather than only the inserts that
    /// report a new key (the Bloom filters, the scalable filter).
    const MULTISET: bool = false;

    /// `Merge::union`/`intersect` with `other`, where the filter implements
    /// them ([`merge_with`] for a `Merge` type).
    fn merge(&mut self, other: &Self, op: MergeOp) -> Option<Result<(), Error>> {
        let _ = (other, op);
        None
    }

    /// `RemovableFilter::remove_hash`, where the filter deletes
    /// ([`remove_with`] for a `RemovableFilter` type).
    fn try_remove(&mut self, hash: u64) -> Option<Result<bool, Error>> {
        let _ = hash;
        None
    }

    /// Inserts `keys` through the filter's own bulk insert (`Extend` or
    /// `insert_many`); how many were new, where that API says.
    ///
    /// # Errors
    ///
    /// As the filter's bulk insert.
    fn insert_keys(&mut self, keys: &[u64]) -> Result<Option<usize>, Error>;

    /// Whether `read`, a file this type decoded, is in the layout it
    /// writes: one of an older layout that it still reads (the cuckoo
    /// filter's layout 1) writes back in the current one.
    fn current_layout(read: &[u8]) -> bool {
        let _ = read;
        true
    }

    /// The most steps `inserts` more inserts may take beyond a lookup each
    /// (the cuckoo filter's evictions: a refused insert walks its whole
    /// kick limit and back), 0 when they take none.
    fn insert_steps(&self, inserts: u64) -> u64 {
        let _ = inserts;
        0
    }

    /// Bytes a few more inserts may allocate beyond the filter's own (its
    /// next sub-table or layer), 0 when it does not grow.
    fn growth_bytes(&self, inserts: u64) -> u64 {
        let _ = inserts;
        0
    }

    /// The calls only this type has, on a filter that passed the generic
    /// checks; `keys` are the lookup keys [`exercise`] used.
    fn exercise_more(&self, keys: &[u64]);
}

/// [`Exercise::merge`] for a filter that implements `Merge`.
pub fn merge_with<F: Merge>(filter: &mut F, other: &F, op: MergeOp) -> Option<Result<(), Error>> {
    Some(match op {
        MergeOp::Union => filter.union(other),
        MergeOp::Intersect => filter.intersect(other),
    })
}

/// [`Exercise::try_remove`] for a filter that implements `RemovableFilter`.
pub fn remove_with<F: RemovableFilter>(filter: &mut F, hash: u64) -> Option<Result<bool, Error>> {
    Some(filter.remove_hash(hash))
}

/// Filters above this many bytes skip [`persists`]: whether writer and
/// reader agree does not depend on the size, and a dozen round trips of a
/// filter of up to 1 MiB would make a unit half again as slow (measured on
/// the `build_counting` corpus) and crowd the one-second limit.
pub const PERSIST_LIMIT_BYTES: usize = 64 << 10;

/// The persistence rule, on a state `after` reached: the filter writes
/// bytes its reader accepts, which read back equal and write the same
/// bytes (up to [`PERSIST_LIMIT_BYTES`]).
pub fn persists<F: Exercise>(filter: &F, after: &str) {
    if filter.memory_usage() > PERSIST_LIMIT_BYTES {
        return;
    }
    let bytes = filter.to_bytes();
    let back = F::from_bytes(&bytes)
        .unwrap_or_else(|err| panic!("after {after}: the reader refuses the bytes written: {err}"));
    assert!(
        &back == filter,
        "after {after}: the bytes read back unequal"
    );
    assert!(
        back.to_bytes() == bytes,
        "after {after}: read back, the filter writes other bytes"
    );
}

/// `KEYS` distinct keys that depend on `seed`, some of them probably present.
pub fn keys_from(seed: u64) -> Vec<u64> {
    let mut keys: Vec<u64> = (0..KEYS as u32)
        .map(|i| seed.rotate_left(i * 8) ^ u64::from(i))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// Every answer for `hashes`, one by one.
fn answers<F: Filter>(filter: &F, hashes: &[u64]) -> Vec<bool> {
    hashes
        .iter()
        .map(|&hash| filter.contains_hash(hash))
        .collect()
}

/// Everything a user may do with `filter`, with keys derived from `seed`;
/// panics (a finding) where the filter breaks a promise.
pub fn exercise<F: Exercise>(filter: &F, seed: u64) {
    let keys = keys_from(seed);
    let hasher = *filter.hasher();
    let hashes: Vec<u64> = keys.iter().map(|key| hasher.hash(key)).collect();

    // Lookups: one by one, by key, batched by key and by hash.
    let before = answers(filter, &hashes);
    let by_key: Vec<bool> = keys.iter().map(|key| filter.contains(key)).collect();
    assert_eq!(by_key, before, "contains and contains_hash differ");
    assert_eq!(
        filter.contains_many(keys.iter().copied()),
        before,
        "contains_many"
    );
    let mut found = vec![true; hashes.len() + 1];
    filter.contains_hashes(&hashes, &mut found);
    assert_eq!(&found[..hashes.len()], before, "contains_hashes");
    assert!(found[hashes.len()], "contains_hashes wrote past its batch");

    merge_with_itself(filter, &hashes, &before);

    let inserts = 3 * KEYS as u64;
    let affordable = filter.insert_steps(inserts) <= INSERT_STEP_LIMIT;
    if affordable && filter.growth_bytes(inserts) <= GROW_LIMIT_BYTES {
        let grown = insert_and_remove(filter, &keys, (&hashes, &before));
        merge_with_grown(filter, &grown.filter, &grown.present, &hashes, &before);
        if let Some(&shared) = grown.present.first() {
            let others: Vec<u64> = hashes.iter().map(|hash| hash.rotate_left(32)).collect();
            intersect_then_remove(&grown.filter, shared, &others);
        }
    }

    // Estimates last: the theory functions are the slowest calls, and a slow
    // one must not hide a counter that overflows above.
    let _ = (
        filter.memory_usage(),
        filter.is_empty(),
        format!("{filter:?}"),
    );
    let fpp = timed("expected_fpp", filter, || filter.expected_fpp());
    assert!((0.0..=1.0).contains(&fpp), "expected_fpp {fpp}");
    let len = filter.len() as u64;
    for items in [len, filter.capacity().map_or(1, |c| c as u64)] {
        let fpp = timed("theoretical_fpp", &items, || filter.theoretical_fpp(items));
        if let Some(fpp) = fpp {
            assert!(
                (0.0..=1.0).contains(&fpp),
                "theoretical_fpp({items}) = {fpp}"
            );
        }
    }
    filter.exercise_more(&keys);
}

/// Union and intersection with itself change no answer.
fn merge_with_itself<F: Exercise>(filter: &F, hashes: &[u64], before: &[bool]) {
    let mut merged = filter.clone();
    let Some(union) = merged.merge(filter, MergeOp::Union) else {
        return;
    };
    union.expect("union with itself");
    assert_eq!(answers(&merged, hashes), before, "union with itself");
    persists(&merged, "a union with itself");
    merged
        .merge(filter, MergeOp::Intersect)
        .into_iter()
        .for_each(|result| result.expect("intersection with itself"));
    assert_eq!(answers(&merged, hashes), before, "intersection with itself");
    persists(&merged, "an intersection with itself");
    let _ = (merged.len(), merged.expected_fpp());
}

/// A union with a copy that took more keys holds them all, and gives them
/// back where the filter deletes; an intersection keeps every key both
/// hold. Every state persists.
fn merge_with_grown<F: Exercise>(
    filter: &F,
    grown: &F,
    inserted: &[u64],
    hashes: &[u64],
    before: &[bool],
) {
    let mut union = filter.clone();
    let Some(result) = union.merge(grown, MergeOp::Union) else {
        return;
    };
    result.expect("union with a copy that took more keys");
    assert!(
        inserted.iter().all(|&hash| union.contains_hash(hash)),
        "a key of the other filter is absent after union"
    );
    persists(&union, "a union");
    remove_all(&mut union, inserted, "a union");
    let mut intersection = grown.clone();
    if let Some(result) = intersection.merge(filter, MergeOp::Intersect) {
        result.expect("intersection with a copy that took more keys");
        for (&hash, &present) in hashes.iter().zip(before) {
            assert!(
                !present || intersection.contains_hash(hash),
                "a key present in both is absent after intersect"
            );
        }
        persists(&intersection, "an intersection");
    }
}

/// Removes each of `hashes` once, where the filter deletes, whatever each
/// removal answers; the filter then persists.
fn remove_all<F: Exercise>(filter: &mut F, hashes: &[u64], merged: &str) {
    for &hash in hashes {
        if filter.try_remove(hash).is_none() {
            return;
        }
    }
    persists(filter, &format!("removals from {merged}"));
}

/// The recipe of issue 23: `grown` intersected with a filter of the same
/// configuration holding `others` and one key of `grown`, `shared` (few
/// counts in common, so a counting filter's intersection caps its count),
/// then `shared` removed where the filter deletes. The key stays present
/// through the intersection, and both states persist (for filters of up to
/// [`PERSIST_LIMIT_BYTES`]).
fn intersect_then_remove<F: Exercise>(grown: &F, shared: u64, others: &[u64]) {
    if grown.memory_usage() > PERSIST_LIMIT_BYTES {
        return;
    }
    let mut other = grown.clone();
    other.clear();
    for &hash in others.iter().chain([&shared]) {
        if other.insert_hash(hash).is_err() {
            return;
        }
    }
    let mut both = grown.clone();
    let Some(result) = both.merge(&other, MergeOp::Intersect) else {
        return;
    };
    result.expect("intersection with a filter of the same configuration");
    assert!(
        both.contains_hash(shared),
        "a key of both is absent after intersect"
    );
    persists(&both, "an intersection");
    if let Some(removed) = both.try_remove(shared) {
        removed.expect("removing a key after an intersection");
        persists(&both, "an intersection and a removal");
    }
}

/// The filter after the inserts of [`insert_and_remove`], and the hashes
/// it must still report present.
struct Grown<F> {
    filter: F,
    present: Vec<u64>,
}

/// The count `len` must show after accepting `accepted` inserts of which
/// `new` reported a new key. A multiset counts copies (and the counting
/// filter saturates rather than wrap, as documented); a set counts new
/// keys; `checked` refuses a counter that would wrap.
fn count_after<F: Exercise>(len: usize, accepted: usize, new: usize) -> usize {
    let step = if F::MULTISET { accepted } else { new };
    if F::MULTISET {
        len.saturating_add(step)
    } else {
        len.checked_add(step).expect("the item counter overflows")
    }
}

/// An insert refused: only as `Full`, leaving the filter as it was.
fn check_refusal<F: Exercise>(err: &Error, filter: &F, before: &F) {
    assert_eq!(err.kind(), ErrorKind::Full, "an insert failed: {err}");
    assert!(
        filter == before,
        "a refused insert changed the filter: {err}"
    );
}

/// New keys one at a time, batched, and through the bulk insert (which
/// must leave the filter exactly as the same inserts one by one do); then
/// removals of the keys inserted one at a time, where the filter deletes,
/// with every other inserted key still present, and every lookup key of
/// `found` (hashes, answers) the filter held before; a round trip; `clear`.
fn insert_and_remove<F: Exercise>(filter: &F, keys: &[u64], found: (&[u64], &[bool])) -> Grown<F> {
    let mut grown = filter.clone();
    let hasher = *grown.hasher();
    let mut count = grown.len();
    let mut single = Vec::new();
    for key in keys {
        let hash = hasher.hash(key);
        let before = grown.clone();
        match grown.insert_hash(hash) {
            Ok(new) => {
                count = count_after::<F>(count, 1, usize::from(new));
                assert_eq!(grown.len(), count, "len after an insert");
                assert!(
                    grown.contains_hash(hash),
                    "false negative right after insert"
                );
                single.push(hash);
            }
            Err(err) => check_refusal(&err, &grown, &before),
        }
    }

    // A batch of hashes, and a batch of keys through the bulk insert: each
    // must end as the same inserts one by one do.
    let batch: Vec<u64> = keys.iter().map(|key| hasher.hash(&!key)).collect();
    let mut present = single.clone();
    let reference = one_by_one(&grown, &batch);
    let result = grown.insert_hashes(&batch);
    present.extend(reference.check(&grown, result, count));
    count = grown.len();
    let bulk_keys: Vec<u64> = keys.iter().map(|key| key ^ 0xdead_beef).collect();
    let bulk_hashes: Vec<u64> = bulk_keys.iter().map(|key| hasher.hash(key)).collect();
    let reference = one_by_one(&grown, &bulk_hashes);
    let result = grown.insert_keys(&bulk_keys);
    present.extend(reference.check_bulk(&grown, result, count));
    assert!(
        present.iter().all(|&hash| grown.contains_hash(hash)),
        "an inserted key is absent"
    );

    persists(&grown, "inserts");

    let after_removals = remove_inserted(&grown, &single, &present);
    if let Some(after) = &after_removals {
        persists(after, "removals of inserted keys");
        let (hashes, before) = found;
        for (&hash, &was) in hashes.iter().zip(before) {
            assert!(
                !was || after.contains_hash(hash),
                "a key present before the inserts is absent after removing them"
            );
        }
    }
    if let Some(mut emptied) = after_removals {
        emptied.clear();
        assert!(emptied.is_empty() && emptied.len() == 0, "clear");
        assert!(
            present.iter().all(|&hash| !emptied.contains_hash(hash)),
            "a key is present after clear"
        );
        persists(&emptied, "removals and clear");
        if let Some(removed) = emptied.try_remove(single.first().copied().unwrap_or(0)) {
            assert!(
                !removed.expect("removal from an empty filter"),
                "removed a key from an empty filter"
            );
        }
    }
    let mut cleared = grown.clone();
    cleared.clear();
    assert!(cleared.is_empty(), "clear");
    assert!(
        present.iter().all(|&hash| !cleared.contains_hash(hash)),
        "a key is present after clear"
    );
    persists(&cleared, "clear");
    Grown {
        filter: grown,
        present,
    }
}

/// The same inserts done one by one on a copy: the reference a batched or
/// bulk insert must match.
struct OneByOne<F> {
    filter: F,
    /// How many were accepted before the first refusal, and how many were new.
    accepted: usize,
    new: usize,
    refused: Option<Error>,
    hashes: Vec<u64>,
}

fn one_by_one<F: Exercise>(filter: &F, hashes: &[u64]) -> OneByOne<F> {
    let mut copy = filter.clone();
    let (mut accepted, mut new, mut refused) = (0, 0, None);
    for &hash in hashes {
        match copy.insert_hash(hash) {
            Ok(is_new) => {
                accepted += 1;
                new += usize::from(is_new);
            }
            Err(err) => {
                refused = Some(err);
                break;
            }
        }
    }
    OneByOne {
        filter: copy,
        accepted,
        new,
        refused,
        hashes: hashes.to_vec(),
    }
}

impl<F: Exercise> OneByOne<F> {
    /// Checks a batched insert (`result`, the filter `batched`, which had
    /// `len` items before) against the same inserts one by one; the hashes
    /// it accepted.
    fn check(self, batched: &F, result: Result<usize, Error>, len: usize) -> Vec<u64> {
        match (&result, &self.refused) {
            (Ok(new), None) => assert_eq!(*new, self.new, "new keys in a batch"),
            (Err(err), Some(refused)) => {
                assert_eq!(err.kind(), refused.kind(), "{err} / {refused}");
            }
            _ => panic!(
                "a batch answered {result:?}, the same keys one by one {:?}",
                self.refused
            ),
        }
        assert!(
            batched == &self.filter,
            "a batched insert differs from the same inserts one by one"
        );
        assert_eq!(
            batched.len(),
            count_after::<F>(len, self.accepted, self.new),
            "len after a batch"
        );
        self.hashes[..self.accepted].to_vec()
    }

    /// As [`check`](Self::check), for a bulk insert that may not say how
    /// many keys were new.
    fn check_bulk(self, bulk: &F, result: Result<Option<usize>, Error>, len: usize) -> Vec<u64> {
        let new = self.new;
        self.check(bulk, result.map(|counted| counted.unwrap_or(new)), len)
    }
}

/// Removes each key inserted one at a time, once, where the filter
/// deletes: each must be found and counted off, and every other inserted
/// key must stay present (no false negative). The filter afterwards.
fn remove_inserted<F: Exercise>(grown: &F, removed: &[u64], present: &[u64]) -> Option<F> {
    let mut filter = grown.clone();
    for &hash in removed {
        let len = filter.len();
        let taken = filter.try_remove(hash)?.expect("removing an inserted key");
        assert!(taken, "an inserted key could not be removed");
        assert_eq!(filter.len(), len - 1, "len after a removal");
    }
    let mut rest = present.to_vec();
    for &hash in removed {
        // One copy of each removed key goes; the others stay.
        if let Some(at) = rest.iter().position(|&h| h == hash) {
            rest.swap_remove(at);
        }
    }
    assert!(
        rest.iter().all(|&hash| filter.contains_hash(hash)),
        "removing inserted keys made another inserted key absent"
    );
    Some(filter)
}
