//! bloomfilter 3's `Bloom`.

use filterlab_core::{Error, ErrorKind, mix64};

use crate::peer::{Inserted, PeerFilter, bloom_fill, bloom_theory, to_usize};
use crate::subject::{Theory, Workload};

/// bloomfilter 3's `Bloom` (two seeded SipHash-1-3 hashes), with its seed
/// derived from the workload's.
pub struct BloomFilterCrate(bloomfilter::Bloom<u64>);

/// bloomfilter's 32-byte seed, derived from a u64 seed.
fn seed_bytes(seed: u64) -> [u8; 32] {
    let mut bytes = [0u8; 32];
    for (index, chunk) in bytes.chunks_mut(8).enumerate() {
        chunk.copy_from_slice(&mix64(seed ^ index as u64).to_le_bytes());
    }
    bytes
}

fn refused(message: &str) -> Error {
    Error::new(
        ErrorKind::InvalidParameter,
        format!("bloomfilter: {message}"),
    )
}

impl BloomFilterCrate {
    /// Sized with bloomfilter's own formula for `workload`.
    ///
    /// # Errors
    ///
    /// The crate's message when it refuses the parameters.
    pub fn new(workload: &Workload) -> Result<Self, Error> {
        bloomfilter::Bloom::new_for_fp_rate_with_seed(
            to_usize(workload.items),
            workload.fpp,
            &seed_bytes(workload.seed),
        )
        .map(Self)
        .map_err(refused)
    }

    /// `bits` bits (rounded up to whole bytes) for `items` items.
    ///
    /// # Errors
    ///
    /// The crate's message when it refuses the parameters.
    pub fn with_bits(bits: u64, items: u64, seed: u64) -> Result<Self, Error> {
        if bits == 0 || items == 0 {
            return Err(refused("needs at least one bit and one item"));
        }
        bloomfilter::Bloom::new_with_seed(
            to_usize(bits.div_ceil(8)),
            to_usize(items),
            &seed_bytes(seed),
        )
        .map(Self)
        .map_err(refused)
    }

    fn bits(&self) -> &[u8] {
        // `as_slice` is a fixed header followed by the bit array.
        let bytes = self.0.as_slice();
        let array_bytes = to_usize(self.0.len() / 8);
        &bytes[bytes.len() - array_bytes..]
    }
}

impl PeerFilter for BloomFilterCrate {
    fn insert(&mut self, key: u64) -> Inserted {
        Inserted::unless_present(self.0.check_and_set(&key))
    }

    fn contains(&self, key: u64) -> bool {
        self.0.check(&key)
    }

    fn clear(&mut self) -> bool {
        self.0.clear();
        true
    }

    fn memory_usage(&self) -> usize {
        self.0.as_slice().len()
    }

    /// The exact Bloom formula with its m and k.
    fn theory(&self, items: u64) -> Option<Theory> {
        bloom_theory(self.0.len(), self.0.number_of_hash_functions(), items)
    }

    fn fill_fpp(&self) -> Option<f64> {
        let hashes = self.0.number_of_hash_functions();
        Some(bloom_fill(
            self.bits(),
            u8::count_ones,
            self.0.len(),
            hashes,
        ))
    }
}
