//! [`PeerFilter`]: a peer crate's filter, key by key; [`PeerSubject`] makes
//! one a [`Subject`].

use filterlab_core::theory::{bloom_fpp_exact, bloom_fpp_given_fill};

use crate::subject::{Mode, Subject, Theory};

/// What a peer answered to an insert.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inserted {
    /// Taken, and new as far as the filter can tell (a filter that does
    /// not tell answers this for every key it takes).
    New,
    /// The filter already reported the key present.
    Present,
    /// Refused: the filter is full, or takes no inserts.
    Refused,
}

impl Inserted {
    /// The answer of a filter that says whether the key was present already.
    pub fn unless_present(was_present: bool) -> Self {
        if was_present {
            Self::Present
        } else {
            Self::New
        }
    }
}

/// A peer crate's filter over `u64` keys, through its own one-key API.
pub trait PeerFilter {
    /// Whether [`remove`](Self::remove) is supported.
    const REMOVABLE: bool = false;

    /// Inserts `key`.
    fn insert(&mut self, key: u64) -> Inserted;

    /// Whether `key` may be present.
    fn contains(&self, key: u64) -> bool;

    /// Removes `key`; whether it was found, as far as the filter tells (a
    /// filter that does not tell answers `true`, as [`Inserted::New`]).
    /// Only called when [`REMOVABLE`](Self::REMOVABLE).
    fn remove(&mut self, _key: u64) -> bool {
        false
    }

    /// Empties the filter, keeping its configuration; `false` when it cannot.
    fn clear(&mut self) -> bool;

    /// Bytes of storage.
    fn memory_usage(&self) -> usize;

    /// The FPP the design predicts after `items` distinct inserts, if known.
    fn theory(&self, _items: u64) -> Option<Theory> {
        None
    }

    /// The FPP conditional on the instance's state, if computable.
    fn fill_fpp(&self) -> Option<f64> {
        None
    }
}

/// A [`PeerFilter`] as a [`Subject`]: the loops are monomorphized per peer,
/// so each key costs one direct call of the peer's own API. Peers have no
/// batch API: [`Mode::Batched`] runs key by key too.
pub struct PeerSubject<P>(pub P);

impl<P: PeerFilter + 'static> PeerSubject<P> {
    /// As a boxed subject.
    pub fn boxed(peer: P) -> Box<dyn Subject> {
        Box::new(Self(peer))
    }
}

impl<P: PeerFilter> Subject for PeerSubject<P> {
    fn has_batch_api(&self) -> bool {
        false
    }

    fn insert_keys(&mut self, keys: &[u64], _mode: Mode, refused: &mut Vec<usize>) -> u64 {
        let mut new = 0;
        for (position, &key) in keys.iter().enumerate() {
            match self.0.insert(key) {
                Inserted::New => new += 1,
                Inserted::Present => {}
                Inserted::Refused => refused.push(position),
            }
        }
        new
    }

    fn count_contained(&self, keys: &[u64], _mode: Mode) -> u64 {
        keys.iter().filter(|&&key| self.0.contains(key)).count() as u64
    }

    fn remove_keys(&mut self, keys: &[u64]) -> Option<u64> {
        P::REMOVABLE.then(|| keys.iter().filter(|&&key| self.0.remove(key)).count() as u64)
    }

    fn insert_keys_concurrently(&self, _: &[u64], _: usize, _: Mode) -> Option<u64> {
        None
    }

    fn clear(&mut self) -> bool {
        self.0.clear()
    }

    fn memory_usage(&self) -> usize {
        self.0.memory_usage()
    }

    fn theory(&self, items: u64) -> Option<Theory> {
        self.0.theory(items)
    }

    fn fill_fpp(&self) -> Option<f64> {
        self.0.fill_fpp()
    }
}

/// Converts an item count to `usize`, saturating (counts here fit easily).
pub(crate) fn to_usize(value: u64) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}

/// A standard Bloom filter's exact theory with `bits` bits and `hashes` probes.
pub(crate) fn bloom_theory(bits: u64, hashes: u32, items: u64) -> Option<Theory> {
    bloom_fpp_exact(bits, hashes, items).ok().map(Theory::Exact)
}

/// A standard Bloom filter's FPP given its fill: (X/m)^k, X the set bits of
/// `words` (words of any width, counted by `ones`).
pub(crate) fn bloom_fill<T: Copy>(
    words: &[T],
    ones: impl Fn(T) -> u32,
    bits: u64,
    hashes: u32,
) -> f64 {
    let set = words.iter().map(|&word| u64::from(ones(word))).sum();
    bloom_fpp_given_fill(set, bits, hashes)
}
