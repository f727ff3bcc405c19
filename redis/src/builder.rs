//! Sizing a shared filter (exactly as `filterlab_bloom::BloomFilter` sizes
//! itself) and creating it on the server, once, whoever asks first.

use filterlab_bloom::{BloomBuilder, BloomFilter, BloomSizing};

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::filter::RedisBloomFilter;
use crate::layout::{DEFAULT_PART_BITS, Layout, check_name};
use crate::link::Link;

/// Configures a shared filter: a [`filterlab_bloom::BloomBuilder`] for the
/// sizing, so the filter has exactly the bits, hashes and seed of the local
/// `BloomFilter` that builder builds, and the layout in Redis. Made by
/// [`RedisBloomFilter::builder`].
#[derive(Clone, Debug)]
#[must_use]
pub struct RedisBloomBuilder {
    bloom: BloomBuilder,
    part_bits: u64,
}

impl RedisBloomFilter {
    /// A builder for a shared filter sized by `bloom` (any of
    /// `BloomFilter::with_fpp(p).expected_items(n)`, `BloomFilter::with_bits(m)`,
    /// with `.seed(s)`, `.hashes(k)`, `.max_memory(bytes)`, `.power_of_two(true)`).
    ///
    /// # Examples
    ///
    /// ```
    /// use filterlab_redis::{BloomFilter, RedisBloomFilter};
    ///
    /// let builder = RedisBloomFilter::builder(BloomFilter::with_fpp(0.01).expected_items(1_000_000).seed(7));
    /// let sizing = builder.sizing()?;
    /// assert_eq!(sizing, BloomFilter::params(1_000_000, 0.01)?);
    /// # Ok::<(), filterlab_redis::Error>(())
    /// ```
    pub fn builder(bloom: BloomBuilder) -> RedisBloomBuilder {
        RedisBloomBuilder {
            bloom,
            part_bits: DEFAULT_PART_BITS,
        }
    }

    /// Creates the filter `name` sized for `expected_items` at `fpp` (seed
    /// 0) unless it exists, as Redisson's `tryInit`; see
    /// [`RedisBloomBuilder::try_init`].
    ///
    /// # Errors
    ///
    /// As [`RedisBloomBuilder::try_init`].
    pub fn try_init(
        endpoint: &(impl Into<Endpoint> + Clone),
        name: &str,
        expected_items: u64,
        fpp: f64,
    ) -> Result<(Self, bool), Error> {
        Self::builder(BloomFilter::with_fpp(fpp).expected_items(expected_items))
            .try_init(endpoint, name)
    }
}

impl RedisBloomBuilder {
    /// Bits per string key: a multiple of 64, at most 2^32 (the default,
    /// Redis' 512 MiB string limit). Smaller parts suit servers configured
    /// with a lower `proto-max-bulk-len`; a filter takes at most
    /// [`MAX_PARTS`](crate::MAX_PARTS) keys.
    pub fn part_bits(mut self, bits: u64) -> Self {
        self.part_bits = bits;
        self
    }

    /// The sizing this builder would create, without touching the server:
    /// the `BloomBuilder`'s.
    ///
    /// # Errors
    ///
    /// As [`filterlab_bloom::BloomBuilder::sizing`].
    pub fn sizing(&self) -> Result<BloomSizing, Error> {
        Ok(self.bloom.sizing()?)
    }

    /// The stored configuration this builder makes.
    pub(crate) fn layout(&self) -> Result<Layout, Error> {
        let sizing = self.sizing()?;
        Layout::new(
            self.bloom.config()?,
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
    pub fn try_init(
        &self,
        endpoint: &(impl Into<Endpoint> + Clone),
        name: &str,
    ) -> Result<(RedisBloomFilter, bool), Error> {
        check_name(name)?;
        let layout = self.layout()?;
        let mut filter = RedisBloomFilter::with_layout(Link::new(endpoint), name, layout);
        let created: u64 = filter.run(&filter.target.init_call())?;
        Ok((filter, created == 1))
    }
}
