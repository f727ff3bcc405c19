//! The equivalent Bloom filter of a standard counting filter.

use filterlab_bloom::BloomFilter;
use filterlab_core::format::{FrameWriter, Header};
use filterlab_core::memory::{addressable, zeroed_words};
use filterlab_core::theory::bloom_estimate_items;
use filterlab_core::{Error, ErrorKind, FilterKind};

use crate::counters::Width;
use crate::filter::CountingBloom;
use crate::layout::Standard;

impl<const BITS: u32> CountingBloom<Standard, BITS> {
    /// The equivalent [`BloomFilter`]: the same m (as bits), k, hasher and
    /// seed, with a bit set exactly where a counter is nonzero, so it
    /// answers every query as this filter does, in a quarter of the memory
    /// (4-bit counters) and without deletes: build with deletes, ship
    /// read-only. Its `len` is the Swamidass–Baldi estimate of the distinct
    /// keys from its set bits, at most this filter's `len` and the bits set.
    ///
    /// Built through the Bloom filter's binary format (filterlab-bloom has
    /// no constructor from raw bits), so it is validated like any file.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::TooLarge`] when the memory for the bits cannot be had.
    ///
    /// # Examples
    ///
    /// ```
    /// use filterlab_counting_bloom::{CountingBloomFilter, Filter};
    ///
    /// let mut counting = CountingBloomFilter::with_fpp(0.01).expected_items(1_000).build()?;
    /// counting.extend(0..1_000u64);
    /// counting.remove_many(0..500u64);
    /// let bloom = counting.to_bloom()?;
    /// assert_eq!(bloom.num_bits(), counting.num_counters());
    /// assert!((0..2_000u64).all(|key| bloom.contains(&key) == counting.contains(&key)));
    /// # Ok::<(), filterlab_counting_bloom::Error>(())
    /// ```
    pub fn to_bloom(&self) -> Result<BloomFilter, Error> {
        let (config, counters, sized_for, len) = self.parts();
        let words = addressable(config.num_counters.div_ceil(64), "bit array")?;
        let mut bits = zeroed_words(words)?;
        let per_word = Width::<BITS>::PER_WORD;
        for (word_index, word) in counters.words().enumerate() {
            let mut nonzero = Width::<BITS>::nonzero(word);
            while nonzero != 0 {
                let lane = u64::from(nonzero.trailing_zeros() / BITS);
                let bit = word_index as u64 * per_word + lane;
                bits[(bit / 64) as usize] |= 1 << (bit % 64);
                nonzero &= nonzero - 1;
            }
        }
        let set: u64 = bits.iter().map(|w| u64::from(w.count_ones())).sum();
        let estimate = bloom_estimate_items(set, config.num_counters, config.num_hashes);
        // At most the bits set too: every insert a Bloom filter counts sets
        // a bit, and its reader refuses a counter above them. A multiset's
        // `len` counts copies, and the estimate may exceed the bits set (at
        // k = 1, or when nearly every bit is set).
        let distinct = if estimate.is_finite() {
            estimate.round() as u64
        } else {
            len
        };
        let distinct = distinct.min(len).min(set);
        let [capacity, target_fpp] = sized_for.params();
        // `BloomFilter`'s format, kind 1: num_bits, num_hashes, capacity, target_fpp.
        let header = Header {
            kind: FilterKind::Bloom,
            hasher: config.hasher,
            items: distinct,
            params: vec![
                config.num_counters,
                u64::from(config.num_hashes),
                capacity,
                target_fpp,
            ],
            payload_len: words as u64 * 8,
        };
        let mut bytes = Vec::new();
        bytes.try_reserve_exact(words * 8 + 128).map_err(|_| {
            Error::new(
                ErrorKind::TooLarge,
                "cannot allocate the Bloom filter's bytes",
            )
        })?;
        let mut frame = FrameWriter::new(bytes, &header)?;
        frame.write_words(&bits)?;
        drop(bits);
        BloomFilter::from_bytes(&frame.finish()?)
    }
}

#[cfg(test)]
mod tests {
    use filterlab_core::{HashAlgorithm, KeyHasher};

    use crate::{CountingBloomFilter, Error};

    /// Regression `decode_counting/to-bloom-64counters-k1-63keys-invalid-header`:
    /// at k = 1, 63 distinct keys set 41 of 64 counters; the estimate and
    /// `len` (63 each) are both above the 41 bits set. (Hasher id 2, the
    /// default when the case was found.)
    #[test]
    fn to_bloom_counts_at_most_the_bits_set() -> Result<(), Error> {
        let hasher = KeyHasher::with_algorithm(HashAlgorithm::Xxh3ByValue, 0);
        let mut counting = CountingBloomFilter::with_counters(64)
            .hashes(1)
            .hasher(hasher)
            .build()?;
        counting.extend(0..63u64);
        let bloom = counting.to_bloom()?;
        assert_eq!((bloom.set_bits(), bloom.len()), (41, 41));
        assert!((0..200u64).all(|key| bloom.contains(&key) == counting.contains(&key)));
        Ok(())
    }
}
