//! Sizing a shared filter (exactly as `filterlab_bloom::BloomFilter` sizes
//! itself) and creating it on the server, once, whoever asks first.

use filterlab_bloom::{BloomBuilder, BloomConfig, BloomFilter, BloomSizing};
use filterlab_core::KeyHasher;
use redis::Client;

use crate::error::Error;
use crate::filter::RedisBloomFilter;
use crate::layout::{DEFAULT_PART_BITS, Layout, check_name};
use crate::link::Link;
use crate::scripts::INIT_SCRIPT;

/// Configures a shared filter; made by [`RedisBloomFilter::with_fpp`] or
/// [`RedisBloomFilter::with_bits`]. The sizing is
/// [`filterlab_bloom::BloomBuilder`]'s, so the filter has the bits and
/// hashes a local `BloomFilter` built with the same settings has.
#[derive(Clone, Debug)]
#[must_use]
pub struct RedisBloomBuilder {
    bloom: BloomBuilder,
    seed: u64,
    part_bits: u64,
}

impl RedisBloomFilter {
    /// A builder that sizes the filter for a target FPP; give it
    /// [`expected_items`](RedisBloomBuilder::expected_items).
    pub fn with_fpp(fpp: f64) -> RedisBloomBuilder {
        RedisBloomBuilder::new(BloomFilter::with_fpp(fpp))
    }

    /// A builder for an explicit number of bits; give it
    /// [`hashes`](RedisBloomBuilder::hashes) or
    /// [`expected_items`](RedisBloomBuilder::expected_items) to choose k.
    pub fn with_bits(num_bits: u64) -> RedisBloomBuilder {
        RedisBloomBuilder::new(BloomFilter::with_bits(num_bits))
    }

    /// Creates the filter `name` sized for `expected_items` at `fpp` (seed
    /// 0) unless it exists, as Redisson's `tryInit`; see
    /// [`RedisBloomBuilder::try_init`].
    ///
    /// # Errors
    ///
    /// As [`RedisBloomBuilder::try_init`].
    pub fn try_init(
        client: &Client,
        name: &str,
        expected_items: u64,
        fpp: f64,
    ) -> Result<(Self, bool), Error> {
        Self::with_fpp(fpp)
            .expected_items(expected_items)
            .try_init(client, name)
    }
}

impl RedisBloomBuilder {
    fn new(bloom: BloomBuilder) -> Self {
        Self {
            bloom,
            seed: 0,
            part_bits: DEFAULT_PART_BITS,
        }
    }

    /// The number of distinct items the filter must hold at the target FPP.
    pub fn expected_items(mut self, items: u64) -> Self {
        self.bloom = self.bloom.expected_items(items);
        self
    }

    /// An explicit number of probes per key, overriding the sizing's choice.
    pub fn hashes(mut self, num_hashes: u32) -> Self {
        self.bloom = self.bloom.hashes(num_hashes);
        self
    }

    /// The key hasher's seed (default 0).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self.bloom = self.bloom.seed(seed);
        self
    }

    /// The most bytes the bit array may take (default 64 GiB).
    pub fn max_memory(mut self, bytes: u64) -> Self {
        self.bloom = self.bloom.max_memory(bytes);
        self
    }

    /// Bits per string key: a multiple of 64, at most 2^32 (the default,
    /// Redis' 512 MiB string limit). Smaller parts suit servers configured
    /// with a lower `proto-max-bulk-len`; a filter takes at most
    /// [`MAX_PARTS`](crate::MAX_PARTS) keys.
    pub fn part_bits(mut self, bits: u64) -> Self {
        self.part_bits = bits;
        self
    }

    /// The sizing this builder would create, without touching the server:
    /// the same as `BloomFilter`'s for the same settings.
    ///
    /// # Errors
    ///
    /// As [`filterlab_bloom::BloomBuilder::sizing`].
    pub fn sizing(&self) -> Result<BloomSizing, Error> {
        Ok(self.bloom.sizing()?)
    }

    /// The stored configuration this builder makes.
    fn layout(&self) -> Result<Layout, Error> {
        let sizing = self.sizing()?;
        let bloom = BloomConfig {
            num_bits: sizing.num_bits,
            num_hashes: sizing.num_hashes,
            hasher: KeyHasher::new(self.seed),
        };
        Layout::new(
            bloom,
            self.part_bits,
            sizing.expected_items,
            sizing.target_fpp,
        )
    }

    /// Creates the filter `name` unless it exists, in one script: the bit
    /// array (zeroed, allocated in full) and the configuration appear
    /// together, and of many clients racing to create it exactly one does.
    /// Returns the handle and whether this call created the filter.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ConfigDrift`](crate::ErrorKind::ConfigDrift) when the
    /// filter exists with another configuration (sizing target included);
    /// [`ErrorKind::AlreadyExists`](crate::ErrorKind::AlreadyExists) when
    /// a bit array key of the name exists without a configuration;
    /// [`ErrorKind::Damaged`](crate::ErrorKind::Damaged) when the existing
    /// filter's bits are missing; [`ErrorKind::WrongType`](crate::ErrorKind::WrongType);
    /// the sizing's errors; [`ErrorKind::Connection`](crate::ErrorKind::Connection).
    pub fn try_init(&self, client: &Client, name: &str) -> Result<(RedisBloomFilter, bool), Error> {
        check_name(name)?;
        let layout = self.layout()?;
        let mut filter = RedisBloomFilter::with_layout(Link::new(client), name, layout);
        let mut call = filter.call(&INIT_SCRIPT);
        call.arg(&layout.sizing_values()[..]);
        let created: u64 = filter.run(&call)?;
        Ok((filter, created == 1))
    }
}
