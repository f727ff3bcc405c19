//! The standard layout's per-key counter operations, over the words of
//! the whole array. (The blocked layout's are in `block`.)

use filterlab_core::Probes;

use crate::counters::{Counters, Width};

/// The counter at the next probe.
#[inline]
fn next_counter<const BITS: u32>(words: &Counters, probes: &mut Probes) -> u64 {
    let (word, shift) = Width::<BITS>::locate(probes.next_index());
    (words.word(word) >> shift) & Width::<BITS>::MAX
}

/// Probes a lookup tests together with one branch before testing the rest
/// one by one: a negative lookup usually fails among the first few, and one
/// branch on all of them predicts well, as `BloomFilter`'s lookup measured.
const BRANCH_FREE_PROBES: u32 = 3;

/// Whether the key's `k` counters are all nonzero: the first
/// [`BRANCH_FREE_PROBES`] tested together, the rest one by one.
#[inline]
pub(crate) fn all_nonzero<const BITS: u32>(words: &Counters, mut probes: Probes, k: u32) -> bool {
    let head = k.min(BRANCH_FREE_PROBES);
    let mut all = true;
    for _ in 0..head {
        all &= next_counter::<BITS>(words, &mut probes) != 0;
    }
    if !all {
        return false;
    }
    for _ in head..k {
        if next_counter::<BITS>(words, &mut probes) == 0 {
            return false;
        }
    }
    true
}

/// The smallest of the key's `k` counters.
#[inline]
pub(crate) fn minimum<const BITS: u32>(words: &Counters, mut probes: Probes, k: u32) -> u64 {
    (0..k)
        .map(|_| next_counter::<BITS>(words, &mut probes))
        .min()
        .unwrap_or(0)
}

/// Adds one to each of the key's first `k` counters that is not saturated
/// (a key probing a counter twice adds two); whether any was zero before,
/// i.e. whether the key was new. One pass: each counter is read anyway to
/// saturate it.
#[inline]
pub(crate) fn increment<const BITS: u32>(words: &mut Counters, mut probes: Probes, k: u32) -> bool {
    let mut new = false;
    for _ in 0..k {
        let (word, shift) = Width::<BITS>::locate(probes.next_index());
        let word = words.word_mut(word);
        let counter = (*word >> shift) & Width::<BITS>::MAX;
        new |= counter == 0;
        *word += u64::from(counter != Width::<BITS>::MAX) << shift;
    }
    new
}

/// Takes one from each of the key's `k` counters that is not saturated, in
/// one pass; if a counter is zero the key cannot be present, and what was
/// taken is put back (the counters decremented are below the maximum, the
/// saturated ones were left alone, so adding one to every unsaturated
/// counter among those passed restores them exactly). Whether it was taken.
#[inline]
pub(crate) fn decrement<const BITS: u32>(words: &mut Counters, probes: Probes, k: u32) -> bool {
    let mut walk = probes.clone();
    for done in 0..k {
        let (word, shift) = Width::<BITS>::locate(walk.next_index());
        let word = words.word_mut(word);
        let counter = (*word >> shift) & Width::<BITS>::MAX;
        if counter == 0 {
            increment::<BITS>(words, probes, done);
            return false;
        }
        *word -= u64::from(counter != Width::<BITS>::MAX) << shift;
    }
    true
}

/// The word indexes (into `words`) of the key's `lines` first probes.
#[inline]
pub(crate) fn probe_words<const BITS: u32>(
    mut probes: Probes,
    lines: u32,
) -> impl Iterator<Item = usize> {
    (0..lines).map(move |_| Width::<BITS>::locate(probes.next_index()).0)
}
