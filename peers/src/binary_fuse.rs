//! xorf 0.13's BinaryFuse8.

use filterlab_core::{Error, ErrorKind};

use crate::peer::{Inserted, PeerFilter};
use crate::subject::Theory;

/// xorf's BinaryFuse8: built once from the whole key set (static).
///
/// xorf is built without its `uniform-random` feature, which fills unused
/// fingerprint slots from `thread_rng`: with it, runs with the same seed
/// would differ. The average FPP is 2^−8 either way.
pub struct BinaryFuse8(xorf::BinaryFuse8);

impl BinaryFuse8 {
    /// Builds the filter from `keys` (distinct).
    ///
    /// # Errors
    ///
    /// The crate's message when construction fails.
    pub fn build(keys: &[u64]) -> Result<Self, Error> {
        xorf::BinaryFuse8::try_from(keys)
            .map(Self)
            .map_err(|message| Error::new(ErrorKind::InvalidParameter, format!("xorf: {message}")))
    }
}

impl PeerFilter for BinaryFuse8 {
    /// A static filter takes no inserts after it is built.
    fn insert(&mut self, _key: u64) -> Inserted {
        Inserted::Refused
    }

    fn contains(&self, key: u64) -> bool {
        xorf::Filter::contains(&self.0, &key)
    }

    /// A static filter cannot be emptied.
    fn clear(&mut self) -> bool {
        false
    }

    fn memory_usage(&self) -> usize {
        self.0.fingerprints.len() + std::mem::size_of::<xorf::BinaryFuse8>()
    }

    /// An 8-bit fingerprint matches a random query with probability 2^−8.
    fn theory(&self, _items: u64) -> Option<Theory> {
        Some(Theory::Exact(1.0 / 256.0))
    }
}
