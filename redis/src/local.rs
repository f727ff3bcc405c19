//! `ShardedBloomFilter`: the local twin of a sharded filter in Redis, what
//! `export` returns and `import` publishes: one `BloomFilter` per shard,
//! each key routed to a shard exactly as on the server.

use filterlab_bloom::BloomFilter;
use filterlab_core::theory::sharded_bloom_fpp;
use filterlab_core::{Error as CoreError, ErrorKind as CoreKind, Filter, KeyHasher, Membership};

use crate::error::Error;
use crate::shards::{MAX_SHARDS, shard_of};

/// A sharded Bloom filter in local memory: S standard Bloom filters of one
/// configuration, each key hashed once and routed by that hash to one of
/// them (as [`RedisShardedBloomFilter`](crate::RedisShardedBloomFilter)
/// does), answering every lookup exactly as the shared filter it was
/// exported from.
///
/// Each shard is a plain [`BloomFilter`]: persist them with its binary
/// format (`Persist`) and put them back together with
/// [`from_shards`](Self::from_shards).
///
/// # Examples
///
/// ```
/// use filterlab_redis::{BloomFilter, Filter, Membership, RedisShardedBloomFilter};
///
/// let builder = RedisShardedBloomFilter::builder(BloomFilter::with_fpp(0.01).expected_items(10_000)).shards(8);
/// let mut local = builder.build_local()?;
/// local.insert_hash(local.hasher().hash("a"))?;
/// assert!(local.contains("a"));
/// assert_eq!(local.shards().len(), 8);
/// # Ok::<(), filterlab_redis::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ShardedBloomFilter {
    shards: Vec<BloomFilter>,
}

impl ShardedBloomFilter {
    /// Puts shards back together, in order.
    ///
    /// # Errors
    ///
    /// `Filter(InvalidParameter)` for no shards, more than
    /// [`MAX_SHARDS`], or shards of different configurations (bits,
    /// hashes, hasher and seed must all agree).
    pub fn from_shards(shards: Vec<BloomFilter>) -> Result<Self, Error> {
        let Some(first) = shards.first() else {
            return Err(invalid("a sharded filter needs at least one shard".into()));
        };
        if shards.len() as u64 > MAX_SHARDS {
            return Err(invalid(format!(
                "{} shards, at most {MAX_SHARDS}",
                shards.len()
            )));
        }
        let config = first.config();
        if let Some(other) = shards.iter().position(|shard| shard.config() != config) {
            return Err(invalid(format!(
                "shard {other} is configured {:?}, shard 0 {config:?}",
                shards[other].config()
            )));
        }
        Ok(Self { shards })
    }

    /// The shards, in order.
    pub fn shards(&self) -> &[BloomFilter] {
        &self.shards
    }

    /// The shards, in order.
    pub fn into_shards(self) -> Vec<BloomFilter> {
        self.shards
    }

    /// The shard a key hash goes to.
    pub fn shard_of(&self, hash: u64) -> usize {
        shard_of(hash, self.shards.len() as u64)
    }

    /// Bits over all shards.
    pub fn num_bits(&self) -> u64 {
        self.shards[0].num_bits() * self.shards.len() as u64
    }

    /// Probes per key.
    pub fn num_hashes(&self) -> u32 {
        self.shards[0].num_hashes()
    }
}

fn invalid(detail: String) -> Error {
    Error::from(CoreError::new(CoreKind::InvalidParameter, detail))
}

impl Membership for ShardedBloomFilter {
    fn hasher(&self) -> &KeyHasher {
        self.shards[0].hasher()
    }

    fn contains_hash(&self, hash: u64) -> bool {
        self.shards[self.shard_of(hash)].contains_hash(hash)
    }

    /// The sum of the shards' exact counters.
    fn len(&self) -> usize {
        self.shards.iter().map(Membership::len).sum()
    }

    fn memory_usage(&self) -> usize {
        self.shards.iter().map(Membership::memory_usage).sum()
    }

    /// The sum of the shards' capacities.
    fn capacity(&self) -> Option<usize> {
        self.shards.iter().map(Membership::capacity).sum()
    }

    /// The mean of the shards' (X/m)^k: a query lands in a uniform shard,
    /// so this is exact for the filter as it is now.
    fn expected_fpp(&self) -> f64 {
        let total: f64 = self.shards.iter().map(Membership::expected_fpp).sum();
        total / self.shards.len() as f64
    }

    /// The exact sharded FPP (core's `sharded_bloom_fpp`: the shard loads
    /// are multinomial).
    fn theoretical_fpp(&self, items: u64) -> Option<f64> {
        sharded_bloom_fpp(
            self.shards.len() as u64,
            self.shards[0].num_bits(),
            self.num_hashes(),
            items,
        )
        .ok()
    }
}

impl Filter for ShardedBloomFilter {
    /// Never fails: each shard is a Bloom filter.
    fn insert_hash(&mut self, hash: u64) -> Result<bool, CoreError> {
        let shard = self.shard_of(hash);
        self.shards[shard].insert_hash(hash)
    }

    fn clear(&mut self) {
        self.shards.iter_mut().for_each(Filter::clear);
    }
}
