//! xorf 0.13's static filters: BinaryFuse8, BinaryFuse16 and Xor8, through
//! one adapter.

use filterlab_core::{Error, ErrorKind};

use crate::peer::{Inserted, PeerFilter};
use crate::subject::Theory;

/// One of xorf's filters, built once from the whole key set (static).
///
/// xorf is built without its `uniform-random` feature, which fills unused
/// fingerprint slots from `thread_rng`: with it, runs with the same seed
/// would differ. The average FPP is 2^−f either way (f fingerprint bits).
pub struct Xorf<F>(F);

/// xorf's BinaryFuse8: 8-bit fingerprints, 3-wise, about 9 bits a key.
pub type BinaryFuse8 = Xorf<xorf::BinaryFuse8>;

/// xorf's BinaryFuse16: 16-bit fingerprints, 3-wise, about 18 bits a key.
pub type BinaryFuse16 = Xorf<xorf::BinaryFuse16>;

/// xorf's Xor8 (Graf and Lemire 2020, the binary fuse filter's
/// predecessor): 8-bit fingerprints in 1.23 n + 32 slots.
pub type Xor8 = Xorf<xorf::Xor8>;

/// What [`Xorf`] needs of an xorf filter beside its lookup.
pub trait XorfFilter: xorf::Filter<u64> + Sized {
    /// Fingerprint bits f: a key outside the set matches with probability 2^−f.
    const FINGERPRINT_BITS: i32;

    /// The filter of `keys` (distinct), or xorf's message.
    ///
    /// # Errors
    ///
    /// xorf's message when the construction fails.
    fn from_keys(keys: &[u64]) -> Result<Self, &'static str>;

    /// Bytes of its fingerprints.
    fn fingerprint_bytes(&self) -> usize;
}

impl XorfFilter for xorf::BinaryFuse8 {
    const FINGERPRINT_BITS: i32 = 8;

    fn from_keys(keys: &[u64]) -> Result<Self, &'static str> {
        Self::try_from(keys)
    }

    fn fingerprint_bytes(&self) -> usize {
        self.fingerprints.len()
    }
}

impl XorfFilter for xorf::BinaryFuse16 {
    const FINGERPRINT_BITS: i32 = 16;

    fn from_keys(keys: &[u64]) -> Result<Self, &'static str> {
        Self::try_from(keys)
    }

    fn fingerprint_bytes(&self) -> usize {
        2 * self.fingerprints.len()
    }
}

impl XorfFilter for xorf::Xor8 {
    const FINGERPRINT_BITS: i32 = 8;

    /// Xor8's construction retries with a new seed until it succeeds.
    fn from_keys(keys: &[u64]) -> Result<Self, &'static str> {
        Ok(Self::from(keys))
    }

    fn fingerprint_bytes(&self) -> usize {
        self.fingerprints.len()
    }
}

impl<F: XorfFilter> Xorf<F> {
    /// Builds the filter from `keys` (distinct).
    ///
    /// # Errors
    ///
    /// The crate's message when construction fails.
    pub fn build(keys: &[u64]) -> Result<Self, Error> {
        F::from_keys(keys)
            .map(Self)
            .map_err(|message| Error::new(ErrorKind::InvalidParameter, format!("xorf: {message}")))
    }
}

impl<F: XorfFilter> PeerFilter for Xorf<F> {
    /// A static filter takes no inserts after it is built.
    fn insert(&mut self, _key: u64) -> Inserted {
        Inserted::Refused
    }

    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }

    /// A static filter cannot be emptied.
    fn clear(&mut self) -> bool {
        false
    }

    fn memory_usage(&self) -> usize {
        self.0.fingerprint_bytes() + std::mem::size_of::<F>()
    }

    /// An f-bit fingerprint matches a random query with probability 2^−f.
    fn theory(&self, _items: u64) -> Option<Theory> {
        Some(Theory::Exact(2f64.powi(-F::FINGERPRINT_BITS)))
    }
}
